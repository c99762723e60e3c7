"""What every ``flynn`` command shares: its exit codes, the usage error, the settings read once
from the config file and the environment, its logging and its clock.

The ``cli*`` modules import at their top only what building the parser needs, and each command
imports the rest when it runs: ``flynn --help``, ``--version`` and a wrong argument never load
the settings' models or the composition root (``tests/test_cli_startup.py``)."""

from __future__ import annotations

import argparse
import getpass
import os
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.errors import ConfigError, ConfigProblem, FlynnError

if TYPE_CHECKING:
    from flynn.settings import Settings

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_STORAGE = 4
EXIT_LOCKED = 5

LOG_FILE_MAX_BYTES = 1_000_000
"""A log file past this size is moved aside (to ``NAME.1``, replacing the last one) when a
command opens it, so a log file never holds more than about twice this."""


class UsageError(FlynnError):
    """A command-line argument is wrong (exit 2, like invalid configuration, but said as what it
    is: nothing in the config file needs fixing). Raised by the commands, handled by ``main``."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"invalid argument {option}: {message}")


def command_settings(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> Settings:
    """The settings of ``--config`` (else ``$FLYNN_CONFIG``, else the defaults) under the
    ``FLYNN_*`` variables; raises ``ConfigError``, also for a data dir that is a file."""
    from flynn.datadir import not_a_directory
    from flynn.settings import load_settings, parse_yaml

    env = os.environ if env is None else env
    path: Path | None = getattr(args, "config", None)
    source = "--config"
    if path is None and env.get("FLYNN_CONFIG"):
        path, source = Path(env["FLYNN_CONFIG"]), "FLYNN_CONFIG"
    if path is None:
        settings = load_settings({}, env=env)
    else:
        path = path.expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            problem = ConfigProblem(source, f"cannot read {path}: {exc.strerror or exc}")
            raise ConfigError([problem]) from None
        except UnicodeDecodeError as exc:
            problem = ConfigProblem("file", f"not valid UTF-8 (byte {exc.start})")
            raise ConfigError([problem], str(path)) from None
        settings = load_settings(parse_yaml(text, str(path)), str(path), env=env)
    # Every command opens the data dir; one that is a file is the configuration's fault.
    error = not_a_directory(settings.data_dir)
    if error is not None:
        raise error
    return settings


def command_logging(settings: Settings, *, quiet: bool = False) -> None:
    from flynn.logs import configure_logging

    level = settings.logging.level
    if quiet and level in ("debug", "info"):
        # An interactive session would drown in turn logs; debug still shows everything.
        level = "debug" if level == "debug" else "warning"
    configure_logging(level, settings.logging.format, secrets=install_secrets(settings, os.environ))


def install_secrets(settings: Settings, env: Mapping[str, str]) -> list[str]:
    """The install's own secrets, by value, for the logs to strike whatever their shape: every
    secret setting (API keys, channel tokens, the gateway token, ``storage.url``), each MCP
    server's headers and the credentials of its environment, and the credentials of this
    process's environment (``ANTHROPIC_API_KEY``...); of any URL set (``llm.base_url``,
    ``webhook_url``...), its password and the credentials of its query (``?api_key=``)."""
    from urllib.parse import parse_qsl, urlsplit

    from pydantic import BaseModel, SecretStr

    from flynn.logs import named_credentials

    found: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, str) and "://" in value:
            try:
                url = urlsplit(value)
                found.extend([url.password] if url.password else [])
            except ValueError:
                return  # not a URL after all (a bad port): nothing of it is a secret we know
            found.extend(named_credentials(dict(parse_qsl(url.query))))
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name))
        elif isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(settings)
    for server in settings.tools.mcp_servers.values():
        found.extend(server.headers.values())
        found.extend(named_credentials(server.env))
    found.extend(named_credentials(env))
    return found


def file_logging(settings: Settings, path: Path) -> bool:
    """Sends the logs to ``path`` instead of stderr, at the configured level: for ``flynn chat``
    on a terminal, where a log line would land in the middle of the conversation. The file is
    appended to (a line at a time, so ``tail -f`` follows it) and kept 0600, since it lies in the
    data dir; one past ``LOG_FILE_MAX_BYTES`` is moved aside first.

    Returns ``False``, having changed nothing, when the file cannot be opened (the data dir
    cannot be created, say); the caller then logs to stderr, and opening the data dir says why."""
    from flynn.datadir import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, make_private
    from flynn.logs import configure_logging

    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        make_private(path)  # an existing one, before it may be moved aside; a new one is 0600
        if path.is_file() and path.stat().st_size > LOG_FILE_MAX_BYTES:
            path.replace(path.with_name(path.name + ".1"))
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE_FILE_MODE)
    except OSError:
        return False
    # Open for the rest of the process, as stderr is: log lines may come until it exits.
    stream = os.fdopen(descriptor, "a", buffering=1, encoding="utf-8")
    secrets = install_secrets(settings, os.environ)
    configure_logging(settings.logging.level, settings.logging.format, stream, secrets=secrets)
    return True


def local_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "local"


def utc_now() -> datetime:
    """The commands' clock (the daemon's is ``flynn.app.utc_now``, which a light command such
    as ``flynn users list`` should not load the composition root for)."""
    return datetime.now(UTC)
