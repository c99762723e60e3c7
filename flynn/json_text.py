"""JSON text read and written back as it was: read only when writing it back loses nothing
(``faithful_loads``), written in the layout it had (``dumped_like``)."""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal


def faithful_loads(text: str) -> object:
    """``json.loads(text)``; ``ValueError`` (as for text that is not JSON) when writing the
    value back would lose part of it: a key given twice (``json.loads`` keeps the last value
    only) or a number no float holds (``1e400``, twenty digits and a fraction)."""
    return json.loads(text, object_pairs_hook=_unique_keys, parse_float=_exact_float)


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    kept = dict(pairs)
    if len(kept) != len(pairs):
        raise ValueError("a key given twice")
    return kept


def _exact_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value) or Decimal(repr(value)) != Decimal(literal):
        raise ValueError(f"no float holds {literal}")
    return value


# The indent of JSON written over several lines: the first line's that has one.
_JSON_INDENT = re.compile(r"\n([ \t]*)\S")


def dumped_like(value: object, text: str) -> str:
    """``value`` as JSON laid out as ``text`` was: compact on one line (tool arguments), or
    indented as its second line is (a person's ``TASKS.json``, a file sent), between the
    whitespace ``text`` had around it."""
    body = text.strip()
    indent = _JSON_INDENT.search(body) if "\n" in body else None
    if indent is None:
        dumped = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        colon = ": " if '": ' in body else ":"
        dumped = json.dumps(value, ensure_ascii=False, indent=indent[1], separators=(",", colon))
    return text[: len(text) - len(text.lstrip())] + dumped + text[len(text.rstrip()) :]
