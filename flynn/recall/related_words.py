"""Related words for recall's query expansion: "pets" also looks for "dogs" and "cats",
"married" for "wife" and "wedding", "injuries" for "hurt".

A person rarely asks with the words they once used: "What pets does Ingrid have?" is answered
by "Biscuit chewed my slipper again, bad dog". Word search alone misses such turns, and
embeddings (``memory.embeddings``) are an optional extra. So the ranker also searches each
question word's nearest words, weighed below the word itself (``Tuning.related``).

The table ships with Flynn (``related_words.txt.gz``, about 400 KiB): for each of about 21,000
English words, up to five neighbours with their similarity, found by embedding every word alone
with all-MiniLM-L6-v2 (``tools/make_related_words.py``). It is data, read once; no model runs
and nothing is downloaded. Neighbours that share a word's stem are left out: the full-text index
(SQLite's Porter stemmer) already finds "married" for "marry".
"""

from __future__ import annotations

import functools
import gzip
import zlib
from collections.abc import Iterable, Mapping
from importlib.resources import files
from typing import NamedTuple

import structlog

log = structlog.get_logger(__name__)

TABLE = "related_words.txt.gz"


class Related(NamedTuple):
    """``word`` is searched because the question asked ``source``; ``similarity`` in 0..1."""

    word: str
    source: str
    similarity: float


class RelatedWords:
    """A table of words, each with its stem (as the full-text index stems it) and its nearest
    words, most similar first. A line is split when its word is first looked up: most of the
    table is never asked for."""

    def __init__(self, lines: Mapping[str, str]) -> None:
        self._lines = lines
        self._entries: dict[str, tuple[str, tuple[tuple[str, float], ...]]] = {}

    def __len__(self) -> int:
        return len(self._lines)

    @classmethod
    def parse(cls, text: str) -> RelatedWords:
        """The table in ``tools/make_related_words.py``'s format. Lines are only split from
        their word here (a whole parse would cost a tenth of a second at start-up); a line that
        turns out malformed when looked up gives no related words."""
        lines: dict[str, str] = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                word, _, rest = line.partition(" ")
                lines[word] = rest
        return cls(lines)

    @staticmethod
    @functools.cache
    def shipped() -> RelatedWords:
        """The table that ships with Flynn, read once; empty (no expansion, a logged error) if
        the file is missing or damaged, which only a broken install can cause."""
        try:
            data = files("flynn.recall").joinpath(TABLE).read_bytes()
            return RelatedWords.parse(gzip.decompress(data).decode())
        except (OSError, EOFError, UnicodeDecodeError, zlib.error):
            log.exception("recall.related_words_unavailable")
            return RelatedWords({})

    def stem(self, word: str) -> str:
        """``word``'s stem when the table knows it, else ``word`` itself."""
        return self._entry(word)[0]

    def _entry(self, word: str) -> tuple[str, tuple[tuple[str, float], ...]]:
        entry = self._entries.get(word)
        if entry is None:
            line = self._lines.get(word)
            if line is None:
                return word, ()
            stem, *rest = line.split(" ")
            try:
                near = tuple((rest[i], int(rest[i + 1]) / 100) for i in range(0, len(rest), 2))
            except (IndexError, ValueError):
                near = ()
            entry = self._entries[word] = (stem or word, near)
        return entry

    def expand(self, words: Iterable[str], *, also: Iterable[str] = ()) -> tuple[Related, ...]:
        """The related words of ``words``, in order: none that shares a stem with one of
        ``words``, with ``also`` (forms searched anyway) or with a word already given."""
        words = list(words)
        # A word the table lacks has no known stem: a crude one catches most of what the index
        # would find anyway ("paddle" for "paddling").
        taken = {self.stem(word) for word in (*words, *also)}
        crude = {_crude_stem(word) for word in (*words, *also)}
        related: list[Related] = []
        for word in words:
            for near, similarity in self._entry(word)[1]:
                stem, rough = self.stem(near), _crude_stem(near)
                if stem not in taken and rough not in crude:
                    taken.add(stem)
                    crude.add(rough)
                    related.append(Related(near, word, similarity))
        return tuple(related)


def _crude_stem(word: str) -> str:
    """``word`` without a common suffix ("paddling", "paddled" and "paddle" give "paddl")."""
    for suffix in ("ing", "ed", "es", "e", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word
