"""``flynn sessions export``: a person's whole conversation, every session and channel and compacted
turns too, one private Markdown file per day of their own timezone; another person's words never;
bad dates and occupied folders are one line naming the option, exit 2."""

from __future__ import annotations

import re
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from flynn.cli import main
from flynn.learning.fact_relations import FactRelations
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact
from flynn.memory.stores import SqliteMemory
from flynn.providers.base import ToolCall, ToolResult
from flynn.schedule.migrations import SCHEMA
from flynn.sessions.tool_steps import ToolStep, encode_steps

DAY = datetime(2026, 11, 17, 14, 0, tzinfo=UTC)  # 09:00 in New York, Alice's own zone
SEVENTEENTH = """\
# Tuesday 2026-11-17

Conversation of `users/alice` on every channel; times are America/New_York.

## 09:00 · telegram:7 · user

remind me about the dentist tomorrow

## 09:01 · telegram:7 · assistant

- tool `reminder_set` {"text": "dentist", "when": "tomorrow 09:00"} → Reminder 1 set

Done: I'll remind you tomorrow at 09:00.

## 21:30 · gateway:alice@laptop · user

late thought:
the dentist is on Elm Street
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    settings = {
        "data_dir": str(tmp_path / "data"),
        "users": {"alice": {"telegram": [7]}, "bob": {"telegram": [8]}},
        "persona": {"timezone": "UTC"},
        "logging": {"level": "warning"},
    }
    path.write_text(yaml.safe_dump(settings))
    _seed(tmp_path / "data" / "flynn.db")
    return path


def _seed(db: Path) -> None:
    """Alice on Telegram and the gateway over three days of her zone (one evening of hers is
    the next day in UTC), her first turns compacted; Bob on the same days."""
    reply_steps = encode_steps(
        [
            ToolStep(
                "",
                (ToolCall("c1", "reminder_set", '{"text": "dentist", "when": "tomorrow 09:00"}'),),
                (ToolResult("c1", "reminder_set", "Reminder 1 set"),),
            )
        ]
    )
    with SqliteMemory.open(db, SCHEMA, FactRelations) as memory:
        history = memory.history
        asked = history.append(
            "telegram:7",
            "users/alice",
            "user",
            "remind me about the dentist tomorrow",
            tokens=8,
            now=DAY,
        )
        answered = history.append(
            "telegram:7",
            "users/alice",
            "assistant",
            "Done: I'll remind you tomorrow at 09:00.\n",
            tokens=9,
            now=DAY + timedelta(minutes=1),
            tool_steps=reply_steps,
        )
        history.save_summary("telegram:7", "dentist reminder set", through_id=answered.id, now=DAY)
        for offset, session, namespace, text in [
            (timedelta(hours=12, minutes=30), "gateway:alice@laptop", "users/alice",
             "late thought:\nthe dentist is on Elm Street"),
            (timedelta(days=1), "gateway:alice@laptop", "users/alice", "the dentist went well"),
            (timedelta(days=2), "telegram:7", "users/alice", "book the next one in May"),
            (timedelta(hours=1), "telegram:8", "users/bob", "bob's surprise party plan"),
            (timedelta(days=1, hours=1), "telegram:8", "users/bob", "bob again"),
        ]:  # fmt: skip
            history.append(session, namespace, "user", text, tokens=5, now=DAY + offset)
        zone = ProposedFact("profile", "timezone", "America/New_York", 0.9, "profile")
        RuleReconciler(memory.facts).apply("users/alice/profile", zone, source="rule", now=DAY)
        assert asked.id < answered.id


def _export(config: Path, *args: str) -> int:
    return main(["sessions", "export", "--config", str(config), *args])


def _files(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.iterdir())}


def test_each_day_of_the_persons_zone_is_one_private_file_of_every_channel(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "exports" / "alice"
    assert _export(config, "--user", "alice", "--out", str(out)) == 0
    assert capsys.readouterr().out == (
        f"wrote 5 messages of users/alice in 3 day files to {out}/\n"
    )
    files = _files(out)
    assert list(files) == ["2026-11-17.md", "2026-11-18.md", "2026-11-19.md"]
    assert files["2026-11-17.md"] == SEVENTEENTH  # compacted turns, the tool call, her evening
    assert (
        "## 09:00 · gateway:alice@laptop · user\n\nthe dentist went well\n"
        in files["2026-11-18.md"]
    )
    assert "book the next one in May" in files["2026-11-19.md"]
    assert "bob" not in "".join(files.values())
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert {stat.S_IMODE((out / name).stat().st_mode) for name in files} == {0o600}


def test_another_person_exports_only_their_own_words_in_the_configured_zone(
    config: Path, tmp_path: Path
) -> None:
    out = tmp_path / "bob"
    assert _export(config, "--user", "bob", "--out", str(out)) == 0
    files = _files(out)
    assert list(files) == ["2026-11-17.md", "2026-11-18.md"]
    assert "times are UTC" in files["2026-11-17.md"]
    assert "## 15:00 · telegram:8 · user\n\nbob's surprise party plan\n" in files["2026-11-17.md"]
    assert "dentist" not in "".join(files.values())


def test_since_and_until_are_days_of_the_persons_zone_both_included(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "span"
    args = ("--user", "alice", "--since", "2026-11-18", "--until", "2026-11-18")
    assert _export(config, *args, "--out", str(out)) == 0
    assert "from 2026-11-18 until 2026-11-18 in 1 day file" in capsys.readouterr().out
    assert list(_files(out)) == ["2026-11-18.md"]
    assert _export(config, "--user", "alice", "--since", "2026-11-19", "--stdout") == 0
    printed = capsys.readouterr().out
    assert printed.startswith("# Thursday 2026-11-19\n") and "went well" not in printed


def test_stdout_carries_every_day_in_order(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _export(config, "--user", "alice", "--stdout") == 0
    printed = capsys.readouterr().out
    headings = re.findall(r"^# .+$", printed, flags=re.MULTILINE)
    assert headings == ["# Tuesday 2026-11-17", "# Wednesday 2026-11-18", "# Thursday 2026-11-19"]
    assert printed.startswith(SEVENTEENTH + "\n# Wednesday")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("--since", "17/11/2026"), "--since"),
        (("--until", "2026-02-30"), "--until"),
        (("--since", "2026-11-19", "--until", "2026-11-18"), "--until"),
        (("--user", "carol"), "--user"),
    ],
)
def test_a_bad_argument_is_one_line_naming_it(
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    option: str,
) -> None:
    out = tmp_path / "never"
    user = () if "--user" in args else ("--user", "alice")
    assert _export(config, *user, *args, "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"invalid argument {option}:" in err
    assert not out.exists()


def test_a_folder_holding_files_is_refused_unless_forced(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    old = out / "2026-11-17.md"
    old.write_text("an older export\n")
    old.chmod(0o644)
    (out / "notes.txt").write_text("mine\n")
    assert _export(config, "--user", "alice", "--out", str(out)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "--force" in err
    assert old.read_text() == "an older export\n"

    assert _export(config, "--user", "alice", "--out", str(out), "--force") == 0
    assert old.read_text() == SEVENTEENTH and stat.S_IMODE(old.stat().st_mode) == 0o600
    assert (out / "notes.txt").read_text() == "mine\n"  # what is not a day file stays

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert _export(config, "--user", "alice", "--out", str(a_file), "--force") == 2
    assert "is not a folder" in capsys.readouterr().err


def test_the_default_folder_is_named_after_the_person_and_today(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _export(config, "--user", "alice") == 0
    made = sorted(p.name for p in tmp_path.glob("flynn-export-*"))
    assert len(made) == 1 and re.fullmatch(r"flynn-export-alice-\d{4}-\d{2}-\d{2}", made[0])
    assert len(list((tmp_path / made[0]).iterdir())) == 3
    # Run again the same day: the folder is taken, and nothing is mixed into it.
    assert _export(config, "--user", "alice") == 2


def test_nothing_to_export_makes_no_folder(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "empty"
    assert _export(config, "--user", "bob", "--since", "2027-01-01", "--out", str(out)) == 0
    assert "nothing to export: no messages under users/bob from 2027-01-01" in (
        capsys.readouterr().out
    )
    assert not out.exists()
