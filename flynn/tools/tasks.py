"""The person's task list, ``TASKS.json`` in their folder: ``task_add``, ``task_list``,
``task_done``. The file is plain JSON a person may edit by hand; an unreadable one is reported,
never overwritten."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pydantic import Field

from flynn.tools.base import Arguments, ToolContext, ToolError, TypedTool
from flynn.tools.person_files import TASKS_FILE, read_text, write_text

MAX_TASKS = 500


@dataclass(frozen=True, slots=True)
class Task:
    id: int
    text: str
    done: bool
    created_at: str
    done_at: str | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "text": self.text,
            "done": self.done,
            "created_at": self.created_at,
            "done_at": self.done_at,
        }


def load_tasks(path: Path) -> list[Task]:
    """The tasks in ``path``; ``ToolError`` if it is not a task list this module can read."""
    try:
        raw = read_text(path).strip()
    except OSError as exc:
        raise ToolError(f"{TASKS_FILE} cannot be read ({exc.strerror or exc})") from None
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        raise ToolError(f"{TASKS_FILE} is not valid JSON; fix or remove it by hand") from None
    if not isinstance(data, list):
        raise ToolError(f"{TASKS_FILE} must hold a JSON list of tasks")
    tasks = []
    for number, item in enumerate(data, start=1):
        if isinstance(item, str):  # a hand-written list of strings is a list of open tasks
            tasks.append(Task(number, item, False, ""))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise ToolError(f"{TASKS_FILE}: entry {number} has no text")
        task_id = item.get("id")
        done_at = item.get("done_at")
        tasks.append(
            Task(
                task_id if isinstance(task_id, int) and task_id > 0 else number,
                item["text"],
                bool(item.get("done", False)),
                str(item.get("created_at") or ""),
                done_at if isinstance(done_at, str) else None,
            )
        )
    return tasks


def save_tasks(path: Path, tasks: list[Task]) -> None:
    text = json.dumps([task.as_json() for task in tasks], ensure_ascii=False, indent=2)
    write_text(path, text + "\n")


def render_tasks(tasks: list[Task], *, include_done: bool = False) -> str:
    """The list as a person reads it: open tasks first, then (optionally) the done ones."""
    open_tasks = [task for task in tasks if not task.done]
    lines = [f"{task.id}. {task.text}" for task in open_tasks]
    if include_done:
        lines += [f"{task.id}. ~~{task.text}~~ (done)" for task in tasks if task.done]
    if not lines:
        return "No open tasks."
    return "\n".join(lines)


def _path(context: ToolContext) -> Path:
    return context.person_dir / TASKS_FILE


class TaskAddArguments(Arguments):
    text: str = Field(min_length=1, max_length=500, description="The task, in a few words.")


class TaskAdd(TypedTool[TaskAddArguments]):
    name = "task_add"
    description = "Add a task to the person's task list. Returns the task's number."
    arguments = TaskAddArguments
    writes = True

    async def run(self, args: TaskAddArguments, context: ToolContext) -> str:
        path = _path(context)
        tasks = load_tasks(path)
        if sum(not task.done for task in tasks) >= MAX_TASKS:
            raise ToolError(f"the task list already holds {MAX_TASKS} open tasks")
        task = Task(
            max((task.id for task in tasks), default=0) + 1,
            " ".join(args.text.split()),
            False,
            _stamp(context.now),
        )
        save_tasks(path, [*tasks, task])
        return f"Added task {task.id}: {task.text}"


class TaskListArguments(Arguments):
    include_done: bool = Field(default=False, description="Also list finished tasks.")


class TaskList(TypedTool[TaskListArguments]):
    name = "task_list"
    description = "List the person's tasks (open ones, and finished ones when asked)."
    arguments = TaskListArguments

    async def run(self, args: TaskListArguments, context: ToolContext) -> str:
        return render_tasks(load_tasks(_path(context)), include_done=args.include_done)


class TaskDoneArguments(Arguments):
    id: int = Field(ge=1, description="The task's number, as task_list shows it.")


class TaskDone(TypedTool[TaskDoneArguments]):
    name = "task_done"
    description = "Mark one of the person's tasks as done, by its number."
    arguments = TaskDoneArguments
    writes = True

    async def run(self, args: TaskDoneArguments, context: ToolContext) -> str:
        path = _path(context)
        tasks = load_tasks(path)
        for index, task in enumerate(tasks):
            if task.id == args.id:
                if task.done:
                    return f"Task {task.id} was already done: {task.text}"
                tasks[index] = Task(task.id, task.text, True, task.created_at, _stamp(context.now))
                save_tasks(path, tasks)
                return f"Done: task {task.id}, {task.text}"
        raise ToolError(f"there is no task {args.id}; task_list shows the numbers")


def _stamp(now: datetime) -> str:
    return now.isoformat(timespec="seconds")
