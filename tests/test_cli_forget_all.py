"""``flynn memory forget --all`` deletes a person's memory for good, so it asks first on a
terminal (``--yes`` skips the question) and, where nobody can answer, takes only ``--yes``."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import flynn

ENV = {"FLYNN_MEMORY__USER_NAMESPACE": "user"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    told = flynn("chat", home=tmp_path, env=ENV, stdin="My name is Ana.\n")
    assert told.returncode == 0, told.stderr
    return tmp_path


def remembered(home: Path) -> list[str]:
    shown = flynn("memory", "show", "--json", home=home, env=ENV)
    return [fact["value"] for fact in json.loads(shown.stdout)["profile"]]


def forget_on_a_terminal(home: Path, answer: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``flynn memory forget --all`` with a terminal as stdin, typed ``answer`` into."""
    controller, terminal = pty.openpty()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("FLYNN_")},
        **ENV,
        "HOME": str(home),
        "USER": "ana",
    }
    try:
        os.write(controller, answer.encode())
        result = subprocess.run(
            [sys.executable, "-m", "flynn", "memory", "forget", "--all", *args],
            stdin=terminal,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
    finally:
        os.close(terminal)
        os.close(controller)
    return result


def test_without_a_terminal_it_takes_yes_and_says_so(home: Path) -> None:
    refused = flynn("memory", "forget", "--all", home=home, env=ENV)
    assert refused.returncode == 2
    assert refused.stdout == ""
    assert refused.stderr.strip() == (
        "flynn: invalid argument --all: deletes everything Flynn knows about you (user) for "
        "good; add --yes to confirm (there is no terminal to ask on)"
    )
    assert remembered(home) == ["Ana"]

    forgot = flynn("memory", "forget", "--all", "--yes", home=home, env=ENV)
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stdout.startswith("forgot everything under user: ")
    assert remembered(home) == []


def test_on_a_terminal_it_asks_and_no_is_the_default(home: Path) -> None:
    for answer in ("n\n", "\n", "maybe\n"):
        kept = forget_on_a_terminal(home, answer)
        assert kept.returncode == 1, kept.stderr
        assert kept.stderr == (
            "Forget everything Flynn knows about you (user)? [y/N] flynn: nothing forgotten\n"
        )
        assert kept.stdout == ""
        assert remembered(home) == ["Ana"]

    forgot = forget_on_a_terminal(home, "y\n")
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stderr == "Forget everything Flynn knows about you (user)? [y/N] "
    assert forgot.stdout.startswith("forgot everything under user: ")
    assert remembered(home) == []


def test_yes_skips_the_question_on_a_terminal(home: Path) -> None:
    forgot = forget_on_a_terminal(home, "", "--yes")
    assert forgot.returncode == 0, forgot.stderr
    assert forgot.stderr == ""
    assert remembered(home) == []


def test_the_question_names_the_person(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("users:\n  alice: {telegram: [111]}\n")
    result = flynn(
        "memory", "forget", "--all", "--user", "alice", "--config", str(config), home=tmp_path
    )
    assert result.returncode == 2
    assert "everything Flynn knows about alice for good" in result.stderr


def test_all_deletes_the_files_flynn_wrote_and_keeps_user_md(home: Path) -> None:
    folder = home / ".flynn" / "user"
    for name in ("TASKS.json", "SCRATCH.md", "MEMORY_SHORT.md", "MEMORY_LONG.md"):
        (folder / name).write_text(f"Ana's {name}\n", encoding="utf-8")
    (folder / "USER.md").write_text("- Name: Ana\n", encoding="utf-8")
    forgot = flynn("memory", "forget", "--all", "--yes", home=home, env=ENV)
    assert forgot.returncode == 0, forgot.stderr
    assert "5 files" in forgot.stdout  # and the MEMORY_MID.md template of the first chat
    assert sorted(path.name for path in folder.iterdir() if path.is_file()) == [
        ".forgotten",
        ".lock",  # taken by every write in the folder (the first chat's templates too)
        "REMINDERS.md",
        "USER.md",
    ]
    assert (folder / "USER.md").read_text(encoding="utf-8") == "- Name: Ana\n"
