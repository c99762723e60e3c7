"""The daemon's lifecycle, top to bottom: start, serve until asked to stop, shut down in order.

Start: open memory and providers, build the channels and the router, start the gateway first (so
``/healthz`` answers while the rest connect), then the other channels, then the scheduler (jobs
missed while the daemon was down fire now, marked late), then tell systemd READY=1.
Stop (SIGTERM/SIGINT only set an event): STOPPING=1, refuse new messages, let in-flight turns finish
within ``drain_seconds`` (their replies still go out), cancel and log stragglers, stop the
scheduler and the channels, then close the app: compactions in flight are awaited, provider clients
closed, the database last. A push that was not delivered stays queued in the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import os
import secrets
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path

import structlog

from flynn.app import App, build_channels, database_path, memory_view, person_tokens, utc_now
from flynn.backoff import Backoff
from flynn.channels.base import Channel, OnMessage
from flynn.channels.gateway import Acknowledged, GatewayChannel
from flynn.distill.distiller import TIERS
from flynn.distill.people import notice_target
from flynn.distill.people import people as distill_people
from flynn.distill.runs import DistillRuns, is_distillation, plan_jobs
from flynn.errors import ConfigError, ConfigProblem, StoreError
from flynn.memory.checkpointer import WalCheckpointer
from flynn.memory.health import StorageHealth
from flynn.memory.vectors import Embedder
from flynn.messages import Delivery, IntakeKey, OutboundMessage, SessionKey
from flynn.providers.base import Provider, Task
from flynn.router import Router
from flynn.schedule.jobs import Push
from flynn.schedule.scheduler import Scheduler
from flynn.settings import Settings, gateway_token_problem
from flynn.systemd import SystemdNotifier

log = structlog.get_logger(__name__)

EXIT_OK = 0
EXIT_PORT_IN_USE = 3
TOKEN_FILE = "gateway-token"
INTAKE_KEEP_DAYS = 7
"""How long the replies to answered messages are kept for a resend of the same id."""


class PortInUse(Exception):
    """The gateway's port is taken by another process."""


def kept_gateway_token(data_dir: Path) -> str | None:
    """The gateway token kept in the data dir; None when there is none yet. Raises
    ``ConfigError`` naming the file when the token in it is too short or holds whitespace
    (someone edited it)."""
    path = data_dir / TOKEN_FILE
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if not token:
        return None
    problem = gateway_token_problem(token)
    if problem is not None:
        fix = "delete the file to have a new one generated"
        raise ConfigError([ConfigProblem(str(path), f"the gateway token {problem}; {fix}")])
    return token


