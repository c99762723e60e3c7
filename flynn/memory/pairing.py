"""Strangers asking to come in: a short code for an account that wrote to a bot but may not talk to
it yet, and the accounts ``flynn users approve CODE --as NAME`` let in (read by identity alongside
the ``users:`` map).

A code is 8 characters of an alphabet without look-alikes (no 0/O, 1/I/L), lives an hour, and is
one per account: asking again while it lives gives the same code. At most ``max_pending`` codes
live at once per install, so a crowd of strangers cannot fill the list or the owner's patience.
"""

from __future__ import annotations

import secrets
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta

from flynn.memory.database import Database, decode_time, encode_time
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


class SqlitePairing:
    """Pairing codes (``pairing_requests``) and approved accounts (``approved_accounts``)."""

    def __init__(
        self, db: Database, *, ttl: timedelta = CODE_TTL, max_pending: int = MAX_PENDING
    ) -> None:
        self._db = db
        self._ttl = ttl
        self._max_pending = max_pending

    def ask(
        self, account: ChannelAccount, sender_name: str | None, *, now: datetime
    ) -> PairingOffer | None:
        """The account's live code, or a new one; None when ``max_pending`` other codes are
        waiting (the stranger may ask again later). Expired codes are dropped first."""
        with self._db.transaction():
            self._db.execute(
                "DELETE FROM pairing_requests WHERE expires_at <= ?", (encode_time(now),)
            )
            row = self._db.fetchone(
                f"SELECT {_COLUMNS} FROM pairing_requests WHERE channel = ? AND external_id = ?",
                (account.channel, account.external_id),
            )
            if row is not None:
                return PairingOffer(_request(row), is_new=False)
            waiting = self._db.fetchone("SELECT count(*) FROM pairing_requests")
            if waiting is not None and int(waiting[0]) >= self._max_pending:
                return None
            code = self._fresh_code()
            expires = now + self._ttl
            self._db.execute(
                "INSERT INTO pairing_requests (code, channel, external_id, sender_name,"
                " created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    code,
                    account.channel,
                    account.external_id,
                    sender_name,
                    encode_time(now),
                    encode_time(expires),
                ),
            )
        request = PairingRequest(code, account, sender_name, now, expires)
        return PairingOffer(request, is_new=True)

    def pending(self, *, now: datetime) -> list[PairingRequest]:
        """The live codes, oldest first."""
        rows = self._db.fetchall(
            f"SELECT {_COLUMNS} FROM pairing_requests WHERE expires_at > ? ORDER BY created_at",
            (encode_time(now),),
        )
        return [_request(row) for row in rows]

    def approve(self, code: str, person: str, *, now: datetime) -> PairingRequest | None:
        """Lets the account that holds the live ``code`` in as ``person`` (replacing an earlier
        approval of that account) and spends the code; None when no such code lives."""
        with self._db.transaction():
            row = self._db.fetchone(
                f"SELECT {_COLUMNS} FROM pairing_requests WHERE code = ? AND expires_at > ?",
                (normal_code(code), encode_time(now)),
            )
            if row is None:
                return None
            request = _request(row)
            self._db.execute("DELETE FROM pairing_requests WHERE code = ?", (request.code,))
            self._db.execute(
                "INSERT OR REPLACE INTO approved_accounts (channel, external_id, person,"
                " approved_at) VALUES (?, ?, ?, ?)",
                (request.account.channel, request.account.external_id, person, encode_time(now)),
            )
        return request

    def deny(self, code: str) -> bool:
        """Drops a waiting code; whether there was one."""
        return bool(
            self._db.execute("DELETE FROM pairing_requests WHERE code = ?", (normal_code(code),))
        )

    def person_of(self, account: ChannelAccount) -> str | None:
        """The person ``account`` was approved as, if it was."""
        row = self._db.fetchone(
            "SELECT person FROM approved_accounts WHERE channel = ? AND external_id = ?",
            (account.channel, account.external_id),
        )
        return None if row is None else str(row["person"])

    def approved(self) -> list[ApprovedAccount]:
        rows = self._db.fetchall(
            "SELECT channel, external_id, person, approved_at FROM approved_accounts"
            " ORDER BY person, channel, external_id"
        )
        return [
            ApprovedAccount(
                ChannelAccount(str(row["channel"]), str(row["external_id"])),
                str(row["person"]),
                decode_time(row["approved_at"]),
            )
            for row in rows
        ]

    def unapprove(self, account: ChannelAccount) -> bool:
        """Takes an approval back; whether there was one."""
        return bool(
            self._db.execute(
                "DELETE FROM approved_accounts WHERE channel = ? AND external_id = ?",
                (account.channel, account.external_id),
            )
        )

    def _fresh_code(self) -> str:
        while True:  # 31^8 codes, at most max_pending taken: a repeat is all but impossible
            code = "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))
            if self._db.fetchone("SELECT 1 FROM pairing_requests WHERE code = ?", (code,)) is None:
                return code


_COLUMNS = "code, channel, external_id, sender_name, created_at, expires_at"


def _request(row: sqlite3.Row) -> PairingRequest:
    return PairingRequest(
        str(row["code"]),
        ChannelAccount(str(row["channel"]), str(row["external_id"])),
        None if row["sender_name"] is None else str(row["sender_name"]),
        decode_time(row["created_at"]),
        decode_time(row["expires_at"]),
    )
