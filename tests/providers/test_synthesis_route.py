"""Which model episodic synthesis asks: ``llm.tasks.synthesis``, else the extraction model the
config names (a cheaper one, usually), else the main model; its calls are metered as synthesis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from fakes import FakeOpenAI, Reply

from flynn.errors import ConfigError
from flynn.providers.base import Task, Usage
from flynn.providers.build import build_task_providers, describe_provider
from flynn.providers.completion import TaskCompletion
from flynn.providers.lifecycle import close_providers
from flynn.settings import LlmSettings

ENV = {"ANTHROPIC_API_KEY": "sk-ant-env-secret", "OPENAI_API_KEY": "sk-openai-env-secret"}


class RecordingSink:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, Task, Usage]] = []

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None:
        self.rows.append((provider, model, task, usage))


def llm(**values: Any) -> LlmSettings:
    return LlmSettings.model_validate(values)


async def names(settings: LlmSettings, env: Mapping[str, str] = ENV) -> dict[Task, str]:
    providers = build_task_providers(settings, env, RecordingSink())
    try:
        return {task: provider.name for task, provider in providers.items()}
    finally:
        await close_providers(providers.values())


async def test_without_task_entries_synthesis_runs_on_the_main_model() -> None:
    found = await names(llm(provider="anthropic"))

    assert found["synthesis"] == found["chat"] == "anthropic:claude-sonnet-5-5"


async def test_it_takes_the_extraction_model_when_the_config_names_one() -> None:
    settings = llm(provider="anthropic", tasks={"extraction": {"model": "claude-haiku-4-5"}})

    found = await names(settings)

    assert found["synthesis"] == found["extraction"] == "anthropic:claude-haiku-4-5"
    assert found["compaction"] == "anthropic:claude-sonnet-5-5"
    assert "synthesis: anthropic:claude-haiku-4-5" in describe_provider(settings, ENV)


async def test_its_own_entry_wins() -> None:
    settings = llm(
        provider="anthropic",
        tasks={
            "extraction": {"model": "claude-haiku-4-5"},
            "synthesis": {"provider": "openai", "model": "gpt-5-nano"},
        },
    )

    found = await names(settings)

    assert found["synthesis"] == "openai:gpt-5-nano"
    assert found["extraction"] == "anthropic:claude-haiku-4-5"


def test_a_problem_of_the_inherited_entry_names_that_entry() -> None:
    settings = llm(provider="anthropic", tasks={"extraction": {"provider": "openai"}})

    with pytest.raises(ConfigError) as raised:
        build_task_providers(settings, {"ANTHROPIC_API_KEY": "k"}, RecordingSink())

    assert [problem.key for problem in raised.value.problems] == ["llm.tasks.extraction.api_key"]


async def test_a_completion_is_metered_as_synthesis(fake_openai: FakeOpenAI) -> None:
    settings = llm(
        provider="openai",
        base_url=fake_openai.base_url,
        model="big",
        tasks={"synthesis": {"model": "small", "max_output_tokens": 256}},
    )
    sink = RecordingSink()
    fake_openai.enqueue(Reply("- merged", input_tokens=120, output_tokens=4))
    providers = build_task_providers(settings, {}, sink)
    try:
        text = await TaskCompletion(providers["synthesis"], "synthesis").complete(
            "condense", "- a\n- b", max_tokens=40
        )
    finally:
        await close_providers(providers.values())

    assert text == "- merged"
    body = fake_openai.last.json
    assert body["model"] == "small" and body["max_tokens"] == 40
    assert body["messages"] == [
        {"role": "system", "content": "condense"},
        {"role": "user", "content": "- a\n- b"},
    ]
    assert sink.rows == [("openai", "small", "synthesis", Usage(120, 4))]
