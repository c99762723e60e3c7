"""The ``flynn`` command: the only module that reads the environment and config files.

Exit codes: 0 success, 1 failure (a check failed, a command could not finish), 2 invalid
configuration or usage, 3 the gateway's port is in use, 4 the database is unusable (an empty,
corrupt or unwritable file: restarting will not help until a person acts), 5 another ``flynn run``
holds the data dir. Each of 2 to 5 is said in one line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from time import perf_counter

from flynn import __version__
from flynn.app import App, database_path, utc_now
from flynn.bench import bench_turn
from flynn.bench_gateway import bench_gateway
from flynn.bench_recall import bench_recall, load_dataset
from flynn.bench_schedule import bench_schedule
from flynn.daemon import (
    EXIT_PORT_IN_USE,
    Daemon,
    DaemonOptions,
    PortInUse,
    install_signal_handlers,
)
from flynn.datadir import DataDirLock, not_a_directory, prepare_data_dir
from flynn.dates import parse_timezone
from flynn.doctor import run_checks
from flynn.errors import ConfigError, ConfigProblem, DataDirLocked, FlynnError, StorageUnusable
from flynn.identity import Identity, MemoryScope
from flynn.learning.fact_relations import FactRelations
from flynn.logs import configure_logging
from flynn.memory.database import Database
from flynn.memory.overview import fact_history, memory_snapshot
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors
from flynn.messages import ChannelAccount, SessionKey
from flynn.persona import persona_directory, write_persona_templates
from flynn.recall.embeddings import EMBEDDING_MODELS, load_embedder
from flynn.recall.recall import DEPTHS, RANKERS
from flynn.recall.session_search import render_results, results_json, search_sessions
from flynn.scaffold import write_config
from flynn.schedule.listing import job_json, job_line
from flynn.schedule.sqlite import SqliteSchedule
from flynn.sessions.orchestrator import Orchestrator
from flynn.settings import Settings, load_settings, parse_yaml
from flynn.systemd import SystemdNotifier
from flynn.tools.person_files import forget_person_files, person_directory

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_STORAGE = 4
EXIT_LOCKED = 5


class UsageError(FlynnError):
    """A command-line argument is wrong (exit 2, like invalid configuration, but said as what it
    is: nothing in the config file needs fixing). Raised and handled only in this module."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(f"invalid argument {option}: {message}")


def main(argv: Sequence[str] | None = None) -> int:
    # python-telegram-bot warns on every RetryAfter unless told to use its newer timedelta API,
    # which the Telegram channel handles.
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_CONFIG
    try:
        code = int(args.handler(args))
        sys.stdout.flush()  # so a reader that left surfaces here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _reader_left()
    except (ConfigError, UsageError) as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except StorageUnusable as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_STORAGE
    except DataDirLocked as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_LOCKED
    except FlynnError as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return 130


