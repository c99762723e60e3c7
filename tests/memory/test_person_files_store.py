"""The ``PersonFiles`` contract: a person's files in their folder and as documents on SQLite and
on PostgreSQL (the ``person_files`` fixture), read and written whole, redacted, kept apart per
person, started from templates, and forgotten; and what reads them on top (tasks, the prompt)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from person_files_place import PersonFilesPlace

from flynn.cli_memory import set_person_file, show_person_file
from flynn.errors import UnreadableFile
from flynn.memory.facts import SqliteFacts
from flynn.memory.stores import SqliteMemory
from flynn.people.store import (
    MEMORY_FILES,
    PERSON_TEMPLATES,
    REMINDERS_FILE,
    SCRATCH_FILE,
    TASKS_FILE,
    USER_FILE,
    PersonFiles,
)
from flynn.people.tasks import Task, load_tasks, save_tasks
from flynn.sessions.personal import PersonalFiles

KEY = "sk-ant-api03-Zq8wX2vBn5mK1pL7rT4yU9iO3aS6dF0gH2jK"
ALICE = "users/alice"
BOB = "users/bob"


def names(files: PersonFiles, namespace: str) -> list[str]:
    return [file.name for file in files.list_files(namespace)]


def test_a_file_nobody_wrote_reads_empty(person_files: PersonFiles) -> None:
    assert person_files.read(ALICE, USER_FILE) == ""
    assert names(person_files, ALICE) == []


def test_a_write_replaces_the_whole_file(person_files: PersonFiles) -> None:
    person_files.write(ALICE, USER_FILE, "# About me\n- Name: Alice\n- Likes: long answers\n")
    person_files.write(ALICE, USER_FILE, "# About me\n- Name: Alice\n")
    assert person_files.read(ALICE, USER_FILE) == "# About me\n- Name: Alice\n"
    [listed] = person_files.list_files(ALICE)
    assert listed.name == USER_FILE
    assert listed.updated_at.utcoffset() is not None


def test_a_credential_is_never_kept(person_files: PersonFiles) -> None:
    person_files.write(ALICE, USER_FILE, f"My staging key is {KEY}\n")
    person_files.write(ALICE, TASKS_FILE, json.dumps([{"text": f"rotate {KEY}"}]))
    assert KEY not in person_files.read(ALICE, USER_FILE)
    assert "staging key" in person_files.read(ALICE, USER_FILE)
    tasks = json.loads(person_files.read(ALICE, TASKS_FILE))  # still JSON
    assert KEY not in tasks[0]["text"] and tasks[0]["text"].startswith("rotate ")


@pytest.mark.parametrize("name", ["", ".", "..", "../USER.md", "a/USER.md", "..\\USER.md"])
def test_a_name_outside_the_persons_files_is_refused(person_files: PersonFiles, name: str) -> None:
    with pytest.raises(ValueError, match="not a person's file name"):
        person_files.write(ALICE, name, "x")
    with pytest.raises(ValueError, match="not a person's file name"):
        person_files.read(ALICE, name)
    assert names(person_files, ALICE) == [] and names(person_files, "users") == []


def test_nobody_reaches_another_persons_files(person_files: PersonFiles) -> None:
    person_files.write(ALICE, USER_FILE, "Alice's own notes\n")
    person_files.write("user", SCRATCH_FILE, "the owner's plan\n")
    for other in (BOB, "users/ali", "users/alice2", "users", "user"):
        assert person_files.read(other, USER_FILE) == ""
    assert names(person_files, BOB) == [] and names(person_files, "users/ali") == []
    assert names(person_files, "user") == [SCRATCH_FILE]
    assert person_files.read(ALICE, SCRATCH_FILE) == ""


def test_templates_are_written_once_and_never_over_a_persons_file(
    person_files: PersonFiles,
) -> None:
    assert sorted(person_files.write_templates(ALICE)) == sorted(PERSON_TEMPLATES)
    assert person_files.read(ALICE, USER_FILE) == PERSON_TEMPLATES[USER_FILE]
    person_files.write(ALICE, USER_FILE, "- Name: Alice\n")
    person_files.remove(ALICE, [REMINDERS_FILE])
    assert person_files.write_templates(ALICE) == [REMINDERS_FILE]
    assert person_files.read(ALICE, USER_FILE) == "- Name: Alice\n"


def test_a_task_list_that_is_not_one_is_reported_not_overwritten(
    person_files: PersonFiles,
) -> None:
    person_files.write(ALICE, TASKS_FILE, "[{broken")
    with pytest.raises(UnreadableFile, match=r"TASKS\.json is not valid JSON"):
        load_tasks(person_files, ALICE)
    assert person_files.read(ALICE, TASKS_FILE) == "[{broken"
    person_files.write(ALICE, TASKS_FILE, '{"text": "one"}')
    with pytest.raises(UnreadableFile, match="must hold a JSON list"):
        load_tasks(person_files, ALICE)


def test_tasks_round_trip(person_files: PersonFiles) -> None:
    save_tasks(person_files, ALICE, [Task(1, "draft the checklist", False, "2026-11-02")])
    assert load_tasks(person_files, ALICE) == [Task(1, "draft the checklist", False, "2026-11-02")]
    assert load_tasks(person_files, BOB) == []


def test_forgetting_distilled_notes_keeps_the_persons_own_and_marks_the_forget(
    person_files: PersonFiles,
) -> None:
    for name in (USER_FILE, SCRATCH_FILE, *MEMORY_FILES.values()):
        person_files.write(ALICE, name, f"{name} text\n")
    person_files.write(BOB, MEMORY_FILES["short"], "Bob's digest\n")
    assert person_files.forgotten_mark(ALICE) == 0
    assert person_files.forget_distilled(ALICE) == 3
    assert person_files.forgotten_mark(ALICE) != 0
    assert names(person_files, ALICE) == [SCRATCH_FILE, USER_FILE]
    assert person_files.forget_distilled(ALICE) == 0
    assert person_files.read(BOB, MEMORY_FILES["short"]) == "Bob's digest\n"
    assert person_files.forgotten_mark(BOB) == 0


@pytest.mark.parametrize("person_files_place", ["sqlite", "postgresql"], indirect=True)
def test_each_forget_changes_the_mark_in_the_database(
    person_files_place: PersonFilesPlace,
) -> None:
    """Every forget is told apart, even with nothing left to delete, so a distillation that
    started between two never writes. (A folder's mark is its file's time, as fine as the
    file system keeps it.)"""
    files = person_files_place.files
    marks = [files.forgotten_mark(ALICE)]
    for _ in range(40):
        files.forget_distilled(ALICE)
        marks.append(files.forgotten_mark(ALICE))
    assert 0 not in marks[1:]
    assert len(set(marks)) == len(marks)


def test_forget_deletes_what_flynn_wrote_and_keeps_what_the_person_wrote(
    person_files: PersonFiles,
) -> None:
    for name in (USER_FILE, REMINDERS_FILE, TASKS_FILE, SCRATCH_FILE, *MEMORY_FILES.values()):
        person_files.write(ALICE, name, "x\n")
    assert person_files.forget(ALICE) == 5
    assert names(person_files, ALICE) == [REMINDERS_FILE, USER_FILE]


def test_forgetting_a_person_leaves_nothing_flynn_wrote_and_nothing_of_others(
    person_files_place: PersonFilesPlace,
) -> None:
    files = person_files_place.files
    for name in (USER_FILE, TASKS_FILE, SCRATCH_FILE, *MEMORY_FILES.values()):
        files.write(ALICE, name, f"Alice's {name}\n")
    files.write(BOB, USER_FILE, "Bob's notes\n")
    person_files_place.forget_person(ALICE)
    left = names(files, ALICE)
    if person_files_place.name == "directory":
        # A folder's USER.md is the person's (or their admin's) own file on disk: it stays.
        assert left == [USER_FILE]
    else:
        # In the database it is one of the person's rows, and goes with them.
        assert left == []
    assert files.read(BOB, USER_FILE) == "Bob's notes\n"


def test_another_worker_reads_and_writes_the_same_files(
    person_files_place: PersonFilesPlace,
) -> None:
    files = person_files_place.files
    other = person_files_place.other_worker()
    files.write(ALICE, USER_FILE, "- Name: Alice\n")
    assert other.read(ALICE, USER_FILE) == "- Name: Alice\n"
    other.write(ALICE, USER_FILE, "- Name: Alice Lima\n")
    assert files.read(ALICE, USER_FILE) == "- Name: Alice Lima\n"
    mark = files.forgotten_mark(ALICE)
    other.forget_distilled(ALICE)
    assert files.forgotten_mark(ALICE) != mark


def test_read_each_reads_as_read_and_sees_another_workers_edit_next(
    person_files_place: PersonFilesPlace,
) -> None:
    files = person_files_place.files
    other = person_files_place.other_worker()
    wanted = (USER_FILE, SCRATCH_FILE, TASKS_FILE)
    files.write(ALICE, USER_FILE, "- Name: Alice\n")
    files.write(BOB, SCRATCH_FILE, "Bob's\n")
    assert files.read_each(ALICE, wanted) == {
        USER_FILE: "- Name: Alice\n",
        SCRATCH_FILE: "",
        TASKS_FILE: "",
    }
    other.write(ALICE, USER_FILE, "- Name: Alyx \n")  # the same size
    other.write(ALICE, SCRATCH_FILE, "call Bob\n")
    found = files.read_each(ALICE, wanted)
    assert found[USER_FILE] == "- Name: Alyx \n" and found[SCRATCH_FILE] == "call Bob\n"
    other.remove(ALICE, [USER_FILE])
    assert files.read_each(ALICE, wanted)[USER_FILE] == ""
    with pytest.raises(ValueError, match="not a person's file name"):
        files.read_each(ALICE, ["../bob/USER.md"])


def test_where_names_the_file_and_the_person(person_files: PersonFiles) -> None:
    where = person_files.where(ALICE, USER_FILE)
    assert where.endswith("users/alice/USER.md") or where.endswith("users/alice/files/USER.md")


def test_the_prompt_reads_the_files_and_sees_an_edit_next_turn(
    person_files: PersonFiles, memory: SqliteMemory
) -> None:
    personal = PersonalFiles(
        memory.db.path.parent,
        SqliteFacts(memory.db),
        files=person_files,
        schedule=None,
        default_timezone="UTC",
    )
    personal.ensure_templates(ALICE)
    wanted = (USER_FILE, MEMORY_FILES["short"], SCRATCH_FILE, TASKS_FILE)
    now = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
    # Templates alone say nothing: their guidance is in comments.
    assert personal.prompt_files(ALICE, wanted, now=now) == dict.fromkeys(wanted, "")
    person_files.write(ALICE, USER_FILE, PERSON_TEMPLATES[USER_FILE] + "- Name: Alice\n")
    assert personal.prompt_files(ALICE, wanted, now=now)[USER_FILE] == "- Name: Alice"
    person_files.write(ALICE, USER_FILE, "- Name: Alice Lima\n")
    person_files.write(ALICE, TASKS_FILE, "not json")
    texts = personal.prompt_files(ALICE, wanted, now=now)
    assert texts[USER_FILE] == "- Name: Alice Lima"
    assert texts[TASKS_FILE].startswith("(the task list cannot be read: TASKS.json is not valid")
    assert personal.prompt_files(BOB, wanted, now=now) == dict.fromkeys(wanted, "")


def test_the_file_commands_read_and_write_wherever_the_files_are(
    person_files_place: PersonFilesPlace, capsys: pytest.CaptureFixture[str]
) -> None:
    """``flynn memory file show|edit`` on each place (``tests/test_cli_memory_file.py`` runs
    the command itself)."""
    files = person_files_place.files
    assert show_person_file(files, ALICE, USER_FILE) == 0
    assert "users/alice has no USER.md yet" in capsys.readouterr().err
    assert set_person_file(files, ALICE, USER_FILE, f"- Name: Alice\n- key {KEY}\n") == 0
    said = capsys.readouterr().out
    assert "USER.md saved" in said and "redacted" in said and KEY not in said
    assert said.rstrip().endswith(f"({files.where(ALICE, USER_FILE)})")
    # Another worker shows what this one saved.
    assert show_person_file(person_files_place.other_worker(), ALICE, USER_FILE) == 0
    shown = capsys.readouterr().out
    assert shown.startswith("- Name: Alice\n- key ") and KEY not in shown
    assert show_person_file(files, BOB, USER_FILE) == 0
    assert capsys.readouterr().out == ""
