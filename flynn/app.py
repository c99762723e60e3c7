"""Composition root: the only place that builds concrete classes from ``Settings``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path

import structlog

from flynn.channels.base import Channel
from flynn.channels.gateway import GatewayChannel
from flynn.errors import ConfigError, ConfigProblem
from flynn.identity import Identity, MemoryScope
from flynn.memory.dates import parse_timezone
from flynn.memory.embeddings import load_embedder, one_blas_thread
from flynn.memory.extraction import RuleExtractor
from flynn.memory.fact_relations import FactRelations
from flynn.memory.graph_extraction import LlmGraphExtractor, RuleGraphExtractor
from flynn.memory.graph_ingest import GraphIngestor
from flynn.memory.learning import FactLearner, GraphLearning
from flynn.memory.llm_extraction import LlmExtractor
from flynn.memory.llm_reconcile import LlmReconciler
from flynn.memory.recall import Recall
from flynn.memory.reconcile import RuleReconciler
from flynn.memory.sqlite import SqliteMemory
from flynn.memory.vectors import SqliteVectors
from flynn.memory.writer import MemoryWriter
from flynn.messages import ChannelAccount, SessionKey
from flynn.persona import Persona, persona_directory
from flynn.providers.base import Provider, Task
from flynn.providers.build import build_task_providers
from flynn.providers.lifecycle import close_providers
from flynn.sessions.compaction import CompactionConfig, Compactor
from flynn.sessions.orchestrator import Orchestrator, SessionServices, TurnConfig
from flynn.settings import Settings

log = structlog.get_logger(__name__)

DATABASE_FILE = "flynn.db"
PERSONA_RECHECK_SECONDS = 1.0


def utc_now() -> datetime:
    return datetime.now(UTC)


def database_path(settings: Settings) -> Path:
    return settings.data_dir / DATABASE_FILE


class App:
    """The composed process: memory, providers, identity, and one orchestrator per session key.

    Acquire with ``App.open`` and release with ``aclose``; ``aclose`` waits for compactions in
    flight, closes provider clients, then closes the database last.
    """

    def __init__(
        self,
        settings: Settings,
        memory: SqliteMemory,
        providers: Mapping[Task, Provider],
        services: SessionServices,
    ) -> None:
        self.settings = settings
        self.memory = memory
        self.providers = providers
        self.services = services
        self.identity = Identity(
            user_namespace=settings.memory.user_namespace, users=settings.users
        )
        self._orchestrators: dict[SessionKey, Orchestrator] = {}

    @classmethod
    def open(
        cls,
        settings: Settings,
        env: Mapping[str, str],
        *,
        clock: Callable[[], datetime] = utc_now,
        providers: Mapping[Task, Provider] | None = None,
    ) -> App:
        """Opens the database and builds every part. ``providers`` replaces the configured ones
        (benchmarks and tests pass a scripted provider). Raises ``ConfigError``/``StoreError``."""
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        memory = SqliteMemory.open(database_path(settings))
        try:
            if providers is None:
                providers = build_task_providers(settings.llm, env, memory.costs)
            services = _services(settings, memory, providers, clock)
        except BaseException:
            memory.close()
            raise
        return cls(settings, memory, providers, services)

    def scope_for(self, key: SessionKey, account: ChannelAccount) -> MemoryScope:
        return self.identity.resolve(account, key)

    def orchestrator(self, key: SessionKey, account: ChannelAccount) -> Orchestrator:
        """The session's orchestrator, created on first use (resuming stored history)."""
        orchestrator = self._orchestrators.get(key)
        if orchestrator is None:
            orchestrator = Orchestrator(key, self.scope_for(key, account), self.services)
            self._orchestrators[key] = orchestrator
        return orchestrator

    async def evict(self, key: SessionKey) -> None:
        orchestrator = self._orchestrators.pop(key, None)
        if orchestrator is not None:
            await orchestrator.aclose()

    async def aclose(self) -> None:
        for orchestrator in list(self._orchestrators.values()):
            await orchestrator.aclose()
        self._orchestrators.clear()
        await self.services.writer.aclose()
        await close_providers(self.providers.values())
        self.memory.close()


def allowed_accounts(settings: Settings, channel: str) -> frozenset[str]:
    """Who may talk on ``channel``: its ``allowed_users`` plus every account the ``users:`` map
    lists for it. Empty means nobody (a personal assistant is not open to strangers)."""
    section = getattr(settings.channels, channel)
    listed = {account for user in settings.users.values() for account in getattr(user, channel)}
    return frozenset(section.allowed_users) | frozenset(listed)


