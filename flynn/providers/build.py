"""From ``llm`` settings and the environment to one provider per task, wrapped for retry, fallback
and metering. Only this module decides which backend and which key a task gets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import SecretStr

from flynn.errors import ConfigError, ConfigProblem
from flynn.providers.base import TASKS, Task, UsageSink
from flynn.providers.defaults import DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL
from flynn.providers.fallback import FallbackProvider
from flynn.providers.health import ModelHealth, WatchedProvider
from flynn.providers.lifecycle import ClosableProvider
from flynn.providers.metered import MeteredProvider
from flynn.providers.offline import OFFLINE, OfflineProvider
from flynn.providers.redacting import RedactingProvider
from flynn.providers.retrying import RetryingProvider
from flynn.settings import LlmSettings, ProviderName, TaskName, TaskSettings

ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
_KEY_ENV: dict[ProviderName, str] = {"anthropic": ANTHROPIC_KEY_ENV, "openai": OPENAI_KEY_ENV}
_DEFAULT_MODEL: dict[ProviderName, str] = {
    "anthropic": DEFAULT_ANTHROPIC_MODEL,
    "openai": DEFAULT_OPENAI_MODEL,
    "offline": OFFLINE,
}


@dataclass(frozen=True, slots=True)
class Backend:
    """One concrete backend as resolved from settings and environment, before any client exists."""

    vendor: ProviderName
    model: str
    base_url: str | None = None
    api_key: SecretStr | None = None
    key_source: str | None = None
    """Where the key came from (``ANTHROPIC_API_KEY``, ``llm.api_key``...); never the key."""
    why: str = ""
    """Why ``offline`` was chosen."""
    problem: ConfigProblem | None = None


@dataclass(frozen=True, slots=True)
class _Route:
    """What one task runs on: its backends in fallback order and its output budget."""

    backends: tuple[Backend, ...]
    max_output_tokens: int


def build_task_providers(
    llm: LlmSettings, env: Mapping[str, str], sink: UsageSink, health: ModelHealth | None = None
) -> dict[Task, ClosableProvider]:
    """A provider for every task, each ``Redacting(Metered(Fallback([Retrying(concrete), ...])))``;
    with ``health``, each concrete one is watched there (``Retrying(Watched(concrete))``).

    Tasks that resolve to the same backend share one SDK client; closing each returned provider
    is still safe (``aclose`` is idempotent). Raises ``ConfigError`` listing every backend that
    lacks a key or a model, before any client is created.
    """
    routes = _routes(llm, env)
    problems = _unique(
        backend.problem
        for route in routes.values()
        for backend in route.backends
        if backend.problem is not None
    )
    if problems:
        raise ConfigError(problems)

    concrete: dict[tuple[Backend, int], ClosableProvider] = {}
    chains: dict[_Route, ClosableProvider] = {}

    def backend_provider(backend: Backend, max_output_tokens: int) -> ClosableProvider:
        key = (backend, max_output_tokens)
        if key not in concrete:
            concrete[key] = _concrete(backend, llm, max_output_tokens, health)
        return concrete[key]

    providers: dict[Task, ClosableProvider] = {}
    for task, route in routes.items():
        if route not in chains:
            chain = [backend_provider(b, route.max_output_tokens) for b in route.backends]
            chains[route] = chain[0] if len(chain) == 1 else FallbackProvider(chain)
        # Outermost: no backend, no retry and no fallback ever sees a credential.
        providers[task] = RedactingProvider(MeteredProvider(chains[route], sink, task))
    return providers


def describe_provider(llm: LlmSettings, env: Mapping[str, str]) -> str:
    """One secret-free line for ``flynn doctor`` and the startup log.

    E.g. ``anthropic:claude-sonnet-5-5 (from ANTHROPIC_API_KEY)`` or ``offline (no API key found)``;
    tasks routed differently from chat are appended. Never raises for a missing key: it says so.
    """
    routes = _routes(llm, env)
    chat = routes["chat"]
    parts = [_describe_route(chat)]
    for task in TASKS:
        if task == "chat" or routes[task].backends == chat.backends:
            continue
        if task in _DISTILL_TIERS and routes[task].backends == routes["distill"].backends:
            continue  # said once, under distill
        parts.append(f"{task}: {_describe_route(routes[task])}")
    return "; ".join(parts)


# -- resolution --------------------------------------------------------------------------------


def _routes(llm: LlmSettings, env: Mapping[str, str]) -> dict[Task, _Route]:
    primary = _primary(llm, env)
    fallbacks = tuple(
        _backend(
            entry.provider,
            model=entry.model,
            base_url=entry.base_url,
            explicit_key=entry.api_key,
            path=f"llm.fallbacks.{index}",
            env=env,
        )
        for index, entry in enumerate(llm.fallbacks)
    )
    routes: dict[Task, _Route] = {}
    for task in TASKS:
        backend = _task_backend(llm, task, primary, env)
        max_output_tokens = llm.max_output_tokens
        if (entry := _override(llm, task)) is not None:
            max_output_tokens = entry[1].max_output_tokens or max_output_tokens
        routes[task] = _Route((backend, *fallbacks), max_output_tokens)
    return routes


def _primary(llm: LlmSettings, env: Mapping[str, str]) -> Backend:
    """The chat backend. ``auto`` picks, in order: an OpenAI-compatible server when ``base_url`` is
    set, Anthropic with ``ANTHROPIC_API_KEY``, OpenAI with ``OPENAI_API_KEY``, Anthropic when only
    ``llm.api_key`` is set, else ``offline``. An explicit backend without a key gets a problem
    (a ``ConfigError`` later): flynn never drops to offline behind the user's back.
    """
    if llm.provider == "offline":
        return Backend("offline", OFFLINE, why="llm.provider is offline")
    vendor: ProviderName
    if llm.provider != "auto":
        vendor = llm.provider
    elif llm.base_url:
        # A base_url under auto means a local or hosted OpenAI-compatible server, even when an
        # Anthropic key happens to be in the environment; an Anthropic proxy says so explicitly.
        vendor = "openai"
    elif _env_key(env, ANTHROPIC_KEY_ENV):
        vendor = "anthropic"
    elif _env_key(env, OPENAI_KEY_ENV):
        vendor = "openai"
    elif _has_key(llm.api_key):
        vendor = "anthropic"
    else:
        return Backend("offline", OFFLINE, why="no API key found")
    return _backend(
        vendor,
        model=llm.model,
        base_url=llm.base_url,
        explicit_key=llm.api_key,
        path="llm",
        env=env,
    )


_INHERITS: Mapping[TaskName, TaskName] = {
    # Synthesis runs on every turn: without an entry of its own it takes the (usually cheaper)
    # extraction model's, if set.
    "synthesis": "extraction",
    # Each distillation tier may name its model (a local one weekly, the best one monthly,
    # say); without one it takes the ``distill`` entry's.
    "distill_mid": "distill",
    "distill_long": "distill",
}
"""The task whose ``llm.tasks`` entry a task without one of its own runs on."""
_DISTILL_TIERS: tuple[Task, ...] = ("distill_mid", "distill_long")


def _override(llm: LlmSettings, task: Task) -> tuple[TaskName, TaskSettings] | None:
    """The ``llm.tasks`` entry ``task`` runs on, with its name: its own, else the one it
    inherits (``_INHERITS``); ``None`` means the chat model's settings."""
    if task == "chat":
        return None
    name: TaskName = task
    if name not in llm.tasks and name in _INHERITS:
        name = _INHERITS[name]
    override = llm.tasks.get(name)
    return None if override is None else (name, override)


