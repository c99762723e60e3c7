"""The later windows of a long stored turn: the embedding model reads a text's first 256 tokens,
so a turn that says something in passing past them gets a vector for each window of its rest
too (``flynn.memory.vectors``: kind ``passage``), and a window's nearness counts as the turn's."""

from __future__ import annotations

LONG_CHARS = 1000
"""A stored turn longer than this (in characters) gets vectors for its later windows too
(``later_windows``): the embedding model reads a text's first 256 tokens, which end 840-1,130
characters into a long turn of the dev sets (5th to 95th percentile), and says nothing of the
rest."""
WINDOW_START = 700
"""Where the first later window starts: before the model's reading ends in nearly every long
turn, so no sentence falls between the two."""
WINDOW_CHARS = 800
"""A window's length, about 200 tokens: within what the model reads."""
WINDOW_STRIDE = 600
"""How far each window starts after the one before it (a quarter of each overlaps the next, so
a sentence cut by one window's end is whole in the next)."""
MAX_WINDOWS = 16
"""At most this many windows a turn (about 10 KB read): a pasted log of megabytes would
otherwise cost thousands of model calls. A window's stored id leaves room for 63
(``passage_id``)."""


def later_windows(text: str) -> list[str]:
    """The windows of ``text`` past the start the model reads: none for a text of at most
    ``LONG_CHARS`` characters, else at least one. Each is ``WINDOW_CHARS`` long (the last runs
    to the text's end), starts ``WINDOW_STRIDE`` after the one before, cut at spaces (a word
    longer than a window is cut where it falls), collapsed to single spaces."""
    if len(text) <= LONG_CHARS:
        return []
    windows: list[str] = []
    start = WINDOW_START
    while len(windows) < MAX_WINDOWS:
        end = start + WINDOW_CHARS
        last = end >= len(text) - (WINDOW_STRIDE - WINDOW_CHARS // 2)
        piece = text[_after_space(text, start) : len(text) if last else _before_space(text, end)]
        windows.append(" ".join(piece.split()) or " ".join(text[start:end].split()))
        if last:
            break
        start += WINDOW_STRIDE
    return windows


def _after_space(text: str, at: int) -> int:
    """``at`` moved past the word it falls in (unless that word runs 40 characters on)."""
    space = next((i for i in range(at, min(len(text), at + 40)) if text[i].isspace()), None)
    return at if at == 0 or text[at - 1].isspace() or space is None else space + 1


def _before_space(text: str, at: int) -> int:
    """``at`` moved back to the start of the word it falls in (unless that word began 40
    characters before)."""
    space = next((i for i in range(at, max(0, at - 40), -1) if text[i - 1].isspace()), None)
    return at if at >= len(text) or text[at].isspace() or space is None else space


PASSAGE_IDS = 64
"""A turn's windows are stored as ``passage`` vectors with ids ``turn id * 64 + 1..63``:
``passage_id``; the turn is ``passage_id // PASSAGE_IDS`` (``turn_of``)."""


def passage_id(turn_id: int, window: int) -> int:
    """The stored id of ``turn_id``'s ``window``-th later window (from 1)."""
    return turn_id * PASSAGE_IDS + window


def turn_of(passage: int) -> int:
    """The turn a ``passage_id`` belongs to."""
    return passage // PASSAGE_IDS
