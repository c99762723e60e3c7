"""The ``flynn`` command's answers to wrong or unusual arguments, and to a reader that stops
early: each says what is wrong, in the terms the person typed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_bench_recall import DATASET
from test_cli import flynn

from flynn import cli


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("memory", "forget", "--since", "last week"), "--since"),
        (("memory", "show", "--user", "zed"), "--user"),
        (("sessions", "search", "tea", "--limit", "0"), "--limit"),
    ],
)
def test_a_wrong_argument_is_not_called_invalid_configuration(
    home: Path, args: tuple[str, ...], option: str
) -> None:
    result = flynn(*args, home=home)
    assert result.returncode == 2
    assert result.stderr.startswith(f"flynn: invalid argument {option}: ")
    assert "configuration" not in result.stderr


def test_the_history_option_says_it_finds_observations_too(home: Path) -> None:
    result = flynn("memory", "show", "--help", home=home)
    assert result.returncode == 0, result.stderr
    text = " ".join(result.stdout.split())
    assert "the observations it names: by what they are about (sushi)" in text
    assert "their kind (preference, 'working on')" in text


@pytest.mark.parametrize("field", ["", "   "])
def test_forgetting_an_empty_field_says_so(home: Path, field: str) -> None:
    result = flynn("memory", "forget", "--field", field, home=home)
    assert result.returncode == 2
    assert result.stderr.startswith("flynn: invalid argument --field: is empty")


def test_forgetting_since_a_future_date_says_that_date_is_the_problem(home: Path) -> None:
    result = flynn("memory", "forget", "--since", "2999-01-01", home=home)
    assert result.returncode == 2
    assert result.stderr.startswith("flynn: invalid argument --since: 2999-01-01 is in the future")
    assert "--until" not in result.stderr


def test_forgetting_an_open_range_runs_until_now(home: Path) -> None:
    flynn("chat", home=home, stdin="I adopted a greyhound.\n")
    result = flynn("memory", "forget", "--since", "2000-01-01", home=home)
    assert result.returncode == 0, result.stderr
    assert "from 2000-01-01" in result.stdout and "2 messages" in result.stdout


def test_an_until_before_since_names_until(home: Path) -> None:
    result = flynn("memory", "forget", "--since", "2026-11-18", "--until", "2026-11-01", home=home)
    assert result.returncode == 2
    assert result.stderr.startswith("flynn: invalid argument --until: must be after --since")


@pytest.mark.parametrize(
    "args", [("memory", "show"), ("sessions", "search", "tea"), ("memory", "export")]
)
def test_a_reader_that_stops_early_gets_no_traceback(home: Path, args: tuple[str, ...]) -> None:
    # ``flynn memory show | head -1``: the reading end is closed before flynn writes.
    reader, writer = os.pipe()
    os.close(reader)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "flynn", *args],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            env={
                **{k: v for k, v in os.environ.items() if not k.startswith("FLYNN_")},
                "HOME": str(home),
                "USER": "ana",
            },
            timeout=60,
            check=False,
        )
    finally:
        os.close(writer)
    assert result.stderr == ""
    assert result.returncode == 128 + signal.SIGPIPE


def test_benchmarks_take_the_memory_settings_of_a_config(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text(
        "memory:\n  recall_depth: full\n  recall_max_tokens: 700\n  retrieval_threshold: 0.5\n"
    )
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(DATASET), encoding="utf-8")

    def bench(*args: str) -> dict[str, object]:
        result = flynn("bench", *args, "--config", str(config), home=home)
        assert result.returncode == 0, result.stderr
        report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
        return report

    recall = bench("recall", "--dataset", str(dataset), "--k", "1")
    assert recall["config"] == recall["config"] | {
        "ranker": "hybrid",
        "recall_depth": "full",
        "recall_max_tokens": 700,
        "retrieval_threshold": 0.5,
    }
    flagged = bench("recall", "--dataset", str(dataset), "--k", "1", "--ranker", "bm25")
    assert flagged["config"] == flagged["config"] | {"ranker": "bm25", "recall_depth": "full"}
    turn = bench("turn", "--messages", "50", "--facts", "10", "--turns", "5")
    assert (turn["recall_depth"], turn["pause_ms"]) == ("full", 0)
    paused = bench("turn", "--messages", "50", "--facts", "10", "--turns", "3", "--pause-ms", "2")
    assert (paused["turns"], paused["pause_ms"]) == (3, 2)


def test_the_ranker_is_no_longer_a_setting(home: Path, tmp_path: Path) -> None:
    config = tmp_path / "old.yaml"
    config.write_text("memory:\n  recall_ranker: bm25\n")
    result = flynn("memory", "show", "--config", str(config), home=home)
    assert result.returncode == 2
    assert "memory.recall_ranker: no longer a setting" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bench_outside_a_checkout_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "CHECKOUT", tmp_path)  # as from an installed wheel
    assert cli.main(["bench", "turn", "--turns", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a checkout of flynn" in err[0]
