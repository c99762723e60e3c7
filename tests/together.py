"""Work started at the same moment in several threads, as several workers on one database would
do it: what the PostgreSQL tests of concurrent writers use."""

from __future__ import annotations

import threading
from collections.abc import Callable


def together(*work: Callable[[], None]) -> None:
    """Runs each callable in a thread of its own, all released at once by a barrier; waits for
    all of them and re-raises the first failure."""
    start = threading.Barrier(len(work))
    errors: list[BaseException] = []

    def run(job: Callable[[], None]) -> None:
        try:
            start.wait(timeout=10)
            job()
        except BaseException as exc:  # re-raised in the test's thread, below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(job,)) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    if errors:
        raise errors[0]
