"""Token usage and spend per model call in PostgreSQL: ``Costs`` on the ``costs`` table, the
sums ``flynn costs`` and ``/status`` report, as ``flynn.memory.costs`` keeps them in SQLite."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from flynn.memory.costs import Prices, Spend, SpendLine, TokenCounts, call_cost
from flynn.postgres.database import PostgresDatabase, Row, aware

_RECORD = """
INSERT INTO costs (provider, model, task, input_tokens, output_tokens, cost, created_at)
VALUES (%s, %s, %s, %s, %s, %s, %s)
"""
_TOTALS = """
SELECT task, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
FROM costs GROUP BY task ORDER BY task
"""
# SQLite's total(): 0.0 over only NULL costs, where sum() is NULL; unpriced_calls explains it.
_SUMS = """count(*) AS calls, coalesce(sum(input_tokens), 0) AS input_tokens,
coalesce(sum(output_tokens), 0) AS output_tokens, coalesce(sum(cost), 0.0) AS cost,
count(*) - count(cost) AS unpriced_calls"""
_SINCE = "(%(since)s::timestamptz IS NULL OR created_at >= %(since)s)"
_SPEND = f"SELECT {_SUMS} FROM costs WHERE {_SINCE}"
_BY_TASK_AND_MODEL = f"""
SELECT task, provider, model, {_SUMS} FROM costs WHERE {_SINCE}
GROUP BY task, provider, model ORDER BY task, provider, model
"""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class PostgresCosts:
    """``Costs`` on the ``costs`` table. With ``prices``, each call's ``cost`` (US dollars) is
    stored with it; without, or for a model without a price, it stays NULL."""

    def __init__(
        self,
        db: PostgresDatabase,
        *,
        clock: Callable[[], datetime] = _utc_now,
        prices: Prices | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._prices = prices

    def record(
        self,
        *,
        provider: str,
        model: str,
        task: str,
        input_tokens: int,
        output_tokens: int,
        now: datetime,
        cost: float | None = None,
    ) -> None:
        self._db.execute(
            _RECORD, (provider, model, task, input_tokens, output_tokens, cost, aware(now))
        )

    def record_usage(self, *, provider: str, model: str, task: str, usage: TokenCounts) -> None:
        """``UsageSink``: records one call's usage and what it cost, stamped with the injected
        clock."""
        self.record(
            provider=provider,
            model=model,
            task=task,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            now=self._clock(),
            cost=call_cost(self._prices, provider=provider, model=model, usage=usage),
        )

    def totals(self) -> dict[str, tuple[int, int]]:
        """Input and output tokens per task."""
        return {
            row["task"]: (int(row["input_tokens"]), int(row["output_tokens"]))
            for row in self._db.fetchall(_TOTALS)
        }

    def spend(self, since: datetime | None = None) -> Spend:
        """Everything recorded from ``since`` on (all of it without one)."""
        row = self._db.fetchone(_SPEND, {"since": _bound(since)})
        return Spend() if row is None else _spend_of(row)

    def by_task_and_model(self, since: datetime | None = None) -> list[SpendLine]:
        """The spend of each task on each model from ``since`` on, by task, then model."""
        return [
            SpendLine(row["task"], row["provider"], row["model"], _spend_of(row))
            for row in self._db.fetchall(_BY_TASK_AND_MODEL, {"since": _bound(since)})
        ]


def _bound(since: datetime | None) -> datetime | None:
    return None if since is None else aware(since)


def _spend_of(row: Row) -> Spend:
    return Spend(
        calls=int(row["calls"]),
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        cost=float(row["cost"]),
        unpriced_calls=int(row["unpriced_calls"]),
    )
