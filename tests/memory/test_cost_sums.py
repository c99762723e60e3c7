"""Spend in the ``costs`` table: each call's cost stored when its model has a price, and the sums
``flynn costs`` and ``/status`` read (by task and model, since a moment, unpriced calls told
apart)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fakes.clock import FakeClock
from memory.conftest import Backend

from flynn.memory.costs import Costs, Spend, usd
from flynn.providers.base import Usage, UsageSink

T0 = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


class HalfPriced:
    """Prices: a dollar per million tokens for ``paid``, nothing known of other models."""

    def cost(
        self, *, provider: str, model: str, input_tokens: int, output_tokens: int
    ) -> float | None:
        return (input_tokens + output_tokens) / 1_000_000 if model == "paid" else None


def test_the_sink_stores_each_calls_cost_when_its_model_has_a_price(backend: Backend) -> None:
    sink: UsageSink = backend.costs_with(FakeClock(T0), HalfPriced())
    sink.record_usage(provider="p", model="paid", task="chat", usage=Usage(3_000, 1_000))
    sink.record_usage(provider="p", model="local", task="chat", usage=Usage(500, 50))
    local, paid = (line.spend for line in backend.costs.by_task_and_model())
    assert (paid.calls, paid.input_tokens, paid.cost, paid.is_priced) == (
        1,
        3_000,
        pytest.approx(0.004),
        True,
    )
    assert (local.calls, local.input_tokens, local.cost, local.is_priced) == (1, 500, 0.0, False)


def _record(costs: Costs, task: str, model: str, cost: float | None, at: datetime) -> None:
    costs.record(
        provider="anthropic" if model.startswith("claude") else "openai",
        model=model,
        task=task,
        input_tokens=1_000,
        output_tokens=100,
        now=at,
        cost=cost,
    )


def test_spend_sums_tokens_and_dollars_and_counts_unpriced_calls(costs: Costs) -> None:
    assert costs.spend() == Spend()
    assert not Spend().is_priced
    _record(costs, "chat", "claude-x", 0.25, T0 - timedelta(days=40))
    _record(costs, "chat", "claude-x", 0.5, T0)
    _record(costs, "extraction", "llama", None, T0)

    everything = costs.spend()
    assert everything == Spend(
        calls=3, input_tokens=3_000, output_tokens=300, cost=0.75, unpriced_calls=1
    )
    assert everything.is_priced
    recent = costs.spend(T0 - timedelta(days=1))
    assert (recent.calls, recent.cost, recent.unpriced_calls) == (2, 0.5, 1)
    assert costs.spend(T0 + timedelta(seconds=1)) == Spend()


def test_by_task_and_model_groups_in_order_from_a_moment_on(costs: Costs) -> None:
    _record(costs, "extraction", "llama", None, T0)
    _record(costs, "chat", "claude-x", 0.5, T0)
    _record(costs, "chat", "claude-x", 0.25, T0 + timedelta(hours=1))
    _record(costs, "chat", "gpt-y", 0.125, T0 - timedelta(days=2))

    lines = costs.by_task_and_model(T0 - timedelta(days=1))
    assert [(line.task, line.provider, line.model) for line in lines] == [
        ("chat", "anthropic", "claude-x"),
        ("extraction", "openai", "llama"),
    ]
    claude, llama = (line.spend for line in lines)
    assert (claude.calls, claude.input_tokens, claude.cost) == (2, 2_000, 0.75)
    assert not llama.is_priced and llama.as_json()["cost_usd"] is None
    assert len(costs.by_task_and_model()) == 3


@pytest.mark.parametrize(
    ("amount", "text"),
    [
        (0, "$0.00"),
        (0.00004, "<$0.0001"),
        (0.0042, "$0.0042"),
        (3.1, "$3.10"),
        (1234.5, "$1,234.50"),
    ],
)
def test_dollars_read_as_people_write_them(amount: float, text: str) -> None:
    assert usd(amount) == text
