"""What episodic synthesis (``memory.synthesis: model``) adds to a turn, for ``flynn bench
recall``: the latency and the tokens of its one call per turn, with it on and off.

The model is a real one (the synthesis task model the configuration resolves to) or, by default,
``MergingModel``: an in-process, deterministic stand-in that answers the synthesis request with
a plausible merged block (near-duplicate lines merged, the newest kept, each line trimmed). It
is no language model, so with it the latency is Flynn's own overhead, and its tokens are
estimated (four characters a token); a real model adds its own time and counts its own.
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from evals.turn import percentile
from flynn.errors import ConfigError, ConfigProblem
from flynn.providers.base import ChatRequest, ChatResponse, Provider, StreamEvent, Task, Usage
from flynn.providers.build import build_task_providers
from flynn.providers.completion import TaskCompletion
from flynn.providers.lifecycle import ClosableProvider, close_providers
from flynn.providers.metered import MeteredProvider
from flynn.providers.offline import OFFLINE
from flynn.recall.recall import RecalledMemory
from flynn.recall.synthesis import EpisodicSynthesis
from flynn.sessions.prompt import render_recalled
from flynn.settings import LlmSettings
from flynn.tokens import estimate_tokens

STAND_IN = "stand-in"
STAND_IN_LABEL = (
    "in-process deterministic stand-in (evals.synthesis.MergingModel), no language model: "
    "latency is Flynn's own overhead and tokens are estimated; a real model adds its own"
)
NOTE = (
    "turn@k, session@k and injected_turn_recall measure retrieval, which synthesis does not "
    "change: it condenses what was already recalled"
)

_DATED = re.compile(r"^- (\d{4}-\d{2}-\d{2}) \w{3}, (they|you) said: (.*)$")
_WORDS = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s")
_MAX_WORDS = 20
_SAME = 0.6
"""Lines sharing this fraction of their words (Jaccard) are taken as saying the same thing."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One question's recalled memory, as the orchestrator would hand it to synthesis."""

    recalled: RecalledMemory
    message: str
    now: datetime


class MergingModel:
    """Answers a synthesis request with the memory lines it quotes, merged: a line whose words
    mostly repeat a newer one's is dropped, and each is cut to its first sentence (at most
    ``_MAX_WORDS`` words). Any other request gets an empty reply."""

    name = STAND_IN

    async def chat(self, request: ChatRequest) -> ChatResponse:
        text = request.messages[-1].content if request.messages else ""
        reply = merged_block(text) if request.task == "synthesis" else ""
        prompt = "\n".join([request.system, text])
        usage = Usage(estimate_tokens(prompt), estimate_tokens(reply))
        return ChatResponse(reply, usage, model=STAND_IN, provider=STAND_IN)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        yield await self.chat(request)

    async def aclose(self) -> None:
        return None


def merged_block(request_text: str) -> str:
    """The stand-in's reply to a synthesis request (``flynn.recall.synthesis.synthesis_input``)."""
    inside = request_text.partition("<memory>")[2].partition("</memory>")[0]
    lines = [line for line in inside.splitlines() if line.startswith("- ")]
    entries: list[tuple[str, str, set[str]]] = []  # (date, line, words), newest first
    for line in sorted(lines, key=_date, reverse=True):
        match = _DATED.match(line)
        body = match.group(3) if match else line[2:]
        words = {word.casefold() for word in _WORDS.findall(body)}
        if any(_similar(words, kept) for _, _, kept in entries):
            continue
        short = " ".join(_SENTENCE.split(body, maxsplit=1)[0].split()[:_MAX_WORDS])
        said = f"{match.group(1)} {match.group(2)}: " if match else ""
        entries.append((_date(line), f"- {said}{short}", words))
    return "\n".join(line for _, line, _ in entries)


def _date(line: str) -> str:
    match = _DATED.match(line)
    return match.group(1) if match else ""


def _similar(one: set[str], other: set[str]) -> bool:
    if not one or not other:
        return False
    return len(one & other) / len(one | other) >= _SAME


