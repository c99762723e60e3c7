"""Composition root: the only place that builds concrete classes from ``Settings``: the ``App``
(memory, models, sessions, the schedule) and, for the daemon, its ``Service`` (channels, router,
scheduler and the rest it runs)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import structlog

from flynn import embedding_model
from flynn.access import ChannelAccess, Pairing
from flynn.attachments import FileLimits, FileStore, sees_images
from flynn.channels.base import Channel
from flynn.channels.gateway import GatewayChannel
from flynn.channels.gateway.auth import ChannelToken, PersonTokens
from flynn.channels.gateway.channel import OnAcknowledged, OnClientReady
from flynn.channels.gateway.history import PushLog, Transcript
from flynn.channels.gateway.memory import MemoryBrowser
from flynn.coordination import Coordination, Leadership
from flynn.datadir import prepare_data_dir
from flynn.dates import host_timezone, parse_timezone
from flynn.distill.distiller import TASKS as DISTILL_TASKS
from flynn.distill.distiller import TIERS, Distiller, Tier
from flynn.distill.people import notice_target
from flynn.distill.people import people as distill_people
from flynn.distill.runs import DistillRuns, plan_jobs
from flynn.embedding_model import EmbedderLoader
from flynn.errors import ConfigError, ConfigProblem, StoreError
from flynn.gateway_token import GatewayToken, gateway_token
from flynn.identity import Identity
from flynn.learning.fact_meaning import FactMeaning
from flynn.learning.fact_relations import FactRelations
from flynn.learning.graph_extraction import LlmGraphExtractor, RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.learning.llm_extraction import LlmExtractor
from flynn.learning.llm_reconcile import LlmReconciler
from flynn.learning.model_learning import FactLearner, GraphLearning
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.checkpointer import WalCheckpointer
from flynn.memory.embeddings_health import EmbeddingsStatus
from flynn.memory.telegram_updates import SqlTelegramUpdates
from flynn.memory_view import Embeddings, MemoryView
from flynn.people.files import move_shared_person_files
from flynn.people_place import owner_directory
from flynn.persona import Persona, persona_directory
from flynn.providers.base import Provider, Task
from flynn.providers.build import build_task_providers
from flynn.providers.completion import TaskCompletion
from flynn.providers.health import ModelHealth
from flynn.providers.lifecycle import close_providers
from flynn.providers.offline import OFFLINE
from flynn.providers.prices import PriceTable
from flynn.recall.embeddings import LoadingEmbedder, load_embedder
from flynn.recall.recall import Recall
from flynn.recall.synthesis import EpisodicSynthesis
from flynn.recall.team import TeamRecall
from flynn.router import Router
from flynn.schedule.jobs import Push, Target
from flynn.schedule.routes import chat_target, notify_target
from flynn.schedule.scheduler import Scheduler
from flynn.sessions.compaction import CompactionConfig, Compactor
from flynn.sessions.personal import PersonalFiles
from flynn.sessions.registry import SessionRegistry
from flynn.sessions.services import (
    PersonContext,
    SessionLearning,
    SessionMemory,
    SessionModel,
    SessionServices,
    TurnConfig,
)
from flynn.settings import Settings
from flynn.storage_place import (
    DATABASE_FILE,
    ReadStores,
    Storage,
    database_path,
    open_storage,
    push_limits,
    storage_files,
)
from flynn.switchboard import GATEWAY_CHANNEL, PushDelivery, Switchboard
from flynn.tools.base import ToolContext
from flynn.tools.builtin import builtin_tools
from flynn.tools.reminders import ReminderLimits, Route

if TYPE_CHECKING:
    from flynn.tools.mcp import McpServers

log = structlog.get_logger(__name__)

__all__ = ["DATABASE_FILE", "App", "build_service", "database_path", "push_limits"]

PERSONA_RECHECK_SECONDS = 1.0


def _mcp_servers(settings: Settings) -> McpServers | None:
    """The configured MCP servers, or ``None``. Their module is imported only when some are:
    it brings the MCP types and an HTTP client (5 MiB resident) a daemon without them never
    uses."""
    if not (settings.tools.enabled and settings.tools.mcp_servers):
        return None
    from flynn.tools.mcp import mcp_servers

    return mcp_servers(settings.tools.mcp_servers, owner=settings.memory.user_namespace)


def utc_now() -> datetime:
    return datetime.now(UTC)


class ScheduleSignal:
    """Tells whoever runs the schedule (the daemon's ``Scheduler``) that a job was added or
    cancelled, so it looks again at when to wake; nobody listening (``flynn chat``) is fine."""

    def __init__(self) -> None:
        self._listener: Callable[[], None] | None = None

    def listen(self, listener: Callable[[], None] | None) -> None:
        self._listener = listener

    def changed(self) -> None:
        if self._listener is not None:
            self._listener()


CATCH_UP_LEASE = "embedding-catch-up"
"""The lease a worker holds while it embeds what has no vector (``App.catch_up_embeddings``)."""


class App:
    """The composed process: memory, providers, identity, the schedule, and the live sessions
    (``sessions``, one orchestrator per session key).

    Acquire with ``App.open`` and release with ``aclose``; ``aclose`` waits for the sessions' work
    in flight (compactions, learning), closes provider clients, then closes the database last.
    The embedding model (``embeddings``) is not loaded by ``open``: ``load_embeddings`` does it
    (the daemon calls it in a worker thread once it serves); until then recall is by words.
    """

    def __init__(
        self,
        settings: Settings,
        storage: Storage,
        providers: Mapping[Task, Provider],
        services: SessionServices,
        *,
        schedule_signal: ScheduleSignal,
        mcp: McpServers | None = None,
        embeddings: LoadingEmbedder | None = None,
    ) -> None:
        self.settings = settings
        self.embeddings = embeddings
        """The embedding model recall and the writer use (``None`` with embeddings off, or
        when its package is missing); see ``load_embeddings``."""
        self.mcp = mcp
        """The MCP servers (``tools.mcp_servers``); the daemon runs them."""
        self.storage = storage
        """The backend (``flynn.storage_place``): SQLite in ``data_dir``, or ``storage.url``."""
        self.memory = storage.memory
        self.providers = providers
        self.services = services
        self.schedule = storage.schedule
        self.pushes = storage.pushes
        self.runs = storage.runs
        """The queued runs of work Flynn does itself (distillations); the daemon runs them."""
        self.schedule_signal = schedule_signal
        self.coordination: Coordination = storage.coordination(services.clock)
        """Sharing the work with other workers on one PostgreSQL; nobody else on SQLite."""
        self.pairing = storage.pairing
        self.person_tokens = storage.person_tokens
        self.identity = Identity(
            user_namespace=settings.memory.user_namespace,
            users=settings.users,
            approvals=self.pairing,
        )
        self.sessions = SessionRegistry(
            self.identity, services, tell_workers=self.coordination.forgotten
        )
        self.distiller = _distiller(settings, storage, providers, services)

    @classmethod
    def open(
        cls,
        settings: Settings,
        env: Mapping[str, str],
        *,
        clock: Callable[[], datetime] = utc_now,
        providers: Mapping[Task, Provider] | None = None,
        embedder: EmbedderLoader | None = None,
        models: ModelHealth | None = None,
    ) -> App:
        """Opens the database and builds every part. ``providers`` replaces the configured ones
        (tests pass a scripted provider), else ``models`` (the daemon's) watches how they fare;
        ``embedder`` loads the embedding model (``load_embedder`` unless given: tests pass one
        that waits). Raises ``ConfigError`` / ``StoreError`` (``StorageUnusable`` when the
        database is empty, corrupt or cannot be written, or its server cannot be reached)."""
        prepare_data_dir(settings.data_dir)
        storage = open_storage(settings)
        try:
            if not storage.shared:
                move_shared_person_files(
                    persona_directory(settings.data_dir, settings.persona.name),
                    owner_directory(settings),
                )
            # A corrupt or unwritable file would otherwise fail every turn of a running daemon.
            storage.memory.db.verify()
            if providers is None:
                # Each call's cost is stored with it, at the prices of its day.
                prices = PriceTable.configured(settings.llm.prices)
                costs = storage.costs(clock=clock, prices=prices)
                providers = build_task_providers(settings.llm, env, costs, models)
            schedule = storage.schedule
            if numbered := schedule.number_unnumbered():
                log.warning("schedule.reminders_numbered", count=numbered)
            signal = ScheduleSignal()
            mcp = _mcp_servers(settings)
            embeddings = embedding_model.embeddings_for(settings, embedder or load_embedder)
            services = _services(settings, storage, providers, clock, signal, mcp, embeddings)
        except BaseException:
            storage.close()
            raise
        return cls(
            settings,
            storage,
            providers,
            services,
            schedule_signal=signal,
            mcp=mcp,
            embeddings=embeddings,
        )

    def load_embeddings(self) -> bool:
        """``embedding_model.load``: blocking, for a worker thread or a command."""
        return embedding_model.load(self.embeddings)

    async def catch_up_embeddings(self) -> None:
        """``embedding_model.catch_up``: the model loaded, then what has no vector embedded,
        by one worker of a team at a time (the lease ``CATCH_UP_LEASE``): each worker used to
        embed every message of every person, one row of it kept. Each loads its model first,
        for its own turns; the one that waited finds little or nothing left when its turn
        comes (what has a vector is read from the database), and takes over the catch-up of a
        worker that dies in it."""
        embeddings = self.embeddings
        if embeddings is None or not await asyncio.to_thread(self.load_embeddings):
            return
        writer = self.services.learning.writer

        async def catch_up() -> None:
            await embedding_model.catch_up(embeddings, self.storage.embedding_progress, writer)

        await self.coordination.lead(CATCH_UP_LEASE, catch_up)

    def embeddings_status(self) -> EmbeddingsStatus:
        """The embedding model's entry in ``/readyz`` (``embedding_model.status``)."""
        return embedding_model.status(self.settings, self.embeddings)

    async def aclose(self) -> None:
        await self.sessions.aclose()
        await self.services.learning.writer.aclose()
        if self.services.recall_worker is not None:
            # Waits for a recall still running in its thread (it only reads).
            await asyncio.to_thread(self.services.recall_worker.close)
        await close_providers(self.providers.values())
        self.storage.close()


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    inbox_size: int = 8
    idle_seconds: float = 900.0


@dataclass(frozen=True, slots=True)
class Service:
    """What the daemon runs and stops, built from an open ``App`` by ``build_service``."""

    channels: Mapping[str, Channel]
    """Enabled channels, those that listen on a port of their own first."""
    router: Router
    scheduler: Scheduler
    checkpointer: WalCheckpointer | None
    """SQLite's write-ahead log moved into the file off the loop; none on PostgreSQL."""
    switchboard: Switchboard
    welcome: Callable[[bool], str | None]
    """The line to print once the channels listen (the web chat's address), if any; given
    True (a terminal), with a token generated now (or kept in the data dir) in it."""


@dataclass(frozen=True, slots=True)
class GatewayHooks:
    """What the gateway channel reaches the rest through: the switchboard's hooks, the memory
    page, people's own tokens, the history and the delivered pushes ``history`` frames read."""

    on_client_ready: OnClientReady
    on_acknowledged: OnAcknowledged
    memory: MemoryBrowser
    person_tokens: PersonTokens
    history: Transcript
    pushes: PushLog


def build_service(app: App, options: ServiceOptions = ServiceOptions()) -> Service:
    """The daemon's parts, wired through their constructors. Raises ``ConfigError`` (a channel
    without its token, a gateway token someone broke)."""
    settings, clock = app.settings, app.services.clock
    storage = app.storage.health()
    switchboard = Switchboard(app.pushes, storage, clock=clock, embeddings=app.embeddings_status)
    token = gateway_token(settings, app.storage.gateway_token, now=clock)
    if token is not None and token.created:
        log.info("gateway.token_generated", kept="database" if token.kept else "data_dir")
    channels = build_channels(
        settings,
        app.identity,
        gateway_token=token.channel_token() if token is not None else "",
        readiness=switchboard.readiness,
        clock=clock,
        pairing=app.pairing,
        gateway=GatewayHooks(
            on_client_ready=switchboard.client_ready,
            on_acknowledged=switchboard.acknowledged,
            memory=memory_view(app),
            person_tokens=person_tokens(app),
            history=app.memory.history,
            pushes=app.pushes,
        ),
        telegram_updates=app.memory.telegram_updates,
        leadership=app.coordination,
    )
    router = Router(
        app.sessions,
        channels,
        app.identity,
        app.memory.inbound,
        clock=clock,
        inbox_size=options.inbox_size,
        idle_seconds=options.idle_seconds,
        coordination=app.coordination,
    )
    section = settings.distill
    distills = DistillRuns(
        app.distiller,
        app.pushes,
        notify=notice_target(settings, app.memory.history, clock),
        clock=clock,
        enabled=section.enabled,
    )
    scheduler = Scheduler(
        app.schedule,
        app.pushes,
        deliver=PushDelivery(channels, timezone=push_timezone(app)).deliver,
        clock=clock,
        runs=app.runs,
        handlers={"distill": distills.run},
        workers=app.coordination,
    )
    app.schedule_signal.listen(scheduler.changed)
    switchboard.connect(channels, router, scheduler)
    plan_distillations(app)
    return Service(
        channels=channels,
        router=router,
        scheduler=scheduler,
        checkpointer=app.storage.checkpointer(),
        switchboard=switchboard,
        welcome=lambda show_token: web_chat_line(settings, channels, token, show_token=show_token),
    )


def person_timezone(app: App) -> Callable[[str], str]:
    """A person's timezone name by namespace (their stored one, else the configured, else the
    host's; UTC with memory kept per session)."""
    files = app.services.person.files
    return lambda namespace: files.timezone(namespace)[1] if files is not None else "UTC"


def push_timezone(app: App) -> Callable[[Push], str]:
    """The zone a push's times are shown in: its reminder's (the zone it was set in), else its
    person's."""
    person = person_timezone(app)

    def timezone(push: Push) -> str:
        job = app.schedule.timezone_of(push.job_id) if push.job_id is not None else None
        return job or person(push.namespace)

    return timezone


def plan_distillations(app: App) -> None:
    """Keeps each person's distillation jobs in step with ``distill:``; a storage failure is
    logged (the next start tries again)."""
    people = distill_people(app.settings, person_timezone(app))
    section = app.settings.distill
    # Off, every tier is unscheduled: the jobs made while it was on are cancelled.
    crons = {tier: getattr(section, tier) if section.enabled else None for tier in TIERS}
    try:
        if plan_jobs(app.schedule, people, crons, now=app.services.clock()):
            app.schedule_signal.changed()
    except StoreError:
        log.exception("distill.not_scheduled")


def web_chat_line(
    settings: Settings,
    channels: Mapping[str, Channel],
    token: GatewayToken | None,
    *,
    show_token: bool,
) -> str | None:
    """Where the web chat is. With a token generated (this start, or before into the data dir)
    and ``show_token`` (the line goes to a terminal), the address carries it; otherwise it only
    says where the token is, so it never lands in a log such as the journal."""
    channel = channels.get(GATEWAY_CHANNEL)
    if not isinstance(channel, GatewayChannel) or token is None:
        return None
    gateway = settings.channels.gateway
    host = "127.0.0.1" if gateway.host in ("0.0.0.0", "::") else gateway.host
    url = f"http://{host}:{channel.bound_port or gateway.port}/"
    if show_token and token.generated and token.token is not None:
        return f"Web chat: {url}#token={token.token}"
    return f"Web chat: {url}#token=... (use {token.source})"


def _distiller(
    settings: Settings,
    storage: Storage,
    providers: Mapping[Task, Provider],
    services: SessionServices,
) -> Distiller:
    """Rewrites people's MEMORY_*.md: mid and long each by its task's model (providers
    passed in without those tasks give ``distill``'s); offline, without a model."""
    models: dict[Tier, Provider] = {}
    for tier, task in DISTILL_TASKS.items():
        provider = providers.get(task) or providers.get("distill")
        if provider is not None and provider.name != OFFLINE:
            models[tier] = provider
    files = services.person.files
    memory = storage.memory
    return Distiller(
        files=storage_files(storage, settings, services.clock),
        facts=memory.facts,
        history=memory.history,
        documents=memory.documents,
        models=models,
        budgets={tier: settings.distill.budget(tier) for tier in TIERS},
        zone=lambda namespace: files.timezone(namespace)[0] if files is not None else UTC,
        clock=services.clock,
        identity=services.person.persona.identity,
        timeout_seconds=settings.distill.timeout_seconds,
    )


def file_limits(settings: Settings) -> FileLimits:
    files = settings.files
    return FileLimits(
        max_file_bytes=files.max_file_bytes,
        max_files=files.max_files,
        max_total_bytes=files.max_total_bytes,
        text_max_chars=files.text_max_chars,
    )


def memory_view(app: App) -> MemoryView:
    """What the memory page reads and forgets through (the gateway's ``memory`` frames): each
    client sees whom ``app.identity`` says it is. A forget there re-embeds the messages that
    lost their vector and makes the person's live sessions drop what they had loaded."""
    vectors = app.services.recall.vectors
    writer = app.services.learning.writer

    async def forgotten(root: str, counts: Mapping[str, int]) -> None:
        if writer.embeds and counts.get("embeddings"):
            writer.embed_missing_later(root)
        await app.sessions.forgotten(root)
        app.coordination.forgotten(root)  # and the other workers' sessions of this person

    return MemoryView(
        app.storage.page_stores(),
        app.storage.browser(),
        app.identity,
        files=storage_files(app.storage, app.settings, app.services.clock),
        clock=app.services.clock,
        schedule=app.schedule,
        embeddings=(
            None
            if vectors is None
            else Embeddings(vectors.model, vectors.embed, ready=lambda: vectors.ready)
        ),
        on_forgotten=forgotten,
    )


def person_tokens(app: App) -> PersonTokens:
    """How the gateway checks a person's own token at hello: a live token of someone still in
    ``users:`` (a person taken out of the config loses their tokens' power at once)."""
    tokens, identity = app.person_tokens, app.identity

    def person_for(token: str) -> str | None:
        found = tokens.verify(token)
        if found is None or not identity.is_person(found.person):
            return None
        return found.person

    return person_for


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
    gateway_token: str | ChannelToken,
    readiness: Callable[[], Mapping[str, object]],
    clock: Callable[[], datetime] = utc_now,
    pairing: Pairing | None = None,
    gateway: GatewayHooks | None = None,
    telegram_updates: SqlTelegramUpdates | None = None,
    leadership: Leadership | None = None,
) -> dict[str, Channel]:
    """The enabled channels, gateway first (``gateway`` its hooks, none without); with
    ``pairing``, strangers writing to a bot in a private chat get a pairing code; Telegram's
    webhook mode needs ``telegram_updates``. Raises ``ConfigError`` for an enabled channel
    that lacks its token."""
    channels: dict[str, Channel] = {}
    problems = []
    section = settings.channels
    if section.gateway.enabled:
        channels[GATEWAY_CHANNEL] = GatewayChannel(
            section.gateway,
            token=gateway_token,
            readiness=readiness,
            clock=clock,
            max_attachment_bytes=settings.files.max_file_bytes,
            on_client_ready=gateway.on_client_ready if gateway else None,
            on_acknowledged=gateway.on_acknowledged if gateway else None,
            transcript=gateway.history if gateway else None,
            push_log=gateway.pushes if gateway else None,
            memory=gateway.memory if gateway else None,
            person_tokens=gateway.person_tokens if gateway else None,
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
            from flynn.channels.telegram import telegram_channel

            access = ChannelAccess(
                "telegram",
                allowed_accounts(settings, "telegram"),
                identity=identity,
                pairing=pairing,
                clock=clock,
            )
            channels["telegram"] = telegram_channel(
                settings, access, clock, telegram_updates, leadership
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
                section.discord,
                access=ChannelAccess(
                    "discord",
                    allowed_accounts(settings, "discord"),
                    identity=identity,
                    pairing=pairing,
                    clock=clock,
                ),
                clock=clock,
                max_file_bytes=settings.files.max_file_bytes,
            )
    if problems:
        raise ConfigError(problems)
    for name in ("telegram", "discord"):
        if name in channels and not allowed_accounts(settings, name):
            log.warning("channel.nobody_allowed", channel=name)
    return channels


def reminder_route(settings: Settings) -> Route:
    """Where a reminder goes: the person's ``notify`` channel when ``users:``
    names one, else the chat it was set in, if that chat can be written to later."""

    def route(context: ToolContext) -> Target | None:
        person = settings.users.get(context.user) if context.user else None
        return notify_target(context.user, person) or chat_target(context.session)

    return route


def _services(
    settings: Settings,
    storage: Storage,
    providers: Mapping[Task, Provider],
    clock: Callable[[], datetime],
    schedule_signal: ScheduleSignal,
    mcp: McpServers | None = None,
    embeddings: LoadingEmbedder | None = None,
) -> SessionServices:
    llm = settings.llm
    zone = settings.persona.timezone
    memory, schedule = storage.memory, storage.schedule
    vectors = storage.vectors(embeddings, data_dir=settings.data_dir) if embeddings else None
    reconciler = RuleReconciler(
        memory.facts,
        timezone=parse_timezone(zone) if zone else datetime.now().astimezone().tzinfo,
        relations=FactRelations(memory.graph),
    )
    graph = GraphIngestor(memory.graph, RuleGraphExtractor())
    learner = (
        FactLearner(
            LlmExtractor(providers["extraction"], threshold=settings.memory.extraction_threshold),
            LlmReconciler(
                providers["extraction"],
                reconciler,
                clock=clock,
                meaning=FactMeaning(memory.facts, vectors) if vectors is not None else None,
            ),
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
            timeout_seconds=settings.compaction.timeout_seconds,
        ),
        clock=clock,
    )
    if vectors is not None and (unembedded := vectors.unembedded()):
        # Turned on (or the model changed) after messages were stored: those are found by words
        # only until embedded. The daemon does it in the background (one thread), which takes a
        # while for a long history; `flynn memory embed` shows how far it is.
        log.warning(
            "memory.embeddings_incomplete",
            model=vectors.model,
            unembedded=unembedded,
            fix="flynn memory embed",
        )
    recall = Recall(
        memory.facts,
        memory.history,
        threshold=settings.memory.retrieval_threshold,
        depth=settings.memory.recall_depth,
        graph=memory.graph,
        vectors=vectors,
        team=TeamRecall(memory.team, vectors=vectors),
    )

    def reading_recall(stores: ReadStores) -> Recall:
        """The same recall over a worker thread's stores, with the loop's vectors in memory."""
        return Recall(
            stores.facts,
            stores.history,
            threshold=settings.memory.retrieval_threshold,
            depth=settings.memory.recall_depth,
            graph=stores.graph,
            vectors=stores.vectors,
            team=TeamRecall(stores.team, vectors=stores.vectors),
        )

    recall_worker = storage.recall_worker(
        reading_recall,
        embeddings if vectors is not None else None,
        vectors.index if vectors is not None else None,
    )
    file_store = FileStore(file_limits(settings), storage.file_shelf(settings.data_dir))
    tools = (
        builtin_tools(
            reconciler=reconciler,
            recall=recall,
            recall_worker=recall_worker,
            history=memory.history,
            schedule=schedule,
            route=reminder_route(settings),
            on_schedule_change=schedule_signal.changed,
            timeout_seconds=settings.tools.timeout_seconds,
            result_max_chars=settings.tools.result_max_chars,
            reminder_limits=ReminderLimits(
                per_person=settings.schedule.max_reminders_per_person,
                total=settings.schedule.max_reminders_total,
            ),
            files=file_store,
            sources=[mcp] if mcp is not None else [],
        )
        if settings.tools.enabled
        else None
    )
    return SessionServices(
        memory=SessionMemory(
            documents=memory.documents,
            facts=memory.facts,
            history=memory.history,
            forgetter=storage.redacting,
            costs=memory.costs,
        ),
        model=SessionModel(chat=providers["chat"], compactor=compactor),
        recall=recall,
        learning=SessionLearning(
            writer=MemoryWriter(
                memory.history,
                RuleExtractor(),
                reconciler,
                graph=graph,
                vectors=vectors,
                give_way=recall_worker.in_flight.give_way,  # behind recalls, a text at a time
            ),
            learner=learner,
            every_turns=settings.memory.extract_every_turns,
        ),
        person=PersonContext(
            persona=Persona(
                persona_directory(settings.data_dir, settings.persona.name),
                settings.persona.tier,
                # Seven stats a turn otherwise; an edit to the files still applies within a second.
                recheck_seconds=PERSONA_RECHECK_SECONDS,
            ),
            files=PersonalFiles(
                settings.data_dir,
                memory.facts,
                files=storage_files(storage, settings, clock),
                schedule=schedule,
                default_timezone=settings.persona.timezone or host_timezone(),
                default_source="config" if settings.persona.timezone else "host",
            ),
            tools=tools,
            file_store=file_store,
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
            max_tool_steps=settings.tools.max_steps,
            idle_restart_hours=settings.session.idle_restart_hours,
            turn_timeout_seconds=llm.turn_timeout_seconds,
            max_tier=settings.persona.max_tier,
            profile_max_tokens=settings.memory.profile_max_tokens,
            vision=sees_images(llm.vision, providers["chat"].name),
        ),
        clock=clock,
        synthesis=_synthesis(settings, providers),
        recall_worker=recall_worker,
    )


def _synthesis(settings: Settings, providers: Mapping[Task, Provider]) -> EpisodicSynthesis | None:
    """Episodic synthesis when ``memory.synthesis`` is ``model`` and there is a model to ask;
    offline, the recalled blocks go in as they are (said once, here)."""
    if settings.memory.synthesis == "off":
        return None
    provider = providers["synthesis"]
    if provider.name == OFFLINE:
        log.info("memory.synthesis_offline", injected="the recalled blocks as they are")
        return None
    return EpisodicSynthesis(
        TaskCompletion(provider, "synthesis"),
        timeout_seconds=settings.memory.synthesis_timeout_seconds,
    )
