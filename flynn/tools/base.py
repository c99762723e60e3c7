"""The Tool seam: a named action with typed arguments, run for one person, and the registry that
offers the tools to the model and runs the calls it makes.

A tool never raises into the turn: bad arguments, a ``ToolError``, any other exception and a
timeout all become that call's result (``is_error``), which the model reads and answers.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Generic, Protocol, TypeVar

import structlog
from pydantic import BaseModel, ConfigDict, ValidationError

from flynn.credentials import redact, redact_json
from flynn.messages import SessionKey
from flynn.people.store import PersonFiles
from flynn.providers.base import ToolCall, ToolResult, ToolSpec

log = structlog.get_logger(__name__)

TRUNCATED = "\n[… cut: the result was longer than {limit} characters]"


class ToolError(Exception):
    """What a tool says went wrong, in words the model can act on ("no reminder 7")."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Who a call is for. Every tool reads and writes only under ``namespace`` (their files
    through ``files``, the pictures and files they sent in ``person_dir``): a tool cannot reach
    another person's memory."""

    namespace: str
    """The person's memory root (``user``, ``users/alice``, ``sessions/<key>``)."""
    session: SessionKey
    person_dir: Path
    timezone: tzinfo
    timezone_name: str
    now: datetime
    off_the_record: bool = False
    user: str | None = None
    """The configured person (``users:``) or the single-user owner; None for session memory."""
    files: PersonFiles | None = None
    """Where the person's files are kept, read and written only for ``namespace``; None where
    none are kept."""

    def person_files(self) -> PersonFiles:
        """``files``; ``ToolError`` where none are kept."""
        if self.files is None:
            raise ToolError("no personal files are kept in this conversation")
        return self.files


