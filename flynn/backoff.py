"""How long to wait after the n-th failure in a row: one policy for every retry loop in Flynn
(provider calls, channel restarts, Telegram polling and sends, reply resends, push retries, MCP
server restarts), each with its own numbers."""

from __future__ import annotations

import random as _random
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Backoff:
    """Waits ``first`` seconds after the first failure, ``factor`` times longer after each
    further one, never more than ``most``. Each wait is drawn between ``jitter[0]`` and
    ``jitter[1]`` times its step (then capped at ``most`` again), so many callers failing at
    once do not retry in step; ``(1.0, 1.0)`` waits exactly the step. ``random`` returns a
    float in [0, 1): tests pass a fixed one."""

    first: float = 1.0
    factor: float = 2.0
    most: float = 30.0
    jitter: tuple[float, float] = (1.0, 1.0)
    random: Callable[[], float] = field(default=_random.random, compare=False, repr=False)

    def __post_init__(self) -> None:
        low, high = self.jitter
        if not (0 <= self.first <= self.most and self.factor >= 1 and 0 <= low <= high):
            raise ValueError(f"not a backoff: {self!r}")

    def step(self, failures: int) -> float:
        """The un-jittered wait after ``failures`` failures in a row (1 for the first)."""
        try:
            step = self.first * self.factor ** max(failures - 1, 0)
        except OverflowError:  # a chat blocked for weeks: 2.0 ** 1024 does not fit a float
            return self.most
        return min(self.most, step)

    def delay(self, failures: int) -> float:
        """Seconds to wait after ``failures`` failures in a row (1 for the first)."""
        low, high = self.jitter
        return min(self.most, self.step(failures) * (low + self.random() * (high - low)))
