"""What building the daemon's ``App`` loads: the SDK of a part nothing configures (an MCP server,
a Telegram or Discord channel, a vendor's model, PostgreSQL) is not imported, so a daemon does not
hold its modules resident (docs/embeddings.md, "Resident memory"). A guarantee on
``sys.modules`` in a fresh interpreter, not a measure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from e2e_daemon import clean_env

UNCONFIGURED = frozenset(
    {"mcp", "mcp_types", "httpx2", "telegram", "discord", "openai", "anthropic", "psycopg"}
)
"""The SDKs of parts the settings below leave out."""

_BUILD = """\
import asyncio, json, sys
from flynn.app import App
from flynn.settings import load_settings

async def main():
    settings = load_settings(json.loads(sys.argv[2]))
    app = App.open(settings, {})
    try:
        built = app.mcp is not None
    finally:
        await app.aclose()
    with open(sys.argv[1], "w") as out:
        json.dump({"mcp": built, "modules": sorted(sys.modules)}, out)

asyncio.run(main())
"""


def _built(tmp_path: Path, tools: dict[str, object]) -> tuple[bool, set[str]]:
    """Builds an ``App`` (offline model, SQLite in ``tmp_path``, ``tools`` as given) in a fresh
    interpreter; whether it has MCP servers, and every module imported by then."""
    report = tmp_path / "loaded.json"
    config = {
        "data_dir": str(tmp_path / "data"),
        "llm": {"provider": "offline"},
        "memory": {"embeddings": False},
        "tools": tools,
    }
    subprocess.run(
        [sys.executable, "-c", _BUILD, str(report), json.dumps(config)],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = json.loads(report.read_text(encoding="utf-8"))
    return bool(loaded["mcp"]), set(loaded["modules"])


def test_an_app_without_mcp_servers_channels_or_vendor_models_imports_none_of_their_sdks(
    tmp_path: Path,
) -> None:
    has_mcp, modules = _built(tmp_path, {"enabled": True})
    assert not has_mcp
    assert "flynn.app" in modules  # it built
    assert modules & UNCONFIGURED == set()


def test_the_check_sees_the_sdk_of_a_configured_mcp_server(tmp_path: Path) -> None:
    # Built, not started: nothing listens there and nothing connects.
    server = {"url": "http://127.0.0.1:9/mcp"}
    has_mcp, modules = _built(tmp_path, {"enabled": True, "mcp_servers": {"notes": server}})
    assert has_mcp
    assert {"mcp_types", "httpx2"} <= modules
