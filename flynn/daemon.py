"""The daemon's lifecycle, top to bottom: start, serve until asked to stop, shut down in order.

It runs and stops what ``flynn.app`` built (``App.open``, then ``build_service``) and builds
nothing itself. Start: the channels that listen on a port of their own first (the gateway, so
``/healthz`` answers while the rest connect), then the others, then the replay of what the last run
left, then the scheduler (jobs missed while the daemon was down fire now, marked late), then
READY=1 to systemd. Stop (SIGTERM/SIGINT only set an event): STOPPING=1, refuse new messages,
let in-flight turns finish within ``drain_seconds`` (their replies still go out), cancel and log
stragglers, tell the other workers on the database this one is gone (what it leaves, and its
leadership, are taken over at once), stop the scheduler (runs under way are given back for the
next start) and the channels, then close the app: compactions in flight are awaited, provider
clients closed, the database last. A push that was not delivered stays queued in the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

import structlog

from flynn.app import App, Service, ServiceOptions, build_service, utc_now
from flynn.backoff import Backoff
from flynn.channels.base import Channel, OnMessage
from flynn.coordination import WorkerEvents
from flynn.embedding_model import EmbedderLoader
from flynn.errors import ConfigError, StoreError
from flynn.providers.base import Provider, Task
from flynn.providers.health import ModelHealth
from flynn.redaction_behind import redact_behind, redaction_pass
from flynn.settings import Settings
from flynn.systemd import SystemdNotifier

log = structlog.get_logger(__name__)

EXIT_OK = 0
EXIT_PORT_IN_USE = 3
INTAKE_KEEP_DAYS = 7
"""How long the replies to answered messages are kept for a resend of the same id."""


class PortInUse(Exception):
    """The port of a channel that listens on one (the gateway, Telegram's webhook) is taken by
    another process; ``channel`` names the channel."""

    def __init__(self, message: str, channel: str = "gateway") -> None:
        super().__init__(message)
        self.channel = channel


@dataclass(frozen=True, slots=True)
class DaemonOptions:
    drain_seconds: float = 20.0
    idle_seconds: float = 900.0
    inbox_size: int = 8
    restart_max_seconds: float = 300.0
    show_token: bool = False
    """Print the web chat URL with its generated token (on a terminal); otherwise only say where
    the token is, so it never lands in a log such as the journal."""


class Daemon:
    def __init__(
        self,
        settings: Settings,
        env: Mapping[str, str],
        *,
        notifier: SystemdNotifier | None = None,
        providers: Mapping[Task, Provider] | None = None,
        clock: Callable[[], datetime] = utc_now,
        options: DaemonOptions = DaemonOptions(),
        announce: Callable[[str], None] = print,
        embedder: EmbedderLoader | None = None,
    ) -> None:
        """``embedder`` loads the embedding model (``App.open``'s; tests pass one that waits
        on an event)."""
        self._settings = settings
        self._env = env
        self._notifier = notifier or SystemdNotifier(None)
        self._providers = providers
        self._embedder = embedder
        self._clock = clock
        self._options = options
        self._announce = announce
        self.ready = asyncio.Event()
        """Set once every part started (READY=1); part of the contract, like ``Router.idle``."""
        self.caught_up = asyncio.Event()
        """Set once the catch-up after start is over: the embedding model has loaded (or could
        not, or embeddings are off) and every message stored before has a vector (or the
        daemon is stopping)."""
        self.redacted = asyncio.Event()
        """Set once the stored rows are redacted with today's credential gate (or that pass
        ended early: it failed, or the daemon is stopping)."""
        self.app: App | None = None
        self.service: Service | None = None
        self.models = ModelHealth()
        """How each configured chat model fares (``/readyz``'s ``model``); empty when
        ``providers`` are given."""

    async def run(self, stop: asyncio.Event) -> int:
        """Serves until ``stop`` is set. Raises ``PortInUse`` when a listening channel cannot
        bind, and ``ConfigError`` / ``StoreError`` when it cannot start."""
        options = self._options
        app = App.open(
            self._settings,
            self._env,
            clock=self._clock,
            providers=self._providers,
            embedder=self._embedder,
            models=self.models,
        )
        self.app = app
        try:
            service = build_service(app, ServiceOptions(options.inbox_size, options.idle_seconds))
            if self.models.watching:  # not with the providers a test passed in
                service.switchboard.show_models(self.models.status)
            self.service = service
            try:
                await self._serve(app, service, stop)
            except* PortInUse as group:
                # The TaskGroup wraps it; callers (the CLI's exit code 3) want the error itself.
                raise group.exceptions[0] from None
        finally:
            gc.unfreeze()  # what start-up allocated may be collected again (a test process goes on)
            await app.aclose()
            log.info("daemon.stopped")
        return EXIT_OK

    async def _serve(self, app: App, service: Service, stop: asyncio.Event) -> None:
        router = service.router
        replayed = asyncio.Event()

        async def sweep() -> int:
            # What dead workers left, once this one's own start-up replay is done.
            return await router.replay() if replayed.is_set() else 0

        async with asyncio.TaskGroup() as group:
            # First: this worker is known alive before any channel accepts a message here.
            workers = group.create_task(
                app.coordination.run(
                    WorkerEvents(
                        sweep,
                        service.switchboard.push_waiting,
                        service.scheduler.wake,
                        app.sessions.forgotten,
                    )
                ),
                name="workers",
            )
            # MCP servers first, so their tools are listed by the first turn; each supervised on
            # its own: one that never starts costs only itself.
            mcp = group.create_task(self._run_mcp(app), name="mcp-servers")
            # The embedding model loads in a worker thread while the channels start and serve;
            # until it has, recall is by words. Then the messages without a vector (stored
            # before embeddings were on, under another model, or during the load) are
            # embedded in the background, the most recently active person first.
            behind = group.create_task(self._embed_behind(app), name="embeddings")
            # Rows stored under older rules of the credential gate are redacted again, once,
            # in batches beside the turns (``flynn.memory.redaction``), before the embedding
            # catch-up reads them.
            redacting = group.create_task(self._redact_behind(app), name="redaction")
            tasks = []
            for name, channel in service.channels.items():
                listening = channel.listening
                task = group.create_task(
                    self._supervise(
                        channel, router.on_message, first_start_fatal=listening is not None
                    ),
                    name=f"channel:{name}",
                )
                tasks.append(task)
                if listening is not None:
                    await self._wait_started(listening, task)
            welcome = service.welcome(self._options.show_token)
            if welcome is not None:
                self._announce(welcome)
            # What the last run accepted but did not answer (a crash, a drain deadline) is
            # answered now; replies it stored but did not send are sent.
            await router.replay()
            replayed.set()
            scheduler = group.create_task(service.scheduler.run(), name="scheduler")
            watchdog = group.create_task(self._notifier.run_watchdog(), name="watchdog")
            checkpointer = (
                None  # PostgreSQL keeps its own log
                if service.checkpointer is None
                else group.create_task(service.checkpointer.run(), name="wal-checkpointer")
            )
            freeze_startup_heap()
            self._notifier.notify("READY=1")
            service.switchboard.ready.set()
            self.ready.set()
            log.info(
                "daemon.ready",
                channels=sorted(service.channels),
                provider=router_provider_name(app),
                embeddings=app.embeddings_status().state,
            )
            await stop.wait()

            log.info("daemon.stopping")
            self._notifier.notify("STOPPING=1")
            router.close_intake()
            cancelled = await router.drain(self._options.drain_seconds)
            await app.coordination.release()
            self._prune_intake(app)
            log.info("daemon.drained", cancelled_sessions=cancelled)
            for task in (scheduler, *tasks, watchdog, behind, redacting, mcp, workers):
                task.cancel()
            if checkpointer is not None:
                checkpointer.cancel()
        log.info("daemon.channels_stopped")

    def _prune_intake(self, app: App) -> None:
        """Forgets the ids and replies of messages answered long ago (a resend that late is
        a new message)."""
        before = self._clock() - timedelta(days=INTAKE_KEEP_DAYS)
        with contextlib.suppress(StoreError):
            app.memory.inbound.prune(before=before)

    @staticmethod
    async def _run_mcp(app: App) -> None:
        """Supervises the MCP servers (``tools.mcp_servers``) until cancelled."""
        if app.mcp is not None:
            await app.mcp.run()

    async def _embed_behind(self, app: App) -> None:
        """``App.catch_up_embeddings`` once the stored rows are redacted with today's rules
        (``redacted``: at once, but after an upgrade), so no credential an older version kept
        is embedded, and the vectors the redaction deleted are made again in this catch-up;
        then ``caught_up`` (also when it ends early)."""
        try:
            await self.redacted.wait()
            await app.catch_up_embeddings()
        finally:
            self.caught_up.set()

    async def _redact_behind(self, app: App) -> None:
        """``redact_behind``, then ``redacted`` (also when it ends early)."""
        try:
            redaction = redaction_pass(app.storage, app.settings, app.services.clock)
            await redact_behind(redaction, app.coordination)
        finally:
            self.redacted.set()

    @staticmethod
    async def _wait_started(started: asyncio.Event, task: asyncio.Task[None]) -> None:
        waiter = asyncio.ensure_future(started.wait())
        try:
            await asyncio.wait({waiter, task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if task.done() and not started.is_set():
            task.result()  # re-raises the startup failure (e.g. PortInUse)

    async def _supervise(
        self, channel: Channel, on_message: OnMessage, *, first_start_fatal: bool
    ) -> None:
        """Runs a channel, restarting it with backoff when it crashes; the rest keep serving."""
        backoff = Backoff(first=1.0, most=self._options.restart_max_seconds, jitter=(0.5, 1.5))
        failures = 0
        first = True
        while True:
            began = asyncio.get_running_loop().time()
            try:
                await channel.run(on_message)
                log.warning("channel.returned", channel=channel.name)
            except ConfigError as exc:
                # A refused token or missing setting: restarting cannot help. The channel stays
                # down (and says so in /readyz); the rest keep serving.
                log.error(  # noqa: TRY400 - the problems say it all; a traceback adds noise
                    "channel.misconfigured", channel=channel.name, problems=str(exc)
                )
                return
            except OSError as exc:
                if first and first_start_fatal and exc.errno == errno.EADDRINUSE:
                    raise PortInUse(str(exc), channel.name) from exc
                log.exception("channel.crashed", channel=channel.name, error=type(exc).__name__)
            except Exception as exc:
                log.error(
                    "channel.crashed", channel=channel.name, error=type(exc).__name__, exc_info=True
                )
            first = False
            # A channel that served a minute before crashing starts again from the first wait.
            stable = asyncio.get_running_loop().time() - began > 60
            failures = 1 if stable else failures + 1
            await asyncio.sleep(backoff.delay(failures))


def freeze_startup_heap() -> None:
    """Collects once, then leaves everything alive (imported modules, SDK and settings classes,
    compiled patterns, the open app) out of the garbage collector's sight: a full collection
    would otherwise walk all of it, every few hundred turns, for 15-20 ms inside whichever turn
    triggered it. ``gc.unfreeze`` undoes it."""
    gc.collect()
    gc.freeze()


def router_provider_name(app: App | None) -> str:
    return app.providers["chat"].name if app is not None else ""


def install_signal_handlers(stop: asyncio.Event) -> None:
    """SIGTERM and SIGINT only set ``stop``; shutdown itself runs in the main task."""
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, stop.set)
