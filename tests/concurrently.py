"""Calls made at the same moment, as workers on one database race: each in a thread of its own,
all released together by a barrier (no sleeps)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar, cast

T = TypeVar("T")


def at_once(
    *calls: Callable[[], T], expected: tuple[type[Exception], ...] = ()
) -> list[T | Exception]:
    """Runs each of ``calls`` in a thread of its own, released together; returns what each
    returned, or the ``expected`` exception it raised, in the order of ``calls``. Any other
    exception is raised here once every thread has finished."""
    start = threading.Barrier(len(calls))
    outcomes: list[object] = [None] * len(calls)

    def run(index: int, call: Callable[[], T]) -> None:
        start.wait()
        try:
            outcomes[index] = call()
        except BaseException as exc:
            outcomes[index] = exc

    threads = [threading.Thread(target=run, args=item) for item in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, expected):
            raise outcome
    return cast(list[T | Exception], outcomes)