def _reader_left() -> int:
    """The reader of our output went away (``flynn memory show | head``): stop quietly, as a
    command killed by SIGPIPE would (Python ignores the signal, so the write failed instead).
    What is still buffered would fail again at exit, so stdout now goes to /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + signal.SIGPIPE


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="flynn", description="A personal assistant that remembers you."
    )
    parser.add_argument("--version", action="version", version=f"flynn {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
        return sub

    run = command("run", "the daemon: every enabled channel, until SIGTERM")
    run.set_defaults(handler=_cmd_run)

    chat = command("chat", "talk to flynn in this terminal (reads stdin lines when piped)")
    chat.set_defaults(handler=_cmd_chat)

    doctor = command("doctor", "check config, secrets, data dir, database and channels")
    doctor.add_argument(
        "--no-network", action="store_true", help="skip the channel credential checks"
    )
    doctor.set_defaults(handler=_cmd_doctor)

    init = commands.add_parser("init", help="write a commented config and persona templates")
    init.add_argument("dir", nargs="?", type=Path, default=Path("~/.flynn"))
    init.set_defaults(handler=_cmd_init)

    memory = commands.add_parser("memory", help="show, export or forget what flynn remembers")
    memory_commands = memory.add_subparsers(title="memory commands", metavar="ACTION")

    def memory_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = memory_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
        sub.add_argument("--user", help="a person from the users: map")
        sub.add_argument("--session", help="a session key (channel:chat_id) for session memory")
        return sub

    show = memory_command("show", "profile, patterns, working memory and active facts")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.add_argument(
        "--history",
        metavar="FIELD",
        help="every value FIELD ever had, oldest first, with when each was believed; when no "
        "field is called FIELD, the observations it names: by what they are about (sushi), a "
        "word of them, or their kind (preference, 'working on')",
    )
    show.set_defaults(handler=_cmd_memory_show)
    export = memory_command("export", "everything remembered, as markdown")
    export.set_defaults(handler=_cmd_memory_export)
    forget = memory_command("forget", "delete memory for real")
    what = forget.add_mutually_exclusive_group(required=True)
    what.add_argument("--all", action="store_true", help="everything stored for this person")
    what.add_argument("--field", help="a fact field, e.g. name (its whole history)")
    what.add_argument("--fact", type=int, help="a fact id (its whole supersession chain)")
    what.add_argument(
        "--since",
        metavar="DATE",
        help="everything written from DATE (YYYY-MM-DD or an ISO time, in persona.timezone or "
        "this machine's zone) until --until or now",
    )
    forget.add_argument(
        "--until", metavar="DATE", help="end of the --since range (a date includes that day)"
    )
    forget.set_defaults(handler=_cmd_memory_forget)
    embed = memory_commands.add_parser(
        "embed",
        help="embed stored messages that have no vector of the configured model",
        description="Embed the stored messages that have no vector of memory.embeddings_model "
        "(stored before embeddings were on, or under another model), so recall can find them by "
        "meaning. Once every message has one, the vectors of other models (left by an earlier "
        "memory.embeddings_model, and ignored by recall) are deleted. Safe to interrupt and run "
        "again.",
    )
    embed.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    embed.add_argument("--user", help="only this person's messages (from the users: map)")
    embed.add_argument(
        "--keep-other-models",
        action="store_true",
        help="keep the vectors of other models (to switch back without embedding again)",
    )
    embed.set_defaults(handler=_cmd_memory_embed)

    reminders = command("reminders", "a person's scheduled reminders and when each fires next")
    reminders.add_argument(
        "--user", help="a person from the users: map (default: the single user, else everyone)"
    )
    reminders.add_argument("--json", action="store_true", help="machine-readable output")
    reminders.set_defaults(handler=_cmd_reminders)

    sessions = commands.add_parser("sessions", help="past conversations")
    sessions_commands = sessions.add_subparsers(title="sessions commands", metavar="ACTION")
    search = sessions_commands.add_parser(
        "search",
        help="past turns matching words, grouped by date, newest first",
        description="past turns of one person matching words, grouped by date, newest first",
    )
    search.add_argument("query", nargs="+", help="words to look for")
    search.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    search.add_argument("--user", help="a person from the users: map")
    search.add_argument("--session", help="only this session key (channel:chat_id)")
    search.add_argument("--limit", type=int, default=20, help="most matches shown (default 20)")
    search.add_argument("--json", action="store_true", help="machine-readable output")
    search.set_defaults(handler=_cmd_sessions_search)

    _add_bench_commands(
        commands.add_parser("bench", help="benchmarks; each prints one JSON object")
    )
    return parser


def _add_bench_commands(bench: argparse.ArgumentParser) -> None:
    """``flynn bench ...``: each runs on a temporary store with a scripted model. Flags left out
    take the configured memory settings, so ``--config`` benchmarks a configuration."""
    bench_commands = bench.add_subparsers(title="benchmarks", metavar="BENCH")

    def bench_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = bench_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "--config",
            type=Path,
            help="YAML config file (default: $FLYNN_CONFIG) whose memory settings to measure",
        )
        return sub

    turn = bench_command("turn", "per-turn overhead with an instant provider")
    turn.add_argument("--messages", type=int, default=100_000)
    turn.add_argument("--facts", type=int, default=10_000)
    turn.add_argument("--turns", type=int, default=1000)
    turn.add_argument("--seed", type=int, default=7)
    turn.add_argument(
        "--recall-depth", choices=DEPTHS, help="memory.recall_depth to use (default: configured)"
    )
    turn.add_argument(
        "--tools",
        action=argparse.BooleanOptionalAction,
        help="offer Flynn's tools on every turn (default: tools.enabled)",
    )
    turn.add_argument(
        "--reminders", type=int, default=0, help="reminders scheduled for the person first"
    )
    turn.set_defaults(handler=_cmd_bench_turn)
    recall = bench_command(
        "recall", "recall quality (recall@k), injected tokens and latency over a dataset"
    )
    recall.add_argument("--dataset", type=Path, required=True, help="conversations + questions")
    recall.add_argument("--k", default="1,5,10,50", help="comma-separated cut-offs")
    recall.add_argument(
        "--ranker", choices=RANKERS, help="memory.recall_ranker to use (default: configured)"
    )
    recall.add_argument(
        "--recall-depth", choices=DEPTHS, help="memory.recall_depth to use (default: configured)"
    )
    recall.add_argument(
        "--embeddings",
        action=argparse.BooleanOptionalAction,
        help="rank with local embeddings (default: memory.embeddings)",
    )
    recall.add_argument(
        "--embeddings-model",
        choices=EMBEDDING_MODELS,
        help="memory.embeddings_model to use with --embeddings (default: configured)",
    )
    recall.add_argument(
        "--scale", type=int, default=0, help="pad the store with filler turns up to this total"
    )
    recall.add_argument("--seed", type=int, default=7)
    recall.set_defaults(handler=_cmd_bench_recall)
    schedule = bench_command(
        "schedule", "adding reminders, fire_due among many, lag of a burst due at once"
    )
    schedule.add_argument("--jobs", type=int, default=10_000, help="reminders stored")
    schedule.add_argument("--burst", type=int, default=1000, help="jobs due in the same second")
    schedule.add_argument("--seed", type=int, default=7)
    schedule.set_defaults(handler=_cmd_bench_schedule)
    gateway = bench_command("gateway", "full-path throughput against a bare websockets echo server")
    gateway.add_argument("--clients", type=int, default=200)
    gateway.add_argument("--seconds", type=float, default=10.0)
    gateway.add_argument("--idle-sessions", type=int, default=2000)
    embeddings = gateway.add_mutually_exclusive_group()
    embeddings.add_argument(
        "--embeddings",
        choices=EMBEDDING_MODELS,
        nargs="?",
        const="auto",
        help="embed every turn with this memory.embeddings_model (default: auto; without the "
        "flag, as memory.embeddings says)",
    )
    embeddings.add_argument(
        "--no-embeddings",
        action="store_true",
        help="embed nothing, whatever memory.embeddings says",
    )
    gateway.set_defaults(handler=_cmd_bench_gateway)


# -- configuration -----------------------------------------------------------------------------


def _settings(args: argparse.Namespace, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    path: Path | None = getattr(args, "config", None)
    if path is None and env.get("FLYNN_CONFIG"):
        path = Path(env["FLYNN_CONFIG"])
    if path is None:
        settings = load_settings({}, env=env)
    else:
        path = path.expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            problem = ConfigProblem("--config", f"cannot read {path}: {exc.strerror or exc}")
            raise ConfigError([problem]) from None
        except UnicodeDecodeError as exc:
            problem = ConfigProblem("file", f"not valid UTF-8 (byte {exc.start})")
            raise ConfigError([problem], str(path)) from None
        settings = load_settings(parse_yaml(text, str(path)), str(path), env=env)
    # Every command opens the data dir; one that is a file is the configuration's fault.
    error = not_a_directory(settings.data_dir)
    if error is not None:
        raise error
    return settings


def _logging(settings: Settings, *, quiet: bool = False) -> None:
    level = settings.logging.level
    if quiet and level in ("debug", "info"):
        # An interactive session would drown in turn logs; debug still shows everything.
        level = "debug" if level == "debug" else "warning"
    configure_logging(level, settings.logging.format)


def _local_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "local"


# -- run ---------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings)
    prepare_data_dir(settings.data_dir)
    # Held for the whole process (released by the kernel however it ends), before anything
    # touches the database: a second daemon would answer every message twice.
    with DataDirLock(settings.data_dir):
        return asyncio.run(_run(settings, os.environ))


async def _run(settings: Settings, env: Mapping[str, str]) -> int:
    stop = asyncio.Event()
    install_signal_handlers(stop)
    daemon = Daemon(
        settings,
        env,
        notifier=SystemdNotifier.from_environment(env),
        options=DaemonOptions(show_token=sys.stdout.isatty()),
        announce=lambda line: print(line, flush=True),
    )
    try:
        return await daemon.run(stop)
    except PortInUse:
        gateway = settings.channels.gateway
        print(
            f"flynn: cannot listen on {gateway.host}:{gateway.port}: the port is in use "
            "(is flynn already running? set channels.gateway.port to use another)",
            file=sys.stderr,
        )
        return EXIT_PORT_IN_USE


# -- doctor ------------------------------------------------------------------------------------


def _cmd_doctor(args: argparse.Namespace) -> int:
    settings = _settings(args)
    configure_logging("error", "console")
    checks = asyncio.run(run_checks(settings, os.environ, network=not args.no_network))
    for check in checks:
        print(check.line())
    failed = [c for c in checks if not c.ok and not c.warning]
    print("healthy" if not failed else f"{len(failed)} check(s) failed")
    return EXIT_OK if not failed else EXIT_FAILED


# -- chat --------------------------------------------------------------------------------------


def _cmd_chat(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    return asyncio.run(_chat(settings, os.environ))


async def _chat(settings: Settings, env: Mapping[str, str]) -> int:
    user = _local_user()
    key = SessionKey("cli", user)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    app = App.open(settings, env)
    try:
        orchestrator = app.sessions.orchestrator(key, ChannelAccount("cli", user))
        if interactive:
            print(
                f"flynn {__version__}, {app.providers['chat'].name}. /help for commands, "
                "Ctrl-D to leave."
            )
        while True:
            if interactive:
                print("you> ", end="", flush=True)
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                break
            text = line.rstrip("\n")
            if not text.strip():
                continue
            if interactive:
                await _interactive_turn(orchestrator, text)
            else:
                result = await orchestrator.handle(text)
                print(_one_line(result.text), flush=True)
    finally:
        await app.aclose()
    return EXIT_OK


async def _interactive_turn(orchestrator: Orchestrator, text: str) -> None:
    streamed = False

    async def on_delta(delta: str) -> None:
        nonlocal streamed
        if not streamed:
            print("flynn> ", end="")
            streamed = True
        print(delta, end="", flush=True)

    result = await orchestrator.handle(text, on_delta)
    if streamed:
        print()
    else:
        print(f"flynn> {result.text}")


def _one_line(text: str) -> str:
    """Piped output is one reply per line, so scripts can read it line by line."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


