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
