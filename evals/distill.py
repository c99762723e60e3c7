"""``flynn bench distill``: what each distillation tier reads, writes and costs, on a temporary
store holding one person's history of ``messages`` messages (turns of the ``fresh`` set's
conversations, their first speaker as the person, spread evenly over the last ``days`` days).

short runs without a model. mid and long ask their tier's model: by default a stand-in
(``NotesModel``, in-process and instant, answering with the first lines of what it read, up to
the tier's budget), so the figures are what Flynn sends and keeps; ``--configured`` asks the
models the configuration resolves ``llm.tasks.distill_mid`` and ``distill_long`` to (each, without
an entry, ``llm.tasks.distill``'s), with their own token counts and time.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from evals.recall import load_dataset
from flynn.distill.distiller import TASKS, TIERS, Distiller, Tier
from flynn.errors import ConfigError, ConfigProblem
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.working import write_working_memory
from flynn.people.files import DirectoryPersonFiles
from flynn.persona import DEFAULT_IDENTITY
from flynn.providers.base import ChatRequest, ChatResponse, Provider, StreamEvent, Task, Usage
from flynn.providers.build import build_task_providers
from flynn.providers.lifecycle import close_providers
from flynn.providers.offline import OFFLINE
from flynn.schedule.migrations import SCHEMA
from flynn.settings import Settings
from flynn.tokens import estimate_tokens, truncate_to_tokens

STAND_IN = (
    "in-process stand-in (evals.distill.NotesModel), no language model: it answers with the "
    "first lines of what it read, cut to the budget; tokens are estimated (four characters a "
    "token)"
)
NAMESPACE = "user"


class NotesModel:
    """Answers a distillation request with the first lines of its material, within the
    request's ``max_tokens``: a reply of a real one's size, without its thinking."""

    @property
    def name(self) -> str:
        return "notes-stand-in"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        material = request.messages[-1].content
        lines = [line for line in material.splitlines() if line.startswith("- ")]
        text = truncate_to_tokens("\n".join(lines), (request.max_tokens or 2000) * 4 // 5)
        prompt = request.system + material
        usage = Usage(estimate_tokens(prompt), estimate_tokens(text))
        return ChatResponse(text, usage, self.name, self.name)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield await self.chat(request)

    async def aclose(self) -> None:
        return None


async def bench_distill(
    *, messages: int, days: int, settings: Settings, configured: bool
) -> dict[str, object]:
    now = datetime.now(UTC).replace(microsecond=0)
    stand_in = NotesModel()
    models: dict[Tier, Provider] = {"mid": stand_in, "long": stand_in}
    opened: list[Provider] = []
    if configured:
        providers = build_task_providers(settings.llm, os.environ, _Uncounted())
        opened = list(providers.values())
        models = {tier: providers[task] for tier, task in TASKS.items()}
        offline = [TASKS[tier] for tier, model in models.items() if model.name == OFFLINE]
        if offline:
            await close_providers(opened)
            raise ConfigError(
                [
                    ConfigProblem(f"llm.tasks.{task}", "resolves to offline: no model to measure")
                    for task in offline
                ]
            )
    tiers: dict[str, object] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
            root = Path(tmp)
            with SqliteMemory.open(root / "flynn.db", SCHEMA) as memory:
                stored = _fill(memory, messages, days, now)
                distiller = Distiller(
                    files=DirectoryPersonFiles(root),
                    facts=memory.facts,
                    history=memory.history,
                    documents=memory.documents,
                    models=models,
                    budgets={tier: settings.distill.budget(tier) for tier in TIERS},
                    zone=lambda namespace: ZoneInfo("UTC"),
                    clock=lambda: now,
                    identity=lambda: DEFAULT_IDENTITY,
                    timeout_seconds=settings.distill.timeout_seconds,
                )
                for tier in TIERS:
                    tiers[tier] = await _tier(distiller, tier)
    finally:
        await close_providers(opened)
    return {
        "bench": "distill",
        "messages": stored,
        "days": days,
        "model": _model_names(models) if configured else STAND_IN,
        "budgets": {tier: settings.distill.budget(tier) for tier in TIERS},
        "tiers": tiers,
    }


def _model_names(models: dict[Tier, Provider]) -> str:
    """The model's name, or each tier's when they differ (``mid: a, long: b``)."""
    names = {tier: model.name for tier, model in models.items()}
    if len(set(names.values())) == 1:
        return next(iter(names.values()))
    return ", ".join(f"{tier}: {name}" for tier, name in names.items())


class _Uncounted:
    """The usage sink of a benchmark: the distiller reports each call's tokens itself."""

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None:
        return None


async def _tier(distiller: Distiller, tier: Tier) -> dict[str, object]:
    started = time.perf_counter()
    result = await distiller.run(tier, NAMESPACE)
    seconds = time.perf_counter() - started
    return {
        "model_call": bool(result.model),
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "file_tokens": result.tokens,
        "ms": round(seconds * 1000, 1),
    }


def _fill(memory: SqliteMemory, count: int, days: int, now: datetime) -> int:
    """Stores ``count`` messages of the ``fresh`` set's conversations, one after another, as
    one person's history over the last ``days`` days; plus a few facts and working memory."""
    turns: list[tuple[str, str]] = []
    while len(turns) < count:
        before = len(turns)
        for conversation in load_dataset("fresh").conversations:
            person = conversation.sessions[0].turns[0].speaker
            for session in conversation.sessions:
                for turn in session.turns:
                    role = "user" if turn.speaker == person else "assistant"
                    turns.append((role, turn.text))
        if len(turns) == before:
            break
    turns = turns[:count]
    step = timedelta(days=days) / max(len(turns), 1)
    start = now - timedelta(days=days)
    for index, (role, text) in enumerate(turns):
        memory.history.append(
            f"gateway:s{index // 40}",
            NAMESPACE,
            role,  # type: ignore[arg-type]
            text,
            tokens=estimate_tokens(text),
            now=start + step * index,
        )
    for field, value in (("name", "Ngozi"), ("city", "Lagos"), ("job", "architect")):
        memory.facts.add(NewFact(f"{NAMESPACE}/profile", "profile", value, field=field), now=now)
    write_working_memory(
        memory.documents,
        f"{NAMESPACE}/working",
        "- Drafting the community centre plans; the council review is on Friday",
        ttl_days=14,
        max_tokens=1000,
        now=now - timedelta(hours=3),
    )
    return len(turns)
