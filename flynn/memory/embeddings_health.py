"""The embedding model's state for ``/readyz`` and ``flynn doctor``: loading, ready, off,
unavailable (missing or damaged) or failing (its recent failures by kind, never a text)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

EmbeddingsState = Literal["off", "loading", "ready", "unavailable", "failing"]


@dataclass(frozen=True, slots=True)
class FailureCount:
    """One kind of failure (the error's type) of a loaded model: how many since the start, when
    the last came (UTC) and how long ago, by the process's monotonic clock."""

    kind: str
    count: int
    last_at: datetime
    seconds_ago: float


@dataclass(frozen=True, slots=True)
class EmbeddingsStatus:
    """What the embedding model is doing in this process. ``degraded`` (unavailable, failing)
    never makes the daemon unready: recall falls back to words and every turn is answered."""

    state: EmbeddingsState
    model: str | None
    detail: str
    failures: tuple[FailureCount, ...] = ()

    @property
    def is_degraded(self) -> bool:
        return self.state in ("unavailable", "failing")

    def as_json(self) -> dict[str, object]:
        return {
            "state": self.state,
            "model": self.model,
            "degraded": self.is_degraded,
            "detail": self.detail,
            "failures": [
                {
                    "kind": failure.kind,
                    "count": failure.count,
                    "last_at": failure.last_at.isoformat(timespec="seconds"),
                    "seconds_ago": round(failure.seconds_ago),
                }
                for failure in self.failures
            ],
        }
