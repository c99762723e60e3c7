"""The gateway's channel token: configured (``channels.gateway.token``), or generated once into
the data dir (an owner-only file) and kept there."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from flynn.errors import ConfigError, ConfigProblem
from flynn.settings import Settings, gateway_token_problem

TOKEN_FILE = "gateway-token"


@dataclass(frozen=True, slots=True)
class GatewayToken:
    """The token the gateway checks, and where it came from (said when the daemon starts)."""

    token: str
    source: str
    """``the configured channels.gateway.token``, or which file holds it."""
    generated: bool
    """Kept in the data dir (generated there now or before), not configured: the web chat's
    address may be printed with it on a terminal."""


def kept_gateway_token(data_dir: Path) -> str | None:
    """The gateway token kept in the data dir; None when there is none yet. Raises
    ``ConfigError`` naming the file when the token in it is too short or holds whitespace
    (someone edited it)."""
    path = data_dir / TOKEN_FILE
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if not token:
        return None
    problem = gateway_token_problem(token)
    if problem is not None:
        fix = "delete the file to have a new one generated"
        raise ConfigError([ConfigProblem(str(path), f"the gateway token {problem}; {fix}")])
    return token


def ensure_gateway_token(data_dir: Path) -> tuple[str, bool]:
    """The gateway token kept in the data dir, generated (owner-only file) on first start;
    returns it and whether it was just created. Raises ``ConfigError`` as ``kept_gateway_token``."""
    path = data_dir / TOKEN_FILE
    token = kept_gateway_token(data_dir)
    if token is not None:
        return token, False
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token, True


def gateway_token(settings: Settings) -> GatewayToken | None:
    """The gateway's token when it is enabled: the configured one, else the kept one (generated
    on first start). Raises ``ConfigError`` as ``kept_gateway_token``."""
    gateway = settings.channels.gateway
    if not gateway.enabled:
        return None
    if gateway.token is not None:
        configured = gateway.token.get_secret_value()
        return GatewayToken(configured, "the configured channels.gateway.token", generated=False)
    token, created = ensure_gateway_token(settings.data_dir)
    where = settings.data_dir / TOKEN_FILE
    source = f"the token {'generated into' if created else 'kept in'} {where}"
    return GatewayToken(token, source, generated=True)
