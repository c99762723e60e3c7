"""Token usage per model call in SQLite (the ``costs`` table); also the providers' ``UsageSink``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Protocol

from flynn.memory.database import Database, encode_time

_RECORD = """
INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at)
VALUES (?, ?, ?, ?, ?, ?)
"""
_TOTALS = """
SELECT task, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
FROM costs GROUP BY task ORDER BY task
"""


class TokenCounts(Protocol):
    """A call's usage as providers report it (``flynn.providers.base.Usage`` is one)."""

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SqliteCosts:
    """``Costs`` on the ``costs`` table. ``cost`` (money) stays NULL: prices are not known here."""

    def __init__(self, db: Database, *, clock: Callable[[], datetime] = _utc_now) -> None:
        self._db = db
        self._clock = clock

    def record(
        self,
        *,
        provider: str,
        model: str,
        task: str,
        input_tokens: int,
        output_tokens: int,
        now: datetime,
    ) -> None:
        self._db.execute(
            _RECORD, (provider, model, task, input_tokens, output_tokens, encode_time(now))
        )

    def record_usage(self, *, provider: str, model: str, task: str, usage: TokenCounts) -> None:
        """``UsageSink``: records one call's usage, stamped with the injected clock."""
        self.record(
            provider=provider,
            model=model,
            task=task,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            now=self._clock(),
        )

    def totals(self) -> dict[str, tuple[int, int]]:
        """Input and output tokens per task."""
        return {
            row["task"]: (int(row["input_tokens"]), int(row["output_tokens"]))
            for row in self._db.fetchall(_TOTALS)
        }
