"""The person's task list, their file ``TASKS.json``: read, written and shown as a person
reads it. The file is plain JSON a person may edit by hand; an unreadable one is reported, never
overwritten."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from flynn.errors import UnreadableFile
from flynn.people.store import TASKS_FILE, PersonFiles, update_file

MAX_TASKS = 500

T = TypeVar("T")


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


def load_tasks(files: PersonFiles, namespace: str) -> list[Task]:
    """The person's tasks; ``UnreadableFile`` (saying why, in words for the person) if their
    file is not a task list this module can read."""
    return parse_tasks(files.read(namespace, TASKS_FILE))


def parse_tasks(text: str) -> list[Task]:
    """The tasks of a TASKS.json that reads ``text``; ``UnreadableFile`` as ``load_tasks``."""
    raw = text.strip()
    if not raw:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        raise UnreadableFile(f"{TASKS_FILE} is not valid JSON; fix or remove it by hand") from None
    if not isinstance(data, list):
        raise UnreadableFile(f"{TASKS_FILE} must hold a JSON list of tasks")
    tasks = []
    for number, item in enumerate(data, start=1):
        if isinstance(item, str):  # a hand-written list of strings is a list of open tasks
            tasks.append(Task(number, item, False, ""))
            continue
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise UnreadableFile(f"{TASKS_FILE}: entry {number} has no text")
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


def save_tasks(
    files: PersonFiles, namespace: str, tasks: list[Task], *, loaded: str | None = None
) -> bool:
    """Writes ``tasks`` as the person's file. With ``loaded`` (the text they were read from),
    only if the file still holds it: False, writing nothing, when another writer changed it."""
    return files.write(namespace, TASKS_FILE, tasks_text(tasks), expected=loaded)


def tasks_text(tasks: list[Task]) -> str:
    return json.dumps([task.as_json() for task in tasks], ensure_ascii=False, indent=2) + "\n"


def update_tasks(
    files: PersonFiles,
    namespace: str,
    change: Callable[[list[Task]], tuple[list[Task] | None, T]],
) -> T:
    """``update_file`` on the person's task list: ``change`` gets the tasks as read (the list
    to write, or ``None`` for no write, and what to answer) and is applied again to a fresh
    list when another writer changed the file meanwhile. Raises ``UnreadableFile``, what
    ``change`` raises, and ``FileBusy``."""

    def changed_text(text: str) -> tuple[str | None, T]:
        tasks, answer = change(parse_tasks(text))
        return (None if tasks is None else tasks_text(tasks)), answer

    return update_file(files, namespace, TASKS_FILE, changed_text)


def render_tasks(tasks: list[Task], *, include_done: bool = False) -> str:
    """The list as a person reads it: open tasks first, then (optionally) the done ones."""
    open_tasks = [task for task in tasks if not task.done]
    lines = [f"{task.id}. {task.text}" for task in open_tasks]
    if include_done:
        lines += [f"{task.id}. ~~{task.text}~~ (done)" for task in tasks if task.done]
    if not lines:
        return "No open tasks."
    return "\n".join(lines)
