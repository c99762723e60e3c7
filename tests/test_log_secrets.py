"""The install's own secrets never reach a log line, whatever their shape and whichever way
they come: a key a model server echoes in its 401, quoted by the traceback of the error it
caused; a traceback on the console; a line of one of our libraries (stdlib logging)."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import structlog
from e2e_daemon import free_port, openai_llm, running_daemon
from fakes import Fail, FakeOpenAI, RecordedRequest, Step
from gateway_daemon import TOKEN, say

from flynn.cli_settings import install_secrets
from flynn.logs import configure_logging
from flynn.settings import load_settings

KEY = "proxy7f3a9c2e55d1b0aa"
"""A key of an OpenAI-compatible proxy: no vendor's shape, so the credential gate alone keeps it."""


async def test_a_key_the_server_echoes_is_in_no_line_of_a_failed_distillation(
    tmp_path: Path,
) -> None:
    """Before: ``schedule.run_failed`` logged the traceback of the mid-tier distillation's
    ``AuthFailed``, whose cause (the SDK's error) quoted the server's message with the key."""
    port = free_port()
    async with FakeOpenAI() as model:

        def refuse(request: RecordedRequest) -> Step:
            return Fail("unauthorized", 401, f"Incorrect API key provided: {KEY}")

        model.responder = refuse
        config: dict[str, Any] = {
            "data_dir": str(tmp_path / "data"),
            "llm": openai_llm(model.base_url, KEY),
            "memory": {"user_namespace": "user", "auto_extract": False, "embeddings": False},
            "distill": {"short": "off", "mid": "* * * * *", "long": "off"},
            "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": TOKEN}},
            "logging": {"format": "json"},
        }
        async with running_daemon(tmp_path, config) as daemon:
            assert (await say(port, "tab", "I moved to Lisbon in May."))["type"] == "error"
            # The mid tier runs at the next minute: material (the stored message), the model.
            failed = await daemon.wait_for("schedule.run_failed", patience=150)
            assert await daemon.stop() == 0
    assert any(r.headers.get("authorization") == f"Bearer {KEY}" for r in model.requests)
    assert "AuthenticationError" in failed["exception"]  # the cause is logged, without the key
    lines = [json.dumps(record) for record in daemon.events] + daemon.other_lines
    assert not [line for line in lines if KEY in line]


def _configured(fmt: str, *secrets: str) -> io.StringIO:
    stream = io.StringIO()
    configure_logging("info", "console" if fmt == "console" else "json", stream, secrets=secrets)
    return stream


def test_a_traceback_on_the_console_and_a_librarys_line_are_redacted() -> None:
    """Before: the console renderer formatted the traceback after the event was redacted, and
    the stdlib's lines (python-telegram-bot, the MCP client, asyncio) were not redacted at all."""
    bot_token = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
    for fmt in ("console", "json"):
        stream = _configured(fmt, KEY)
        try:
            raise RuntimeError(f"refused: {KEY} and {bot_token}")
        except RuntimeError:
            structlog.get_logger("test").exception("it.failed", said=f"key {KEY}")
        try:
            raise ValueError(f"server said {KEY}")
        except ValueError:
            logging.getLogger("telegram.ext").exception("polling: %s", bot_token)
        logging.getLogger("mcp.client").warning("session ended: %s", KEY)
        written = stream.getvalue()
        assert "RuntimeError: refused" in written and "ValueError: server said" in written
        assert "polling: " in written and "session ended: " in written
        assert KEY not in written and bot_token not in written, written


def test_the_installs_secrets_are_every_secret_setting_and_credential_in_the_environment() -> None:
    settings = load_settings(
        {
            "llm": {
                "provider": "openai",
                "api_key": "llm-key-0123",
                "base_url": "https://proxy.example/v1?api_key=query-key-0123&region=eu-west",
            },
            "channels": {
                "telegram": {"token": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"},
                "gateway": {"token": "gateway-token-0123456789"},
            },
            "storage": {"url": "postgresql://app:pg-password-77@db/flynn"},
            "tools": {
                "mcp_servers": {
                    "web": {"url": "https://mcp.example/mcp", "headers": {"X-Key": "hdr-value-9"}},
                    "git": {
                        "command": "git-mcp",
                        "env": {"GITHUB_TOKEN": "gh-value-9", "HOME": "/h"},
                    },
                }
            },
        }
    )
    found = install_secrets(settings, {"ANTHROPIC_API_KEY": "env-key-0123", "PATH": "/usr/bin"})
    for secret in (
        "llm-key-0123",
        "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ",
        "gateway-token-0123456789",
        "postgresql://app:pg-password-77@db/flynn",
        "hdr-value-9",
        "gh-value-9",
        "env-key-0123",
        "query-key-0123",
    ):
        assert secret in found
    assert not {"/h", "/usr/bin", "eu-west"} & set(found)
