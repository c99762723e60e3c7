"""Recall work in flight (``RecallsInFlight``), which the stored turns' background embedding
waits behind between texts: on the two cores the daemon is sized for, a stored turn embedded
beside a question's embedding and its search takes a core, and the shared cache, from the turn
someone is waiting for."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

MOST_SECONDS = 1.0
"""The longest background work waits behind one batch of recall work: a recall that hangs (a
database lock held for long) must not stop the stored turns' vectors with it."""


class RecallsInFlight:
    """Counts the recall work running in threads (a question's embedding, a recall), for work
    that should give way to it (``give_way``). Never starves that work: it waits only for the
    recall work already running when it began to wait, not for work started meanwhile, so two
    people recalling in turns, one always in flight, still let it through between them.
    Thread-safe."""

    def __init__(self, *, most_seconds: float = MOST_SECONDS) -> None:
        self._changed = threading.Condition()
        self._tickets = 0  # handed out, in order
        self._running: set[int] = set()
        self._most = most_seconds

    @property
    def busy(self) -> bool:
        """Whether any recall work is running now."""
        with self._changed:
            return bool(self._running)

    @contextmanager
    def running(self) -> Iterator[None]:
        """Marks the calling thread's recall work running, until the block ends (however)."""
        with self._changed:
            ticket = self._tickets
            self._tickets += 1
            self._running.add(ticket)
        try:
            yield
        finally:
            with self._changed:
                self._running.discard(ticket)
                self._changed.notify_all()

    def give_way(self) -> None:
        """Returns once the recall work running at the call has ended (at once when none
        runs), or after ``most_seconds``. Blocks the calling thread: call it from a thread
        of background work, never from the event loop."""
        with self._changed:
            begun_before = self._tickets
            self._changed.wait_for(
                lambda: not self._running or min(self._running) >= begun_before,
                timeout=self._most,
            )
