from __future__ import annotations

from datetime import UTC, datetime

from fakes.clock import FakeClock

from flynn.memory.costs import SqliteCosts
from flynn.memory.stores import SqliteMemory
from flynn.providers.base import Usage, UsageSink

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_totals_per_task(memory: SqliteMemory) -> None:
    assert memory.costs.totals() == {}
    for task, tokens_in, tokens_out in (("chat", 100, 20), ("chat", 50, 5), ("compaction", 7, 3)):
        memory.costs.record(
            provider="anthropic",
            model="claude",
            task=task,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            now=T0,
        )
    assert memory.costs.totals() == {"chat": (150, 25), "compaction": (7, 3)}


def test_record_usage_stamps_the_injected_clock(memory: SqliteMemory) -> None:
    clock = FakeClock(T0)
    sink: UsageSink = SqliteCosts(memory.db, clock=clock)
    sink.record_usage(provider="openai", model="gpt", task="extraction", usage=Usage(11, 2))
    assert memory.costs.totals() == {"extraction": (11, 2)}
    row = memory.db.fetchone("SELECT provider, model, created_at, cost FROM costs")
    assert row is not None
    assert (row["provider"], row["model"], row["cost"]) == ("openai", "gpt", None)
    assert datetime.fromisoformat(row["created_at"]) == T0