class Arguments(BaseModel):
    """Base of every tool's arguments: unknown keys are refused, so a misspelt argument is
    reported to the model instead of silently ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Tool(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def spec(self) -> ToolSpec:
        """What the model sees: name, description, JSON schema of the arguments."""
        ...

    @property
    def writes(self) -> bool:
        """Whether it changes what is stored (off-the-record turns are not offered these)."""
        ...

    async def call(self, arguments: str, context: ToolContext) -> str:
        """Runs with the model's raw JSON ``arguments``. Raises ``ToolError`` (bad arguments
        included) for anything the model should be told."""
        ...


class ToolSource(Protocol):
    """Tools that come and go while the daemon runs (``flynn.tools.mcp``): asked at each turn
    for what the calling person may use."""

    def tools_for(self, user: str | None) -> Sequence[Tool]: ...

    def down(self) -> tuple[str, ...]:
        """What is not serving now (``/status`` says it)."""
        ...


A = TypeVar("A", bound=Arguments)


class TypedTool(Generic[A]):
    """A tool whose arguments are a pydantic model: subclasses set ``name``, ``description``,
    ``arguments``, ``writes`` and implement ``run``."""

    name: str
    description: str
    arguments: type[A]
    writes: bool = False

    @property
    def spec(self) -> ToolSpec:
        schema = self.arguments.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            if isinstance(prop, dict):
                prop.pop("title", None)
        return ToolSpec(self.name, self.description, schema)

    async def call(self, arguments: str, context: ToolContext) -> str:
        try:
            args = self.arguments.model_validate_json(arguments or "{}")
        except ValidationError as exc:
            raise ToolError(_argument_problems(exc)) from None
        return await self.run(args, context)

    async def run(self, args: A, context: ToolContext) -> str:
        raise NotImplementedError


def _argument_problems(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        message = "unknown argument" if error["type"] == "extra_forbidden" else error["msg"]
        problems.append(f"{where}: {message}")
    return "invalid arguments: " + "; ".join(problems)


class ToolRegistry:
    """The tools on offer, in one place. ``run`` executes one step's calls concurrently, each
    under ``timeout_seconds``, and returns one result per call in the calls' order."""

    def __init__(
        self,
        tools: Sequence[Tool],
        *,
        timeout_seconds: float = 20.0,
        result_max_chars: int = 4000,
        sources: Sequence[ToolSource] = (),
    ) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._sources = tuple(sources)
        if len(self._tools) != len(tools):
            raise ValueError("two tools share a name")
        # Built once: a JSON schema costs pydantic more than the rest of a turn's bookkeeping.
        self._specs = tuple(tool.spec for tool in tools)
        self._read_only = tuple(tool.spec for tool in tools if not tool.writes)
        self._timeout = timeout_seconds
        self._max_chars = result_max_chars

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    @property
    def sources(self) -> tuple[ToolSource, ...]:
        return self._sources

    def get(self, name: str, user: str | None = None) -> Tool | None:
        """The tool called ``name``: a built-in, else one of ``user``'s from a source."""
        tool = self._tools.get(name)
        if tool is None:
            for source in self._sources:
                tool = next((t for t in source.tools_for(user) if t.name == name), None)
                if tool is not None:
                    break
        return tool

    def specs(self, *, writes: bool = True, user: str | None = None) -> tuple[ToolSpec, ...]:
        """The schemas the model is offered: the built-ins, and what the sources give ``user``;
        without the tools that write when ``writes`` is false (off the record)."""
        builtin = self._specs if writes else self._read_only
        if not self._sources:
            return builtin
        extra = [
            tool.spec
            for source in self._sources
            for tool in source.tools_for(user)
            if writes or not tool.writes
        ]
        return (*builtin, *(spec for spec in extra if spec.name not in self._tools))

    async def run(self, calls: Sequence[ToolCall], context: ToolContext) -> tuple[ToolResult, ...]:
        """One result per call; never raises but on cancellation. A credential in a call's
        arguments is redacted before its tool sees them, and one in a result before the
        model does: a tool never stores one, and never hands one on."""
        results = await asyncio.gather(*(self._run_one(call, context) for call in calls))
        return tuple(results)

    async def _run_one(self, call: ToolCall, context: ToolContext) -> ToolResult:
        tool = self.get(call.name, context.user)
        bound = structlog.contextvars.bound_contextvars(tool=call.name)
        with bound:
            if tool is None:
                known = ", ".join(sorted(self._tools))
                return self._error(call, f"there is no tool {call.name!r}; tools: {known}")
            if tool.writes and context.off_the_record:
                return self._error(
                    call, "not available off the record: nothing may be stored right now"
                )
            # A tool may set its own limit (an MCP server's timeout_seconds); the default else.
            limit = getattr(tool, "timeout_seconds", None)
            timeout = limit if isinstance(limit, int | float) else self._timeout
            try:
                async with asyncio.timeout(timeout):
                    text = await tool.call(redact_json(call.arguments)[0], context)
            except ToolError as exc:
                log.info("tool.refused", reason=str(exc)[:200])
                return self._error(call, str(exc))
            except TimeoutError:
                log.warning("tool.timeout", seconds=timeout)
                return self._error(call, f"the tool did not finish within {timeout:g}s")
            except Exception as exc:  # per-call boundary: the model hears of it, the turn goes on
                log.exception("tool.crashed")
                return self._error(call, f"the tool failed ({type(exc).__name__})")
            log.info("tool.called")
            return ToolResult(call.id, call.name, self._cut(redact(text)[0]))

    def _error(self, call: ToolCall, text: str) -> ToolResult:
        return ToolResult(call.id, call.name, "error: " + self._cut(redact(text)[0]), is_error=True)

    def _cut(self, text: str) -> str:
        if len(text) <= self._max_chars:
            return text
        note = TRUNCATED.format(limit=self._max_chars)
        return text[: self._max_chars - len(note)] + note


def as_json(value: object) -> str:
    """A tool result for the model: compact JSON, non-ASCII kept readable."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
