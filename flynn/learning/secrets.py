"""Credentials are never memory: learning's name for ``flynn.credentials`` (the finding and the
redaction live there, below every store and the providers, which may not import learning)."""

from __future__ import annotations

from flynn.credentials import REDACTED_SECRET, is_secret, redact

__all__ = ["REDACTED_SECRET", "is_secret", "redact_secrets"]

redact_secrets = redact
"""``text`` with every credential replaced by ``REDACTED_SECRET``, and how many."""
