"""``flynn costs``: tokens and spend by task and model with a total, as text and JSON; ``--since``
in its forms; a bad ``--since`` or price is one line and exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from flynn.cli import main
from flynn.cli_costs import parse_since
from flynn.cli_settings import UsageError
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA

JANUARY = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
MARCH = datetime(2026, 3, 5, 8, 0, tzinfo=UTC)


def flynn(*args: str, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET"))
    }
    clean.update({"HOME": str(home), "USER": "ana"})
    return subprocess.run(
        [sys.executable, "-m", "flynn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=clean,
        cwd=home,
        timeout=60,
        check=False,
    )


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A data dir whose ``costs`` table holds calls of January and March 2026."""
    data = tmp_path / "data"
    with SqliteMemory.open(data / "flynn.db", SCHEMA) as memory:
        calls = [
            ("chat", "anthropic", "claude-sonnet-5-5", 10_000, 1_000, 0.03, JANUARY),
            ("chat", "anthropic", "claude-sonnet-5-5", 20_000, 2_000, 0.06, MARCH),
            ("chat", "anthropic", "claude-sonnet-5-5", 1_000, 100, 0.003, MARCH),
            ("extraction", "openai", "llama3.1", 5_000, 500, None, MARCH),
            ("compaction", "anthropic", "claude-haiku-4-5", 4_000, 400, 0.006, MARCH),
        ]
        for task, provider, model, tokens_in, tokens_out, cost, at in calls:
            memory.costs.record(
                provider=provider,
                model=model,
                task=task,
                input_tokens=tokens_in,
                output_tokens=tokens_out,
                now=at,
                cost=cost,
            )
    path = tmp_path / "config.yaml"
    path.write_text(f"data_dir: {json.dumps(str(data))}\npersona:\n  timezone: UTC\n")
    return path


def test_costs_lists_tasks_and_models_with_a_total(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["costs", "--config", str(config)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Model calls, in US dollars:"
    assert lines[1].split() == ["task", "model", "calls", "tokens", "in", "tokens", "out", "cost"]
    assert [line.split() for line in lines[2:6]] == [
        ["chat", "claude-sonnet-5-5", "3", "31,000", "3,100", "$0.09"],
        ["compaction", "claude-haiku-4-5", "1", "4,000", "400", "$0.0060"],
        ["extraction", "llama3.1", "1", "5,000", "500", "unknown"],
        ["total", "5", "40,000", "4,000", "$0.10", "+", "unknown"],
    ]
    assert lines[6].startswith("unknown: 1 call(s) of a model without a price")
    assert len(lines) == 7


def test_costs_since_a_date_leaves_earlier_calls_out_as_json(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["costs", "--config", str(config), "--since", "2026-02-01", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["since"] == "2026-02-01T00:00:00+00:00"
    assert report["currency"] == "USD"
    chat, compaction, extraction = report["by_task_and_model"]
    assert chat == {
        "task": "chat",
        "provider": "anthropic",
        "model": "claude-sonnet-5-5",
        "calls": 2,
        "input_tokens": 21_000,
        "output_tokens": 2_100,
        "cost_usd": pytest.approx(0.063),
        "unpriced_calls": 0,
    }
    assert (compaction["model"], compaction["cost_usd"]) == ("claude-haiku-4-5", 0.006)
    assert (extraction["model"], extraction["cost_usd"]) == ("llama3.1", None)
    assert report["total"] == {
        "calls": 4,
        "input_tokens": 30_000,
        "output_tokens": 3_000,
        "cost_usd": pytest.approx(0.069),
        "unpriced_calls": 1,
    }


def test_costs_says_when_nothing_was_recorded(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["costs", "--config", str(config), "--since", "2026-03-06"]) == 0
    assert capsys.readouterr().out == "No model calls recorded since 2026-03-06 00:00 (UTC).\n"


NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
LISBON = ZoneInfo("Europe/Lisbon")


@pytest.mark.parametrize(
    ("text", "since"),
    [
        ("7d", NOW - timedelta(days=7)),
        ("12h", NOW - timedelta(hours=12)),
        ("2w", NOW - timedelta(weeks=2)),
        ("today", datetime(2026, 11, 2, tzinfo=LISBON)),
        ("Month", datetime(2026, 11, 1, tzinfo=LISBON)),
        ("2026-07-01", datetime(2026, 7, 1, tzinfo=LISBON)),  # summer time there: 23:00 UTC
        ("2026-10-30T08:15", datetime(2026, 10, 30, 8, 15, tzinfo=LISBON)),
        ("2026-10-30T08:15:00+02:00", datetime(2026, 10, 30, 6, 15, tzinfo=UTC)),
    ],
)
def test_since_takes_dates_times_and_spans(text: str, since: datetime) -> None:
    assert parse_since(text, LISBON, now=NOW) == since


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("last week", "not a date"),
        ("7y", "not a date"),
        ("2026-13-01", "not a date"),
        ("999999d", "not a date"),  # before year 1
        ("2026-11-03", "in the future"),
    ],
)
def test_a_bad_since_is_a_usage_error(text: str, why: str) -> None:
    with pytest.raises(UsageError, match=why):
        parse_since(text, LISBON, now=NOW)


def _one_line_exit_2(result: subprocess.CompletedProcess[str], *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("flynn: ")
    for word in words:
        assert word in line


def test_offline_calls_cost_nothing_and_bad_input_is_one_line(tmp_path: Path) -> None:
    chat = flynn("chat", home=tmp_path, stdin="hello\n")
    assert chat.returncode == 0, chat.stderr
    costs = flynn("costs", "--json", home=tmp_path)
    assert costs.returncode == 0, costs.stderr
    total = json.loads(costs.stdout)["total"]
    assert total["calls"] >= 1 and total["input_tokens"] > 0
    assert (total["cost_usd"], total["unpriced_calls"]) == (0.0, 0)

    _one_line_exit_2(flynn("costs", "--since", "yesterday-ish", home=tmp_path), "--since")
    bad = tmp_path / "bad.yaml"
    bad.write_text("llm:\n  prices:\n    gpt-5.5: {input: -5, output: 30}\n")
    _one_line_exit_2(
        flynn("costs", "--config", str(bad), home=tmp_path), "llm.prices.gpt-5.5.input"
    )
