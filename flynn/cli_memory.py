"""``flynn memory show|export|forget|embed``: what flynn remembers of a person, read, exported,
deleted for real, or embedded for recall by meaning (and how far that has come)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from time import perf_counter, sleep

from flynn.app import database_path, utc_now
from flynn.cli_settings import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    command_logging,
    command_settings,
    local_user,
)
from flynn.datadir import lock_holder
from flynn.dates import parse_timezone
from flynn.errors import ConfigError, ConfigProblem
from flynn.identity import Identity, MemoryScope
from flynn.learning.fact_relations import FactRelations
from flynn.memory.embedding_progress import PersonProgress, embedding_progress
from flynn.memory.overview import fact_history, memory_snapshot
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors
from flynn.messages import ChannelAccount, SessionKey
from flynn.people.files import (
    MEMORY_FILES,
    forget_distilled,
    forget_person_files,
    person_directory,
    read_text,
)
from flynn.persona import clean_file_text
from flynn.plurals import counted
from flynn.recall.embeddings import LoadingEmbedder, load_embedder, model_name
from flynn.schedule.migrations import SCHEMA
from flynn.settings import Settings


def add_memory_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    forget.add_argument(
        "--yes",
        "-y",
        action="store_true",
        help="with --all: do not ask (needed where there is no terminal to ask on)",
    )
    forget.set_defaults(handler=_cmd_memory_forget)
    embed = memory_commands.add_parser(
        "embed",
        help="show how far embedding stored messages has come, and embed the rest",
        description="Show, overall and per person, how many stored messages have a vector of "
        "memory.embeddings_model. A running daemon embeds those that have none in the "
        "background (the most recently active person first): then this only reads its "
        "progress (--follow watches it). Otherwise it embeds them itself, in the same order. "
        "Once every message has a vector, the vectors of other models (left by an earlier "
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
    embed.add_argument(
        "--follow",
        action="store_true",
        help="while the daemon embeds: show its progress every few seconds until it is done",
    )
    embed.add_argument(
        "--interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --follow: seconds between two readings (default 5)",
    )
    embed.set_defaults(handler=_cmd_memory_embed)


def memory_scope(args: argparse.Namespace, settings: Settings) -> MemoryScope:
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
        raise unknown_user(settings, args.user)
    # Session-scoped memory: default to this machine's terminal session.
    user = local_user()
    return identity.resolve(ChannelAccount("cli", user), SessionKey("cli", user))


def unknown_user(settings: Settings, user: str) -> UsageError:
    known = ", ".join(sorted(settings.users)) or "none configured"
    return UsageError("--user", f"no user {user!r} (users: {known})")


def open_memory(settings: Settings) -> SqliteMemory:
    return SqliteMemory.open(database_path(settings), SCHEMA, FactRelations)


def _cmd_memory_show(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    if args.history:
        field = "_".join(args.history.casefold().split())
        with open_memory(settings) as memory:
            history = fact_history(memory, scope, field)
        if args.json:
            print(json.dumps(history.as_json(), indent=2, ensure_ascii=False))
        else:
            print(history.as_text())
        return EXIT_OK
    with open_memory(settings) as memory:
        snapshot = memory_snapshot(memory, scope, now=utc_now())
    if args.json:
        print(json.dumps(snapshot.as_json(), indent=2, ensure_ascii=False))
    else:
        print(snapshot.as_text())
    return EXIT_OK


def _cmd_memory_export(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    with open_memory(settings) as memory:
        print(memory_snapshot(memory, scope, now=utc_now()).as_markdown(), end="")
    print(_person_files_markdown(person_directory(settings.data_dir, scope.root)))
    return EXIT_OK


def _person_files_markdown(folder: Path) -> str:
    """The person's own files that say something (USER.md, the distilled notes, REMINDERS.md,
    SCRATCH.md), each under its name, as the prompt reads them."""
    parts = []
    for name in ("USER.md", *MEMORY_FILES.values(), "REMINDERS.md", "SCRATCH.md"):
        try:
            text = clean_file_text(name, read_text(folder / name))
        except OSError as exc:
            text = f"(cannot be read: {exc.strerror or exc})"
        if text:
            parts.append(f"## {name}\n\n{text}")
    return ("\n" + "\n\n".join(parts) + "\n") if parts else ""


def _cmd_memory_forget(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    if args.until is not None and args.since is None:
        raise UsageError("--until", "only goes with --since")
    field = None
    if args.field is not None:
        field = "_".join(args.field.casefold().split())
        if not field:
            raise UsageError("--field", "is empty; name a fact field, e.g. --field name")
    span = _forget_span(args, settings)
    if args.all and not args.yes and not _confirmed(_whom(args, scope)):
        print("flynn: nothing forgotten", file=sys.stderr)
        return EXIT_FAILED
    # The distilled MEMORY_*.md repeat what was said and learnt: whatever is forgotten, they go
    # too, and the next distillation writes them from what remains.
    folder = person_directory(settings.data_dir, scope.root)
    with open_memory(settings) as memory:
        if args.all:
            counts = memory.forget_namespace(scope.root)
            counts["files"] = forget_person_files(folder)
            print(f"forgot everything under {scope.root}: {_counts(counts)}")
        elif field is not None:
            counts = memory.forget_field(scope.root, field)
            if not any(counts.values()):
                print(f"flynn: no fact field {field!r} under {scope.root}", file=sys.stderr)
                return EXIT_FAILED
            counts["distilled notes"] = forget_distilled(folder)
            print(f"forgot {field!r} under {scope.root}: {_counts(counts)}")
        elif span is not None:
            counts = memory.forget_range(scope.root, since=span[0], until=span[1])
            counts["distilled notes"] = forget_distilled(folder)
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
            chain["distilled notes"] = forget_distilled(folder)
            print(f"forgot fact {args.fact} and its chain: {_counts(chain)}")
        if settings.memory.embeddings and not args.all:
            _embed_anew(settings, memory, scope.root)
    return EXIT_OK


def _whom(args: argparse.Namespace, scope: MemoryScope) -> str:
    """Whose memory ``scope`` is, as the confirmation names it."""
    if args.user:
        return str(args.user)
    if scope.shared:
        return f"you ({scope.root})"
    return f"the session {scope.root.removeprefix('sessions/')}"


def _confirmed(whom: str) -> bool:
    """Asks on the terminal before ``--all`` deletes everything about ``whom`` (the default is
    no). Without a terminal (a script, a pipe) nobody can answer, so that takes ``--yes``: raises
    ``UsageError`` rather than deleting a person's memory on a guess."""
    if not sys.stdin.isatty():
        raise UsageError(
            "--all",
            f"deletes everything Flynn knows about {whom} for good; add --yes to confirm "
            "(there is no terminal to ask on)",
        )
    print(f"Forget everything Flynn knows about {whom}? [y/N] ", end="", file=sys.stderr)
    sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer:
        print(file=sys.stderr)  # Ctrl-D left the cursor after the question
    return answer.strip().casefold() in ("y", "yes")


