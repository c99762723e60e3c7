"""The embedding model's life in a running Flynn (``memory.embeddings``): named when the app opens
(``embeddings_for``: a missing package is a warning, never an error), loaded once in a worker
thread after the daemon serves (``load``; recall is by words until then), then the catch-up of
every stored message without a vector, one person at a time, the most recently active first
(``catch_up``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import structlog

from flynn.errors import StoreError
from flynn.learning.turns import MemoryWriter
from flynn.memory.embedding_progress import PersonProgress
from flynn.memory.embeddings_health import EmbeddingsStatus
from flynn.memory.vector_index import return_free_memory
from flynn.memory.vectors import Embedder
from flynn.recall.embeddings import (
    LoadingEmbedder,
    install_hint,
    missing_package,
    model_name,
    one_blas_thread,
)
from flynn.settings import EmbeddingModel, Settings

log = structlog.get_logger(__name__)

FAILING_SECONDS = 600.0
"""A loaded model is ``failing`` while its last failure is this recent (10 minutes): long
enough for ``flynn doctor`` run after a complaint to see it, short enough that one odd text
does not mark it for the rest of the day (the counts stay in ``/readyz`` after)."""

EmbedderLoader = Callable[[EmbeddingModel], Embedder]
"""What loads the embedding model a setting names (``load_embedder``; tests pass one that waits)."""


def embeddings_for(settings: Settings, load: EmbedderLoader) -> LoadingEmbedder | None:
    """The embedding model, not loaded yet; ``None`` with ``memory.embeddings`` off, or when a
    package it needs is missing: then a warning, and recall is by words. Not a config error,
    even when set outright: ``flynn init`` writes every key, so most configs do, and a daemon
    that recalls by words is better than none (``flynn doctor`` says what to install)."""
    memory = settings.memory
    if not memory.embeddings:
        return None
    missing = missing_package(memory.embeddings_model)
    if missing is None:
        return LoadingEmbedder(memory.embeddings_model, load)
    install = install_hint(missing)
    log.warning(
        "memory.embeddings_unavailable",
        problem=f"{missing} is not installed; recall finds memories by words only",
        fix=f"{install}, or set memory.embeddings: off",
    )
    return None


def load(embeddings: LoadingEmbedder | None) -> bool:
    """Loads the embedding model, blocking (call it in a worker thread from async code);
    returns whether recall can use it. A model that cannot load is logged once, with what
    to do, and recall stays by words; calling again returns at once."""
    if embeddings is None:
        return False
    first = not embeddings.ready and embeddings.problem is None
    started = time.perf_counter()
    if embeddings.load():
        if first:
            one_blas_thread()  # numpy is loaded now: its BLAS can be capped
            # Loading reads and rewrites the 23 MB file, then lets both copies go: the daemon
            # at rest stayed about 20 MB larger for them.
            return_free_memory()
            log.info(
                "memory.embeddings_loaded",
                model=embeddings.model,
                seconds=round(time.perf_counter() - started, 2),
            )
        return True
    if first:
        log.warning(
            "memory.embeddings_unavailable",
            model=embeddings.model,
            problem=embeddings.problem,
            fix="reinstall the model (make run does) or set memory.embeddings: off",
        )
    return False


async def catch_up(
    embeddings: LoadingEmbedder | None,
    progress: Callable[[str], list[PersonProgress]],
    writer: MemoryWriter,
) -> None:
    """Loads the embedding model (in a worker thread: the event loop keeps serving), then
    embeds every message that has no vector (``progress(model)``: who has how many), one
    person at a time, the most recently
    active first, so the people using flynn now are found by meaning soonest. Batches go
    through the writer's queue, one thread, after the new turns (a pass is resumed from
    the database: what has a vector is done). On cancellation the load, if still running,
    ends in its thread, unused."""
    if embeddings is None or not await asyncio.to_thread(load, embeddings):
        return
    started = time.perf_counter()
    total = 0
    try:
        people = progress(embeddings.model)
    except StoreError:
        log.exception("memory.embedding_failed")  # the next start tries again
        return
    for person in people:
        if person.missing:
            done = await writer.embed_missing(person.root)
            total += done
            log.info("memory.embeddings_caught_up", person=person.root, messages=done)
    if total:
        seconds = time.perf_counter() - started
        log.info(
            "memory.embeddings_backfilled",
            messages=total,
            seconds=round(seconds, 1),
            per_second=round(total / seconds, 1) if seconds > 0 else None,
        )


def status(settings: Settings, embeddings: LoadingEmbedder | None) -> EmbeddingsStatus:
    """What ``/readyz`` says of the embedding model: ``off`` (``memory.embeddings`` off),
    ``unavailable`` (a package missing, the model damaged: with what to do), ``loading``,
    ``ready``, or ``failing`` (loaded, and it failed on a text within ``FAILING_SECONDS``; the
    kinds and counts, never the text). Recall is by words in all but ``ready``."""
    if not settings.memory.embeddings:
        return EmbeddingsStatus("off", None, "memory.embeddings is off: recall is by words")
    if embeddings is None:
        model = model_name(settings.memory.embeddings_model)
        missing = missing_package(settings.memory.embeddings_model)
        if missing is None:  # installed after the start
            detail = "it was not installed when flynn started: restart flynn to use it"
        else:
            detail = f"{missing} is not installed: {install_hint(missing)}"
        return EmbeddingsStatus("unavailable", model, detail + "; recall is by words")
    if embeddings.problem is not None:
        return EmbeddingsStatus(
            "unavailable", embeddings.model, embeddings.problem + "; recall is by words"
        )
    if not embeddings.ready:
        return EmbeddingsStatus(
            "loading", embeddings.model, "loading; recall is by words meanwhile"
        )
    failures = embeddings.failures()
    if failures and failures[0].seconds_ago < FAILING_SECONDS:
        told = ", ".join(f"{failure.kind} x{failure.count}" for failure in failures)
        return EmbeddingsStatus(
            "failing",
            embeddings.model,
            f"failed on texts ({told}); those are recalled by words and stored without a "
            "vector (memory.model_failing in the log says where)",
            failures,
        )
    return EmbeddingsStatus("ready", embeddings.model, "loaded", failures)