# -- init --------------------------------------------------------------------------------------


def _cmd_init(args: argparse.Namespace) -> int:
    directory: Path = args.dir.expanduser()
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.yaml"
    wrote_config = write_config(config, data_dir=directory)
    persona = persona_directory(directory, "flynn")
    written = write_persona_templates(persona)
    print(f"{'wrote' if wrote_config else 'kept existing'} {config}")
    print(f"persona templates in {persona} ({len(written)} new files)")
    print(f"next: flynn chat --config {config}   (or: flynn run --config {config})")
    return EXIT_OK


# -- memory ------------------------------------------------------------------------------------


def _memory_scope(args: argparse.Namespace, settings: Settings) -> MemoryScope:
    identity = Identity(user_namespace=settings.memory.user_namespace, users=settings.users)
    if args.session:
        try:
            key = SessionKey.parse(args.session)
        except ValueError as exc:
            raise UsageError("--session", str(exc)) from None
        return identity.resolve(ChannelAccount(key.channel, key.chat_id), key)
    scope = identity.scope_for_user(args.user)
    if scope is not None:
        return scope
    if args.user:
        raise _unknown_user(settings, args.user)
    # Session-scoped memory: default to this machine's terminal session.
    user = _local_user()
    return identity.resolve(ChannelAccount("cli", user), SessionKey("cli", user))


