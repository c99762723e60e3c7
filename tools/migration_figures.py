"""What opening an existing SQLite store costs, migrations included: copies the store's folder to
a temporary one (the original is never opened), opens the copy with this checkout's schema, and
prints the CPU and wall seconds of the open. ``--topics N`` first moves every message and fact
into the sessions of N people of forum topics (``sessions/telegram:-100<k>:7/u<id>``, ten
topics), written with the copy's own schema, as an older Flynn wrote them. Run from the
repository root:

    .venv/bin/python tools/migration_figures.py STORE_DIR [--topics N] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(ROOT))

from flynn.memory.database import Database  # noqa: E402
from flynn.schedule.migrations import SCHEMA  # noqa: E402

_TOPIC_SESSION = "'sessions/telegram:-100' || (id % 10) || ':7/u' || (1000 + id % {people})"


def _into_topics(path: Path, people: int) -> None:
    session = _TOPIC_SESSION.format(people=people)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE messages SET namespace = {session}")
        db.execute(f"UPDATE facts SET namespace = {session} || '/profile'")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="a data_dir holding flynn.db")
    parser.add_argument("--topics", type=int, default=0, help="people of topics to move rows to")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="flynn-migration-") as scratch:
            copy = Path(scratch) / "data"
            shutil.copytree(args.store, copy)
            if args.topics:
                _into_topics(copy / "flynn.db", args.topics)
            cpu, wall = time.process_time(), time.perf_counter()
            Database.open(copy / "flynn.db", SCHEMA).close()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            load = os.getloadavg()[0]
            print(f"version {SCHEMA.latest}: cpu {cpu:.3f} s, wall {wall:.3f} s, load {load:.2f}")


if __name__ == "__main__":
    main()
