"""A person's files are theirs to edit by hand: one saved in another encoding, or made unreadable,
costs the prompt that file's text, never the person's turns (the prompt reads them every turn)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_registry import context

from flynn.memory.database import Database
from flynn.memory.stores import SqliteMemory
from flynn.people.files import DirectoryPersonFiles
from flynn.people.store import SCRATCH_FILE, TASKS_FILE
from flynn.providers.base import ToolCall
from flynn.schedule.migrations import SCHEMA
from flynn.sessions.personal import PersonalFiles
from flynn.tools.base import ToolRegistry
from flynn.tools.scratch import ScratchRead
from flynn.tools.tasks import TaskList

NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


@pytest.fixture
def personal(tmp_path: Path) -> Iterator[PersonalFiles]:
    with Database.open(tmp_path / "flynn.db", SCHEMA) as db:
        memory = SqliteMemory(db)
        yield PersonalFiles(
            tmp_path,
            memory.facts,
            files=DirectoryPersonFiles(tmp_path),
            schedule=None,
            default_timezone="UTC",
        )


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "user"
    folder.mkdir(exist_ok=True)
    return folder


async def test_files_saved_in_latin_1_still_reach_the_prompt_and_the_tools(
    tmp_path: Path, personal: PersonalFiles
) -> None:
    folder = _folder(tmp_path)
    (folder / SCRATCH_FILE).write_bytes("plan: café at 10\n".encode("latin-1"))
    (folder / TASKS_FILE).write_bytes(json.dumps(["pão"], ensure_ascii=False).encode("latin-1"))
    texts = personal.prompt_files("user", (SCRATCH_FILE, TASKS_FILE), now=NOW)
    assert texts[SCRATCH_FILE].startswith("plan: caf")
    assert texts[TASKS_FILE].startswith("1. p")
    registry = ToolRegistry([ScratchRead(), TaskList()])
    results = await registry.run(
        [ToolCall("1", "scratch_read", "{}"), ToolCall("2", "task_list", "{}")],
        context(tmp_path),
    )
    assert [result.is_error for result in results] == [False, False]


def test_a_file_that_cannot_be_read_is_said_so_in_the_prompt(
    tmp_path: Path, personal: PersonalFiles
) -> None:
    folder = _folder(tmp_path)
    (folder / SCRATCH_FILE).mkdir()  # anything open() refuses: a folder, no permission
    (folder / TASKS_FILE).mkdir()
    texts = personal.prompt_files("user", (SCRATCH_FILE, TASKS_FILE), now=NOW)
    assert "cannot be read" in texts[SCRATCH_FILE]
    assert "cannot be read" in texts[TASKS_FILE]
