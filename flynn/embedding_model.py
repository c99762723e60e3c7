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
from flynn.memory.vector_index import return_free_memory
from flynn.memory.vectors import Embedder
from flynn.recall.embeddings import (
    LoadingEmbedder,
    install_hint,
    missing_package,
    one_blas_thread,
)
from flynn.settings import EmbeddingModel, Settings

log = structlog.get_logger(__name__)

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


def state(embeddings: LoadingEmbedder | None) -> str:
    """What ``daemon.ready`` says of the embedding model: ``off`` (or it cannot load),
    ``ready``, or ``loading`` (``memory.embeddings_loaded`` or ``_unavailable`` follows)."""
    if embeddings is None or embeddings.problem is not None:
        return "off"
    return "ready" if embeddings.ready else "loading"