def ensure_gateway_token(data_dir: Path) -> tuple[str, bool]:
    """The gateway token kept in the data dir, generated (owner-only file) on first start;
    returns it and whether it was just created. Raises ``ConfigError`` as ``kept_gateway_token``."""
    path = data_dir / TOKEN_FILE
    token = kept_gateway_token(data_dir)
    if token is not None:
        return token, False
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token, True


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
        embedder: Embedder | None = None,
    ) -> None:
        self._settings = settings
        self._env = env
        self._notifier = notifier or SystemdNotifier(None)
        self._providers = providers
        self._embedder = embedder
        self._clock = clock
        self._options = options
        self._announce = announce
        self.ready = asyncio.Event()
        self.channels: dict[str, Channel] = {}
        self.router: Router | None = None
        self.scheduler: Scheduler | None = None
        self._distills: DistillRuns | None = None
        self.app: App | None = None
        self._storage: StorageHealth | None = None
        self._token_source = ""
        self._generated_token = ""

    async def run(self, stop: asyncio.Event) -> int:
        """Serves until ``stop`` is set. Raises ``PortInUse`` when the gateway cannot bind, and
        ``ConfigError`` / ``StoreError`` when it cannot start."""
        settings = self._settings
        app = App.open(
            settings,
            self._env,
            clock=self._clock,
            providers=self._providers,
            embedder=self._embedder,
        )
        self.app = app
        self._storage = StorageHealth(app.memory.db)
        try:
            token = self._gateway_token()
            self.channels = build_channels(
                settings,
                app.identity,
                gateway_token=token,
                readiness=self.readiness,
                pairing=app.pairing,
            )
            router = Router(
                app.sessions,
                self.channels,
                app.identity,
                app.memory.inbound,
                clock=self._clock,
                inbox_size=self._options.inbox_size,
                idle_seconds=self._options.idle_seconds,
            )
            self.router = router
            self.scheduler = Scheduler(
                app.schedule, app.pushes, deliver=self._deliver, clock=self._clock
            )
            app.schedule_signal.listen(self.scheduler.wake)
            self._distills = self._plan_distillations(app, self.scheduler)
            gateway = self.channels.get("gateway")
            if isinstance(gateway, GatewayChannel):
                gateway.set_on_client_ready(self._client_ready)
                gateway.set_on_acknowledged(self._acknowledged)
                gateway.set_transcript(app.memory.history)
                gateway.set_push_log(app.pushes)
                gateway.set_memory(memory_view(app))
                gateway.set_person_tokens(person_tokens(app))
            try:
                await self._serve(router, stop)
            except* PortInUse as group:
                # The TaskGroup wraps it; callers (the CLI's exit code 3) want the error itself.
                raise group.exceptions[0] from None
        finally:
            gc.unfreeze()  # what start-up allocated may be collected again (a test process goes on)
            if self._distills is not None:
                await self._distills.aclose()
            await app.aclose()
            log.info("daemon.stopped")
        return EXIT_OK

    async def _serve(self, router: Router, stop: asyncio.Event) -> None:
        async with asyncio.TaskGroup() as group:
            assert self.app is not None
            # MCP servers first, so their tools are listed by the first turn; each supervised on
            # its own: one that never starts costs only itself.
            mcp = group.create_task(self._run_mcp(), name="mcp-servers")
            tasks = []
            for name, channel in self.channels.items():
                started = getattr(channel, "started", None)
                task = group.create_task(
                    self._supervise(
                        channel, router.on_message, first_start_fatal=name == "gateway"
                    ),
                    name=f"channel:{name}",
                )
                tasks.append(task)
                if isinstance(started, asyncio.Event):
                    await self._wait_started(started, task)
            self._announce_web_chat()
            # What the last run accepted but did not answer (a crash, a drain deadline) is
            # answered now; replies it stored but did not send are sent.
            await router.replay()
            assert self.scheduler is not None
            scheduler = group.create_task(self.scheduler.run(), name="scheduler")
            watchdog = group.create_task(self._notifier.run_watchdog(), name="watchdog")
            checkpointer = group.create_task(
                WalCheckpointer(database_path(self._settings)).run(), name="wal-checkpointer"
            )
            # Messages stored before embeddings were on (or under another model), or left
            # behind by a burst, are embedded in the background, one thread at most.
            behind = group.create_task(self._embed_behind(), name="embeddings-catch-up")
            freeze_startup_heap()
            self._notifier.notify("READY=1")
            self.ready.set()
            log.info(
                "daemon.ready",
                channels=sorted(self.channels),
                provider=router_provider_name(self.app),
            )
            await stop.wait()

            log.info("daemon.stopping")
            self._notifier.notify("STOPPING=1")
            router.close_intake()
            cancelled = await router.drain(self._options.drain_seconds)
            self._prune_intake()
            log.info("daemon.drained", cancelled_sessions=cancelled)
            for task in (scheduler, *tasks, watchdog, checkpointer, behind, mcp):
                task.cancel()
        log.info("daemon.channels_stopped")

    def _prune_intake(self) -> None:
        """Forgets the ids and replies of messages answered long ago (a resend that late is
        a new message)."""
        if self.app is not None:
            before = self._clock() - timedelta(days=INTAKE_KEEP_DAYS)
            with contextlib.suppress(StoreError):
                self.app.memory.inbound.prune(before=before)

    def _plan_distillations(self, app: App, scheduler: Scheduler) -> DistillRuns:
        """Keeps each person's distillation jobs in step with ``distill:``."""
        files = app.services.person.files
        people = distill_people(
            app.settings, lambda ns: files.timezone(ns)[1] if files is not None else "UTC"
        )
        section = app.settings.distill
        # Off, every tier is unscheduled: the jobs made while it was on are cancelled.
        crons = {tier: getattr(section, tier) if section.enabled else None for tier in TIERS}
        try:
            if plan_jobs(app.schedule, people, crons, now=self._clock()):
                scheduler.wake()
        except StoreError:
            log.exception("distill.not_scheduled")  # the next start tries again
        return DistillRuns(
            app.distiller,
            app.pushes,
            notify=notice_target(app.settings, app.memory.history, self._clock),
            on_done=scheduler.wake,
            clock=self._clock,
            enabled=section.enabled,
        )

    async def _deliver(self, push: Push) -> Delivery:
        """Sends one push through its channel and says what became of it; ``deferred`` when
        the channel is not running here, so it stays queued. A distillation's push is its
        run, done here in the background."""
        if is_distillation(push) and self._distills is not None:
            done = await self._distills.deliver(push)
            return Delivery.delivered() if done else Delivery.deferred()
        target = push.target
        channel = self.channels.get(target.channel)
        if channel is None:
            log.warning("schedule.no_channel", channel=target.channel, push=push.id)
            return Delivery.deferred()
        message = OutboundMessage(
            SessionKey(target.channel, target.chat_id, target.thread),
            render_push(push, gateway=target.channel == "gateway", zone=self._zone_of(push)),
            push=push.kind,
            push_id=str(push.id),
            recipient=target.recipient,
        )
        return await channel.send(message)

    def _zone_of(self, push: Push) -> tzinfo:
        personal = self.app.services.person.files if self.app is not None else None
        return personal.timezone(push.namespace)[0] if personal is not None else UTC

    async def _client_ready(self, client_id: str) -> None:
        """A gateway client said hello: what it has not received (or not acknowledged) goes
        now, in order: the replies to its messages, then the pushes."""
        if self.router is not None:
            await self.router.redeliver("gateway", client_id)
        if self.scheduler is not None:
            await self.scheduler.deliver_pending("gateway", client_id)
            # A round under way held some of them (leased while it offered them to the old
            # connection): one more round right after it, not the next retry in 30 s.
            self.scheduler.wake()

    async def _acknowledged(self, ack: Acknowledged) -> None:
        """A gateway client acknowledged a reply or a push: now it is delivered."""
        if ack.reply_to is not None and self.router is not None:
            self.router.acknowledged(IntakeKey("gateway", ack.client_id, ack.reply_to))
        elif ack.push_id is not None and ack.push_id.isdigit() and self.app is not None:
            delivered = self.app.pushes.delivered(int(ack.push_id), now=self._clock())
            log.info("schedule.push_acknowledged", push_id=ack.push_id, first=delivered)

    async def _run_mcp(self) -> None:
        """Supervises the MCP servers (``tools.mcp_servers``) until cancelled."""
        if self.app is not None and self.app.mcp is not None:
            await self.app.mcp.run()

    async def _embed_behind(self) -> None:
        writer = self.app.services.learning.writer if self.app is not None else None
        if writer is not None and writer.embeds:
            done = await writer.embed_missing(None)
            if done:
                log.info("memory.embeddings_caught_up", messages=done)

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
                    raise PortInUse(str(exc)) from exc
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

    def readiness(self) -> dict[str, object]:
        statuses = {name: channel.status() for name, channel in self.channels.items()}
        ready = self.ready.is_set() and all(status.connected for status in statuses.values())
        # A database that cannot be written fails every message: not ready, and why.
        storage = self._storage.check() if self._storage is not None else None
        ready = ready and (storage is None or storage.ok)
        return {
            "ready": ready,
            "storage": storage.as_json() if storage is not None else None,
            "channels": {name: status.as_json() for name, status in statuses.items()},
            "sessions": self.router.active_sessions if self.router else 0,
        }

    def _gateway_token(self) -> str:
        gateway = self._settings.channels.gateway
        if not gateway.enabled:
            return ""
        if gateway.token is not None:
            self._token_source = "the configured channels.gateway.token"
            return gateway.token.get_secret_value()
        token, created = ensure_gateway_token(self._settings.data_dir)
        where = self._settings.data_dir / TOKEN_FILE
        self._token_source = f"the token {'generated into' if created else 'kept in'} {where}"
        self._generated_token = token
        return token

    def _announce_web_chat(self) -> None:
        gateway = self._settings.channels.gateway
        channel = self.channels.get("gateway")
        if channel is None:
            return
        host = "127.0.0.1" if gateway.host in ("0.0.0.0", "::") else gateway.host
        port = getattr(channel, "bound_port", None) or gateway.port
        url = f"http://{host}:{port}/"
        if self._options.show_token and self._generated_token:
            self._announce(f"Web chat: {url}#token={self._generated_token}")
        else:
            # Not on a terminal (a journal, a container log): never print the token itself.
            self._announce(f"Web chat: {url}#token=... (use {self._token_source})")


def render_push(push: Push, *, gateway: bool, zone: tzinfo = UTC) -> str:
    """A push as the person reads it. The web page labels a push by its kind itself; in chat
    apps the text says what it is. A late reminder says when it was due; one that fired
    several times while it waited says how often, and when first and last."""
    text = push.text
    if push.kind == "reminder" and not gateway:
        text = f"⏰ Reminder: {text}"
    if push.occurrences > 1 and push.first_due_at is not None and push.due_at is not None:
        first = push.first_due_at.astimezone(zone)
        last = push.due_at.astimezone(zone)
        text += (
            f"\n(missed {push.occurrences} times while you were away: first due "
            f"{first:%Y-%m-%d %H:%M}, last {last:%Y-%m-%d %H:%M})"
        )
    elif push.late and push.due_at is not None:
        due = push.due_at.astimezone(zone)
        text += f"\n(late: it was due {due:%Y-%m-%d %H:%M}, while I was offline)"
    return text


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
