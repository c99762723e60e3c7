"""`flynn bench recall` on a tiny inline dataset: the JSON it prints and the metrics in it; the
recall sets of ``evals/datasets``, built from their sources."""

from __future__ import annotations

import json
import pstats
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from evals.datasets import NAMES
from evals.recall import DatasetError, load_dataset, parse_dataset
from flynn.cli import main
from flynn.postgres.database import PostgresDatabase
from flynn.recall import minilm

DATASET = {
    "conversations": [
        {
            "id": "c1",
            "sessions": [
                {
                    "id": "s1",
                    "time": "2023-05-08T13:56:00",
                    "turns": [
                        {"id": "t1", "speaker": "Caroline", "text": "I went to a support group."},
                        {"id": "t2", "speaker": "Melanie", "text": "How was it?"},
                        {"id": "t3", "speaker": "Caroline", "text": "Powerful, people shared."},
                    ],
                },
                {
                    "id": "s2",
                    "time": "2023-05-25T10:00:00",
                    "turns": [
                        {"id": "t4", "speaker": "Melanie", "text": "I painted a lake sunrise."},
                        {"id": "t5", "speaker": "Caroline", "text": "My name is Caroline."},
                    ],
                },
            ],
        },
        {
            "id": "c2",
            "sessions": [
                {
                    "id": "s1",
                    "time": "2023-06-01T09:00:00",
                    "turns": [
                        {"id": "t1", "speaker": "Jon", "text": "I painted my garage door red."}
                    ],
                }
            ],
        },
    ],
    "questions": [
        {
            "conversation": "c1",
            "question": "Where did Caroline go for support?",
            "evidence": ["t1"],
            "category": "single-hop",
        },
        {
            "conversation": "c1",
            "question": "What did Melanie paint?",
            "evidence": ["t4"],
            "category": "single-hop",
        },
        {
            "conversation": "c2",
            "question": "What colour is the garage door?",
            "evidence": ["t1"],
            "category": "open-domain",
        },
        {"conversation": "c2", "question": "Unanswerable?", "evidence": [], "category": "adv"},
    ],
}


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The command configures logging for the process; later tests expect the default."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    assert main(["bench", "recall", "--dataset", str(path), *args]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    result: dict[str, object] = json.loads(out[-1])
    return result


def test_prints_the_result_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(tmp_path, capsys, "--no-embeddings")  # on by default, as memory.embeddings
    assert result["turn"] == {"1": 1.0, "5": 1.0, "10": 1.0, "50": 1.0}
    assert result["session"] == {"1": 1.0, "5": 1.0, "10": 1.0, "50": 1.0}
    categories = result["by_category"]
    assert isinstance(categories, dict) and set(categories) == {"single-hop", "open-domain"}
    assert set(categories["single-hop"]) == {"turn", "session", "turn_at_turns", "questions"}
    assert set(result["turn_at_turns"]) == {"10", "20", "25", "35"}  # type: ignore[arg-type]
    latency = result["latency_ms"]
    assert isinstance(latency, dict) and set(latency) >= {"p50", "p99"}
    tokens = result["tokens_injected_mean"]
    assert isinstance(tokens, float) and 0 < tokens <= 1500
    assert result["questions"] == 4
    # Each answerable question's first item is one turn (a person's turn comes without the
    # reply after it); "Unanswerable?" matches nothing.
    shown = result["turns_in_top_k_mean"]
    assert isinstance(shown, dict) and shown["1"] == 0.75 and shown["1"] <= shown["50"]
    assert result["config"] == {
        "ranker": "hybrid",
        "recall_depth": "adaptive",
        "embeddings": False,
        "embeddings_model": None,
        "recall_max_tokens": 1500,
        "retrieval_threshold": 0.3,
        "stored_turns": 6,
        "dataset_turns": 6,
        "filler_turns": 0,
        "storage": "sqlite",
    }


