"""A loaded model that fails at run time is told in the log once for each kind of failure (then
at most once a minute, with how many more), never as a traceback a turn or a batch, and the
embedding queue skips what it fails on at once instead of pausing to try it again."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import structlog
from fakes.embedder import FailingEmbedder, HashingEmbedder
from test_catch_up_attacks import NOW, ROOT, _row

from flynn.learning.embedding_queue import EmbeddingQueue
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import Embedder, SqliteVectors
from flynn.recall.embeddings import LoadingEmbedder
from flynn.recall.model_failures import REPEAT_SECONDS, ModelFailures
from flynn.settings import EmbeddingModel

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

pytest.importorskip("numpy")


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _raised(error: Exception) -> Exception:
    try:
        raise error
    except Exception as exc:
        return exc


def test_each_kind_is_told_once_then_at_most_once_a_minute() -> None:
    clock = _Clock()
    failures = ModelFailures("m", clock=clock)
    with structlog.testing.capture_logs() as logs:
        for _ in range(100):
            failures.failed(_raised(RuntimeError("onnxruntime: the text 'secret plan'")))
            clock.now += 0.5  # 50 s in all
        failures.failed(_raised(MemoryError()))
        clock.now += REPEAT_SECONDS
        failures.failed(_raised(RuntimeError("again")))
        failures.failed(_raised(RuntimeError("and again")))
    told = [(e["event"], e["error"], e.get("more")) for e in logs]
    assert told == [
        ("memory.model_failing", "RuntimeError", None),
        ("memory.model_failing", "MemoryError", None),
        ("memory.model_still_failing", "RuntimeError", 100),
    ]
    assert all(e["log_level"] == "warning" and "exc_info" not in e for e in logs)
    assert "test_model_failures.py" in logs[0]["at"]
    assert "secret plan" not in repr(logs)  # an error's message may quote the text
    assert failures.failures == {"RuntimeError": 1, "MemoryError": 0}


def _failing(clock: _Clock) -> LoadingEmbedder:
    def load(model: EmbeddingModel) -> Embedder:
        return FailingEmbedder("")  # in every text: fails on everything

    model = LoadingEmbedder("auto", load, clock=clock)
    assert model.load()
    return model


async def test_a_model_failing_on_everything_is_one_warning_and_no_pause(
    memory: SqliteMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On main: a traceback (log.exception) for each new batch and each of the pass's three
    # attempts, with 1 s and 2 s pauses between them that held up the whole queue; here the
    # retry pause is made a minute, so that a pause shows as the deadline passing.
    monkeypatch.setattr("flynn.learning.embedding_queue._RETRY_SECONDS", 60.0)
    model = _failing(_Clock())
    vectors = SqliteVectors(memory.db, model)
    queue = EmbeddingQueue(vectors, memory.history, _row, batch=4)
    stored = [
        memory.history.append("s1", ROOT, "user", f"note {i} about tea", tokens=4, now=NOW)
        for i in range(20)
    ]
    with structlog.testing.capture_logs() as logs:
        async with asyncio.timeout(20):  # within seconds instead of minutes
            await asyncio.gather(*(queue.embed(message) for message in stored[:6]))
            assert await queue.catch_up(ROOT) == 0
            assert await queue.catch_up(ROOT) == 0  # as the next start does
    await queue.aclose()
    assert vectors.unembedded(ROOT) == 20
    loud = [e for e in logs if e["log_level"] in ("warning", "error", "critical")]
    assert [e["event"] for e in loud] == ["memory.model_failing"]
    assert [e for e in logs if "exc_info" in e] == []


async def test_a_model_failing_on_one_text_still_embeds_the_others(
    memory: SqliteMemory,
) -> None:
    # The pass skips what the model refuses and goes on; one warning for its kind.
    def load(model: EmbeddingModel) -> Embedder:
        return FailingEmbedder("poison")

    model = LoadingEmbedder("auto", load, clock=_Clock())
    assert model.load()
    for i in range(30):
        text = "a poison pill" if i % 10 == 3 else f"note {i} about tea"
        memory.history.append("s1", ROOT, "user", text, tokens=4, now=NOW)
    vectors = SqliteVectors(memory.db, model)
    queue = EmbeddingQueue(vectors, memory.history, _row, batch=4)
    with structlog.testing.capture_logs() as logs:
        # Each poison and the message after it (embedded with its end as context) go without.
        assert await queue.catch_up(ROOT) == 30 - 6
    await queue.aclose()
    loud = [e for e in logs if e["log_level"] in ("warning", "error", "critical")]
    assert [e["event"] for e in loud] == ["memory.model_failing"]


async def test_a_daemon_whose_model_fails_on_every_question_warns_once(tmp_path: Path) -> None:
    from gateway_daemon import gateway_settings, say, serving

    from evals.scripted_provider import ScriptedProvider

    provider = ScriptedProvider(default="noted")
    with structlog.testing.capture_logs() as logs:
        async with serving(
            gateway_settings(tmp_path / "data"), provider, FailingEmbedder("")
        ) as port:
            for client in ("first", "second", "third", "fourth"):
                assert (await say(port, client, "Where does Lena work?"))["type"] == "reply"
    failing = [e for e in logs if e["event"].startswith("memory.model_")]
    assert [e["event"] for e in failing] == ["memory.model_failing"]
    assert [e["event"] for e in logs if "exc_info" in e] == []


def test_a_healthy_model_tells_nothing() -> None:
    model = LoadingEmbedder("auto", lambda _: HashingEmbedder())
    assert model.load()
    with structlog.testing.capture_logs() as logs:
        model.embed(["tea"])
    assert logs == []


class _Outage(HashingEmbedder):
    """A model that fails on every call while ``failing`` calls remain (a moment out of memory,
    say), then works again."""

    def __init__(self, failing: int) -> None:
        self.failing = failing

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.failing > 0:
            self.failing -= 1
            raise MemoryError
        return super().embed(texts)


async def test_a_batch_skipped_in_a_moment_of_failure_is_tried_again_by_its_pass(
    memory: SqliteMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first batch and each of its four messages alone fail (five calls), then the model
    # works. On main the pass skipped those four for good: left without vectors until the next
    # start, where before the skip the pass tried the batch again.
    monkeypatch.setattr("flynn.learning.embedding_queue._RETRY_SECONDS", 0.0)
    outage = _Outage(failing=5)
    model = LoadingEmbedder("auto", lambda _: outage, clock=_Clock())
    assert model.load()
    for i in range(20):
        memory.history.append("s1", ROOT, "user", f"note {i} about tea", tokens=4, now=NOW)
    vectors = SqliteVectors(memory.db, model)
    queue = EmbeddingQueue(vectors, memory.history, _row, batch=4)
    with structlog.testing.capture_logs():
        embedded = await queue.catch_up(ROOT)
    await queue.aclose()
    assert outage.failing == 0
    assert (embedded, vectors.unembedded(ROOT)) == (20, 0)
