"""Graph latencies on a namespace of 5,000 entities and 10,000 relations, as one JSON object
(microseconds per call): ``.venv/bin/python tests/memory/bench_graph.py``. Not collected by pytest.
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from flynn.learning.graph_extraction import RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA

NS = "user/graph"
T0 = datetime(2026, 2, 25, tzinfo=UTC)
FIRST = "Maya Ana Bob Tom Lucia Omar Ines Yuki Pavel Chen Sara Ravi Noor Leo Ada Ivan".split()
LAST = "Lopez Reed Silva Tanaka Novak Haddad Costa Berg Moreau Okafor Kim Rossi".split()
TEMPLATES = [
    "my sister {p} works at {o} and I live in {c}.",
    "Had lunch with {p} today, we talked about the {j} project and {o}.",
    "can you remind me to call {p} tomorrow about the invoice?",
    "I'm working on {j}. {j} uses Postgres and {o} pays for it",
    "ok thanks, that makes sense. what about the deadline next week?",
    "Send the draft to {p} and cc maya@example.com, link is https://example.com/x",
    "{p} moved to {c} last month, she's at {o} now",
    "how do I fix this error in ~/src/app/main.py when running the tests?",
]


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_us": round(statistics.median(ordered) * 1e6, 1),
        "p99_us": round(ordered[int(len(ordered) * 0.99) - 1] * 1e6, 1),
    }


_T = TypeVar("_T")


def _timed(call: Callable[[_T], object], inputs: Sequence[_T]) -> dict[str, float]:
    samples = []
    for item in inputs:
        started = time.perf_counter()
        call(item)
        samples.append(time.perf_counter() - started)
    return _percentiles(samples)


def main() -> None:
    rng = random.Random(7)
    people = [f"{first} {last}{n}" for n in range(100) for first in FIRST for last in LAST[:3]]
    people = people[:3000]
    orgs = [f"Org{n} Labs" for n in range(1000)]
    cities = [f"City{n}" for n in range(500)]
    projects = [f"Proj{n}" for n in range(500)]
    with tempfile.TemporaryDirectory() as directory:
        memory = SqliteMemory.open(Path(directory) / "bench.db", SCHEMA)
        graph = memory.graph
        with graph.transaction():
            ids = [
                graph.upsert_entity(NS, name, kind, confidence=0.6, now=T0).id
                for names, kind in (
                    (people, "person"),
                    (orgs, "org"),
                    (cities, "place"),
                    (projects, "project"),
                )
                for name in names
            ]
            for _ in range(10_000):
                source, target = rng.sample(ids, 2)
                graph.relate(NS, source, target, "knows", confidence=0.5, now=T0)
        texts = []
        for _ in range(2000):
            template = rng.choice(TEMPLATES)
            texts.append(
                template.format(
                    p=rng.choice(people),
                    o=rng.choice(orgs),
                    c=rng.choice(cities),
                    j=rng.choice(projects),
                )
            )
        messages = [
            memory.history.append("user:chat", "user", "user", text, tokens=20, now=T0).id
            for text in texts
        ]
        extractor = RuleGraphExtractor()
        ingestor = GraphIngestor(graph, extractor)
        now = T0 + timedelta(days=1)
        results = {
            "entities": len(ids),
            "relations": 10_000,
            "rule_extract": _timed(extractor.extract, texts),
            "entities_in": _timed(lambda text: graph.entities_in(NS, text, limit=10), texts),
            "ingest": _timed(
                lambda pair: ingestor.ingest(NS, pair[0], pair[1], now=now),
                list(zip(texts, messages, strict=True)),
            ),
        }
        memory.close()
    print(json.dumps(results))


if __name__ == "__main__":
    main()
