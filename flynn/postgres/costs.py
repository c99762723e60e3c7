"""Token usage and spend per model call in PostgreSQL: ``Costs`` on the ``costs`` table, the
sums ``flynn costs`` and ``/status`` report, as ``flynn.memory.costs`` keeps them in SQLite."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from flynn.memory.costs import CostsDialect, Prices, SqlCosts
from flynn.postgres.database import PostgresDatabase, aware

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


def _since(since: datetime | None) -> dict[str, object]:
    return {"since": None if since is None else aware(since)}


POSTGRES_COSTS = CostsDialect(_RECORD, _TOTALS, _SPEND, _BY_TASK_AND_MODEL, aware, _since)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class PostgresCosts(SqlCosts):
    """``Costs`` on PostgreSQL's ``costs`` table."""

    def __init__(
        self,
        db: PostgresDatabase,
        *,
        clock: Callable[[], datetime] = _utc_now,
        prices: Prices | None = None,
    ) -> None:
        super().__init__(db, POSTGRES_COSTS, clock=clock, prices=prices)
