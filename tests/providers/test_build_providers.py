"""build_task_providers and describe_provider: which backend each task gets, and with which key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from fakes import Fail, FakeAnthropic, FakeOpenAI, Reply

from flynn.errors import AuthFailed, ConfigError, Unavailable
from flynn.providers.base import ChatMessage, ChatRequest, Task, Usage
from flynn.providers.build import build_task_providers, describe_provider
from flynn.providers.lifecycle import ClosableProvider, close_providers
from flynn.settings import LlmSettings

ANTHROPIC_KEY = "sk-ant-env-secret"
OPENAI_KEY = "sk-openai-env-secret"
CONFIG_KEY = "sk-config-secret"
REQUEST = ChatRequest(system="s", messages=(ChatMessage("user", "hi"),))


@dataclass
class RecordingSink:
    rows: list[tuple[str, str, Task, Usage]] = field(default_factory=list)

    def record_usage(self, *, provider: str, model: str, task: Task, usage: Usage) -> None:
        self.rows.append((provider, model, task, usage))


def llm(**values: Any) -> LlmSettings:
    return LlmSettings.model_validate(values)


async def build(
    settings: LlmSettings, env: Mapping[str, str], sink: RecordingSink | None = None
) -> dict[Task, ClosableProvider]:
    return build_task_providers(settings, env, sink or RecordingSink())


async def names(settings: LlmSettings, env: Mapping[str, str]) -> dict[Task, str]:
    providers = await build(settings, env)
    try:
        return {task: provider.name for task, provider in providers.items()}
    finally:
        await close_providers(providers.values())


async def test_auto_prefers_anthropic_when_its_key_is_set() -> None:
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}

    assert (await names(llm(), env))["chat"] == "anthropic:claude-sonnet-5-5"
    assert describe_provider(llm(), env) == "anthropic:claude-sonnet-5-5 (from ANTHROPIC_API_KEY)"


async def test_auto_uses_openai_with_only_its_key() -> None:
    env = {"OPENAI_API_KEY": OPENAI_KEY}

    assert set((await names(llm(), env)).values()) == {"openai:gpt-5.5"}
    assert describe_provider(llm(), env) == "openai:gpt-5.5 (from OPENAI_API_KEY)"


async def test_auto_without_any_key_is_offline_for_every_task() -> None:
    providers = await build(llm(), {"ANTHROPIC_API_KEY": "  "})
    try:
        assert {p.name for p in providers.values()} == {"offline"}
        reply = await providers["chat"].chat(REQUEST)
        assert "No language model is configured" in reply.text
        with pytest.raises(Unavailable):
            await providers["compaction"].chat(replace(REQUEST, task="compaction"))
    finally:
        await close_providers(providers.values())
    assert describe_provider(llm(), {}) == "offline (no API key found)"


async def test_explicit_offline() -> None:
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    assert (await names(llm(provider="offline"), env))["chat"] == "offline"
    assert describe_provider(llm(provider="offline"), env) == "offline (llm.provider is offline)"


async def test_config_key_counts_for_the_chosen_provider() -> None:
    settings = llm(provider="openai", api_key=CONFIG_KEY)

    assert (await names(settings, {}))["chat"] == "openai:gpt-5.5"
    assert describe_provider(settings, {}) == "openai:gpt-5.5 (from llm.api_key)"


@pytest.mark.parametrize(
    ("settings", "key", "hint"),
    [
        (llm(provider="anthropic"), "llm.api_key", "ANTHROPIC_API_KEY"),
        (llm(provider="openai"), "llm.api_key", "OPENAI_API_KEY"),
        (
            llm(provider="anthropic", fallbacks=[{"provider": "anthropic"}], api_key=CONFIG_KEY),
            "llm.fallbacks.0.api_key",
            "ANTHROPIC_API_KEY",
        ),
        (
            llm(api_key=CONFIG_KEY, tasks={"compaction": {"provider": "openai"}}),
            "llm.tasks.compaction.api_key",
            "OPENAI_API_KEY",
        ),
    ],
)
async def test_explicit_provider_without_a_key_is_a_config_error(
    settings: LlmSettings, key: str, hint: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        await build(settings, {})

    assert [problem.key for problem in caught.value.problems] == [key]
    assert hint in caught.value.problems[0].message
    # describe_provider says the same instead of raising, for `flynn doctor`.
    assert hint in describe_provider(settings, {})


async def test_openai_compatible_server_needs_a_model_name() -> None:
    with pytest.raises(ConfigError) as caught:
        await build(llm(base_url="http://127.0.0.1:11434/v1"), {})
    assert [problem.key for problem in caught.value.problems] == ["llm.model"]


async def test_auto_with_base_url_talks_to_a_local_server_without_a_key(
    fake_openai: FakeOpenAI,
) -> None:
    settings = llm(base_url=fake_openai.base_url, model="llama3", max_output_tokens=128)
    sink = RecordingSink()
    fake_openai.enqueue(Reply("local reply", input_tokens=20, output_tokens=2))
    # An Anthropic key in the environment does not hijack an explicitly configured server.
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}

    providers = await build(settings, env, sink)
    try:
        response = await providers["chat"].chat(REQUEST)
    finally:
        await close_providers(providers.values())

    assert response.text == "local reply"
    assert fake_openai.last.json["model"] == "llama3"
    assert fake_openai.last.json["max_tokens"] == 128
    assert ANTHROPIC_KEY not in fake_openai.last.headers["authorization"]
    assert sink.rows == [("openai", "llama3", "chat", Usage(20, 2))]
    assert describe_provider(settings, env) == (
        f"openai:llama3 at {fake_openai.base_url} (no API key)"
    )


async def test_task_overrides_change_only_their_task(fake_anthropic: FakeAnthropic) -> None:
    settings = llm(
        provider="anthropic",
        base_url=fake_anthropic.base_url,
        api_key=CONFIG_KEY,
        tasks={
            "compaction": {"model": "claude-small", "max_output_tokens": 100},
            "distill": {"provider": "openai", "model": "gpt-small"},
        },
    )
    env = {"OPENAI_API_KEY": OPENAI_KEY}
    sink = RecordingSink()

    providers = await build(settings, env, sink)
    try:
        assert {task: p.name for task, p in providers.items()} == {
            "chat": "anthropic:claude-sonnet-5-5",
            "compaction": "anthropic:claude-small",
            "extraction": "anthropic:claude-sonnet-5-5",
            "distill": "openai:gpt-small",
            # Each distillation tier takes distill's entry without one of its own.
            "distill_mid": "openai:gpt-small",
            "distill_long": "openai:gpt-small",
            "synthesis": "anthropic:claude-sonnet-5-5",
        }
        await providers["compaction"].chat(REQUEST)
        compaction = fake_anthropic.last
        await providers["chat"].chat(REQUEST)
        chat = fake_anthropic.last
    finally:
        await close_providers(providers.values())

    # Same vendor: the configured server and key carry over to the override.
    assert compaction.json["model"] == "claude-small"
    assert compaction.json["max_tokens"] == 100
    assert compaction.headers["authorization"] == f"Bearer {CONFIG_KEY}"
    assert chat.json["max_tokens"] == 2048
    assert [row[2] for row in sink.rows] == ["compaction", "chat"]
    description = describe_provider(settings, env)
    assert description.startswith("anthropic:claude-sonnet-5-5 at ")
    assert "compaction: anthropic:claude-small" in description
    assert "distill: openai:gpt-small (from OPENAI_API_KEY)" in description
    assert "distill_mid" not in description  # said once, under distill


def test_a_distillation_tier_names_its_own_model_and_its_problems() -> None:
    settings = llm(
        provider="anthropic",
        tasks={"distill": {"model": "claude-haiku-4-5"}, "distill_long": {"model": "claude-opus"}},
    )
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    description = describe_provider(settings, env)
    assert "distill: anthropic:claude-haiku-4-5" in description
    assert "distill_long: anthropic:claude-opus" in description
    assert "distill_mid" not in description

    keyless = llm(provider="anthropic", tasks={"distill_mid": {"provider": "openai"}})
    with pytest.raises(ConfigError) as raised:
        build_task_providers(keyless, env, RecordingSink())
    assert [problem.key for problem in raised.value.problems] == ["llm.tasks.distill_mid.api_key"]


async def test_fallbacks_take_over_when_the_primary_is_down(
    fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    settings = llm(
        provider="anthropic",
        base_url=fake_anthropic.base_url,
        max_retries=0,
        fallbacks=[{"provider": "openai", "base_url": fake_openai.base_url, "model": "m"}],
    )
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    fake_anthropic.enqueue(Fail.overloaded())
    fake_openai.enqueue(Reply("from the fallback"))
    sink = RecordingSink()

    providers = await build(settings, env, sink)
    try:
        response = await providers["chat"].chat(REQUEST)
    finally:
        await close_providers(providers.values())

    assert response.text == "from the fallback"
    assert providers["chat"].name == "anthropic:claude-sonnet-5-5 > openai:m"
    assert sink.rows[0][:3] == ("openai", "m", "chat")
    assert describe_provider(settings, env).endswith(
        f"falling back to openai:m at {fake_openai.base_url} (no API key)"
    )


async def test_a_configured_provider_that_fails_never_becomes_offline(
    fake_anthropic: FakeAnthropic,
) -> None:
    settings = llm(provider="anthropic", base_url=fake_anthropic.base_url, max_retries=0)
    fake_anthropic.enqueue(Fail.unauthorized())

    providers = await build(settings, {"ANTHROPIC_API_KEY": ANTHROPIC_KEY})
    try:
        with pytest.raises(AuthFailed):
            await providers["chat"].chat(REQUEST)
    finally:
        await close_providers(providers.values())


async def test_descriptions_never_contain_secrets() -> None:
    settings = llm(
        provider="openai",
        api_key=CONFIG_KEY,
        base_url="https://user:hunter2@llm.example.com:8443/v1?token=abc",
        model="m",
        fallbacks=[{"provider": "anthropic", "api_key": "sk-ant-fallback-secret"}],
    )
    env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}

    description = describe_provider(settings, env)

    for secret in (
        CONFIG_KEY,
        ANTHROPIC_KEY,
        OPENAI_KEY,
        "sk-ant-fallback-secret",
        "hunter2",
        "abc",
    ):
        assert secret not in description
    assert description == (
        "openai:m at https://llm.example.com:8443/v1 (from llm.api_key), falling back to "
        "anthropic:claude-sonnet-5-5 (from llm.fallbacks.0.api_key)"
    )