def test_slowest_questions_are_listed_and_profiled_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "slowest.prof"
    result = _run(tmp_path, capsys, "--no-embeddings", "--slowest", "2", "--profile", str(profile))
    latency = result["latency_ms"]
    assert isinstance(latency, dict)
    assert 0 < latency["cpu_p50"] <= latency["cpu_max"] and latency["gc_total"] >= 0
    slowest = result["slowest"]
    assert isinstance(slowest, list) and len(slowest) == 2
    assert slowest[0]["wall_ms"] == latency["max"] >= slowest[1]["wall_ms"]
    asked = {question["question"] for question in DATASET["questions"]}  # type: ignore[index]
    assert {entry["question"] for entry in slowest} <= asked
    assert all(entry["again"]["cpu_ms"] > 0 for entry in slowest)
    # Only the two asked again were profiled: ranking ran twice, not for every question.
    calls = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    ranked = [count for (path, _, name), (count, *_) in calls.items() if name == "rank"]
    assert ranked and all(count == 2 for count in ranked)


def test_other_rankers_cut_offs_and_padding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(tmp_path, capsys, "--ranker", "bm25", "--k", "1,3", "--scale", "300")
    assert set(result["turn"]) == {"1", "3"}  # type: ignore[arg-type]
    config = result["config"]
    assert isinstance(config, dict)
    assert config["ranker"] == "bm25" and config["stored_turns"] == 300


def test_compare_ranks_one_store_with_the_fused_lexical_and_baseline_rankers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if minilm.model_dir() is None:
        pytest.skip(f"{minilm.MINILM_PACKAGE} is not installed")
    cache = tmp_path / "cache"
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    argv = ["bench", "recall", "--dataset", str(path), "--compare", "--embeddings-model"]
    assert main([*argv, "minilm", "--embeddings-cache", str(cache)]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    result = json.loads(lines[-1])
    assert result["config"]["embeddings"] is True  # --compare turns them on
    compared = result["compare"]
    assert set(compared) == {"fused", "lexical", "bm25_vector"}
    for figures in compared.values():
        assert set(figures["turn_at_turns"]) == {"10", "20", "25", "35"}
        assert set(figures["by_category"]) == {"single-hop", "open-domain"}
    # The fused figures are the run's own; the table comes before the JSON line.
    assert compared["fused"]["turn_at_turns"] == result["turn_at_turns"]
    assert compared["fused"]["session_5"] == result["session"]["5"]
    assert any(line.startswith("all") and "bm25_vector" in line for line in lines[:-1])
    # The embeddings were kept: a second run embeds nothing new.
    files = list(cache.iterdir())
    assert [f.suffix for f in files] == [".sqlite"]
    size = files[0].stat().st_size
    assert main([*argv, "minilm", "--embeddings-cache", str(cache)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["compare"] == compared
    assert files[0].stat().st_size == size


RANKED = (
    "turn",
    "session",
    "by_category",
    "turn_at_turns",
    "injected_turn_recall",
    "turns_in_top_k_mean",
    "tokens_injected_mean",
    "tokens_injected_max",
    "questions",
)
"""What a run's ranking decides: everything but its latencies and where it was stored."""


def test_on_postgresql_every_figure_is_sqlites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_url: str
) -> None:
    """Every store on PostgreSQL (facts learnt from the turns, the graph, vectors, team
    documents, filler turns; vectors of the shipped int8 encoder): the same figures, and the
    run's schema gone afterwards."""
    common = ("--embeddings", "--docs", "40", "--scale", "200", "--embeddings-cache", str(tmp_path))
    on_sqlite = _run(tmp_path, capsys, *common)
    on_postgresql = _run(tmp_path, capsys, *common, "--storage-url", postgres_url)
    assert on_postgresql["config"] == {**on_sqlite["config"], "storage": "postgresql"}  # type: ignore[dict-item]
    assert {key: on_postgresql[key] for key in RANKED} == {key: on_sqlite[key] for key in RANKED}
    latency = on_postgresql["latency_ms"]
    assert isinstance(latency, dict) and set(latency) >= {"p50", "p99"}
    docs = on_postgresql["team_docs"]
    assert isinstance(docs, dict) and docs["chunks"] == on_sqlite["team_docs"]["chunks"]  # type: ignore[index]
    with PostgresDatabase.open(postgres_url) as db:
        left = db.fetchall(
            "SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", ("flynn\\_bench\\_%",)
        )
    assert left == []


def test_compare_refuses_embeddings_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    assert main(["bench", "recall", "--dataset", str(path), "--compare", "--no-embeddings"]) == 2
    assert "--compare needs embeddings" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("choice", "model"),
    [("wordllama", "wordllama-l2-supercat-256"), ("minilm", "all-MiniLM-L6-v2")],
)
def test_embeddings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], choice: str, model: str
) -> None:
    pytest.importorskip("numpy")
    pytest.importorskip("wordllama")
    if choice == "minilm" and minilm.model_dir() is None:
        pytest.skip(f"{minilm.MINILM_PACKAGE} is not installed")
    result = _run(tmp_path, capsys, "--embeddings", "--embeddings-model", choice)
    assert result["config"]["embeddings"] is True  # type: ignore[index]
    assert result["config"]["embeddings_model"] == model  # type: ignore[index]
    assert result["turn"]["10"] == 1.0  # type: ignore[index]


