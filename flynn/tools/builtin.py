"""The built-in tools, registered in one place (their names are a contract: configs and
prompts name them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flynn.attachments import FileStore
from flynn.learning.reconcile import RuleReconciler
from flynn.memory.store import History
from flynn.recall.recall import Recall
from flynn.recall.worker import RecallWorker
from flynn.schedule.jobs import Schedule
from flynn.tools.base import Tool, ToolRegistry, ToolSource
from flynn.tools.files import FileRead
from flynn.tools.memory import MemorySearch, Remember, SessionSearch
from flynn.tools.reminders import (
    ReminderCancel,
    ReminderLimits,
    ReminderList,
    ReminderSet,
    Route,
)
from flynn.tools.scratch import ScratchRead, ScratchWrite
from flynn.tools.tasks import TaskAdd, TaskDone, TaskList

BUILTIN_NAMES = (
    "remember",
    "memory_search",
    "session_search",
    "reminder_set",
    "reminder_list",
    "reminder_cancel",
    "task_add",
    "task_list",
    "task_done",
    "scratch_read",
    "scratch_write",
    "file_read",
)


def builtin_tools(
    *,
    reconciler: RuleReconciler,
    recall: Recall,
    recall_worker: RecallWorker | None = None,
    history: History,
    schedule: Schedule,
    route: Route,
    on_schedule_change: Callable[[], None],
    timeout_seconds: float = 20.0,
    result_max_chars: int = 4000,
    reminder_limits: ReminderLimits | None = None,
    files: FileStore | None = None,
    sources: Sequence[ToolSource] = (),
) -> ToolRegistry:
    tools: list[Tool] = [
        Remember(reconciler),
        MemorySearch(recall, recall_worker),
        SessionSearch(history),
        ReminderSet(schedule, route, on_schedule_change, reminder_limits),
        ReminderList(schedule),
        ReminderCancel(schedule, on_schedule_change),
        TaskAdd(),
        TaskList(),
        TaskDone(),
        ScratchRead(),
        ScratchWrite(),
    ]
    if files is not None:
        tools.append(FileRead(files))
    return ToolRegistry(
        tools,
        timeout_seconds=timeout_seconds,
        result_max_chars=result_max_chars,
        sources=sources,
    )