def _forget_span(args: argparse.Namespace, settings: Settings) -> tuple[datetime, datetime] | None:
    """The ``--since`` range to forget, ``None`` without one; without ``--until`` it runs until
    now, so a ``--since`` in the future is a mistake (a typo'd year, most likely), said as one."""
    if args.since is None:
        return None
    zone = zone_of(settings)
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
    a forgotten message, embedded with it as context) are embedded from what is left. The model
    is loaded only when some message under ``prefix`` has no vector."""
    model = LoadingEmbedder(settings.memory.embeddings_model, load_embedder)
    vectors = SqliteVectors(memory.db, model)
    if not vectors.unembedded(prefix):
        return
    if not model.load():
        print(f"flynn: {model.problem}; run `flynn memory embed` once it loads", file=sys.stderr)
        return
    done = sum(vectors.backfill(prefix))
    if done:
        print(f"embedded {done} message(s) anew from what is left")


def _cmd_memory_embed(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    if not settings.memory.embeddings:
        raise ConfigError(
            [ConfigProblem("memory.embeddings", "is off; turn it on to embed messages")]
        )
    if args.interval <= 0:
        raise UsageError("--interval", "must be more than 0 seconds")
    prefix = None
    if args.user:
        identity = Identity(user_namespace=settings.memory.user_namespace, users=settings.users)
        scope = identity.scope_for_user(args.user)
        if scope is None:
            raise unknown_user(settings, args.user)
        prefix = scope.root
    daemon = lock_holder(settings.data_dir)
    if daemon is not None:
        return _daemon_progress(settings, prefix, daemon, args)
    embedder = load_embedder(settings.memory.embeddings_model)
    with open_memory(settings) as memory:
        vectors = SqliteVectors(memory.db, embedder)
        people = _people(memory, embedder.model, prefix)
        _print_progress(embedder.model, people)
        total = sum(person.missing for person in people)
        done = 0
        started = perf_counter()
        for person in people:
            for count in vectors.backfill(person.root) if person.missing else ():
                done += count
                rate = done / max(perf_counter() - started, 1e-9)
                print(
                    f"\rembedded {done}/{total} ({rate:.1f} messages/s)",
                    end="",
                    file=sys.stderr,
                    flush=True,
                )
        if done:
            print(file=sys.stderr)
        seconds = perf_counter() - started
        others = vectors.other_models(prefix)
        dropped = 0
        if others and not args.keep_other_models and vectors.unembedded(prefix) == 0:
            dropped = vectors.drop_other_models(prefix)
    where = prefix or "every namespace"
    speed = f", {done / seconds:.1f} messages/s" if done and seconds > 0 else ""
    print(
        f"embedded {done} message(s) under {where} with {embedder.model} in {seconds:.1f} s{speed}"
    )
    if dropped:
        print(f"deleted {dropped} vector(s) of other models ({', '.join(sorted(others))})")
    elif others:
        print(
            f"kept {sum(others.values())} vector(s) of other models ({', '.join(sorted(others))}); "
            "recall ignores them"
        )
    return EXIT_OK


def _people(memory: SqliteMemory, model: str, prefix: str | None) -> list[PersonProgress]:
    """The people under ``prefix`` (or all), the most recently active first."""
    people = embedding_progress(memory.db, model)
    if prefix is None:
        return people
    return [p for p in people if p.root == prefix or p.root.startswith(prefix + "/")]


def _print_progress(model: str, people: Sequence[PersonProgress]) -> None:
    """Overall, then one line a person (the most recently active first)."""
    messages = sum(person.messages for person in people)
    embedded = sum(person.embedded for person in people)
    share = f" ({100 * embedded // messages}%)" if messages else ""
    print(f"{model}: {embedded}/{messages} stored message(s) have a vector{share}")
    width = max((len(person.root) for person in people), default=0)
    for person in people:
        left = f"{person.missing} to go" if person.missing else "done"
        print(f"  {person.root:<{width}}  {person.embedded}/{person.messages}  {left}")


def _daemon_progress(
    settings: Settings, prefix: str | None, daemon: int, args: argparse.Namespace
) -> int:
    """The daemon holds the data dir and embeds in the background: its progress, read only
    (with ``--follow``, again every ``--interval`` seconds with the rate, until done, or until
    the daemon stops: then exit 1)."""
    model = model_name(settings.memory.embeddings_model)
    holder = f"pid {daemon}" if daemon else "a running daemon"
    with open_memory(settings) as memory:
        people = _people(memory, model, prefix)
        _print_progress(model, people)
        missing = sum(person.missing for person in people)
        if not missing:
            print(f"every stored message has a vector; the daemon ({holder}) embeds new ones")
            return EXIT_OK
        print(
            f"the daemon ({holder}) embeds the other {missing} in the background, the most "
            "recently active person first" + ("" if args.follow else "; --follow watches it"),
            flush=True,
        )
        read_at = perf_counter()
        while args.follow and missing:
            sleep(args.interval)
            if daemon and not _running(daemon):
                print(
                    f"the daemon (pid {daemon}) has stopped with {missing} message(s) still to "
                    "embed: its next start embeds them, or `flynn memory embed` does now",
                    flush=True,
                )
                return EXIT_FAILED
            people = _people(memory, model, prefix)
            now, left = perf_counter(), sum(person.missing for person in people)
            rate = (missing - left) / (now - read_at)
            eta = f", about {left / rate:.0f} s to go" if rate > 0 else ""
            print(f"{left} to go ({rate:.1f} messages/s{eta})", flush=True)
            missing, read_at = left, now
    return EXIT_OK


def _running(pid: int) -> bool:
    """Whether process ``pid`` still exists (one of another user's does too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(counted(n, name.replace("_", " ")) for name, n in counts.items())


def zone_of(settings: Settings) -> tzinfo | None:
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
