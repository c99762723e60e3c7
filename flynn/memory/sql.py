"""What a store needs of a SQL database, whichever it is: SQLite's ``Database`` and
``flynn.postgres.database.PostgresDatabase`` both serve ``Sql``, so a store's logic is written once
(``SqlDocuments``, ``SqlCosts``) and each backend brings its statements and time encoding."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

Params = Sequence[object] | Mapping[str, object]

NUL_STAND_IN = "\ufffd"
"""What a NUL character (U+0000) in stored text becomes (``storable``)."""


def storable(text: str) -> str:
    """``text`` as every store keeps it, on either backend: PostgreSQL's ``text`` cannot hold
    NUL, so a NUL becomes U+FFFD (the replacement character) on both, and a message, fact or
    document carrying one is kept rather than refused."""
    return text.replace("\x00", NUL_STAND_IN)


class NamedRow(Protocol):
    """A result row read by column name (``sqlite3.Row``, psycopg's ``dict_row``)."""

    def __getitem__(self, key: str, /) -> Any: ...


class Sql(Protocol):
    def execute(self, sql: str, params: Params = ()) -> int:
        """Runs one statement; returns the number of rows it changed. Raises ``StoreError``."""
        ...

    def fetchone(self, sql: str, params: Params = ()) -> NamedRow | None: ...

    def fetchall(self, sql: str, params: Params = ()) -> Sequence[NamedRow]: ...


class TransactionalSql(Sql, Protocol):
    """``Sql`` with transactions, for stores whose writes take several statements."""

    def transaction(self) -> AbstractContextManager[None]:
        """Runs the block as one transaction: everything lands, or nothing does; nested blocks
        are savepoints (SQLite's ``Database`` and ``PostgresDatabase`` both)."""
        ...
