"""What ``/readyz`` and ``flynn doctor`` say of a running daemon's chat model: failing (no answer
since its failures), degraded (answers too) or ready, its failures by kind with what to do, and
never the key, the prompt or the error's text, nor a daemon made unready by it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from e2e_daemon import free_port, run_flynn
from fakes import Fail, FakeAnthropic, RecordedRequest, Reply, Step
from gateway_daemon import TOKEN, readyz, say, serving_daemon

from flynn.daemon import Daemon
from flynn.datadir import DataDirLock
from flynn.doctor import _readiness_checks
from flynn.settings import load_settings

KEY = "sk-ant-api03-ROTATEDAWAY0123456789abcdef"
MODEL = "claude-haiku-4-5"


def _answers(*steps: Step) -> Any:
    """The fake's responder: ``steps`` in turn, the last one for every request after."""
    queue = list(steps)

    def respond(request: RecordedRequest) -> Step:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


async def test_a_refused_key_then_rate_limits_show_in_readyz_and_doctor_says_what_to_do(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    """Before: ``/readyz`` said nothing of the chat model and doctor saw a daemon whose every
    reply failed as ready. The server echoes the key in its 401, as some do."""
    port = free_port()
    config = {
        "data_dir": str(tmp_path / "data"),
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": TOKEN}},
        "llm": {
            "provider": "anthropic",
            "base_url": fake_anthropic.base_url,
            "api_key": KEY,
            "model": MODEL,
            "max_retries": 1,
        },
        "memory": {"embeddings": False, "auto_extract": False},
        "logging": {"format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    settings = load_settings(config)
    settings.data_dir.mkdir(mode=0o700)
    refused = Fail("unauthorized", 401, f"invalid x-api-key: {KEY}")
    fake_anthropic.responder = _answers(refused)
    # Held as ``flynn run`` holds it, so doctor knows a daemon runs on this data dir.
    with DataDirLock(settings.data_dir):
        async with serving_daemon(Daemon(settings, {}, announce=lambda _: None)):
            frame = await say(port, "first", "My sister Lena moved to Porto.")
            assert KEY not in json.dumps(frame)
            status, body = await asyncio.to_thread(readyz, port)
            # Commands, reminders and the memory still work: the daemon stays in rotation.
            assert status == 200 and body["ready"] is True
            entry = body["model"]
            assert entry["state"] == "failing" and entry["degraded"] is True
            (model,) = entry["models"]
            assert (model["provider"], model["model"], model["state"]) == (
                "anthropic",
                MODEL,
                "failing",
            )
            assert model["key_from"] == "llm.api_key" and model["last_success_at"] is None
            assert [(f["kind"], f["count"]) for f in model["failures"]] == [("AuthFailed", 1)]
            failing = await run_flynn(
                "doctor", "--no-network", "--config", str(path), home=tmp_path
            )

            # The key rotated in; the provider now limits: one 429, then the retry answers.
            fake_anthropic.responder = _answers(Fail.rate_limited(retry_after="0"), Reply("hi"))
            frame = await say(port, "first", "And what about Porto?")
            assert frame["type"] == "reply"
            status, after = await asyncio.to_thread(readyz, port)
            assert status == 200 and after["model"]["state"] == "degraded"
            degraded = await run_flynn(
                "doctor", "--no-network", "--config", str(path), home=tmp_path
            )
    for text in (json.dumps(body), json.dumps(after), failing.stdout, failing.stderr):
        assert KEY not in text and KEY[:20] not in text
        assert "Porto" not in text and "invalid x-api-key" not in text

    lines = [line for line in failing.stdout.splitlines() if "running model" in line]
    assert lines == [
        f"[FAIL] running model: anthropic:{MODEL}: every call fails: AuthFailed x1 (last "
        + lines[0].split("(last ", 1)[1].split(" ago)")[0]
        + " ago); the key for anthropic is refused: check llm.api_key, then restart flynn"
    ], failing.stdout
    assert any(
        line.startswith("[ok  ] running daemon: ready") for line in failing.stdout.splitlines()
    )
    assert failing.code != 0  # every reply fails: a problem, not a remark

    lines = [line for line in degraded.stdout.splitlines() if "running model" in line]
    assert [line.split(":", 3)[3].split(" (")[0] for line in lines] == [
        " some calls fail: RateLimited x1",
        " some calls fail: AuthFailed x1",
    ], degraded.stdout
    assert lines[0].startswith("[warn] running model: anthropic:")
    assert "the provider is limiting requests" in lines[0]
    assert KEY not in degraded.stdout + degraded.stderr


def test_doctor_tells_each_kind_with_what_to_do_and_says_nothing_of_old_failures() -> None:
    def model(state: str, *failures: tuple[str, int]) -> dict[str, object]:
        return {
            "provider": "openai",
            "model": "gpt-x",
            "key_from": "OPENAI_API_KEY",
            "state": state,
            "last_success_at": None,
            "last_failure_at": "2026-11-28T12:00:00+00:00",
            "failures": [
                {
                    "kind": kind,
                    "count": 2,
                    "last_at": "2026-11-28T12:00:00+00:00",
                    "seconds_ago": ago,
                }
                for kind, ago in failures
            ],
        }

    body = {
        "ready": True,
        "sessions": 1,
        "model": {
            "state": "failing",
            "degraded": True,
            "models": [
                model("failing", ("ProviderTimeout", 3), ("AuthFailed", 900)),
                model("ready", ("RateLimited", 700)),
            ],
        },
    }
    lines = [check.line() for check in _readiness_checks(body)]
    assert lines == [
        "[ok  ] running daemon: ready (1 active session(s))",
        "[FAIL] running model: openai:gpt-x: every call fails: ProviderTimeout x2 (last 3 s "
        "ago); no answer within llm.timeout_seconds (or a stream silent past "
        "llm.stream_idle_seconds): the provider is slow or out of reach; raise them, or add "
        "llm.fallbacks",
    ]
    body["model"] = {"state": "ready", "degraded": False, "models": [model("ready")]}
    lines = [check.line() for check in _readiness_checks(body)]
    assert lines[-1] == "[ok  ] running model: openai:gpt-x answering"
