"""The re-redaction an upgrade needs, wired (``flynn.memory.redaction``): ``redaction_pass``
over a storage and its people's files, and ``redact_behind``, the daemon's background run of
it, by one worker of a team at a time (the lease ``REDACTION_LEASE``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import structlog

from flynn.coordination import Leadership
from flynn.memory.redaction import BATCH_ROWS, Progress, RedactionCounts, RedactionPass
from flynn.people.store import PersonFileRedaction
from flynn.settings import Settings
from flynn.storage_place import Storage, storage_files

log = structlog.get_logger(__name__)

REDACTION_LEASE = "redaction-catch-up"
"""The lease a worker holds while it redacts the stored rows again."""


def redaction_pass(
    storage: Storage,
    settings: Settings,
    clock: Callable[[], datetime],
    *,
    dry_run: bool = False,
    batch_rows: int = BATCH_ROWS,
) -> RedactionPass:
    """The pass over ``storage``'s rows and its people's files (``storage_files``)."""
    files = PersonFileRedaction(storage_files(storage, settings, clock))
    return RedactionPass(storage.redaction(), files, dry_run=dry_run, batch_rows=batch_rows)


async def redact_behind(redaction: RedactionPass, leadership: Leadership) -> None:
    """Runs ``redaction`` if it is due, under ``REDACTION_LEASE`` (a worker that waited for it
    finds the pass done). Never raises but ``CancelledError``: a pass that fails is logged and
    taken up again, from its cursor, at the next start; turns go on meanwhile."""
    try:
        if not redaction.is_due:
            return

        async def work() -> None:
            await redaction.run_behind()

        await leadership.lead(REDACTION_LEASE, work)
    except Exception:
        log.exception("redaction.failed")


async def redact_now(
    redaction: RedactionPass, leadership: Leadership, progress: Progress | None = None
) -> RedactionCounts:
    """``flynn memory redact``: the whole pass, due or not, under ``REDACTION_LEASE`` (beside
    a team's workers on PostgreSQL, after the one running it finishes). Raises ``StoreError``."""

    async def work() -> None:
        await redaction.run_behind(progress, only_if_due=False)

    await leadership.lead(REDACTION_LEASE, work)
    return redaction.counts
