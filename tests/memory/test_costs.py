"""The ``Costs`` contract, on SQLite and on PostgreSQL (the ``costs`` and ``backend`` fixtures)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fakes.clock import FakeClock
from memory.conftest import Backend

from flynn.memory.costs import Costs, Spend
from flynn.providers.base import Usage, UsageSink

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_totals_per_task(costs: Costs) -> None:
    assert costs.totals() == {}
    for task, tokens_in, tokens_out in (("chat", 100, 20), ("chat", 50, 5), ("compaction", 7, 3)):
        costs.record(
            provider="anthropic",
            model="claude",
            task=task,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            now=T0,
        )
    assert costs.totals() == {"chat": (150, 25), "compaction": (7, 3)}


def test_record_usage_stamps_the_injected_clock(backend: Backend) -> None:
    sink: UsageSink = backend.costs_with(FakeClock(T0), None)
    sink.record_usage(provider="openai", model="gpt", task="extraction", usage=Usage(11, 2))
    assert backend.costs.totals() == {"extraction": (11, 2)}
    [line] = backend.costs.by_task_and_model()
    assert (line.provider, line.model, line.spend.unpriced_calls) == ("openai", "gpt", 1)
    # Stamped at T0 exactly, to the microsecond.
    assert backend.costs.spend(T0).calls == 1
    assert backend.costs.spend(T0 + timedelta(microseconds=1)) == Spend()
