"""``flynn bench embed``: what the embedding model costs the daemon. A dataset's turns are
stored with the model not yet loaded (as before an upgrade, or during start-up); then the model
is loaded and the turns embedded by the daemon's own catch-up (``Daemon._embed_behind``: one
person at a time through the writer's queue, one worker thread). Reports the load's time, the
catch-up's turns per second and CPU seconds per turn (all threads: ``time.process_time``), the
process's resident memory before and after the load, and the model's size on disk."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from evals.recall import _ingest, load_dataset
from evals.scripted_provider import ScriptedProvider
from flynn.app import App
from flynn.providers.base import TASKS, Provider, Task
from flynn.recall import minilm, minilm_int8
from flynn.recall.embeddings import chosen_model
from flynn.settings import EmbeddingModel, load_settings


def resident_mib() -> float | None:
    """This process's resident memory (``VmRSS``), in MiB; ``None`` where /proc has none."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return None


def _model_mib(model: EmbeddingModel) -> float | None:
    """The installed model's files (the float MiniLM's wheel directory, or the int8 MiniLM's
    ``model.onnx``), in MiB."""
    chosen = chosen_model(model)
    if chosen == "minilm-int8":
        path = minilm_int8.model_file()
        return None if path is None else round(path.stat().st_size / 2**20, 1)
    directory = minilm.model_dir() if chosen == "minilm" else None
    if directory is None:
        return None
    size = sum(path.stat().st_size for path in directory.rglob("*") if path.is_file())
    return round(size / 2**20, 1)


async def bench_embed(dataset: str, *, model: EmbeddingModel = "auto") -> dict[str, Any]:
    """Stores ``dataset``'s turns, loads ``model``, embeds them all; one result object."""
    data = load_dataset(dataset)
    with tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
        settings = load_settings(
            {
                "data_dir": tmp,
                "llm": {"provider": "offline"},
                "memory": {"embeddings": True, "embeddings_model": model},
            }
        )
        provider = ScriptedProvider(default="ok")
        providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
        app = App.open(settings, {}, providers=providers)
        try:
            _ingest(app, data)  # the model is not loaded: nothing is embedded yet
            assert app.embeddings is not None
            before = resident_mib()
            started, cpu = time.perf_counter(), time.process_time()
            if not app.load_embeddings():
                raise RuntimeError(f"the embedding model cannot load: {app.embeddings.problem}")
            load_seconds = time.perf_counter() - started
            load_cpu = time.process_time() - cpu
            loaded = resident_mib()
            writer = app.services.learning.writer
            people = app.storage.embedding_progress(app.embeddings.model)
            started, cpu = time.perf_counter(), time.process_time()
            turns = 0
            for person in people:
                turns += await writer.embed_missing(person.root)
            seconds = time.perf_counter() - started
            cpu_seconds = time.process_time() - cpu
            after = resident_mib()
            left = sum(p.missing for p in app.storage.embedding_progress(app.embeddings.model))
            name = app.embeddings.model
        finally:
            await app.aclose()
    return {
        "bench": "embed",
        "dataset": dataset,
        "model": name,
        "model_mib_on_disk": _model_mib(model),
        "load_seconds": round(load_seconds, 2),
        "load_cpu_seconds": round(load_cpu, 2),
        "people": len(people),
        "turns_embedded": turns,
        "turns_left": left,
        "seconds": round(seconds, 2),
        "turns_per_second": round(turns / seconds, 1) if seconds > 0 else None,
        "cpu_ms_per_turn": round(1000 * cpu_seconds / turns, 2) if turns else None,
        "rss_mib_before_load": before,
        "rss_mib_model_loaded": loaded,
        "rss_mib_after_embedding": after,
    }
