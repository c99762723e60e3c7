"""``flynn bench storage-copy``: ``flynn storage copy`` of an install padded as ``flynn bench
turn`` pads its store (``messages`` messages in sessions of 200, ``facts`` facts, ``reminders``
reminders, ``evals.turn``'s builders), into the empty PostgreSQL database at ``url``; then the
same copy again, which finds everything there. Rows are every table's, postings not counted."""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

from evals.turn import Zipf, _fill, _schedule, vocabulary
from flynn.app import App
from flynn.settings import load_settings
from flynn.storage_copy import copy_to_postgres


async def bench_storage_copy(
    *, url: str, messages: int, facts: int, reminders: int, seed: int = 7
) -> dict[str, object]:
    rng = random.Random(seed)
    zipf = Zipf(vocabulary(rng))
    with tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
        settings = load_settings(
            {
                "data_dir": str(Path(tmp)),
                "memory": {"user_namespace": "user"},
                "llm": {"provider": "offline"},
            }
        )
        app = App.open(settings, {})
        try:
            _fill(app, rng, zipf, messages=messages, facts=facts)
            _schedule(app, rng, zipf, reminders)
        finally:
            await app.aclose()
        started = time.perf_counter()
        report = copy_to_postgres(settings, url)
        seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = copy_to_postgres(settings, url)
        rerun_seconds = time.perf_counter() - started
    rows = sum(kind.source for kind in report.kinds if kind.kind != "message_terms")
    postings = sum(kind.source for kind in report.kinds if kind.kind == "message_terms")
    return {
        "messages": messages,
        "facts": facts,
        "reminders": reminders,
        "rows": rows,
        "term_instances": postings,
        "seconds": round(seconds, 2),
        "rows_per_second": round(rows / seconds),
        "messages_per_second": round(messages / seconds),
        "matches": report.matches,
        "rerun_seconds": round(rerun_seconds, 2),
        "rerun_copied": again.copied,
        "rerun_matches": again.matches,
    }
