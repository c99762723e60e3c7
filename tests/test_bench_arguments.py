"""``flynn bench`` refuses arguments that make no benchmark (a negative count, no clients, no time,
a cut-off of 0) while parsing: one line naming the argument, exit 2, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import flynn

from flynn import cli

WRONG = [
    (("turn", "--messages", "-5"), "argument --messages: must be at least 0, not -5"),
    (("turn", "--facts", "-1"), "argument --facts: must be at least 0, not -1"),
    (("turn", "--turns", "0"), "argument --turns: must be at least 1, not 0"),
    (("turn", "--reminders", "-2"), "argument --reminders: must be at least 0, not -2"),
    (("turn", "--messages", "lots"), "argument --messages: takes a whole number, not 'lots'"),
    (("gateway", "--clients", "0"), "argument --clients: must be at least 1, not 0"),
    (("gateway", "--clients", "-3"), "argument --clients: must be at least 1, not -3"),
    (("gateway", "--seconds", "0"), "argument --seconds: must be a number of seconds above 0"),
    (("gateway", "--seconds", "-1.5"), "argument --seconds: must be a number of seconds above 0"),
    (("gateway", "--seconds", "inf"), "argument --seconds: must be a number of seconds above 0"),
    (("gateway", "--seconds", "nan"), "argument --seconds: must be a number of seconds above 0"),
    (("gateway", "--idle-sessions", "0"), "argument --idle-sessions: must be at least 1, not 0"),
    (("gateway", "--workers", "0"), "argument --workers: must be at least 1, not 0"),
    (("gateway", "--rounds", "0"), "argument --rounds: must be at least 1, not 0"),
    (
        ("gateway", "--storage-url", "postgresql://x@h/db", "--throwaway-postgres"),
        "argument --throwaway-postgres: not allowed with argument --storage-url",
    ),
    (
        ("gateway", "--workers", "2"),
        "--workers 2 needs --storage-url postgresql://... or --throwaway-postgres (SQLite is "
        "one process's)",
    ),
    (
        ("gateway", "--rounds", "3"),
        "--rounds 3 needs --storage-url postgresql://... or --throwaway-postgres",
    ),
    (("turn", "--pause-ms", "-5"), "argument --pause-ms: must be at least 0, not -5"),
    (("schedule", "--jobs", "-1"), "argument --jobs: must be at least 0, not -1"),
    (("schedule", "--burst", "-10"), "argument --burst: must be at least 0, not -10"),
    (
        ("recall", "--dataset", "handwritten", "--k", "0,5"),
        "argument --k: needs cut-offs of at least 1",
    ),
    (
        ("recall", "--dataset", "handwritten", "--k", ","),
        "argument --k: needs cut-offs of at least 1",
    ),
    (
        ("recall", "--dataset", "handwritten", "--k", "1,five"),
        "argument --k: takes comma-separated numbers",
    ),
    (
        ("recall", "--dataset", "handwritten", "--scale", "-100"),
        "argument --scale: must be at least 0, not -100",
    ),
]


@pytest.mark.parametrize(("args", "message"), WRONG)
def test_a_wrong_bench_argument_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...], message: str
) -> None:
    assert cli.main(["bench", *args]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"flynn bench {args[0]}: error: {message}")


def test_the_command_says_it_without_usage_or_traceback(tmp_path: Path) -> None:
    result = flynn("bench", "turn", "--messages", "-5", home=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "flynn bench turn: error: argument --messages: must be at least 0, not -5\n"
    )
