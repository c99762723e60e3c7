"""Each person's own gateway tokens (``flynn users token NAME``): made here, shown once, kept only
as SHA-256 digests, and checked at a gateway ``hello``.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

from flynn.memory.database import Database, decode_time, encode_time

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


class SqlitePersonTokens:
    """People's gateway tokens in the ``person_tokens`` table."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def issue(self, person: str, *, now: datetime) -> str:
        """A new token for ``person`` (their earlier ones stay valid: one per device is
        fine). The caller shows it once; only its digest is kept."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        self._db.execute(
            "INSERT INTO person_tokens (person, digest, created_at) VALUES (?, ?, ?)",
            (person, token_digest(token), encode_time(now)),
        )
        return token

    def revoke(self, person: str) -> int:
        """Removes every token of ``person``; how many there were."""
        return self._db.execute("DELETE FROM person_tokens WHERE person = ?", (person,))

    def verify(self, token: str) -> PersonToken | None:
        """The live token ``token`` is, or None. Looked up by digest (an index cannot leak
        anything of a token through timing: an attacker would have to choose digests), then
        compared in constant time all the same."""
        digest = token_digest(token)
        row = self._db.fetchone(
            "SELECT id, person, digest, created_at FROM person_tokens WHERE digest = ?", (digest,)
        )
        if row is None or not hmac.compare_digest(str(row["digest"]), digest):
            return None
        return PersonToken(int(row["id"]), str(row["person"]), decode_time(row["created_at"]))

    def tokens(self) -> list[PersonToken]:
        """Every live token, by person, oldest first."""
        rows = self._db.fetchall(
            "SELECT id, person, created_at FROM person_tokens ORDER BY person, id"
        )
        return [
            PersonToken(int(row["id"]), str(row["person"]), decode_time(row["created_at"]))
            for row in rows
        ]
