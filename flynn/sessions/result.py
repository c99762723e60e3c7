"""What a session sends back for a message, whether it was a turn or a command."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What to send back. ``error_code`` follows the gateway protocol's codes when set."""

    text: str
    error_code: str | None = None
    compacted: bool = False

    @property
    def is_error(self) -> bool:
        return self.error_code is not None