def build_channels(
    settings: Settings,
    identity: Identity,
    *,
    gateway_token: str,
    readiness: Callable[[], Mapping[str, object]],
    clock: Callable[[], datetime] = utc_now,
) -> dict[str, Channel]:
    """The enabled channels, gateway first. Raises ``ConfigError`` for an enabled channel that
    lacks its token."""
    channels: dict[str, Channel] = {}
    problems = []
    section = settings.channels
    if section.gateway.enabled:
        channels["gateway"] = GatewayChannel(
            section.gateway, token=gateway_token, readiness=readiness, clock=clock
        )
    if section.telegram.enabled:
        if section.telegram.token is None:
            problems.append(
                ConfigProblem(
                    "channels.telegram.token",
                    "required when telegram is enabled (or set FLYNN_CHANNELS__TELEGRAM__TOKEN)",
                )
            )
        else:
            # Imported here: the SDK costs ~150 ms of start-up for everyone not using it.
            from flynn.channels.telegram import TelegramChannel

            channels["telegram"] = TelegramChannel(
                section.telegram, allowed=allowed_accounts(settings, "telegram"), clock=clock
            )
    if section.discord.enabled:
        if section.discord.token is None:
            problems.append(
                ConfigProblem(
                    "channels.discord.token",
                    "required when discord is enabled (or set FLYNN_CHANNELS__DISCORD__TOKEN)",
                )
            )
        else:
            from flynn.channels.discord import DiscordChannel  # ~220 ms of imports, as above

            channels["discord"] = DiscordChannel(
                section.discord, allowed=allowed_accounts(settings, "discord"), clock=clock
            )
    if problems:
        raise ConfigError(problems)
    for name in ("telegram", "discord"):
        if name in channels and not allowed_accounts(settings, name):
            log.warning("channel.nobody_allowed", channel=name)
    return channels


def _services(
    settings: Settings,
    memory: SqliteMemory,
    providers: Mapping[Task, Provider],
    clock: Callable[[], datetime],
) -> SessionServices:
    llm = settings.llm
    zone = settings.persona.timezone
    reconciler = RuleReconciler(
        memory.facts,
        timezone=parse_timezone(zone) if zone else datetime.now().astimezone().tzinfo,
        relations=FactRelations(memory.graph),
    )
    graph = GraphIngestor(memory.graph, RuleGraphExtractor())
    learner = (
        FactLearner(
            LlmExtractor(providers["extraction"], threshold=settings.memory.extraction_threshold),
            LlmReconciler(providers["extraction"], reconciler, clock=clock),
            graph=GraphLearning(LlmGraphExtractor(providers["extraction"]), graph),
        )
        if settings.memory.auto_extract
        else None
    )
    compactor = Compactor(
        history=memory.history,
        documents=memory.documents,
        provider=providers["compaction"],
        learner=learner,
        config=CompactionConfig(
            keep_recent_tokens=settings.compaction.keep_recent_tokens,
            input_budget_tokens=llm.context_window - settings.compaction.reserve_tokens,
            working_memory_ttl_days=settings.memory.working_memory_ttl_days,
            working_memory_max_tokens=settings.memory.working_memory_max_tokens,
            auto_extract=settings.memory.auto_extract,
            summary_max_tokens=min(llm.max_output_tokens, 2048),
        ),
        clock=clock,
    )
    vectors = (
        SqliteVectors(memory.db, load_embedder(settings.memory.embeddings_model))
        if settings.memory.embeddings
        else None
    )
    if vectors is not None:
        one_blas_thread()
    if vectors is not None and (unembedded := vectors.unembedded()):
        # Turned on (or the model changed) after messages were stored: those are found by words
        # only until embedded. The daemon does it in the background (one thread), which takes a
        # while for a long history; `flynn memory embed` does it faster, offline.
        log.warning(
            "memory.embeddings_incomplete",
            model=vectors.model,
            unembedded=unembedded,
            fix="flynn memory embed",
        )
    return SessionServices(
        documents=memory.documents,
        facts=memory.facts,
        history=memory.history,
        chat=providers["chat"],
        compactor=compactor,
        recall=Recall(
            memory.facts,
            memory.history,
            threshold=settings.memory.retrieval_threshold,
            ranker=settings.memory.recall_ranker,
            depth=settings.memory.recall_depth,
            graph=memory.graph,
            vectors=vectors,
        ),
        persona=Persona(
            persona_directory(settings.data_dir, settings.persona.name),
            settings.persona.tier,
            # Seven stats per turn otherwise; an edit to the files still applies within a second.
            recheck_seconds=PERSONA_RECHECK_SECONDS,
        ),
        config=TurnConfig(
            context_window=llm.context_window,
            reserve_tokens=settings.compaction.reserve_tokens,
            max_output_tokens=llm.max_output_tokens,
            stream=llm.stream,
            recall_max_tokens=settings.memory.recall_max_tokens,
            proactive_greeting=settings.memory.proactive_session_greeting,
            inject_datetime=settings.persona.inject_datetime,
            timezone=settings.persona.timezone,
        ),
        clock=clock,
        writer=MemoryWriter(
            memory.history,
            RuleExtractor(),
            reconciler,
            graph=graph,
            vectors=vectors,
        ),
        forgetter=memory,
        learner=learner,
        learn_every_turns=settings.memory.extract_every_turns,
    )
