"""Work started at the same moment in several threads, as several workers on one database would
do it: what the PostgreSQL tests of concurrent writers use."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")


def at_once(
    *calls: Callable[[], T], expected: tuple[type[Exception], ...] = ()
) -> list[T | Exception]:
    """Runs each of ``calls`` in a thread of its own, all released at once by a barrier; waits
    for all of them and returns what each returned, or the ``expected`` exception it raised, in
    the order of ``calls``. Any other failure is re-raised here (the first, in that order)."""
    start = threading.Barrier(len(calls))
    outcomes: list[object] = [None] * len(calls)

    def run(index: int, call: Callable[[], T]) -> None:
        try:
            start.wait(timeout=10)
            outcomes[index] = call()
        except BaseException as exc:  # re-raised in the test's thread, below
            outcomes[index] = exc

    threads = [threading.Thread(target=run, args=item) for item in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, expected):
            raise outcome
    return cast(list[T | Exception], outcomes)


def together(*work: Callable[[], None]) -> None:
    """Runs each callable in a thread of its own, all released at once by a barrier; waits for
    all of them and re-raises the first failure."""
    at_once(*work)