def _unknown_user(settings: Settings, user: str) -> UsageError:
    known = ", ".join(sorted(settings.users)) or "none configured"
    return UsageError("--user", f"no user {user!r} (users: {known})")


def _open_memory(settings: Settings) -> SqliteMemory:
    return SqliteMemory.open(database_path(settings), FactRelations)


def _cmd_memory_show(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    scope = _memory_scope(args, settings)
    if args.history:
        field = "_".join(args.history.casefold().split())
        with _open_memory(settings) as memory:
            history = fact_history(memory, scope, field)
        if args.json:
            print(json.dumps(history.as_json(), indent=2, ensure_ascii=False))
        else:
            print(history.as_text())
        return EXIT_OK
    with _open_memory(settings) as memory:
        snapshot = memory_snapshot(memory, scope, now=utc_now())
    if args.json:
        print(json.dumps(snapshot.as_json(), indent=2, ensure_ascii=False))
    else:
        print(snapshot.as_text())
    return EXIT_OK


def _cmd_memory_export(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    scope = _memory_scope(args, settings)
    with _open_memory(settings) as memory:
        print(memory_snapshot(memory, scope, now=utc_now()).as_markdown())
    return EXIT_OK


def _cmd_memory_forget(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    scope = _memory_scope(args, settings)
    if args.until is not None and args.since is None:
        raise UsageError("--until", "only goes with --since")
    field = None
    if args.field is not None:
        field = "_".join(args.field.casefold().split())
        if not field:
            raise UsageError("--field", "is empty; name a fact field, e.g. --field name")
    span = _forget_span(args, settings)
    with _open_memory(settings) as memory:
        if args.all:
            counts = memory.forget_namespace(scope.root)
            counts["files"] = forget_person_files(person_directory(settings.data_dir, scope.root))
            print(f"forgot everything under {scope.root}: {_counts(counts)}")
        elif field is not None:
            counts = memory.forget_field(scope.root, field)
            print(f"forgot {field!r} under {scope.root}: {_counts(counts)}")
        elif span is not None:
            counts = memory.forget_range(scope.root, since=span[0], until=span[1])
            print(
                f"forgot what was written under {scope.root} from {span[0].isoformat()} until "
                f"{span[1].isoformat()}: {_counts(counts)}"
            )
            if counts["messages"]:
                print(
                    "working memory and conversation summaries may have repeated those messages "
                    "and cannot be edited surgically, so they were deleted as well"
                )
        else:
            chain = memory.forget_chain(scope.root, args.fact)
            if chain is None:
                print(f"flynn: no fact {args.fact} under {scope.root}", file=sys.stderr)
                return EXIT_FAILED
            print(f"forgot fact {args.fact} and its chain: {_counts(chain)}")
        if settings.memory.embeddings and not args.all:
            _embed_anew(settings, memory, scope.root)
    return EXIT_OK


def _forget_span(args: argparse.Namespace, settings: Settings) -> tuple[datetime, datetime] | None:
    """The ``--since`` range to forget, ``None`` without one; without ``--until`` it runs until
    now, so a ``--since`` in the future is a mistake (a typo'd year, most likely), said as one."""
    if args.since is None:
        return None
    zone = _zone(settings)
    since = _parse_when("--since", args.since, zone, end_of_day=False)
    if args.until is None:
        now = utc_now()
        if now <= since:
            raise UsageError("--since", f"{args.since} is in the future: nothing to forget yet")
        return since, now
    until = _parse_when("--until", args.until, zone, end_of_day=True)
    if until <= since:
        raise UsageError("--until", "must be after --since")
    return since, until


def _embed_anew(settings: Settings, memory: SqliteMemory, prefix: str) -> None:
    """After a forget, the messages that lost their vector (redacted ones, and those just after
    a forgotten message, embedded with it as context) are embedded from what is left."""
    try:
        vectors = SqliteVectors(memory.db, load_embedder(settings.memory.embeddings_model))
    except ConfigError as exc:
        print(f"flynn: {exc}; run `flynn memory embed` once it loads", file=sys.stderr)
        return
    done = sum(vectors.backfill(prefix))
    if done:
        print(f"embedded {done} message(s) anew from what is left")


def _cmd_memory_embed(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    if not settings.memory.embeddings:
        raise ConfigError(
            [ConfigProblem("memory.embeddings", "is false; set it to true to embed messages")]
        )
    prefix = None
    if args.user:
        identity = Identity(user_namespace=settings.memory.user_namespace, users=settings.users)
        scope = identity.scope_for_user(args.user)
        if scope is None:
            raise _unknown_user(settings, args.user)
        prefix = scope.root
    embedder = load_embedder(settings.memory.embeddings_model)
    with _open_memory(settings) as memory:
        vectors = SqliteVectors(memory.db, embedder)
        total = vectors.unembedded(prefix)
        done = 0
        started = perf_counter()
        for count in vectors.backfill(prefix):
            done += count
            print(f"\rembedded {done}/{total}", end="", file=sys.stderr, flush=True)
        if done:
            print(file=sys.stderr)
        seconds = perf_counter() - started
        others = vectors.other_models(prefix)
        dropped = 0
        if others and not args.keep_other_models and vectors.unembedded(prefix) == 0:
            dropped = vectors.drop_other_models(prefix)
    where = prefix or "every namespace"
    print(f"embedded {done} message(s) under {where} with {embedder.model} in {seconds:.1f} s")
    if dropped:
        print(f"deleted {dropped} vector(s) of other models ({', '.join(sorted(others))})")
    elif others:
        print(
            f"kept {sum(others.values())} vector(s) of other models ({', '.join(sorted(others))}); "
            "recall ignores them"
        )
    return EXIT_OK


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in counts.items())


def _zone(settings: Settings) -> tzinfo | None:
    """The person's calendar: ``persona.timezone``, else this machine's zone."""
    name = settings.persona.timezone
    return parse_timezone(name) if name else datetime.now().astimezone().tzinfo


def _parse_when(option: str, text: str, zone: tzinfo | None, *, end_of_day: bool) -> datetime:
    """A date (its start, or with ``end_of_day`` the start of the next day) or an ISO time;
    times without an offset are in ``zone``."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime.combine(day + timedelta(days=1) if end_of_day else day, time())
        else:
            moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(option, f"not a date (YYYY-MM-DD) or ISO time: {text!r}") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone) if zone is not None else moment.astimezone()
    return moment


# -- reminders ---------------------------------------------------------------------------------


def _cmd_reminders(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    identity = Identity(user_namespace=settings.memory.user_namespace, users=settings.users)
    scope = identity.scope_for_user(args.user)
    if scope is None and args.user:
        raise _unknown_user(settings, args.user)
    # Without a person to default to, every namespace's jobs: this is the machine's owner asking.
    namespace = None if scope is None else scope.root
    with Database.open(database_path(settings)) as db:
        jobs = SqliteSchedule(db).jobs(namespace)
    if args.json:
        print(json.dumps([job_json(job) for job in jobs], indent=2, ensure_ascii=False))
    elif not jobs:
        print(f"no reminders under {namespace}" if namespace else "no reminders")
    else:
        for job in jobs:
            print(job_line(job, with_namespace=namespace is None))
    return EXIT_OK


# -- sessions ----------------------------------------------------------------------------------


def _cmd_sessions_search(args: argparse.Namespace) -> int:
    settings = _settings(args)
    _logging(settings, quiet=True)
    scope = _memory_scope(args, settings)
    if args.limit < 1:
        raise UsageError("--limit", "must be at least 1")
    query = " ".join(args.query)
    session = str(SessionKey.parse(args.session)) if args.session else None
    with _open_memory(settings) as memory:
        days = search_sessions(
            memory.history,
            scope.root,
            query,
            limit=args.limit,
            session=session,
            timezone=_zone(settings),
        )
    if args.json:
        report = {"namespace": scope.root, "query": query, "days": results_json(days)}
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_results(days, query))
    return EXIT_OK


def _within(namespace: str, root: str) -> bool:
    return namespace == root or namespace.startswith(root + "/")


# -- bench -------------------------------------------------------------------------------------


def _cmd_bench_gateway(args: argparse.Namespace) -> int:
    memory = _settings(args).memory
    configure_logging("error", "json")
    embeddings: str | None = args.embeddings
    if embeddings is None and memory.embeddings and not args.no_embeddings:
        embeddings = memory.embeddings_model
    result = asyncio.run(
        bench_gateway(
            clients=args.clients,
            seconds=args.seconds,
            idle_sessions=args.idle_sessions,
            embeddings=embeddings,
        )
    )
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_recall(args: argparse.Namespace) -> int:
    memory = _settings(args).memory
    configure_logging("error", "json")
    try:
        ks = [int(k) for k in args.k.split(",") if k.strip()]
    except ValueError:
        raise UsageError("--k", f"takes comma-separated numbers, not {args.k!r}") from None
    if not ks or min(ks) < 1:
        raise UsageError("--k", "needs cut-offs of at least 1")
    try:
        dataset = load_dataset(args.dataset)
        if dataset.unknown_evidence:
            print(
                f"flynn: note: {dataset.unknown_evidence} evidence ids name no turn of their "
                "conversation; left out (evidence_unknown in the result)",
                file=sys.stderr,
            )
        result = asyncio.run(
            bench_recall(
                dataset,
                ks=ks,
                ranker=args.ranker or memory.recall_ranker,
                depth=args.recall_depth or memory.recall_depth,
                embeddings=memory.embeddings if args.embeddings is None else args.embeddings,
                embeddings_model=args.embeddings_model or memory.embeddings_model,
                scale=args.scale,
                seed=args.seed,
                recall_max_tokens=memory.recall_max_tokens,
                retrieval_threshold=memory.retrieval_threshold,
            )
        )
    except FlynnError as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_schedule(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    if args.jobs < 0 or args.burst < 0:
        raise UsageError("--jobs/--burst", "must not be negative")
    result = asyncio.run(bench_schedule(jobs=args.jobs, burst=args.burst, seed=args.seed))
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_turn(args: argparse.Namespace) -> int:
    settings = _settings(args)
    configure_logging("error", "json")
    if args.reminders < 0:
        raise UsageError("--reminders", "must not be negative")
    result = asyncio.run(
        bench_turn(
            messages=args.messages,
            facts=args.facts,
            turns=args.turns,
            seed=args.seed,
            depth=args.recall_depth or settings.memory.recall_depth,
            tools=settings.tools.enabled if args.tools is None else args.tools,
            reminders=args.reminders,
        )
    )
    print(json.dumps(result))
    return EXIT_OK
