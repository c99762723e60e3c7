"""The first tokens of a long text without tokenizing all of it: the models read at most 256.

A tokenizer reads the whole text before it cuts to the model's limit: 60 ms of CPU for 64 KB
and 11 s for 16 MB with MiniLM's, for a vector that only the first 256 tokens make. Here a
prefix is tokenized instead, cut where no token can go on across the cut, and its ids are kept
when they already fill the limit; otherwise a prefix four times as long is tried, up to the
whole text. Where a token cannot go on depends on the tokenizer (``BERT_CUTS``,
``LLAMA_CUTS``); at such a place the tokens of ``text[:cut]`` are the first tokens of
``text``. A cut by length alone would not do: BERT's normalizer drops control characters and
combining marks, so a prefix's length in characters does not bound its tokens, and a cut
inside a word changes that word's tokens. ``tests/memory/test_leading_tokens.py`` checks the
ids and the vectors against the whole text's on texts of many shapes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

FIRST_PREFIX = 4096
"""The first prefix tried, in characters: 256 tokens of prose are 1-2 KB."""
_GROWTH = 4

BERT_CUTS = re.compile(
    "[ \t\n\r\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
    "\U00020000-\U0002a6df\U0002a700-\U0002b81f\U0002b920-\U0002ceaf\U0002f800-\U0002fa1f]"
)
"""Before a space, tab or line break, or a CJK ideograph (the ranges of the ``tokenizers``
library's ``is_chinese_char``, which its BERT normalizer sets apart with spaces: not
U+2B820-U+2B91F, which Google's BERT has but that library leaves inside a word): BERT's
normalizer changes each character by itself and its pre-tokenizer splits there, so no
WordPiece token spans it (``tests/memory/test_leading_tokens_fuzz.py`` checks every
character). (Not before punctuation, which it also splits on: an added token such as
``[CLS]`` contains some.)"""

LLAMA_CUTS = re.compile("(?<=[^ \u2581]) ")
"""Before a space that follows a character other than a space or ``▁``: the Llama tokenizer
(WordLlama's) turns spaces into ``▁`` and has no pre-tokenizer, but no token of its
vocabulary has a ``▁`` after another character, so none spans such a place (a ``▁`` written
in the text is one the space after it would join: ``▁▁`` is a token). Checked on its
vocabulary by the tests."""


def leading_ids(
    encode: Callable[[str], list[int]], text: str, limit: int, cuts: re.Pattern[str]
) -> list[int]:
    """``encode(text)``, where ``encode`` gives at most ``limit`` ids and gives ``limit`` when
    the text has at least that many, read from as short a prefix of ``text`` (cut at a place
    ``cuts`` finds) as gives them. The prefixes grow geometrically, so a text whose tokens are
    few for its length (combining marks, control characters, no place to cut) costs at most
    about 1.3 times its whole."""
    size = FIRST_PREFIX
    while size < len(text):
        cut = _cut_near(text, size, cuts)
        if cut is None:
            break
        ids = encode(text[:cut])
        if len(ids) >= limit:
            return ids
        size = max(size, cut) * _GROWTH
    return encode(text)


def _cut_near(text: str, size: int, cuts: re.Pattern[str]) -> int | None:
    """The last place in ``text[1:size + 1]`` where ``cuts`` matches or, failing one, the first
    after it; ``None`` when there is none. Looked for backwards in growing windows, so that a
    text with a place to cut every few characters costs a few hundred matches, not ``size``."""
    window = 256
    while True:
        start = max(1, size + 1 - window)
        last = None
        for match in cuts.finditer(text, start, size + 1):
            last = match.start()
        if last is not None:
            return last
        if start == 1:
            break
        window *= _GROWTH
    after = cuts.search(text, size + 1)
    return None if after is None else after.start()


def leading_ids_each(
    texts: Sequence[str],
    encode: Callable[[str], list[int]],
    encode_batch: Callable[[list[str]], list[list[int]]],
    limit: int,
    cuts: re.Pattern[str],
) -> list[list[int]]:
    """``leading_ids`` of each text: the long ones one by one, the short ones (no longer than
    the first prefix) together by ``encode_batch``, or by ``encode`` when there is one alone:
    the tokenizer's ``encode_batch`` hands even one to its thread pool, whose wake-up showed
    as milliseconds on a busy machine."""
    short = [row for row, text in enumerate(texts) if len(text) <= FIRST_PREFIX]
    ids = [
        [] if len(text) <= FIRST_PREFIX else leading_ids(encode, text, limit, cuts)
        for text in texts
    ]
    if len(short) == 1:
        ids[short[0]] = encode(texts[short[0]])
    elif short:
        for row, each in zip(short, encode_batch([texts[row] for row in short]), strict=True):
            ids[row] = each
    return ids
