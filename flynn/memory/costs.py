"""Token usage and spend per model call in SQLite (the ``costs`` table); also the providers'
``UsageSink``, and the sums ``flynn costs`` and ``/status`` report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from flynn.memory.database import Database, encode_time
from flynn.memory.sql import NamedRow, Params, Sql

_RECORD = """
INSERT INTO costs (provider, model, task, input_tokens, output_tokens, cost, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""
_TOTALS = """
SELECT task, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens
FROM costs GROUP BY task ORDER BY task
"""
# total() of only NULL costs is 0.0 where sum() would be NULL; the unpriced count explains it.
_SUMS = """count(*) AS calls, coalesce(sum(input_tokens), 0) AS input_tokens,
coalesce(sum(output_tokens), 0) AS output_tokens, total(cost) AS cost,
count(*) - count(cost) AS unpriced_calls"""
_SPEND = f"SELECT {_SUMS} FROM costs WHERE created_at >= ?"
_BY_TASK_AND_MODEL = f"""
SELECT task, provider, model, {_SUMS} FROM costs WHERE created_at >= ?
GROUP BY task, provider, model ORDER BY task, provider, model
"""
_BEGINNING = "0000"
"""Sorts before every stored time (fixed-width ISO text): no lower bound."""


class TokenCounts(Protocol):
    """A call's usage as providers report it (``flynn.providers.base.Usage`` is one)."""

    @property
    def input_tokens(self) -> int: ...

    @property
    def output_tokens(self) -> int: ...


class Prices(Protocol):
    """What a call cost (``flynn.providers.prices.PriceTable``)."""

    def cost(
        self, *, provider: str, model: str, input_tokens: int, output_tokens: int
    ) -> float | None:
        """US dollars, or ``None`` when the model has no known price."""
        ...


@dataclass(frozen=True, slots=True)
class Spend:
    """Calls, tokens and US dollars summed over some of the ``costs`` rows.

    ``cost`` sums the calls whose model had a price when they were made; ``unpriced_calls``
    says how many had none (their tokens are counted all the same)."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0

    @property
    def is_priced(self) -> bool:
        """At least one call had a price, so ``cost`` says something."""
        return self.calls > self.unpriced_calls

    def as_json(self) -> dict[str, object]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost, 6) if self.is_priced else None,
            "unpriced_calls": self.unpriced_calls,
        }


@dataclass(frozen=True, slots=True)
class SpendLine:
    """The spend of one task on one model."""

    task: str
    provider: str
    model: str
    spend: Spend


class Spending(Protocol):
    """What has been spent since a moment (``/status`` reads it)."""

    def spend(self, since: datetime | None = None) -> Spend: ...


class Costs(Spending, Protocol):
    """Every model call's tokens and price, kept (``SqliteCosts``, and
    ``flynn.postgres.costs.PostgresCosts``); also the providers' ``UsageSink``."""

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
    ) -> None: ...

    def record_usage(self, *, provider: str, model: str, task: str, usage: TokenCounts) -> None:
        """Records one call's usage and what it cost, stamped with the store's clock."""
        ...

    def totals(self) -> dict[str, tuple[int, int]]:
        """Input and output tokens per task."""
        ...

    def by_task_and_model(self, since: datetime | None = None) -> list[SpendLine]:
        """The spend of each task on each model from ``since`` on, by task, then model."""
        ...


def usd(amount: float) -> str:
    """``$3.10``; an amount under a cent keeps its first digits (``$0.0042``), so a day of a
    cheap model does not read as nothing."""
    if amount == 0:
        return "$0.00"
    if amount < 0.0001:
        return "<$0.0001"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class CostsDialect:
    """One backend's statements for ``SqlCosts`` and how it passes times: ``time`` for a call's
    moment (``ValueError`` if naive), ``since`` for the parameters of the sums' lower bound."""

    record: str
    totals: str
    spend: str
    by_task_and_model: str
    time: Callable[[datetime], object]
    since: Callable[[datetime | None], Params]


def _since(since: datetime | None) -> tuple[str]:
    return (_BEGINNING if since is None else encode_time(since),)


SQLITE_COSTS = CostsDialect(_RECORD, _TOTALS, _SPEND, _BY_TASK_AND_MODEL, encode_time, _since)


class SqlCosts:
    """``Costs`` on a ``costs`` table. With ``prices``, each call's ``cost`` (US dollars) is
    stored with it; without, or for a model without a price, it stays NULL."""

    def __init__(
        self,
        db: Sql,
        dialect: CostsDialect,
        *,
        clock: Callable[[], datetime] = _utc_now,
        prices: Prices | None = None,
    ) -> None:
        self._db = db
        self._sql = dialect
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
            self._sql.record,
            (provider, model, task, input_tokens, output_tokens, cost, self._sql.time(now)),
        )

    def record_usage(self, *, provider: str, model: str, task: str, usage: TokenCounts) -> None:
        """``UsageSink``: records one call's usage and what it cost, stamped with the injected
        clock."""
        cost = None
        if self._prices is not None:
            cost = self._prices.cost(
                provider=provider,
                model=model,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
            )
        self.record(
            provider=provider,
            model=model,
            task=task,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            now=self._clock(),
            cost=cost,
        )

    def totals(self) -> dict[str, tuple[int, int]]:
        """Input and output tokens per task."""
        return {
            row["task"]: (int(row["input_tokens"]), int(row["output_tokens"]))
            for row in self._db.fetchall(self._sql.totals)
        }

    def spend(self, since: datetime | None = None) -> Spend:
        """Everything recorded from ``since`` on (all of it without one)."""
        row = self._db.fetchone(self._sql.spend, self._sql.since(since))
        return Spend() if row is None else _spend_of(row)

    def by_task_and_model(self, since: datetime | None = None) -> list[SpendLine]:
        """The spend of each task on each model from ``since`` on, by task, then model."""
        return [
            SpendLine(row["task"], row["provider"], row["model"], _spend_of(row))
            for row in self._db.fetchall(self._sql.by_task_and_model, self._sql.since(since))
        ]


class SqliteCosts(SqlCosts):
    """``Costs`` on SQLite's ``costs`` table."""

    def __init__(
        self,
        db: Database,
        *,
        clock: Callable[[], datetime] = _utc_now,
        prices: Prices | None = None,
    ) -> None:
        super().__init__(db, SQLITE_COSTS, clock=clock, prices=prices)


def _spend_of(row: NamedRow) -> Spend:
    return Spend(
        calls=int(row["calls"]),
        input_tokens=int(row["input_tokens"]),
        output_tokens=int(row["output_tokens"]),
        cost=float(row["cost"]),
        unpriced_calls=int(row["unpriced_calls"]),
    )
