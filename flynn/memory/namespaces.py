"""The SQL condition for "this namespace, or anything under it" (``ns`` or ``ns/...``)."""

from __future__ import annotations


def namespace_scope(column: str) -> str:
    """A condition on ``column`` taking three parameters, the values from ``scope_params``.

    A byte range instead of ``LIKE 'ns/%'``: LIKE ignores ASCII case (``users/Alice`` would see
    ``users/alice``) and needs escaping of ``%`` and ``_``. Every string starting with ``ns/`` sorts
    at or after ``ns/`` and before ``ns0`` ('0' is the byte after '/'), and nothing else does.
    Both halves can use an index on ``column``.
    """
    return f"({column} = ? OR ({column} >= ? AND {column} < ?))"


def scope_params(prefix: str) -> tuple[str, str, str]:
    """Parameters for ``namespace_scope``; ``ValueError`` for an empty prefix."""
    prefix = prefix.rstrip("/")
    if not prefix:
        raise ValueError("namespace prefix must not be empty")
    return (prefix, prefix + "/", prefix + "0")


_ROOTS_TWO_DEEP = ("users", "sessions")
"""First segments whose namespaces are rooted one level down (``users/alice``, ``sessions/x``)."""


def namespace_root(namespace: str) -> str:
    """The person or session scope a namespace belongs to: its first segment, or its first two
    under ``users/`` and ``sessions/``, and its first three under ``sessions/`` when the third
    is a sender (``u`` and digits: ``sessions/telegram:-100:77/u1001``, one person's own session
    in a forum topic or thread). Must agree with ``_NS_TOKEN_V22`` in ``migrations.py`` and with
    PostgreSQL's migration 16."""
    parts = namespace.split("/")
    depth = 2 if parts[0] in _ROOTS_TWO_DEEP and len(parts) > 1 else 1
    if parts[0] == "sessions" and len(parts) > 2 and _is_sender(parts[2]):
        depth = 3
    return "/".join(parts[:depth])


def _is_sender(segment: str) -> bool:
    """Whether a segment is the sender of a per-person group session (``SessionKey``'s
    ``u<sender>``): channels' sender ids are ASCII digits, and no namespace under a root is
    named so."""
    digits = segment[1:]
    return segment[:1] == "u" and digits.isascii() and digits.isdigit()


def namespace_token(prefix: str) -> str | None:
    """The full-text token (column ``ns``) shared by every namespace under ``prefix``, or
    ``None`` when they span several roots (``users``, ``sessions``)."""
    prefix = prefix.rstrip("/")
    if not prefix or prefix in _ROOTS_TWO_DEEP:
        return None
    return "n" + namespace_root(prefix).encode().hex() + "x"
