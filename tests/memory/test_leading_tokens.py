"""A long text is embedded from the first tokens of a prefix of it (``leading_tokens``), with
the very ids, and so the very vector, that the whole text gives: for each shipped tokenizer
(the int8 and float MiniLM's, WordLlama's), on long texts of many shapes."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from flynn.recall import embeddings, leading_tokens, minilm, minilm_int8
from flynn.recall.leading_tokens import BERT_CUTS, LLAMA_CUTS, leading_ids

np = pytest.importorskip("numpy")

_WORDS = "the Cat sat on a mat while Rain fell over quiet hills and rivers ran".split()
_COMBINING = "\u0301\u0308\u0327\u030a"
_CJK = "東京の天気は晴れです我们今天去公园散步吧한국어"
_EMOJI = ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467"]
_ODD = ["\x00", "\x1c", "\x7f", "\u00a0", "\u3000", "\u2028", "\ufeff", "\u200b", "\t", "\n"]


def _words(rng: random.Random, count: int, between: Callable[[], str] = lambda: " ") -> str:
    return "".join(rng.choice(_WORDS) + between() for _ in range(count))


def _shapes() -> Iterator[tuple[str, str]]:
    rng = random.Random(25)
    yield "words", _words(rng, 40_000)
    yield "one giant word", "a" * 300_000
    yield "a giant word, then words", "b" * 50_000 + " " + _words(rng, 2_000)
    yield "a giant word of letters and marks", ("é" + _COMBINING) * 30_000 + " x"
    yield "whitespace runs", _words(rng, 20_000, lambda: rng.choice(" \t\n\r") * rng.randint(1, 40))
    yield "whitespace first", " " * 100_000 + _words(rng, 2_000)
    yield "combining marks first", "\u0301" * 30_000 + " " + _words(rng, 2_000)
    yield "marks between words", _words(rng, 5_000, lambda: " " + "\u0301" * 100 + " ")
    yield "accented capitals", " ".join("ÉCOLE ÇA Σίσυφος ΣΣΣ ÅNGSTRÖM" for _ in range(5_000))
    yield "emoji with spaces", " ".join(rng.choice(_EMOJI) for _ in range(20_000))
    yield "emoji without spaces", "".join(rng.choice(_EMOJI) for _ in range(20_000))
    yield "CJK without spaces", "".join(rng.choice(_CJK) for _ in range(100_000))
    yield (
        "CJK and Latin without spaces",
        "".join(rng.choice([rng.choice(_CJK), "abc", "Déjà"]) for _ in range(50_000)),
    )
    yield "NUL between words", _words(rng, 20_000, lambda: "\x00")
    yield "NUL first", "\x00" * 50_000 + " " + _words(rng, 2_000)
    yield "odd spaces and controls", _words(rng, 20_000, lambda: rng.choice(_ODD))
    yield "special tokens", "[CLS] [SEP] <s> </s> [MASK] [UNK] x" * 3_000
    for count in (253, 254, 255, 256, 257):
        # The limit reached (or not) exactly at the end of the first prefix.
        yield f"{count} words, a long gap", "a " * count + " " * 10_000 + _words(rng, 1_000)
    for seed in range(12):
        # Anything at all: each character drawn from all of the above and punctuation.
        pool = [*_WORDS, *_COMBINING, *_CJK, *_EMOJI, *_ODD, " ", ".", ",", "-", "'", "[", "]"]
        many = random.Random(seed)
        yield (
            f"random {seed}",
            "".join(many.choice(pool) for _ in range(many.randint(3_000, 60_000))),
        )


_SHAPES = list(_shapes())


class _Model:
    """One embedder with how it gets its ids for the whole text, and the vector of those."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.embedder: Any
        if name == "int8":
            if minilm_int8.model_file() is None or not minilm_int8.runtime_installed():
                pytest.skip(f"{minilm_int8.MINILM_INT8_PACKAGE} is not installed")
            self.embedder = minilm_int8.MiniLMInt8Encoder.installed()
            self.cuts = BERT_CUTS
        elif name == "float":
            if minilm.model_dir() is None:
                pytest.skip(f"{minilm.MINILM_PACKAGE} is not installed")
            self.embedder = minilm.MiniLMEncoder.installed()
            self.cuts = BERT_CUTS
        else:
            pytest.importorskip("wordllama")
            self.embedder = embeddings.WordLlamaEmbedder.installed()
            self.cuts = LLAMA_CUTS
        self.limit = 256

    def ids(self, text: str) -> list[int]:
        ids: list[int] = self.embedder._ids(text)
        return ids

    def whole(self, text: str) -> list[int]:
        """The ids as the tokenizer gives them for the whole text (as before this change)."""
        tokenizer = self.embedder._tokenizer
        if self.name == "wordllama":
            ids: list[int] = tokenizer.encode(text, add_special_tokens=False).ids[: self.limit]
            return ids
        whole: list[int] = tokenizer.encode(text).ids
        return whole

    def vector_of(self, ids: list[int]) -> Any:
        if self.name == "int8":
            return self.embedder._encode(ids)
        if self.name == "float":
            return self.embedder._encode([ids])[0]
        table = self.embedder._table
        kept = [i for i in ids if 0 <= i < table.shape[0]]
        if not kept:
            return np.zeros(table.shape[1], dtype=np.float32)
        vector = table[kept].mean(axis=0)
        return vector / float(np.linalg.norm(vector))