def _task_backend(
    llm: LlmSettings, task: Task, primary: Backend, env: Mapping[str, str]
) -> Backend:
    entry = _override(llm, task)
    if entry is None:
        return primary
    name, override = entry
    vendor = override.provider or primary.vendor
    if vendor == "offline":
        if primary.vendor == "offline" and override.provider is None:
            return primary
        return Backend("offline", OFFLINE, why=f"llm.tasks.{name}.provider is offline")
    # Model, server and key carry over only within one vendor: a Claude model name means nothing
    # to an OpenAI server.
    same = vendor == primary.vendor
    if same and override.model is None and override.base_url is None and override.api_key is None:
        return primary
    explicit_key = override.api_key
    key_path = f"llm.tasks.{name}"
    if explicit_key is None and same and primary.key_source == "llm.api_key":
        explicit_key, key_path = llm.api_key, "llm"
    return _backend(
        vendor,
        model=override.model or (primary.model if same else None),
        base_url=override.base_url or (primary.base_url if same else None),
        explicit_key=explicit_key,
        path=key_path,
        env=env,
        problem_path=f"llm.tasks.{name}",
    )


def _backend(
    vendor: ProviderName,
    *,
    model: str | None,
    base_url: str | None,
    explicit_key: SecretStr | None,
    path: str,
    env: Mapping[str, str],
    problem_path: str | None = None,
) -> Backend:
    """``vendor`` with its key from ``<path>.api_key`` or the vendor's variable, and any problem."""
    if vendor == "offline":
        return Backend("offline", OFFLINE, why=f"{problem_path or path}.provider is offline")
    where = problem_path or path
    env_name = _KEY_ENV[vendor]
    api_key: SecretStr | None = None
    key_source: str | None = None
    if _has_key(explicit_key):
        api_key, key_source = explicit_key, f"{path}.api_key"
    elif env_value := _env_key(env, env_name):
        api_key, key_source = SecretStr(env_value), env_name
    problem = None
    if api_key is None and (vendor == "anthropic" or base_url is None):
        local = f", or {where}.base_url for a local server" if vendor == "openai" else ""
        problem = ConfigProblem(
            f"{where}.api_key", f"no API key for {vendor}: set {env_name} or {where}.api_key{local}"
        )
    elif vendor == "openai" and base_url and not model:
        problem = ConfigProblem(
            f"{where}.model", "required with base_url: the name of the model the server serves"
        )
    return Backend(
        vendor,
        model or _DEFAULT_MODEL[vendor],
        base_url=base_url,
        api_key=api_key,
        key_source=key_source,
        problem=problem,
    )


