"""Embedders that need no model: a bag of hashed words (texts sharing words are close), one that
holds its caller at a gate for the texts a test names, one that keeps what it was asked to embed,
and one that fails on the texts a test names."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix


class HashingEmbedder:
    """Bag of hashed words: texts sharing words are close. Deterministic, no model."""

    model = "hashing-64"
    ready = True

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % 64] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        result: Matrix = out
        return result


class HeldEmbedder(HashingEmbedder):
    """Holds each call that embeds exactly ``text`` (in whatever thread makes it) until
    ``release`` is set; ``holding`` is set once one is held, and ``held_in`` names the threads."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.holding = threading.Event()
        self.release = threading.Event()
        self.held_in: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.text in texts:
            self.held_in.append(threading.current_thread().name)
            self.holding.set()
            assert self.release.wait(10), "the test never released the embedder"
        return super().embed(texts)


class RecordingEmbedder(HashingEmbedder):
    """Keeps every text it was asked to embed (``texts``), in whatever thread."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed(texts)


class FailingEmbedder(HashingEmbedder):
    """A loaded model that raises mid-call (ONNX Runtime out of memory, a tokenizer refusing a
    text) on any batch holding ``word``."""

    def __init__(self, word: str) -> None:
        self.word = word

    def embed(self, texts: Sequence[str]) -> Matrix:
        if any(self.word in text for text in texts):
            raise RuntimeError("onnxruntime: Failed to allocate memory")
        return super().embed(texts)
