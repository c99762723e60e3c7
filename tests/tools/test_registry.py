"""The tool registry: typed arguments, concurrency, timeouts, and errors that become results."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field

from flynn.messages import SessionKey
from flynn.people.files import DirectoryPersonFiles
from flynn.providers.base import ToolCall
from flynn.tools.base import Arguments, ToolContext, ToolError, ToolRegistry, TypedTool


def context(tmp_path: Path, *, off_the_record: bool = False) -> ToolContext:
    return ToolContext(
        namespace="user",
        session=SessionKey("gateway", "laptop"),
        person_dir=tmp_path / "user",
        timezone=UTC,
        timezone_name="UTC",
        now=datetime(2026, 11, 2, 9, 30, tzinfo=UTC),
        off_the_record=off_the_record,
        files=DirectoryPersonFiles(tmp_path),
    )


class EchoArguments(Arguments):
    text: str = Field(min_length=1, description="What to say back.")
    times: int = Field(default=1, ge=1, le=3)


class Echo(TypedTool[EchoArguments]):
    name = "echo"
    description = "Say it back."
    arguments = EchoArguments

    async def run(self, args: EchoArguments, context: ToolContext) -> str:
        return " ".join([args.text] * args.times)


class Gate(TypedTool[EchoArguments]):
    """Waits until every gate has been entered: proves calls of one step run concurrently."""

    name = "gate"
    description = "Wait for the others."
    arguments = EchoArguments
    writes = True

    def __init__(self, expected: int) -> None:
        self.entered = 0
        self.expected = expected
        self.all_in = asyncio.Event()

    async def run(self, args: EchoArguments, context: ToolContext) -> str:
        self.entered += 1
        if self.entered == self.expected:
            self.all_in.set()
        await self.all_in.wait()
        return args.text


class Hangs(TypedTool[EchoArguments]):
    name = "hangs"
    description = "Never returns."
    arguments = EchoArguments

    async def run(self, args: EchoArguments, context: ToolContext) -> str:
        await asyncio.Event().wait()
        return ""


class Raises(TypedTool[EchoArguments]):
    name = "raises"
    description = "Fails."
    arguments = EchoArguments

    async def run(self, args: EchoArguments, context: ToolContext) -> str:
        if args.text == "refuse":
            raise ToolError("no such thing")
        raise RuntimeError("secret internals")


def test_spec_is_the_arguments_json_schema() -> None:
    spec = Echo().spec
    assert spec.name == "echo"
    assert spec.parameters["type"] == "object"
    assert spec.parameters["required"] == ["text"]
    properties = spec.parameters["properties"]
    assert isinstance(properties, dict)
    assert properties["text"]["description"] == "What to say back."
    assert "title" not in spec.parameters


async def test_valid_call_returns_the_tool_text(tmp_path: Path) -> None:
    registry = ToolRegistry([Echo()])
    (result,) = await registry.run(
        [ToolCall("c1", "echo", '{"text": "hi", "times": 2}')], context(tmp_path)
    )
    assert (result.call_id, result.name, result.content, result.is_error) == (
        "c1",
        "echo",
        "hi hi",
        False,
    )


async def test_bad_arguments_become_an_error_result(tmp_path: Path) -> None:
    registry = ToolRegistry([Echo()])
    results = await registry.run(
        [
            ToolCall("a", "echo", "{not json"),
            ToolCall("b", "echo", '{"text": "hi", "times": 9}'),
            ToolCall("c", "echo", '{"text": "hi", "colour": "red"}'),
            ToolCall("d", "echo", "[1, 2]"),
        ],
        context(tmp_path),
    )
    assert all(result.is_error for result in results)
    assert "invalid arguments" in results[0].content
    assert "times" in results[1].content
    assert "colour: unknown argument" in results[2].content


async def test_unknown_tool_names_the_known_ones(tmp_path: Path) -> None:
    (result,) = await ToolRegistry([Echo()]).run([ToolCall("x", "launch", "{}")], context(tmp_path))
    assert result.is_error
    assert "launch" in result.content
    assert "echo" in result.content


async def test_calls_of_one_step_run_concurrently_and_keep_their_order(tmp_path: Path) -> None:
    gate = Gate(expected=3)
    registry = ToolRegistry([gate])
    calls = [ToolCall(str(n), "gate", f'{{"text": "t{n}"}}') for n in range(3)]
    async with asyncio.timeout(5):
        results = await registry.run(calls, context(tmp_path))
    assert [result.content for result in results] == ["t0", "t1", "t2"]


async def test_a_hanging_tool_times_out_and_the_others_still_answer(tmp_path: Path) -> None:
    registry = ToolRegistry([Hangs(), Echo()], timeout_seconds=0.05)
    slow, fast = await registry.run(
        [ToolCall("1", "hangs", '{"text": "x"}'), ToolCall("2", "echo", '{"text": "y"}')],
        context(tmp_path),
    )
    assert slow.is_error
    assert "did not finish" in slow.content
    assert (fast.is_error, fast.content) == (False, "y")


async def test_a_crash_is_a_result_without_its_internals(tmp_path: Path) -> None:
    registry = ToolRegistry([Raises()])
    crashed, refused = await registry.run(
        [ToolCall("1", "raises", '{"text": "x"}'), ToolCall("2", "raises", '{"text": "refuse"}')],
        context(tmp_path),
    )
    assert crashed.is_error
    assert "RuntimeError" in crashed.content
    assert "secret internals" not in crashed.content
    assert refused.content == "error: no such thing"


async def test_off_the_record_offers_and_runs_no_tool_that_writes(tmp_path: Path) -> None:
    registry = ToolRegistry([Echo(), Gate(expected=1)])
    assert [spec.name for spec in registry.specs(writes=False)] == ["echo"]
    (result,) = await registry.run(
        [ToolCall("1", "gate", '{"text": "x"}')], context(tmp_path, off_the_record=True)
    )
    assert result.is_error
    assert "off the record" in result.content


async def test_long_results_are_cut_to_the_budget(tmp_path: Path) -> None:
    registry = ToolRegistry([Echo()], result_max_chars=300)
    (result,) = await registry.run(
        [ToolCall("1", "echo", '{"text": "' + "x" * 1000 + '"}')], context(tmp_path)
    )
    assert len(result.content) == 300
    assert result.content.endswith("longer than 300 characters]")
