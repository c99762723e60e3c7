"""What the re-redaction after an upgrade (``flynn.memory.redaction``) costs on a store of
100,000 messages (Zipf sentences of 5 to 40 words, as ``evals/turn.py`` fills one; one in a
hundred holds a credential on the line below its words, written with the gate switched off as an
older version wrote it) and 2,000 facts: the pass's CPU and wall seconds, rows a second, and how
long it held the writer at a time (each batch's transaction), and how long the event loop's
steps waited meanwhile (a task waking every millisecond: the pause between two wakings). With
``--chars N`` each message is Zipf words up to about N characters (long ones). Run from the
repository root:

    .venv/bin/python tools/redaction_figures.py [--messages N] [--chars N] [--batch-rows N]
        [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(ROOT))

import flynn.memory.history  # noqa: E402
from evals.turn import Zipf, vocabulary  # noqa: E402
from flynn.memory.redaction import (  # noqa: E402
    Batch,
    Change,
    RedactionCounts,
    RedactionPass,
    SqliteRedaction,
)
from flynn.memory.store import NewFact  # noqa: E402
from flynn.memory.stores import SqliteMemory  # noqa: E402
from flynn.schedule.migrations import SCHEMA  # noqa: E402

SAID = "my wifi password is\nGuestNet2024"


def fill(path: Path, messages: int, facts: int, chars: int = 0) -> None:
    rng = random.Random(7)
    zipf = Zipf(vocabulary(rng))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    gate = flynn.memory.history.redact
    flynn.memory.history.redact = lambda text: (text, 0)  # type: ignore[assignment]
    try:
        with SqliteMemory.open(path, SCHEMA) as memory, memory.db.transaction():
            for index in range(messages):
                text = zipf.sentence(rng, rng.randint(5, 40))
                while len(text) < chars:
                    text = f"{text} {zipf.sentence(rng, 40)}"
                if index % 100 == 0:
                    text = f"{text}\n{SAID}"
                memory.history.append(
                    f"bench:history-{index // 200}",
                    "user",
                    "user" if index % 2 == 0 else "assistant",
                    text,
                    tokens=len(text) // 4 + 1,
                    now=start + timedelta(minutes=index),
                )
            for index in range(facts):
                memory.facts.add(
                    NewFact("user/facts", "observation", zipf.sentence(rng, 8)),
                    now=start + timedelta(minutes=index),
                )
    finally:
        flynn.memory.history.redact = gate  # type: ignore[assignment]


def measure(path: Path, batch_rows: int) -> dict[str, float]:
    held: list[float] = []
    with SqliteMemory.open(path, SCHEMA) as memory:
        store = SqliteRedaction(memory.db)
        write = store.write

        def timed(batch: Batch, found: list[Change]) -> tuple[int, int]:
            began = time.perf_counter()
            try:
                return write(batch, found)
            finally:
                held.append(time.perf_counter() - began)

        store.write = timed  # type: ignore[method-assign]
        redaction = RedactionPass(store, batch_rows=batch_rows)
        pauses: list[float] = []

        async def run() -> RedactionCounts | None:
            finished = asyncio.Event()

            async def tick() -> None:
                last = time.perf_counter()
                while not finished.is_set():
                    await asyncio.sleep(0.001)
                    now = time.perf_counter()
                    pauses.append(now - last)
                    last = now

            ticking = asyncio.create_task(tick())
            try:
                return await redaction.run_behind()
            finally:
                finished.set()
                await ticking

        cpu, wall = time.process_time(), time.perf_counter()
        counts = asyncio.run(run())
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert counts is not None
    rows = sum(counts.seen.values())
    return {
        "rows": rows,
        "changed": sum(counts.changed.values()),
        "cpu_s": cpu,
        "wall_s": wall,
        "rows_per_s_cpu": rows / cpu,
        "writer_held_p50_ms": statistics.median(held) * 1000,
        "writer_held_max_ms": max(held) * 1000,
        "loop_pause_p50_ms": statistics.median(pauses) * 1000,
        "loop_pause_p99_ms": statistics.quantiles(pauses, n=100)[98] * 1000,
        "loop_pause_max_ms": max(pauses) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--facts", type=int, default=2_000)
    parser.add_argument("--chars", type=int, default=0, help="each message at least this long")
    parser.add_argument("--batch-rows", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        filled = Path(folder) / "filled.db"
        fill(filled, args.messages, args.facts, args.chars)
        for run in range(args.runs):
            copy = Path(folder) / f"run-{run}.db"
            shutil.copy(filled, copy)
            figures = measure(copy, args.batch_rows)
            print({key: round(value, 2) for key, value in figures.items()}, flush=True)
            copy.unlink()


if __name__ == "__main__":
    main()
