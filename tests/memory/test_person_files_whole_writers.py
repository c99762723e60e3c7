"""The writers that replace a person's file whole (the distiller, the templates at first
contact, ``flynn memory file edit --set-from``, ``flynn storage copy``'s files) with another
writer landing between their read (or look) and their write, in a folder and on PostgreSQL:
what the other wrote is kept, and the writer says so instead of writing over it."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from person_files_between import WriterBetween
from person_files_place import PersonFilesPlace
from test_person_files_writers import (
    ALICE,
    TWO_WORKERS,
    add_task,
    in_another_thread,
    stored_tasks,
)

from evals.scripted_provider import ScriptedProvider
from flynn.cli_memory import set_person_file
from flynn.distill.distiller import Distiller, DistillFailed
from flynn.memory.stores import SqliteMemory
from flynn.people.files import DirectoryPersonFiles
from flynn.people.moving import PersonFilesCopy
from flynn.people.store import (
    MEMORY_FILES,
    PERSON_TEMPLATES,
    TASKS_FILE,
    USER_FILE,
    PersonFiles,
)
from flynn.tokens import estimate_tokens

NOW = datetime(2026, 11, 25, 3, 0, tzinfo=UTC)
MID = MEMORY_FILES["mid"]


def _distiller(files: object, memory: SqliteMemory) -> Distiller:
    model = ScriptedProvider(default="- Alice is moving billing to Postgres on Friday")
    return Distiller(
        files=files,  # type: ignore[arg-type]
        facts=memory.facts,
        history=memory.history,
        documents=memory.documents,
        models={"mid": model, "long": model},
        budgets={"short": 3000, "mid": 2000, "long": 2000},
        zone=lambda namespace: UTC,
        clock=lambda: NOW,
        identity=lambda: "You are Nia.",
    )


def _conversation(memory: SqliteMemory) -> None:
    text = "we decided to cut over billing on Friday"
    memory.history.append(
        "gateway:laptop", ALICE, "user", text, tokens=estimate_tokens(text), now=NOW
    )


@TWO_WORKERS
def test_an_edit_saved_while_the_distiller_runs_is_not_written_over(
    person_files_place: PersonFilesPlace, memory: SqliteMemory
) -> None:
    _conversation(memory)
    other = person_files_place.other_worker()
    other.write(ALICE, MID, "- old notes\n")
    files = WriterBetween(person_files_place.files, MID)
    # The distiller read the old notes; while its model writes, Alice corrects them on the
    # memory page (another worker).
    files.arm(in_another_thread(lambda: other.write(ALICE, MID, "- my own correction\n")))

    with pytest.raises(DistillFailed, match="changed while this ran"):
        asyncio.run(_distiller(files, memory).run("mid", ALICE))

    assert files.ran
    assert other.read(ALICE, MID) == "- my own correction\n"  # on main: the distilled notes


@TWO_WORKERS
def test_a_forget_landing_just_before_the_distillers_write_keeps_nothing_of_it(
    person_files_place: PersonFilesPlace, memory: SqliteMemory
) -> None:
    _conversation(memory)
    other = person_files_place.other_worker()
    other.write(ALICE, USER_FILE, "- Name: Alice\n")  # her files, from her first message
    # No notes yet; the forget lands after the distiller's last look at the mark, just
    # before it writes notes made from what is now forgotten.
    files = WriterBetween(person_files_place.files, MID, at="write")
    files.arm(in_another_thread(lambda: other.forget_distilled(ALICE)))

    with pytest.raises(DistillFailed, match="forgotten while this ran"):
        asyncio.run(_distiller(files, memory).run("mid", ALICE))

    assert files.ran
    assert MID not in {file.name for file in other.list_files(ALICE)}  # on main: written


def _saving_first(files: PersonFiles, between: Callable[[], None]) -> PersonFiles:
    """``files`` itself (the same state), except that its first write, even one it makes to
    itself, runs ``between`` just before: a save landing between a look and a write."""
    pending: list[Callable[[], None]] = [between]
    base = type(files)

    def write(
        self: PersonFiles, namespace: str, name: str, text: str, *, expected: str | None = None
    ) -> bool:
        while pending:
            pending.pop()()
        return base.write(self, namespace, name, text, expected=expected)  # type: ignore[attr-defined,no-any-return]

    racing = copy.copy(files)
    racing.__class__ = type("SavingFirst", (base,), {"write": write})
    return racing


@TWO_WORKERS
def test_the_templates_at_first_contact_never_replace_a_file_saved_meanwhile(
    person_files_place: PersonFilesPlace,
) -> None:
    other = person_files_place.other_worker()
    saved = "- Name: Alice\n- Allergic to penicillin\n"
    # Alice's first message: her files are looked up (none), and before the templates are
    # written she saves USER.md on the memory page, served by another worker.
    files = _saving_first(
        person_files_place.files, in_another_thread(lambda: other.write(ALICE, USER_FILE, saved))
    )

    written = files.write_templates(ALICE)

    assert other.read(ALICE, USER_FILE) == saved  # on main: the template
    assert USER_FILE not in written
    assert set(written) == set(PERSON_TEMPLATES) - {USER_FILE}


@TWO_WORKERS
def test_set_from_never_drops_a_task_added_between_its_read_and_its_write(
    person_files_place: PersonFilesPlace, capsys: pytest.CaptureFixture[str]
) -> None:
    other = person_files_place.other_worker()
    add_task(other, "water the plants")
    files = WriterBetween(person_files_place.files, TASKS_FILE)
    # `flynn memory file edit TASKS.json --set-from mine.json`: it reads the list to replace,
    # and the model adds a task on another worker before the write.
    files.arm(in_another_thread(lambda: add_task(other, "call the bank")))
    mine = json.dumps([{"id": 1, "text": "water the plants", "done": True}])

    code = set_person_file(files, ALICE, TASKS_FILE, mine)

    assert files.ran and code != 0
    assert stored_tasks(other) == [
        (1, "water the plants", False),
        (2, "call the bank", False),
    ]  # on main: replaced by mine, the bank call lost without a word
    captured = capsys.readouterr()
    assert "changed while it was being saved; nothing saved" in captured.err
    assert mine in captured.out  # to save again


def test_set_from_tells_the_lines_it_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = DirectoryPersonFiles(tmp_path)
    files.write(ALICE, USER_FILE, "- Name: Alice\n- Allergic to penicillin\n")

    assert set_person_file(files, ALICE, USER_FILE, "- Name: Alice B.\n") == 0

    assert files.read(ALICE, USER_FILE) == "- Name: Alice B.\n"
    err = capsys.readouterr().err
    assert "USER.md held 2 line(s) that yours has not, now replaced:" in err
    assert "  - Allergic to penicillin" in err


@TWO_WORKERS
def test_copying_files_never_writes_over_a_file_written_on_the_target_meanwhile(
    person_files_place: PersonFilesPlace, tmp_path: Path
) -> None:
    source = DirectoryPersonFiles(tmp_path / "source")
    source.write(ALICE, USER_FILE, "- Name: Alice (from the data dir)\n")
    other = person_files_place.other_worker()
    other.write(ALICE, USER_FILE, "- Name: Alice (first copy)\n")
    target = WriterBetween(person_files_place.files, USER_FILE)
    # A rerun reads the target's file to compare; a worker started on the target meanwhile
    # saves Alice's edit before the copy writes.
    target.arm(in_another_thread(lambda: other.write(ALICE, USER_FILE, "- Name: Alice B.\n")))

    written = PersonFilesCopy(source, target, [ALICE]).copy()

    assert target.ran and written == 0
    assert other.read(ALICE, USER_FILE) == "- Name: Alice B.\n"  # on main: the data dir's
