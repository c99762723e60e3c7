"""Recall over conversation history on SQLite and on PostgreSQL, side by side: a dataset's turns
stored in both (as ``flynn bench recall`` stores them, without facts, graph or vectors, which have
no PostgreSQL store yet), every question ranked by the same ``Recall``, and the figures and
latencies of each; the bar is equal figures. (``flynn bench recall --storage-url`` now runs the
whole of recall, every store, on PostgreSQL; this compares history search alone.)

    python -m evals.history_backends --url postgresql://user:pw@host/db [--dataset handwritten]

The PostgreSQL database must be empty (or hold only an earlier run's schema: ``--url`` with a
``search_path`` of a fresh schema).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evals.recall import (
    TURN_BUDGETS,
    TURN_SPACING,
    Dataset,
    Question,
    _scope,
    _session_key,
    _session_recall,
    _turn_budget,
    _turn_recall,
    _Where,
    load_dataset,
)
from evals.turn import percentile
from flynn.memory.store import Facts, History, MessageRole
from flynn.memory.stores import SqliteMemory
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.history import PostgresHistory
from flynn.recall.recall import Recall
from flynn.schedule.migrations import SCHEMA
from flynn.settings import MemorySettings

SESSIONS_AT = 5


def ingest(history: History, dataset: Dataset) -> tuple[dict[int, _Where], dict[str, datetime]]:
    """Every turn, in ``evals.recall``'s order, namespaces and session keys."""
    where: dict[int, _Where] = {}
    last: dict[str, datetime] = {}
    for conversation in dataset.conversations:
        root = _scope(conversation.id).root
        person = next(
            (turn.speaker for s in conversation.sessions for turn in s.turns), conversation.id
        )
        for session in sorted(conversation.sessions, key=lambda s: s.time):
            key = _session_key(conversation.id, session.id)
            for index, turn in enumerate(session.turns):
                now = session.time + index * TURN_SPACING
                role: MessageRole = "user" if turn.speaker == person else "assistant"
                text = f"{turn.speaker}: {turn.text}"
                stored = history.append(key, root, role, text, tokens=len(text) // 4, now=now)
                where[stored.id] = _Where(conversation.id, session.id, turn.id)
                last[conversation.id] = max(last.get(conversation.id, now), now)
    return where, last


def evaluate(
    recall: Recall,
    history: History,
    dataset: Dataset,
    where: dict[int, _Where],
    last: dict[str, datetime],
) -> dict[str, object]:
    """Turn recall within 10/20/25/35 turns, session recall at 5, and what ranking and a
    recall-wide search of history alone took per question."""
    sessions_of = {
        (c.id, t.id): s.id for c in dataset.conversations for s in c.sessions for t in s.turns
    }
    within: dict[int, list[float]] = {budget: [] for budget in TURN_BUDGETS}
    sessions: list[float] = []
    ranking: list[float] = []
    searching: list[float] = []
    ranked: list[list[int]] = []

    def asked_at(question: Question) -> datetime:
        if question.time is not None:
            return question.time
        return last.get(question.conversation, datetime.now(UTC)) + timedelta(days=1)

    for question in dataset.questions:
        root = _scope(question.conversation).root
        began = time.perf_counter()
        items = recall.rank(
            root,
            question.question,
            now=asked_at(question),
            limit=50,
            exclude_session=_session_key(question.conversation, "question"),
        )
        ranking.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        history.match(root, question.question, limit=50, wide=True)
        searching.append((time.perf_counter() - began) * 1000)
        ranked.append([m for item in items for m in item.message_ids])
        evidence = set(question.evidence)
        if not evidence:
            continue
        for budget in TURN_BUDGETS:
            shown = _turn_budget(items, where, budget)
            within[budget].append(_turn_recall(items, evidence, where, shown))
        evidence_sessions = {sessions_of[(question.conversation, turn)] for turn in evidence}
        sessions.append(
            _session_recall(items, evidence_sessions, question.conversation, SESSIONS_AT)
        )
    return {
        "turn_at_turns": {str(b): _mean(within[b]) for b in TURN_BUDGETS},
        f"session@{SESSIONS_AT}": _mean(sessions),
        "rank_ms": _latency(ranking),
        "history_match_ms": _latency(searching),
        "ranked_message_ids": ranked,
    }


def compare(dataset: Dataset, url: str) -> dict[str, object]:
    """Both backends' figures for ``dataset``, and how many questions were ranked alike."""
    settings = MemorySettings()
    results: dict[str, dict[str, object]] = {}
    with (
        tempfile.TemporaryDirectory(prefix="flynn-history-backends-") as tmp,
        SqliteMemory.open(Path(tmp) / "flynn.db", SCHEMA) as sqlite,
        SqliteMemory.open(Path(tmp) / "facts.db", SCHEMA) as empty,
        PostgresDatabase.open(url) as pg,
    ):
        stores: dict[str, History] = {"sqlite": sqlite.history, "postgresql": PostgresHistory(pg)}
        for name, history in stores.items():
            began = time.perf_counter()
            where, last = ingest(history, dataset)
            ingest_s = time.perf_counter() - began
            recall = _recall(empty.facts, history, settings)
            evaluate(recall, history, dataset, where, last)  # warm: caches, the server's too
            results[name] = evaluate(recall, history, dataset, where, last)
            results[name]["ingest_s"] = round(ingest_s, 2)
    orders = [results[name].pop("ranked_message_ids") for name in ("sqlite", "postgresql")]
    same = sum(a == b for a, b in zip(*orders, strict=True))
    return {
        "dataset_turns": sum(len(s.turns) for c in dataset.conversations for s in c.sessions),
        "questions": len(dataset.questions),
        "questions_ranked_identically": same,
        **results,
    }


def _recall(facts: Facts, history: History, settings: MemorySettings) -> Recall:
    # ``lexical_recall`` without a graph: the facts store is empty on both sides.
    return Recall(
        facts, history, threshold=settings.retrieval_threshold, depth=settings.recall_depth
    )


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


def _latency(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 0.50), 3),
        "p99": round(percentile(values, 0.99), 3),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.history_backends")
    parser.add_argument("--url", required=True, help="an empty PostgreSQL database (or schema)")
    parser.add_argument("--dataset", default="handwritten", help="a set of evals.datasets")
    args = parser.parse_args(argv)
    print(json.dumps({"dataset": args.dataset, **compare(load_dataset(args.dataset), args.url)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
