"""Each person's own gateway tokens (``flynn users token NAME``): made here, shown once, kept only
as SHA-256 digests, and checked at a gateway ``hello``. The logic once, on any SQL database
(``SqlPersonTokens``), and on SQLite (``SqlitePersonTokens``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.sql import Sql

TOKEN_BYTES = 32
"""Random bytes in a token (43 characters of URL-safe base64): far beyond guessing."""


def token_digest(token: str) -> str:
    """What is stored of ``token``: its SHA-256, in hex. A random 256-bit token needs no salt or
    slow hash; nobody can get from the digest back to a token that passes."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class PersonToken:
    """What is known of one live token: whose it is and when it was made (never the token)."""

    id: int
    person: str
    created_at: datetime


_ISSUE = "INSERT INTO person_tokens (person, digest, created_at) VALUES (?, ?, ?)"
_REVOKE = "DELETE FROM person_tokens WHERE person = ?"
_VERIFY = "SELECT id, person, digest, created_at FROM person_tokens WHERE digest = ?"
_TOKENS = "SELECT id, person, created_at FROM person_tokens ORDER BY person, id"


@dataclass(frozen=True, slots=True)
class TokensDialect:
    """One backend's statements for ``SqlPersonTokens`` (``tokens_dialect``) and its times."""

    issue: str
    revoke: str
    verify: str
    tokens: str
    time: Callable[[datetime], object]
    stored_time: Callable[[Any], datetime]


def tokens_dialect(
    parameters: Callable[[str], str],
    time: Callable[[datetime], object],
    stored_time: Callable[[Any], datetime],
) -> TokensDialect:
    """The statements above, written once with ``?``, with ``parameters`` turning them into
    the backend's."""
    return TokensDialect(
        parameters(_ISSUE),
        parameters(_REVOKE),
        parameters(_VERIFY),
        parameters(_TOKENS),
        time,
        stored_time,
    )


SQLITE_TOKENS = tokens_dialect(lambda statement: statement, encode_time, decode_time)


class SqlPersonTokens:
    """People's gateway tokens in a ``person_tokens`` table."""

    def __init__(self, db: Sql, dialect: TokensDialect) -> None:
        self._db = db
        self._sql = dialect

    def issue(self, person: str, *, now: datetime) -> str:
        """A new token for ``person`` (their earlier ones stay valid: one per device is
        fine). The caller shows it once; only its digest is kept."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        self._db.execute(self._sql.issue, (person, token_digest(token), self._sql.time(now)))
        return token

    def revoke(self, person: str) -> int:
        """Removes every token of ``person``; how many there were."""
        return self._db.execute(self._sql.revoke, (person,))

    def verify(self, token: str) -> PersonToken | None:
        """The live token ``token`` is, or None. Looked up by digest (an index cannot leak
        anything of a token through timing: an attacker would have to choose digests), then
        compared in constant time all the same."""
        digest = token_digest(token)
        row = self._db.fetchone(self._sql.verify, (digest,))
        if row is None or not hmac.compare_digest(str(row["digest"]), digest):
            return None
        created_at = self._sql.stored_time(row["created_at"])
        return PersonToken(int(row["id"]), str(row["person"]), created_at)

    def tokens(self) -> list[PersonToken]:
        """Every live token, by person, oldest first."""
        return [
            PersonToken(
                int(row["id"]), str(row["person"]), self._sql.stored_time(row["created_at"])
            )
            for row in self._db.fetchall(self._sql.tokens)
        ]


class SqlitePersonTokens(SqlPersonTokens):
    """People's gateway tokens in SQLite's ``person_tokens`` table."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_TOKENS)