def test_evidence_naming_no_turn_is_left_out_and_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    slipped = json.loads(json.dumps(DATASET))
    slipped["questions"][0]["evidence"] = ["t1", "D1:99"]
    slipped["questions"][1]["evidence"] = ["nowhere"]
    dataset = parse_dataset(slipped)
    assert dataset.unknown_evidence == 2
    assert dataset.questions[0].evidence == ("t1",)
    assert dataset.questions[1].evidence == ()

    path = tmp_path / "slipped.json"
    path.write_text(json.dumps(slipped), encoding="utf-8")
    assert main(["bench", "recall", "--dataset", str(path), "--k", "1,10"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out.strip().splitlines()[-1])
    assert result["evidence_unknown"] == 2
    assert result["questions_with_evidence"] == 2  # one had no evidence to begin with
    assert "2 evidence ids name no turn" in err


def test_bad_datasets_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DatasetError, match="unknown conversation"):
        parse_dataset(
            {
                "conversations": [{"id": "c", "sessions": []}],
                "questions": [{"conversation": "d", "question": "?", "evidence": ["x"]}],
            }
        )
    with pytest.raises(DatasetError, match="malformed"):
        parse_dataset({"conversations": [{"sessions": []}], "questions": []})
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    assert main(["bench", "recall", "--dataset", str(path)]) != 0
    assert "cannot read dataset" in capsys.readouterr().err
    assert main(["bench", "recall", "--dataset", "blindd"]) != 0
    assert "nor is it a set: handwritten, generated" in capsys.readouterr().err
    assert main(["bench", "recall", "--dataset", str(path), "--k", "x"]) != 0


def test_recall_depth_is_chosen_on_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(tmp_path, capsys, "--recall-depth", "full")
    config = result["config"]
    assert isinstance(config, dict) and config["recall_depth"] == "full"
    assert result["turn"] == {"1": 1.0, "5": 1.0, "10": 1.0, "50": 1.0}


@pytest.mark.parametrize("name", NAMES)
def test_every_recall_set_builds_from_its_sources(name: str) -> None:
    dataset = load_dataset(name)
    assert dataset.conversations and len(dataset.questions) > 80
    assert dataset.unknown_evidence == 0


def _cooked(asked: str | None) -> dict[str, object]:
    question: dict[str, object] = {
        "conversation": "c",
        "question": "What did I cook last week?",
        "evidence": ["t1"],
        "category": "temporal",
    }
    if asked is not None:
        question["time"] = asked
    turns = [("s1", "2023-03-01T18:00:00", "I cooked a lasagne for the family.")]
    turns += [("s2", "2023-09-01T18:00:00", "I cooked a curry for my friends.")]
    return {
        "conversations": [
            {
                "id": "c",
                "sessions": [
                    {"id": s, "time": t, "turns": [{"id": f"t{n}", "speaker": "Ana", "text": x}]}
                    for n, (s, t, x) in enumerate(turns, start=1)
                ],
            }
        ],
        "questions": [question],
    }


def test_a_question_is_asked_at_its_own_time_when_the_set_gives_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A question's "last week" counts from its ``time``; without one, from a day after the
    conversation's last turn."""
    assert parse_dataset(_cooked("2023-03-06T09:00:00")).questions[0].time is not None
    assert parse_dataset(_cooked(None)).questions[0].time is None
    with pytest.raises(DatasetError, match="malformed"):
        parse_dataset(_cooked("the sixth of March"))
    found = {}
    for asked in ("2023-03-06T09:00:00", None):
        path = tmp_path / "cooked.json"
        path.write_text(json.dumps(_cooked(asked)), encoding="utf-8")
        assert main(["bench", "recall", "--dataset", str(path), "--k", "1", "--no-embeddings"]) == 0
        found[asked] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["turn"]["1"]
    assert found == {"2023-03-06T09:00:00": 1.0, None: 0.0}
