"""Two writers of one person's file at the same moment (two workers on one database, two
processes on one folder): a write over the text it read is refused when another landed
between, and the task tools read, change and write again, so neither task is lost."""

from __future__ import annotations

import asyncio
import fcntl
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from person_files_between import WriterBetween
from person_files_place import PersonFilesPlace

from flynn.cli_memory import set_person_file
from flynn.identity import SessionKey
from flynn.people.files import DirectoryPersonFiles, person_lock, write_text
from flynn.people.store import SCRATCH_FILE, TASKS_FILE, USER_FILE, PersonFiles
from flynn.tools.base import ToolContext
from flynn.tools.scratch import ScratchWrite, ScratchWriteArguments
from flynn.tools.tasks import TaskAdd, TaskAddArguments, TaskDone, TaskDoneArguments

ALICE = "users/alice"


def tool_context(files: PersonFiles) -> ToolContext:
    return ToolContext(
        namespace=ALICE,
        session=SessionKey("gateway", "laptop"),
        person_dir=files_dir_unused(),
        timezone=UTC,
        timezone_name="UTC",
        now=datetime(2026, 11, 2, 9, 30, tzinfo=UTC),
        files=files,
    )


def files_dir_unused() -> Path:
    return Path("/nonexistent/person_dir")  # the task tools keep nothing but the file


def add_task(files: PersonFiles, text: str) -> str:
    return asyncio.run(TaskAdd().run(TaskAddArguments(text=text), tool_context(files)))


def in_another_thread(work: Callable[[], object]) -> Callable[[], None]:
    """``work`` run to its end in a thread of its own (another worker, with its own event
    loop and connection), while the caller waits: what lands between a read and a write."""

    def run() -> None:
        failures: list[BaseException] = []

        def guarded() -> None:
            try:
                work()
            except BaseException as exc:  # re-raised in the waiting thread, below
                failures.append(exc)

        thread = threading.Thread(target=guarded)
        thread.start()
        thread.join(timeout=60)
        assert not thread.is_alive()
        if failures:
            raise failures[0]

    return run


TWO_WORKERS = pytest.mark.parametrize(
    "person_files_place", ["directory", "postgresql"], indirect=True
)
"""The places where a second worker can write at the same moment: not SQLite, whose
connections stay in their thread and whose data dir one daemon holds (``DataDirLocked``); its
write over an expected text is the contract test's."""


def second_worker(place: PersonFilesPlace) -> PersonFiles:
    """Another worker's way to the files, for a test that runs it in another thread."""
    return place.other_worker()


def stored_tasks(files: PersonFiles) -> list[tuple[int, str, bool]]:
    return [
        (task["id"], task["text"], task["done"])
        for task in json.loads(files.read(ALICE, TASKS_FILE))
    ]


def test_a_write_over_a_text_the_file_no_longer_holds_writes_nothing(
    person_files_place: PersonFilesPlace,
) -> None:
    files, other = person_files_place.files, person_files_place.other_worker()
    assert files.write(ALICE, USER_FILE, "- Name: Alice\n", expected="")  # no file yet
    assert not other.write(ALICE, USER_FILE, "- Name: Al\n", expected="")  # now there is one
    assert other.write(ALICE, USER_FILE, "- Name: Alice B.\n", expected="- Name: Alice\n")

    assert not files.write(ALICE, USER_FILE, "- Name: Alice C.\n", expected="- Name: Alice\n")
    assert other.read(ALICE, USER_FILE) == files.read(ALICE, USER_FILE) == "- Name: Alice B.\n"
    # An empty file is written over as no file is; without ``expected``, any file is.
    assert files.write(ALICE, USER_FILE, "")
    assert other.write(ALICE, USER_FILE, "- Name: Alice D.\n", expected="")
    assert files.write(ALICE, USER_FILE, "- Name: Alice E.\n")
    assert other.read(ALICE, USER_FILE) == "- Name: Alice E.\n"


@TWO_WORKERS
def test_two_task_adds_at_the_same_moment_both_land(person_files_place: PersonFilesPlace) -> None:
    other = second_worker(person_files_place)
    first = WriterBetween(person_files_place.files, TASKS_FILE)
    add_task(first, "water the plants")
    # The first worker reads the list; before it writes, another worker serving Alice (her
    # other chat) adds a task of its own.
    first.arm(in_another_thread(lambda: add_task(other, "call the bank")))

    answer = add_task(first, "buy milk")

    assert first.ran
    assert answer == "Added task 3: buy milk"
    assert stored_tasks(other) == [
        (1, "water the plants", False),
        (2, "call the bank", False),
        (3, "buy milk", False),
    ]


@TWO_WORKERS
def test_a_task_done_while_another_worker_adds_one_keeps_both(
    person_files_place: PersonFilesPlace,
) -> None:
    other = second_worker(person_files_place)
    first = WriterBetween(person_files_place.files, TASKS_FILE)
    add_task(first, "water the plants")
    first.arm(in_another_thread(lambda: add_task(other, "call the bank")))

    answer = asyncio.run(TaskDone().run(TaskDoneArguments(id=1), tool_context(first)))

    assert answer == "Done: task 1, water the plants"
    assert stored_tasks(other) == [(1, "water the plants", True), (2, "call the bank", False)]


