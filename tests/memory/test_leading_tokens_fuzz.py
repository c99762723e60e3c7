"""``leading_tokens`` attacked: every place ``BERT_CUTS`` cuts is one where the shipped BERT
tokenizer splits (checked over all of Unicode), and on thousands of random texts, with prefixes
and limits made small so that a cut falls everywhere, the prefix's ids are the whole text's."""

from __future__ import annotations

import random
from typing import Any

import pytest

from flynn.recall import embeddings, leading_tokens, minilm_int8
from flynn.recall.leading_tokens import BERT_CUTS, LLAMA_CUTS, leading_ids

_CASES = 3_000
"""Random texts a tokenizer is tried on (each at one small limit and first prefix)."""

_POOL = [
    *"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    *".,;:!?'\"-_()[]{}<>/\\#@$%^&*+=~`|",
    " ",
    " ",
    " ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "  ",
    # Unicode spaces and separators: BERT's whitespace (Zs) but not a cut, or not whitespace.
    "\u00a0",
    "\u1680",
    "\u2000",
    "\u2007",
    "\u200a",
    "\u202f",
    "\u205f",
    "\u3000",
    "\u2028",
    "\u2029",
    "\u0085",
    "\x0b",
    "\x0c",
    # What BERT's normalizer drops: controls, format characters, combining marks.
    "\x00",
    "\x1c",
    "\x7f",
    "\u200b",
    "\u200c",
    "\u200d",
    "\ufeff",
    "\u00ad",
    "\u0301",
    "\u0308",
    "\u0327",
    "\u0483",
    "\u05b0",
    "\u0e31",
    # Ideographs at the edges of BERT's ranges, and characters just outside them.
    "\u3400",
    "\u4dbf",
    "\u4dc0",
    "\u4e00",
    "\u9fff",
    "\ua000",
    "\uf900",
    "\ufaff",
    "\U00020000",
    "\U0002a6df",
    "\U0002a6e0",
    "\U0002a700",
    "\U0002b81f",
    "\U0002b820",
    "\U0002b91f",
    "\U0002b920",
    "\U0002ceaf",
    "\U0002ceb0",
    "\U0002f800",
    "\U0002fa1f",
    "の",
    "한",
    "ไ",
    "ع",
    "я",
    "Σ",
    "ς",
    "İ",
    "ß",
    "ﬁ",
    "Å",
    "é",
    "e\u0301",
    "\U0001f600",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0001f44d\U0001f3fd",
    # Special tokens as text, and the Llama tokenizer's own marks.
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "[UNK]",
    "[PAD]",
    "<s>",
    "</s>",
    "<unk>",
    "##",
    "▁",
    "▁▁",
    "the",
    "cat",
    "unbelievable",
    "running",
    " the",
    " a",
]


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_POOL) for _ in range(rng.randint(1, 120)))


def _bert() -> Any:
    if minilm_int8.model_file() is None or not minilm_int8.runtime_installed():
        pytest.skip(f"{minilm_int8.MINILM_INT8_PACKAGE} is not installed")
    return minilm_int8.MiniLMInt8Encoder.installed()._tokenizer


def test_every_bert_cut_is_a_place_the_tokenizer_splits() -> None:
    # A cut before a character the normalizer does not set apart ends the prefix's last word
    # early: U+2B820-U+2B91F, in the regular expression's range but not in the tokenizer's.
    tokenizer = _bert()
    joined = [
        hex(point)
        for point in range(0x110000)
        if not 0xD800 <= point <= 0xDFFF
        and BERT_CUTS.match(chr(point))
        and tokenizer.pre_tokenizer.pre_tokenize_str(
            tokenizer.normalizer.normalize_str(f"q{chr(point)}q")
        )[0][0]
        != "q"
    ]
    assert joined == []


def test_a_cut_before_an_ideograph_the_tokenizer_joins() -> None:
    # 253 one-token words fill the first prefix up to a word holding U+2B820: cut before it,
    # the prefix's 254th token is "b", where the whole text's is [UNK] for the whole word.
    _bert()
    encoder = minilm_int8.MiniLMInt8Encoder.installed()
    text = "a" + " " * 15
    text = text * 253 + "b\U0002b820" + "c" * 60 + " tail" * 1_000
    whole = encoder._tokenizer.encode(text).ids
    assert leading_ids(encoder._ids, text, 256, BERT_CUTS) == whole


def _fuzz(encode: Any, cuts: Any, seed: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """Compares ``leading_ids`` with the whole text's ids on ``_CASES`` random texts; returns
    how many of them a prefix's ids answered (not the whole text)."""
    rng = random.Random(seed)
    from_prefix = 0
    for case in range(_CASES):
        text = _text(rng)
        limit = rng.randint(3, 24)
        monkeypatch.setattr(leading_tokens, "FIRST_PREFIX", rng.choice([1, 2, 3, 5, 8, 13]))
        read: list[int] = []

        def counted(part: str, limit: int = limit, read: list[int] = read) -> list[int]:
            read.append(len(part))
            ids: list[int] = encode(part, limit)
            return ids

        got = leading_ids(counted, text, limit, cuts)
        assert got == encode(text, limit), (seed, case, text, limit)
        from_prefix += read[-1] < len(text)
    return from_prefix


def test_bert_prefix_ids_are_the_whole_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    tokenizers = {}
    shipped = _bert().to_str()

    def encode(text: str, limit: int) -> list[int]:
        if limit not in tokenizers:
            from tokenizers import Tokenizer

            tokenizers[limit] = Tokenizer.from_str(shipped)
            tokenizers[limit].enable_truncation(limit)
        ids: list[int] = tokenizers[limit].encode(text).ids
        return ids

    # Most answered from a prefix: the cuts are exercised, not the whole-text fallback.
    assert _fuzz(encode, BERT_CUTS, 7, monkeypatch) > _CASES // 2


def test_llama_prefix_ids_are_the_whole_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wordllama")
    tokenizer = embeddings.WordLlamaEmbedder.installed()._tokenizer

    def encode(text: str, limit: int) -> list[int]:
        ids: list[int] = tokenizer.encode(text, add_special_tokens=False).ids[:limit]
        return ids

    assert _fuzz(encode, LLAMA_CUTS, 11, monkeypatch) > _CASES // 2
