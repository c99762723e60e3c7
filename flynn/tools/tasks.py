"""The person's task list as tools: ``task_add``, ``task_list``, ``task_done`` (the file itself is
``flynn.people.tasks``)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from pydantic import Field

from flynn.errors import FileBusy, UnreadableFile
from flynn.people.tasks import MAX_TASKS, Task, load_tasks, render_tasks, update_tasks
from flynn.tools.base import Arguments, ToolContext, ToolError, TypedTool


def _load(context: ToolContext) -> list[Task]:
    """The person's tasks; a file that cannot be read is a ``ToolError`` the model reads."""
    try:
        return load_tasks(context.person_files(), context.namespace)
    except UnreadableFile as exc:
        raise ToolError(str(exc)) from None


def _update(
    context: ToolContext, change: Callable[[list[Task]], tuple[list[Task] | None, str]]
) -> str:
    """``update_tasks`` on the person's list: read, changed and written only over what was
    read, again on a fresh read when another worker wrote between; a file that cannot be read,
    or one that never stops changing, is a ``ToolError`` the model reads."""
    try:
        return update_tasks(context.person_files(), context.namespace, change)
    except (UnreadableFile, FileBusy) as exc:
        raise ToolError(str(exc)) from None


class TaskAddArguments(Arguments):
    text: str = Field(min_length=1, max_length=500, description="The task, in a few words.")


class TaskAdd(TypedTool[TaskAddArguments]):
    name = "task_add"
    description = "Add a task to the person's task list. Returns the task's number."
    arguments = TaskAddArguments
    writes = True

    async def run(self, args: TaskAddArguments, context: ToolContext) -> str:
        text = " ".join(args.text.split())

        def add(tasks: list[Task]) -> tuple[list[Task], str]:
            if sum(not task.done for task in tasks) >= MAX_TASKS:
                raise ToolError(f"the task list already holds {MAX_TASKS} open tasks")
            task_id = max((task.id for task in tasks), default=0) + 1
            task = Task(task_id, text, False, _stamp(context.now))
            return [*tasks, task], f"Added task {task.id}: {task.text}"

        return _update(context, add)


class TaskListArguments(Arguments):
    include_done: bool = Field(default=False, description="Also list finished tasks.")


class TaskList(TypedTool[TaskListArguments]):
    name = "task_list"
    description = "List the person's tasks (open ones, and finished ones when asked)."
    arguments = TaskListArguments

    async def run(self, args: TaskListArguments, context: ToolContext) -> str:
        return render_tasks(_load(context), include_done=args.include_done)


class TaskDoneArguments(Arguments):
    id: int = Field(ge=1, description="The task's number, as task_list shows it.")


class TaskDone(TypedTool[TaskDoneArguments]):
    name = "task_done"
    description = "Mark one of the person's tasks as done, by its number."
    arguments = TaskDoneArguments
    writes = True

    async def run(self, args: TaskDoneArguments, context: ToolContext) -> str:
        def finish(tasks: list[Task]) -> tuple[list[Task] | None, str]:
            for index, task in enumerate(tasks):
                if task.id == args.id:
                    if task.done:
                        return None, f"Task {task.id} was already done: {task.text}"
                    done = Task(task.id, task.text, True, task.created_at, _stamp(context.now))
                    return [*tasks[:index], done, *tasks[index + 1 :]], (
                        f"Done: task {task.id}, {task.text}"
                    )
            raise ToolError(f"there is no task {args.id}; task_list shows the numbers")

        return _update(context, finish)


def _stamp(now: datetime) -> str:
    return now.isoformat(timespec="seconds")