def _env_key(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _has_key(key: SecretStr | None) -> bool:
    # len() measures the secret without taking it out of its wrapper.
    return key is not None and len(key) > 0


def _unique(problems: Iterable[ConfigProblem]) -> list[ConfigProblem]:
    seen: list[ConfigProblem] = []
    for problem in problems:
        if problem not in seen:
            seen.append(problem)
    return seen


# -- construction ------------------------------------------------------------------------------


def _concrete(
    backend: Backend, llm: LlmSettings, max_output_tokens: int, health: ModelHealth | None
) -> ClosableProvider:
    if backend.vendor == "offline":
        # Not retried: offline fails only on purpose (tasks other than chat), and at once.
        return OfflineProvider()
    provider: ClosableProvider
    # The SDKs are imported only for the vendors in use (about a second of start-up for both).
    if backend.vendor == "anthropic":
        from flynn.providers.anthropic import AnthropicProvider

        if backend.api_key is None:
            raise AssertionError("resolution guarantees an Anthropic key")
        provider = AnthropicProvider(
            backend.api_key.get_secret_value(),
            backend.model,
            base_url=backend.base_url,
            timeout_seconds=llm.timeout_seconds,
            stream_idle_seconds=llm.stream_idle_seconds,
            max_output_tokens=max_output_tokens,
        )
    else:
        from flynn.providers.openai import OpenAIProvider

        provider = OpenAIProvider(
            backend.api_key.get_secret_value() if backend.api_key else None,
            backend.model,
            base_url=backend.base_url,
            timeout_seconds=llm.timeout_seconds,
            stream_idle_seconds=llm.stream_idle_seconds,
            max_output_tokens=max_output_tokens,
        )
    if health is not None:
        # Inside the retries: a rate limit the next attempt gets past still shows.
        record = health.watch(backend.vendor, backend.model, key_from=backend.key_source)
        provider = WatchedProvider(provider, record)
    return RetryingProvider(provider, max_retries=llm.max_retries)


# -- description -------------------------------------------------------------------------------


def _describe_route(route: _Route) -> str:
    primary, *fallbacks = route.backends
    text = _describe_backend(primary)
    if fallbacks:
        text += ", falling back to " + ", then ".join(_describe_backend(b) for b in fallbacks)
    return text


def _describe_backend(backend: Backend) -> str:
    if backend.vendor == "offline":
        return f"offline ({backend.why})"
    text = f"{backend.vendor}:{backend.model}"
    if backend.base_url:
        text += f" at {_display_url(backend.base_url)}"
    if backend.problem is not None:
        return f"{text} ({backend.problem.message})"
    if backend.key_source:
        return f"{text} (from {backend.key_source})"
    return f"{text} (no API key)"


def _display_url(url: str) -> str:
    """``url`` without user info, query or fragment, where credentials sometimes hide."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    if not parts.scheme:
        return url.split("?")[0].rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}{parts.path}"
