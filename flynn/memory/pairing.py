"""Strangers asking to come in: a short code for an account that wrote to a bot but may not talk to
it yet, and the accounts ``flynn users approve CODE --as NAME`` let in (read by identity alongside
the ``users:`` map).

A code is 8 characters of an alphabet without look-alikes (no 0/O, 1/I/L), lives an hour, and is
one per account: asking again while it lives gives the same code. At most ``max_pending`` codes
live at once per install, so a crowd of strangers cannot fill the list or the owner's patience.

The logic once, on any SQL database (``SqlPairing``), and on SQLite (``SqlitePairing``); it holds
with several processes on one database: a code is spent by one approval only.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.sql import NamedRow, TransactionalSql
from flynn.messages import ChannelAccount

ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 8
CODE_TTL = timedelta(hours=1)
MAX_PENDING = 10


def normal_code(text: str) -> str:
    """A code as typed (any case, spaces or dashes in it) in the form it is stored."""
    return "".join(text.split()).replace("-", "").upper()


@dataclass(frozen=True, slots=True)
class PairingRequest:
    """A live code: which account asked, under what name, until when."""

    code: str
    account: ChannelAccount
    sender_name: str | None
    created_at: datetime
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class PairingOffer:
    """What asking gave an account: its code, and whether the code is new (the account has not
    been told it yet) or the one it already holds."""

    request: PairingRequest
    is_new: bool


@dataclass(frozen=True, slots=True)
class ApprovedAccount:
    account: ChannelAccount
    person: str
    approved_at: datetime


_COLUMNS = "code, channel, external_id, sender_name, created_at, expires_at"
_EXPIRE = "DELETE FROM pairing_requests WHERE expires_at <= ?"
_HELD = f"SELECT {_COLUMNS} FROM pairing_requests WHERE channel = ? AND external_id = ?"
_WAITING = "SELECT count(*) AS waiting FROM pairing_requests"
_CODE_TAKEN = "SELECT 1 AS taken FROM pairing_requests WHERE code = ?"
_OFFER = """
INSERT INTO pairing_requests (code, channel, external_id, sender_name, created_at, expires_at)
VALUES (?, ?, ?, ?, ?, ?)
"""
_PENDING = f"SELECT {_COLUMNS} FROM pairing_requests WHERE expires_at > ? ORDER BY created_at"
# Spending a code is deleting it: of two approvals at once, one gets the row back.
_SPEND = f"DELETE FROM pairing_requests WHERE code = ? AND expires_at > ? RETURNING {_COLUMNS}"
_APPROVE = """
INSERT INTO approved_accounts (channel, external_id, person, approved_at) VALUES (?, ?, ?, ?)
ON CONFLICT (channel, external_id) DO UPDATE SET
    person = excluded.person, approved_at = excluded.approved_at
"""
_DENY = "DELETE FROM pairing_requests WHERE code = ?"
_PERSON_OF = "SELECT person FROM approved_accounts WHERE channel = ? AND external_id = ?"
_APPROVED = """
SELECT channel, external_id, person, approved_at FROM approved_accounts
ORDER BY person, channel, external_id
"""
_UNAPPROVE = "DELETE FROM approved_accounts WHERE channel = ? AND external_id = ?"


@dataclass(frozen=True, slots=True)
class PairingDialect:
    """One backend's statements for ``SqlPairing`` (``pairing_dialect``) and its times.
    ``serialise`` runs first in ``ask``'s transaction: what keeps two processes asking at once
    from both counting the same free place (nothing on SQLite, whose first write already
    excludes every other writer)."""

    serialise: str | None
    expire: str
    held: str
    waiting: str
    code_taken: str
    offer: str
    pending: str
    spend: str
    approve: str
    deny: str
    person_of: str
    approved: str
    unapprove: str
    time: Callable[[datetime], object]
    stored_time: Callable[[Any], datetime]


def pairing_dialect(
    parameters: Callable[[str], str],
    time: Callable[[datetime], object],
    stored_time: Callable[[Any], datetime],
    *,
    serialise: str | None,
) -> PairingDialect:
    """The statements above, written once with ``?``, with ``parameters`` turning them into
    the backend's."""
    return PairingDialect(
        serialise=serialise,
        expire=parameters(_EXPIRE),
        held=parameters(_HELD),
        waiting=parameters(_WAITING),
        code_taken=parameters(_CODE_TAKEN),
        offer=parameters(_OFFER),
        pending=parameters(_PENDING),
        spend=parameters(_SPEND),
        approve=parameters(_APPROVE),
        deny=parameters(_DENY),
        person_of=parameters(_PERSON_OF),
        approved=parameters(_APPROVED),
        unapprove=parameters(_UNAPPROVE),
        time=time,
        stored_time=stored_time,
    )