class _UsageRows:
    """A ``UsageSink`` that keeps the rows, to read each call's tokens back."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, Usage]] = []

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None:
        self.rows.append((task, usage))


async def bench_synthesis(
    turns: Sequence[Turn],
    *,
    timeout_seconds: float,
    llm: LlmSettings | None = None,
    env: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """Synthesis of each turn's recalled memory, metered as the daemon meters it: per turn, the
    time it adds and the tokens of its call (none when there was nothing to merge), beside the
    same figures for synthesis off (nothing added, by construction). With ``llm``, the call goes
    to the synthesis task model it resolves to (keys from ``env``); raises ``ConfigError`` when
    that is offline, since there would be nothing to measure. Else to ``MergingModel``."""
    rows = _UsageRows()
    if llm is None:
        model: ClosableProvider = MeteredProvider(MergingModel(), rows, "synthesis")
        return await _measure(
            turns, model, rows, label=STAND_IN_LABEL, timeout_seconds=timeout_seconds
        )
    providers = build_task_providers(llm, env or {}, rows)
    try:
        model = providers["synthesis"]
        if model.name == OFFLINE:
            raise ConfigError(
                [
                    ConfigProblem(
                        "llm.tasks.synthesis",
                        "resolves to offline: configure a model to measure (or leave out "
                        "--synthesis-model configured for the stand-in)",
                    )
                ]
            )
        label = f"{model.name} (the configured synthesis task model)"
        return await _measure(turns, model, rows, label=label, timeout_seconds=timeout_seconds)
    finally:
        await close_providers(providers.values())


async def _measure(
    turns: Sequence[Turn],
    model: Provider,
    rows: _UsageRows,
    *,
    label: str,
    timeout_seconds: float,
) -> dict[str, object]:
    synthesis = EpisodicSynthesis(
        TaskCompletion(model, "synthesis"), timeout_seconds=timeout_seconds
    )
    added: list[float] = []
    tokens_in: list[float] = []
    tokens_out: list[float] = []
    raw_tokens: list[int] = []
    injected: list[int] = []
    outcomes: Counter[str] = Counter()
    for turn in turns:
        before = len(rows.rows)
        began = time.perf_counter()
        result = await synthesis.synthesise(turn.recalled, turn.message, now=turn.now)
        added.append((time.perf_counter() - began) * 1000)
        calls = [usage for task, usage in rows.rows[before:] if task == "synthesis"]
        tokens_in.append(float(sum(usage.input_tokens for usage in calls)))
        tokens_out.append(float(sum(usage.output_tokens for usage in calls)))
        outcomes[result.fallback or "merged"] += 1
        raw_tokens.append(estimate_tokens(render_recalled(turn.recalled)))
        injected.append(estimate_tokens(render_recalled(result.recalled)))
    skipped = outcomes.pop("skipped", 0)
    merged = outcomes.pop("merged", 0)
    zero = {"p50": 0.0, "p99": 0.0}
    return {
        "model": label,
        "timeout_s": timeout_seconds,
        "turns": len(turns),
        "off": {
            "added_ms": zero,
            "tokens_in_per_turn": {**zero, "mean": 0.0},
            "tokens_out_per_turn": {**zero, "mean": 0.0},
            "calls": 0,
            "tokens_injected_mean": _mean(raw_tokens),
        },
        "on": {
            "added_ms": {**_spread(added), "max": round(max(added, default=0.0), 3)},
            "tokens_in_per_turn": _spread(tokens_in, digits=1) | {"mean": _mean(tokens_in)},
            "tokens_out_per_turn": _spread(tokens_out, digits=1) | {"mean": _mean(tokens_out)},
            "calls": len(turns) - skipped,
            "skipped": skipped,
            "merged": merged,
            "fallbacks": dict(sorted(outcomes.items())),
            "tokens_injected_mean": _mean(injected),
        },
        "note": NOTE,
    }


def _spread(values: list[float], *, digits: int = 3) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p99": 0.0}
    return {
        "p50": round(percentile(values, 0.50), digits),
        "p99": round(percentile(values, 0.99), digits),
    }


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 1) if values else 0.0