@TWO_WORKERS
def test_two_scratchpad_appends_at_the_same_moment_keep_both_notes(
    person_files_place: PersonFilesPlace,
) -> None:
    other = second_worker(person_files_place)
    first = WriterBetween(person_files_place.files, SCRATCH_FILE)
    first.arm(in_another_thread(lambda: append_note(other, "plan: call the bank")))

    append_note(first, "draft: the letter")

    assert first.ran
    assert other.read(ALICE, SCRATCH_FILE) == "plan: call the bank\ndraft: the letter\n"


def append_note(files: PersonFiles, text: str) -> str:
    arguments = ScratchWriteArguments(text=text, append=True)
    return asyncio.run(ScratchWrite().run(arguments, tool_context(files)))


def test_an_edit_saved_after_another_writer_wrote_the_file_saves_nothing(
    person_files_place: PersonFilesPlace, capsys: pytest.CaptureFixture[str]
) -> None:
    other = person_files_place.other_worker()
    other.write(ALICE, USER_FILE, "- Name: Alice\n")
    files = WriterBetween(person_files_place.files, USER_FILE)
    # ``flynn memory file edit``: the editor closed; the file is read once more to save over
    # it, and another worker writes it before the save does.
    files.arm(lambda: other.write(ALICE, USER_FILE, "- Name: Alice\n- Allergic to penicillin\n"))

    code = set_person_file(
        files, ALICE, USER_FILE, "- Name: Alice B.\n", expected="- Name: Alice\n"
    )

    assert files.ran
    assert code != 0
    assert other.read(ALICE, USER_FILE) == "- Name: Alice\n- Allergic to penicillin\n"
    assert "changed while you edited it" in capsys.readouterr().err


HOLDER = """
import sys
from pathlib import Path

from flynn.people.files import person_lock, write_text

folder = Path(sys.argv[1])
with person_lock(folder):
    print("held", flush=True)
    sys.stdin.readline()
    write_text(folder / "TASKS.json", sys.argv[2])
"""


def test_a_task_add_waits_for_another_process_writing_the_folder(tmp_path: Path) -> None:
    files = DirectoryPersonFiles(tmp_path)
    add_task(files, "water the plants")
    written_elsewhere = (
        '[{"id": 1, "text": "water the plants"}, {"id": 2, "text": "call the bank"}]'
    )
    # Another process (``flynn memory file edit`` next to the daemon) holds Alice's lock and
    # writes her list once told to; the task is added meanwhile.
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(files.folder(ALICE)), written_elsewhere],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "held\n"
        answers: list[str] = []
        adding = threading.Thread(target=lambda: answers.append(add_task(files, "buy milk")))
        adding.start()
        holder.stdin.write("go\n")
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
        adding.join(timeout=60)

    # Whether the add read the list before or after the other write, its write came after it
    # (it waited for the lock) and over what it read: the other process's task is kept.
    assert answers == ["Added task 3: buy milk"]
    assert stored_tasks(files) == [
        (1, "water the plants", False),
        (2, "call the bank", False),
        (3, "buy milk", False),
    ]


@pytest.mark.parametrize(
    "forget", [lambda files: files.forget(ALICE), lambda files: files.remove(ALICE, [TASKS_FILE])]
)
def test_a_forget_waits_for_a_write_under_way_and_what_it_forgot_stays_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forget: Callable[[PersonFiles], int]
) -> None:
    files = DirectoryPersonFiles(tmp_path)
    add_task(files, "water the plants")
    folder = files.folder(ALICE)
    stopped = threading.Event()  # the forget waits for the lock, or (unlocked) is done
    flock = fcntl.flock

    def noted_flock(fd: int, operation: int) -> None:
        stopped.set()
        flock(fd, operation)

    # A task_add between its compare and its rename, under Alice's lock; meanwhile she asks
    # Flynn to forget her tasks.
    with person_lock(folder):
        monkeypatch.setattr(fcntl, "flock", noted_flock)
        forgetting = threading.Thread(target=lambda: (forget(files), stopped.set()))
        forgetting.start()
        assert stopped.wait(timeout=60)
        write_text(folder / TASKS_FILE, '[{"id": 1, "text": "water the plants"}]')
    forgetting.join(timeout=60)

    # The forget came after the write, whole: the list is gone (before, the rename brought it
    # back after the forget had deleted it).
    assert not forgetting.is_alive()
    assert files.read(ALICE, TASKS_FILE) == ""


def test_a_forget_deletes_the_copy_a_write_cut_short_left_behind(tmp_path: Path) -> None:
    files = DirectoryPersonFiles(tmp_path)
    add_task(files, "see the doctor about the rash")
    folder = files.folder(ALICE)
    # A write killed between its temporary copy and the rename (SIGKILL, a power cut) leaves
    # the copy beside the file, hidden by its dot from every listing.
    (folder / ".TASKS.json.k3j2h1.tmp").write_text(files.read(ALICE, TASKS_FILE))
    (folder / ".MEMORY_SHORT.md.p0q9r8.tmp").write_text("- a rash on the left arm\n")

    assert files.forget(ALICE) == 1

    kept = [path.read_text() for path in folder.rglob("*") if path.is_file()]
    assert not [text for text in kept if "rash" in text]