@pytest.fixture(scope="module", params=["int8", "float", "wordllama"])
def model(request: pytest.FixtureRequest) -> _Model:
    return _Model(request.param)


@pytest.mark.parametrize(("shape", "text"), _SHAPES, ids=[shape for shape, _ in _SHAPES])
def test_the_ids_and_the_vector_are_the_whole_texts(model: _Model, shape: str, text: str) -> None:
    whole = model.whole(text)
    assert leading_ids(model.ids, text, model.limit, model.cuts) == whole, shape
    vector = model.embedder.embed([text])[0]
    if text.strip():
        assert np.array_equal(vector, model.vector_of(whole)), shape


def test_a_batch_gives_each_text_its_whole_ids(model: _Model) -> None:
    texts = ["short", "", _SHAPES[0][1], "\x00" * 50_000 + " x", "word " * 100, _SHAPES[4][1]]
    fed: list[list[int]] = []
    if model.name == "float":
        encode = model.embedder._encode
        model.embedder._encode = lambda batch: (fed.extend(batch), encode(batch))[1]
        try:
            model.embedder.embed(texts)
        finally:
            del model.embedder._encode
        assert sorted(fed) == sorted(model.whole(text) for text in texts if text.strip())
    else:
        ids = leading_tokens.leading_ids_each(
            texts, model.ids, lambda batch: [model.ids(text) for text in batch], 256, model.cuts
        )
        assert ids == [model.whole(text) for text in texts]


class _Counting:
    """The tokenizer, counting the characters it is handed."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.read = 0

    def encode(self, text: str, *args: Any, **kwargs: Any) -> Any:
        self.read += len(text)
        return self.tokenizer.encode(text, *args, **kwargs)

    def encode_batch(self, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        self.read += sum(len(text) for text in texts)
        return self.tokenizer.encode_batch(texts, *args, **kwargs)


def test_a_long_text_is_read_by_its_start(model: _Model, monkeypatch: pytest.MonkeyPatch) -> None:
    # 1 MB of prose: 256 tokens are in its first few kilobytes (read whole before: 0.5 s of CPU).
    text = _words(random.Random(1), 250_000)
    counting = _Counting(model.embedder._tokenizer)
    monkeypatch.setattr(model.embedder, "_tokenizer", counting)
    model.embedder.embed([text])
    assert len(text) > 1_000_000
    assert 0 < counting.read <= leading_tokens.FIRST_PREFIX


def test_no_wordllama_token_spans_a_space_after_a_character() -> None:
    # What LLAMA_CUTS stands on: a token with "▁" after another character could span a cut.
    pytest.importorskip("wordllama")
    tokenizer = json.loads(embeddings.WordLlamaEmbedder.installed()._tokenizer.to_str())
    assert tokenizer["pre_tokenizer"] is None
    spanning = [
        token
        for token in tokenizer["model"]["vocab"]
        if any(a != "▁" and b == "▁" for a, b in itertools.pairwise(token))
    ]
    assert len(tokenizer["model"]["vocab"]) == 32_000 and spanning == []
