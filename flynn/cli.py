"""The ``flynn`` command: the only module that reads the environment and config files.

Exit codes: 0 success, 1 failure (a check failed, a command could not finish), 2 invalid
configuration or usage, 3 a port to listen on is in use (the gateway's, Telegram's webhook), 4 the
database is unusable (an empty, corrupt or unwritable file: restarting will not help until a
person acts), 5 another ``flynn run`` holds the data dir. Each of 2 to 5 is said in one line on
stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flynn import __version__
from flynn.cli_costs import add_costs_command
from flynn.cli_distill import add_distill_command
from flynn.cli_docs import add_docs_commands
from flynn.cli_gateway import add_gateway_commands
from flynn.cli_memory import add_memory_commands, memory_scope, open_memory, unknown_user, zone_of
from flynn.cli_settings import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_LOCKED,
    EXIT_OK,
    EXIT_STORAGE,
    UsageError,
    command_logging,
    command_settings,
    file_logging,
    install_secrets,
    local_user,
)
from flynn.cli_storage import add_storage_commands
from flynn.cli_transcripts import add_sessions_export_command
from flynn.cli_users import add_users_commands
from flynn.errors import ConfigError, DataDirLocked, FlynnError, StorageUnusable

if TYPE_CHECKING:  # the commands import them when they run (flynn.cli_settings says why)
    from flynn.sessions.orchestrator import Orchestrator
    from flynn.settings import Settings

__all__ = ["EXIT_CONFIG", "EXIT_LOCKED", "EXIT_STORAGE", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    # python-telegram-bot warns on every RetryAfter unless told to use its newer timedelta API,
    # which the Telegram channel handles.
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bench"]:
        args = argparse.Namespace(handler=_cmd_bench, bench=argv[1:])
    else:
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
        # One line, as promised: libpq's reasons span two ("Is the server running ...").
        print(f"flynn: {' '.join(str(exc).split())}", file=sys.stderr)
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

    add_memory_commands(commands)
    add_costs_command(commands)
    add_distill_command(commands)
    add_docs_commands(commands)
    add_users_commands(commands)
    add_storage_commands(commands)
    add_gateway_commands(commands)

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
    add_sessions_export_command(sessions_commands)

    # Listed for --help only: main hands what follows `bench` to the evals, unparsed.
    commands.add_parser("bench", help="benchmarks, from a checkout (evals/); each prints JSON")
    return parser


# -- run ---------------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from flynn.datadir import DataDirLock, prepare_data_dir
    from flynn.storage_place import storage_url

    settings = command_settings(args)
    command_logging(settings)
    prepare_data_dir(settings.data_dir)
    if storage_url(settings) is not None:
        # Workers share PostgreSQL by design (several on one machine and data_dir, or one
        # each): the database serialises them, so there is no data dir to keep to one.
        return asyncio.run(_run(settings, os.environ))
    # Held for the whole process (released by the kernel however it ends), before anything
    # touches the database: a second daemon would answer every message twice.
    with DataDirLock(settings.data_dir):
        return asyncio.run(_run(settings, os.environ))


async def _run(settings: Settings, env: Mapping[str, str]) -> int:
    from flynn.daemon import (
        EXIT_PORT_IN_USE,
        Daemon,
        DaemonOptions,
        PortInUse,
        install_signal_handlers,
    )
    from flynn.systemd import SystemdNotifier

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
    except PortInUse as exc:
        gateway = settings.channels.gateway
        where, key = f"{gateway.host}:{gateway.port}", "channels.gateway.port"
        if exc.channel == "telegram":
            where, key = (
                settings.channels.telegram.webhook_listen,
                "channels.telegram.webhook_listen",
            )
        print(
            f"flynn: cannot listen on {where}: the port is in use "
            f"(is flynn already running? set {key} to use another)",
            file=sys.stderr,
        )
        return EXIT_PORT_IN_USE


# -- doctor ------------------------------------------------------------------------------------


def _cmd_doctor(args: argparse.Namespace) -> int:
    from flynn.doctor import run_checks
    from flynn.logs import configure_logging

    settings = command_settings(args)
    configure_logging("error", "console", secrets=install_secrets(settings, os.environ))
    checks = asyncio.run(run_checks(settings, os.environ, network=not args.no_network))
    for check in checks:
        print(check.line())
    failed = [c for c in checks if not c.ok and not c.warning]
    print("healthy" if not failed else f"{len(failed)} check(s) failed")
    return EXIT_OK if not failed else EXIT_FAILED


# -- chat --------------------------------------------------------------------------------------


CHAT_LOG = "chat.log"


def _cmd_chat(args: argparse.Namespace) -> int:
    """On a terminal the logs go to ``<data_dir>/chat.log``: a log line (a retry, a failed
    summary) printed between the prompt and the reply is the conversation's noise. Piped, stdout
    is one reply per line and the logs stay on stderr, raised to warnings."""
    settings = command_settings(args)
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    log_file = settings.data_dir / CHAT_LOG if interactive else None
    if log_file is None or not file_logging(settings, log_file):
        command_logging(settings, quiet=True)
        log_file = None
    return asyncio.run(_chat(settings, os.environ, interactive=interactive, log_file=log_file))


async def _chat(
    settings: Settings, env: Mapping[str, str], *, interactive: bool, log_file: Path | None
) -> int:
    from flynn.app import App
    from flynn.commands import parse_command
    from flynn.messages import ChannelAccount, SessionKey

    user = local_user()
    key = SessionKey("cli", user)
    app = App.open(settings, env)
    try:
        await asyncio.to_thread(app.load_embeddings)
        orchestrator = app.sessions.orchestrator(key, ChannelAccount("cli", user))
        if interactive:
            print(
                f"flynn {__version__}, {app.providers['chat'].name}. /help for commands, "
                "/quit or Ctrl-D to leave." + (f" Logs go to {log_file}." if log_file else "")
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
            if text.strip().casefold() in _LEAVE:
                break
            if interactive:
                await _interactive_turn(orchestrator, text)
            else:
                result = await orchestrator.handle(parse_command(text) or text)
                print(_one_line(result.text), flush=True)
    finally:
        await app.aclose()
    return EXIT_OK


# Words that end ``flynn chat`` (the terminal's own: the session's commands are the same on
# every channel, and a channel is never left).
_LEAVE = frozenset({"/quit", "/exit"})


async def _interactive_turn(orchestrator: Orchestrator, text: str) -> None:
    from flynn.commands import parse_command

    streamed = False

    async def on_delta(delta: str) -> None:
        nonlocal streamed
        if not streamed:
            print("flynn> ", end="")
            streamed = True
        print(delta, end="", flush=True)

    result = await orchestrator.handle(parse_command(text) or text, on_delta)
    print("" if streamed else f"flynn> {result.text}")  # after a stream: end its line


def _one_line(text: str) -> str:
    """Piped output is one reply per line, so scripts can read it line by line."""
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


# -- init --------------------------------------------------------------------------------------


def _cmd_init(args: argparse.Namespace) -> int:
    from flynn.people.files import person_directory, write_person_templates
    from flynn.persona import persona_directory, write_persona_templates
    from flynn.scaffold import prepare_init_directory, write_config

    directory: Path = args.dir.expanduser()
    problem = prepare_init_directory(directory)
    if problem is not None:
        print(f"flynn: cannot init {directory}: {problem}", file=sys.stderr)
        return EXIT_CONFIG
    config = directory / "config.yaml"
    wrote_config = write_config(config, data_dir=directory)
    persona = persona_directory(directory, "flynn")
    written = write_persona_templates(persona)
    owner = person_directory(directory, "user")  # flynn init's memory.user_namespace
    own = write_person_templates(owner)
    print(f"{'wrote' if wrote_config else 'kept existing'} {config}")
    print(f"persona templates in {persona} ({len(written)} new files)")
    print(f"your own files (USER.md, MEMORY_*.md, ...) in {owner} ({len(own)} new files)")
    print(f"next: flynn chat --config {config}   (or: flynn run --config {config})")
    return EXIT_OK


# -- memory ------------------------------------------------------------------------------------


# -- reminders ---------------------------------------------------------------------------------


def _cmd_reminders(args: argparse.Namespace) -> int:
    from flynn.identity import Identity
    from flynn.schedule.listing import job_json, job_line
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    identity = Identity(user_namespace=settings.memory.user_namespace, users=settings.users)
    scope = identity.scope_for_user(args.user)
    if scope is None and args.user:
        raise unknown_user(settings, args.user)
    # Without a person to default to, every namespace's jobs: this is the machine's owner asking.
    namespace = None if scope is None else scope.root
    with opened_storage(settings) as storage:
        jobs = storage.schedule.jobs(namespace)
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
    from flynn.messages import SessionKey
    from flynn.recall.session_search import render_results, results_json, search_sessions

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    if args.limit < 1:
        raise UsageError("--limit", "must be at least 1")
    query = " ".join(args.query)
    session = str(SessionKey.parse(args.session)) if args.session else None
    with open_memory(settings) as memory:
        days = search_sessions(
            memory.history,
            scope.root,
            query,
            limit=args.limit,
            session=session,
            timezone=zone_of(settings),
        )
    if args.json:
        report = {"namespace": scope.root, "query": query, "days": results_json(days)}
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_results(days, query))
    return EXIT_OK


# -- bench -------------------------------------------------------------------------------------

CHECKOUT = Path(__file__).resolve().parents[1]


def _cmd_bench(args: argparse.Namespace) -> int:
    """The benchmarks are a dev tool in a checkout's ``evals/``, not installed with the package;
    this is the one place ``flynn`` reaches them, and only when ``flynn bench`` runs."""
    if not (CHECKOUT / "pyproject.toml").is_file() or not (CHECKOUT / "evals" / "cli.py").is_file():
        print(
            "flynn: `flynn bench` needs a checkout of flynn (the benchmarks are in its evals/, not "
            "in the installed package): pip install -e '.[dev]' there",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    if str(CHECKOUT) not in sys.path:
        # An editable install maps only the flynn package; evals sits beside it.
        sys.path.append(str(CHECKOUT))
    try:
        evals_cli = importlib.import_module("evals.cli")
    except ModuleNotFoundError as exc:
        # `make run` installs Flynn without the dev extras the benchmarks import (psycopg, ...).
        missing = (exc.name or "a package").partition(".")[0]
        print(
            f"flynn: `flynn bench` needs the dev extras ({missing} is not installed): "
            "make .venv/.installed-dev, or pip install -e '.[dev]'",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    return int(evals_cli.main(args.bench))
