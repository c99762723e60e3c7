"""How entity names are normalised into keys, and which keys a text could be naming.

One tokenizer serves both, so a name stored from one message is found again in the next.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Protocol, TypeVar

from flynn.memory.fts import STOPWORDS

USER_ENTITY = "User"
"""The entity that stands for the person themselves in their graph."""

MAX_NAME_WORDS = 4
"""Longest name (in words) that ``candidate_keys`` can find in a text."""

MAX_SCANNED_CHARS = 4000
"""Only the start of a long paste is looked at; its names are rarely the point of the turn."""

MAX_CANDIDATES = 1500
"""Bound on the keys one text yields (so on the size of one lookup)."""

MAX_AMBIGUOUS_CHARS = 4
"""One-word names this short are often common words too (see ``spoken``)."""

GENERIC_TYPE = "thing"
"""The type of an entity nothing more is known about; any other type replaces it."""

MAX_TYPE_CHARS = 40

# Words joined by inner punctuation stay one token ("node.js", "maya@example.com", "C++",
# "snake_case", "O'Brien"), so an e-mail address or URL stored as a name is found again.
_TOKEN = re.compile(r"[^\W_]+(?:[._@+#/:'&?=%~-]+[^\W_]+)*[+#]*")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'"})
_TYPE_CHARS = re.compile(r"\W+")


def _tokens(text: str) -> Iterator[str]:
    for match in _TOKEN.finditer(text.translate(_APOSTROPHES)):
        token = match.group()
        # "Maya's car" names Maya.
        yield token[:-2] if token.endswith(("'s", "'S")) and len(token) > 2 else token


@functools.lru_cache(maxsize=4096)
def name_key(name: str) -> str:
    """The identity of a name within a namespace: case, spacing and punctuation around words
    ignored ("Maya", " maya ", "MAYA." are one entity). Empty when ``name`` has no word in it.
    Remembered for recent names: every turn asks again for the keys of the entities it meets."""
    return " ".join(_tokens(name.casefold()))


def type_name(raw: str) -> str:
    """A type as stored: lower-case words joined by ``_`` ("Works at" -> ``works_at``); empty
    when ``raw`` has no word in it."""
    return _TYPE_CHARS.sub("_", raw.casefold()).strip("_")[:MAX_TYPE_CHARS].strip("_")


@functools.lru_cache(maxsize=64)
def candidate_keys(text: str) -> Mapping[str, bool]:
    """The keys of every 1..``MAX_NAME_WORDS`` word run of ``text`` that could be a name, each
    mapped to whether some occurrence of it starts with a capital letter (read-only).

    Runs ending in a common word ("the", "of", "my") are left out: no name ends like that.
    Remembered for the last texts: a turn's message is looked at by recall (in its thread),
    by learning and by the graph, each on its own.
    """
    return MappingProxyType(_candidate_keys(text))


def _candidate_keys(text: str) -> dict[str, bool]:
    words = list(_tokens(text[:MAX_SCANNED_CHARS]))
    keys = [word.casefold() for word in words]
    found: dict[str, bool] = {}
    for start, word in enumerate(words):
        capitalised = word[0].isupper()
        for size in range(1, MAX_NAME_WORDS + 1):
            end = start + size
            if end > len(words):
                break
            if keys[end - 1] in STOPWORDS:
                continue
            key = " ".join(keys[start:end])
            found[key] = found.get(key, False) or capitalised
        if len(found) >= MAX_CANDIDATES:
            break
    return found


class _Named(Protocol):
    @property
    def name(self) -> str: ...


_N = TypeVar("_N", bound=_Named)


def spoken(text: str, named: Sequence[_N]) -> list[_N]:
    """The items of ``named`` that ``text`` names the way people write names, in their order.

    Lookups ignore case, but a short one-word name ("Go", "Rust", "May", "Will") is usually also a
    common word: from a writer who capitalises anything, such a name counts only capitalised.
    """
    if not named or not any(char.isupper() for char in text[:MAX_SCANNED_CHARS]):
        return list(named)
    keys: Mapping[str, bool] | None = None
    kept = []
    for item in named:
        key = name_key(item.name)
        if len(key) <= MAX_AMBIGUOUS_CHARS and " " not in key and item.name[:1].isupper():
            if keys is None:
                keys = candidate_keys(text)
            if not keys.get(key, False):
                continue
        kept.append(item)
    return kept