SQLITE_PAIRING = pairing_dialect(
    lambda statement: statement, encode_time, decode_time, serialise=None
)


class SqlPairing:
    """Pairing codes (``pairing_requests``) and approved accounts (``approved_accounts``)."""

    def __init__(
        self,
        db: TransactionalSql,
        dialect: PairingDialect,
        *,
        ttl: timedelta = CODE_TTL,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self._db = db
        self._sql = dialect
        self._ttl = ttl
        self._max_pending = max_pending

    def ask(
        self, account: ChannelAccount, sender_name: str | None, *, now: datetime
    ) -> PairingOffer | None:
        """The account's live code, or a new one; None when ``max_pending`` other codes are
        waiting (the stranger may ask again later). Expired codes are dropped first."""
        sql = self._sql
        with self._db.transaction():
            if sql.serialise is not None:
                self._db.execute(sql.serialise)
            self._db.execute(sql.expire, (sql.time(now),))
            row = self._db.fetchone(sql.held, (account.channel, account.external_id))
            if row is not None:
                return PairingOffer(self._request(row), is_new=False)
            waiting = self._db.fetchone(sql.waiting)
            if waiting is not None and int(waiting["waiting"]) >= self._max_pending:
                return None
            code = self._fresh_code()
            expires = now + self._ttl
            self._db.execute(
                sql.offer,
                (
                    code,
                    account.channel,
                    account.external_id,
                    sender_name,
                    sql.time(now),
                    sql.time(expires),
                ),
            )
        request = PairingRequest(code, account, sender_name, now, expires)
        return PairingOffer(request, is_new=True)

    def pending(self, *, now: datetime) -> list[PairingRequest]:
        """The live codes, oldest first."""
        rows = self._db.fetchall(self._sql.pending, (self._sql.time(now),))
        return [self._request(row) for row in rows]

    def approve(self, code: str, person: str, *, now: datetime) -> PairingRequest | None:
        """Lets the account that holds the live ``code`` in as ``person`` (replacing an earlier
        approval of that account) and spends the code; None when no such code lives (or
        another approval spent it first)."""
        sql = self._sql
        with self._db.transaction():
            row = self._db.fetchone(sql.spend, (normal_code(code), sql.time(now)))
            if row is None:
                return None
            request = self._request(row)
            account = request.account
            self._db.execute(
                sql.approve, (account.channel, account.external_id, person, sql.time(now))
            )
        return request

    def deny(self, code: str) -> bool:
        """Drops a waiting code; whether there was one."""
        return bool(self._db.execute(self._sql.deny, (normal_code(code),)))

    def person_of(self, account: ChannelAccount) -> str | None:
        """The person ``account`` was approved as, if it was."""
        row = self._db.fetchone(self._sql.person_of, (account.channel, account.external_id))
        return None if row is None else str(row["person"])

    def approved(self) -> list[ApprovedAccount]:
        return [
            ApprovedAccount(
                ChannelAccount(str(row["channel"]), str(row["external_id"])),
                str(row["person"]),
                self._sql.stored_time(row["approved_at"]),
            )
            for row in self._db.fetchall(self._sql.approved)
        ]

    def unapprove(self, account: ChannelAccount) -> bool:
        """Takes an approval back; whether there was one."""
        params = (account.channel, account.external_id)
        return bool(self._db.execute(self._sql.unapprove, params))

    def _fresh_code(self) -> str:
        while True:  # 31^8 codes, at most max_pending taken: a repeat is all but impossible
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            if self._db.fetchone(self._sql.code_taken, (code,)) is None:
                return code

    def _request(self, row: NamedRow) -> PairingRequest:
        return PairingRequest(
            str(row["code"]),
            ChannelAccount(str(row["channel"]), str(row["external_id"])),
            None if row["sender_name"] is None else str(row["sender_name"]),
            self._sql.stored_time(row["created_at"]),
            self._sql.stored_time(row["expires_at"]),
        )


class SqlitePairing(SqlPairing):
    """Pairing codes and approved accounts in SQLite."""

    def __init__(
        self, db: Database, *, ttl: timedelta = CODE_TTL, max_pending: int = MAX_PENDING
    ) -> None:
        super().__init__(db, SQLITE_PAIRING, ttl=ttl, max_pending=max_pending)
