"""TASKS.json and SCRATCH.md through their tools: the person's own folder, written atomically."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from test_registry import context

from flynn.providers.base import ToolCall
from flynn.tools.base import ToolRegistry
from flynn.tools.scratch import ScratchRead, ScratchWrite
from flynn.tools.tasks import TaskAdd, TaskDone, TaskList


def registry() -> ToolRegistry:
    return ToolRegistry([TaskAdd(), TaskList(), TaskDone(), ScratchRead(), ScratchWrite()])


async def call(tmp_path: Path, name: str, arguments: dict[str, object]) -> str:
    (result,) = await registry().run(
        [ToolCall("1", name, json.dumps(arguments))], context(tmp_path)
    )
    return ("ERROR " if result.is_error else "") + result.content


async def test_tasks_are_added_listed_and_done(tmp_path: Path) -> None:
    assert await call(tmp_path, "task_list", {}) == "No open tasks."
    assert await call(tmp_path, "task_add", {"text": "buy   milk"}) == "Added task 1: buy milk"
    assert await call(tmp_path, "task_add", {"text": "call the bank"}) == (
        "Added task 2: call the bank"
    )
    assert await call(tmp_path, "task_done", {"id": 1}) == "Done: task 1, buy milk"
    assert await call(tmp_path, "task_list", {}) == "2. call the bank"
    assert await call(tmp_path, "task_list", {"include_done": True}) == (
        "2. call the bank\n1. ~~buy milk~~ (done)"
    )
    assert (await call(tmp_path, "task_done", {"id": 7})).startswith("ERROR error: there is no")
    path = tmp_path / "user" / "TASKS.json"
    stored = json.loads(path.read_text())
    assert [(task["id"], task["done"]) for task in stored] == [(1, True), (2, False)]
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


async def test_a_hand_written_task_list_is_read_and_a_broken_one_is_never_overwritten(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "TASKS.json").write_text('["water the plants"]')
    assert await call(tmp_path, "task_list", {}) == "1. water the plants"
    (folder / "TASKS.json").write_text("{oops")
    answer = await call(tmp_path, "task_add", {"text": "x"})
    assert answer.startswith("ERROR") and "not valid JSON" in answer
    assert (folder / "TASKS.json").read_text() == "{oops"


async def test_scratch_is_replaced_or_appended(tmp_path: Path) -> None:
    assert await call(tmp_path, "scratch_read", {}) == "The scratchpad is empty."
    await call(tmp_path, "scratch_write", {"text": "plan: A"})
    await call(tmp_path, "scratch_write", {"text": "then B", "append": True})
    assert await call(tmp_path, "scratch_read", {}) == "plan: A\nthen B"
    await call(tmp_path, "scratch_write", {"text": "fresh"})
    assert await call(tmp_path, "scratch_read", {}) == "fresh"
