"""``flynn memory show|export|forget|embed|redact|file``: what flynn remembers of a person, read,
exported, deleted for real, or embedded for recall by meaning (and how far that has come),
everything stored redacted again with today's credential rules, and their own files (USER.md,
...) shown or edited wherever they are kept."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from time import perf_counter, sleep
from typing import TYPE_CHECKING

from flynn.cli_settings import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    command_logging,
    command_settings,
    local_user,
    utc_now,
)
from flynn.errors import ConfigError, ConfigProblem, UnreadableFile
from flynn.plurals import counted

if TYPE_CHECKING:  # the commands import them when they run (flynn.cli_settings says why)
    from flynn.identity import MemoryScope
    from flynn.memory.embedding_progress import PersonProgress
    from flynn.people.store import PersonFiles
    from flynn.settings import Settings
    from flynn.storage_place import Memory, Storage

PERSON_FILE_NAMES = (
    "USER.md",
    "MEMORY_SHORT.md",
    "MEMORY_MID.md",
    "MEMORY_LONG.md",
    "REMINDERS.md",
    "TASKS.json",
    "SCRATCH.md",
)
"""``flynn.people.store.PERSON_FILE_NAMES``, spelt out so that building the parser does not load
the credential patterns the store redacts with (``tests/test_cli_startup.py`` holds them equal)."""


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
    redact = memory_commands.add_parser(
        "redact",
        help="redact every stored row and person file again with today's credential rules",
        description="Redacts what an older version stored, with today's rules for credentials: "
        "every message (and its search index), tool round, summary, document, fact, reminder, "
        "push, team document and person file, in batches; a changed row keeps its id and time, "
        "its vector is deleted (and made again from the redacted text). The daemon does this "
        "once by itself after an upgrade. With SQLite, stop the daemon first; on PostgreSQL it "
        "runs beside the workers, one pass at a time. Safe to interrupt and run again.",
    )
    redact.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    redact.add_argument(
        "--dry-run", action="store_true", help="count what would change, write nothing"
    )
    redact.set_defaults(handler=_cmd_memory_redact)
    files = memory_commands.add_parser(
        "file",
        help="show or edit a person's own file (USER.md, ...) wherever it is kept",
        description="Show or edit one of a person's own files (USER.md, the distilled "
        "MEMORY_*.md, REMINDERS.md, TASKS.json, SCRATCH.md), in their folder or in the database "
        "workers share. Edits apply from the next turn; credentials are redacted on write.",
    )
    file_commands = files.add_subparsers(title="file commands", metavar="ACTION")
    for action, help_text in (
        ("show", "print the file as it is kept (guidance comments too)"),
        ("edit", "edit it in $VISUAL or $EDITOR (a private temporary copy, written back whole)"),
    ):
        sub = file_commands.add_parser(action, help=help_text, description=help_text)
        sub.add_argument("name", metavar="FILE", choices=PERSON_FILE_NAMES, help="e.g. USER.md")
        sub.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
        sub.add_argument("--user", help="a person from the users: map")
        sub.add_argument("--session", help="a session key (channel:chat_id) for session memory")
        sub.set_defaults(handler=_cmd_memory_file, action=action)
        if action == "edit":
            sub.add_argument(
                "--set-from",
                metavar="PATH",
                help="replace the file with PATH's text (- for standard input) instead of "
                "opening an editor",
            )


def memory_scope(args: argparse.Namespace, settings: Settings) -> MemoryScope:
    from flynn.identity import Identity
    from flynn.messages import ChannelAccount, SessionKey

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


@contextmanager
def open_memory(settings: Settings) -> Iterator[Memory]:
    """The configured backend's memory (``flynn.storage_place``), closed when the block ends."""
    from flynn.storage_place import opened_storage

    with opened_storage(settings) as storage:
        yield storage.memory


def _cmd_memory_show(args: argparse.Namespace) -> int:
    from flynn.memory.overview import fact_history, memory_snapshot

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
    from flynn.memory.overview import memory_snapshot
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    with opened_storage(settings) as storage:
        print(memory_snapshot(storage.memory, scope, now=utc_now()).as_markdown(), end="")
        print(_person_files_markdown(memory_files(settings, storage), scope.root))
    return EXIT_OK


def memory_files(settings: Settings, storage: Storage) -> PersonFiles:
    """Where people's files are kept, as the daemon keeps them."""
    from flynn.storage_place import storage_files

    return storage_files(storage, settings, utc_now)


def _person_files_markdown(files: PersonFiles, namespace: str) -> str:
    """The person's own files that say something (USER.md, the distilled notes, REMINDERS.md,
    SCRATCH.md), each under its name, as the prompt reads them."""
    from flynn.people.store import MEMORY_FILES
    from flynn.persona import clean_file_text

    parts = []
    for name in ("USER.md", *MEMORY_FILES.values(), "REMINDERS.md", "SCRATCH.md"):
        try:
            text = clean_file_text(name, files.read(namespace, name))
        except UnreadableFile as exc:
            text = f"(cannot be read: {exc})"
        if text:
            parts.append(f"## {name}\n\n{text}")
    return ("\n" + "\n\n".join(parts) + "\n") if parts else ""


def _cmd_memory_forget(args: argparse.Namespace) -> int:
    from flynn.storage_place import opened_storage

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
    with opened_storage(settings) as storage:
        memory, redacting = storage.memory, storage.redacting
        files = memory_files(settings, storage)
        if args.all:
            counts = memory.forget_namespace(scope.root)
            counts["files"] = files.forget(scope.root)
            print(f"forgot everything under {scope.root}: {_counts(counts)}")
        elif field is not None:
            counts = redacting.forget_field(scope.root, field)
            if not any(counts.values()):
                print(f"flynn: no fact field {field!r} under {scope.root}", file=sys.stderr)
                return EXIT_FAILED
            counts["distilled notes"] = files.forget_distilled(scope.root)
            print(f"forgot {field!r} under {scope.root}: {_counts(counts)}")
        elif span is not None:
            counts = redacting.forget_range(scope.root, since=span[0], until=span[1])
            counts["distilled notes"] = files.forget_distilled(scope.root)
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
            chain = redacting.forget_chain(scope.root, args.fact)
            if chain is None:
                print(f"flynn: no fact {args.fact} under {scope.root}", file=sys.stderr)
                return EXIT_FAILED
            chain["distilled notes"] = files.forget_distilled(scope.root)
            print(f"forgot fact {args.fact} and its chain: {_counts(chain)}")
        # Workers running on a shared database drop what their live sessions of this person
        # loaded, which may quote what was forgotten (nothing listens on SQLite).
        storage.coordination(utc_now).forgotten(scope.root)
        if settings.memory.embeddings and not args.all:
            _embed_anew(settings, storage, scope.root)
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


def _embed_anew(settings: Settings, storage: Storage, prefix: str) -> None:
    """After a forget, the messages that lost their vector (redacted ones, and those just after
    a forgotten message, embedded with it as context) are embedded from what is left. The model
    is loaded only when some message under ``prefix`` has no vector."""
    from flynn.recall.embeddings import LoadingEmbedder, load_embedder

    model = LoadingEmbedder(settings.memory.embeddings_model, load_embedder)
    vectors = storage.vectors(model)
    if not vectors.unembedded(prefix):
        return
    if not model.load():
        print(f"flynn: {model.problem}; run `flynn memory embed` once it loads", file=sys.stderr)
        return
    done = sum(vectors.backfill(prefix))
    if done:
        print(f"embedded {done} message(s) anew from what is left")


def _cmd_memory_embed(args: argparse.Namespace) -> int:
    from flynn.datadir import lock_holder
    from flynn.identity import Identity
    from flynn.recall.embeddings import load_embedder
    from flynn.storage_place import opened_storage

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
    with opened_storage(settings) as storage:
        vectors = storage.vectors(embedder)
        people = _people(storage, embedder.model, prefix)
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


def _cmd_memory_redact(args: argparse.Namespace) -> int:
    import asyncio

    from flynn.datadir import lock_holder
    from flynn.redaction_behind import redact_now, redaction_pass
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    with opened_storage(settings) as storage:
        daemon = lock_holder(settings.data_dir)
        if daemon is not None and not storage.shared and not args.dry_run:
            holder = f"pid {daemon}" if daemon else "a running daemon"
            print(
                f"flynn: the daemon ({holder}) holds {settings.data_dir}; it redacts what is "
                "stored by itself after an upgrade. Stop it to run this now, or use --dry-run.",
                file=sys.stderr,
            )
            return EXIT_FAILED
        redaction = redaction_pass(storage, settings, utc_now, dry_run=args.dry_run)
        started = perf_counter()
        seen = changed = 0
        # A line rewritten in place: on a terminal only, not a log file's one long line.
        on_terminal = sys.stderr.isatty()

        def progress(kind: str, rows: int, found: int) -> None:
            nonlocal seen, changed
            seen, changed = seen + rows, changed + found
            if not on_terminal:
                return
            rate = seen / max(perf_counter() - started, 1e-9)
            print(
                f"\r{kind}: {seen} row(s) looked at, {changed} redacted ({rate:.0f} rows/s)   ",
                end="",
                file=sys.stderr,
                flush=True,
            )

        if args.dry_run:
            counts = redaction.run(progress)
        else:
            counts = asyncio.run(redact_now(redaction, storage.coordination(utc_now), progress))
        if seen and on_terminal:
            print(file=sys.stderr)
    seconds = perf_counter() - started
    verb = "would redact" if args.dry_run else "redacted"
    total = sum(counts.seen.values())
    print(f"looked at {total} row(s) in {seconds:.1f} s ({total / max(seconds, 1e-9):.0f} rows/s)")
    for kind in sorted(counts.changed):
        if counts.changed[kind]:
            print(f"  {kind}: {verb} {counts.changed[kind]}")
    print(f"{verb} {sum(counts.changed.values())} row(s) and file(s) in all", end="")
    print(f"; deleted {counts.vectors} vector(s)" if counts.vectors else "")
    return EXIT_OK


def _people(storage: Storage, model: str, prefix: str | None) -> list[PersonProgress]:
    """The people under ``prefix`` (or all), the most recently active first."""
    people = storage.embedding_progress(model)
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
    from flynn.recall.embeddings import model_name
    from flynn.storage_place import opened_storage

    model = model_name(settings.memory.embeddings_model)
    holder = f"pid {daemon}" if daemon else "a running daemon"
    with opened_storage(settings) as storage:
        people = _people(storage, model, prefix)
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
            people = _people(storage, model, prefix)
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
    from flynn.dates import parse_timezone

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


def _cmd_memory_file(args: argparse.Namespace) -> int:
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    with opened_storage(settings) as storage:
        files = memory_files(settings, storage)
        if args.action == "show":
            return show_person_file(files, scope.root, args.name)
        if args.set_from is not None:
            return set_person_file(files, scope.root, args.name, _text_from(args.set_from))
        before = files.read(scope.root, args.name)
        edited = _edited(before, args.name)
        if edited is None:
            return EXIT_FAILED
        return set_person_file(files, scope.root, args.name, edited, expected=before)


def show_person_file(files: PersonFiles, namespace: str, name: str) -> int:
    """``flynn memory file show``: the file's text as kept; a missing one says so on stderr."""
    try:
        text = files.read(namespace, name)
    except UnreadableFile as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if not text and name not in {file.name for file in files.list_files(namespace)}:
        print(f"flynn: {namespace} has no {name} yet", file=sys.stderr)
        return EXIT_OK
    print(text, end="" if text.endswith("\n") else "\n")
    return EXIT_OK


def set_person_file(
    files: PersonFiles, namespace: str, name: str, text: str, *, expected: str | None = None
) -> int:
    """``flynn memory file edit``: writes ``text`` whole (credentials redacted) unless it is
    what the file holds already; says which, and where the file is kept. With ``expected``
    (the text the editor opened), only over that text: a file written while the editor was
    open (a chat's task_add, the distiller, another edit; on another worker too) is left as
    it is, and ``text`` printed to edit again. Without (``--set-from``), it replaces what the
    file holds, but only what was read just before: a write landing between (a task the
    model added that millisecond) is not lost, the same way; and the lines it held that
    ``text`` has not are told on stderr, so one nobody expected there is seen."""
    current = files.read(namespace, name)
    if expected is None or current == expected:
        if text == current:
            print(f"{name} unchanged ({files.where(namespace, name)})")
            return EXIT_OK
        if files.write(namespace, name, text, expected=current):
            if expected is None:
                _tell_replaced(name, current, text)
            return _saved(files, namespace, name, text)
    during = "you edited it" if expected is not None else "it was being saved"
    print(
        f"flynn: {name} changed while {during}; nothing saved (your version "
        "follows: edit again, or save it with --set-from -)",
        file=sys.stderr,
    )
    print(text, end="" if text.endswith("\n") else "\n")
    return EXIT_FAILED


REPLACED_LINES_SHOWN = 10


def _tell_replaced(name: str, old: str, new: str) -> None:
    """On stderr: the lines ``old`` held that ``new`` does not (at most ten, then how many
    more), which ``--set-from`` has just replaced."""
    kept = {line.strip() for line in new.splitlines()}
    gone = [line for line in old.splitlines() if line.strip() and line.strip() not in kept]
    if not gone:
        return
    shown = "\n".join(f"  {line}" for line in gone[:REPLACED_LINES_SHOWN])
    more = len(gone) - REPLACED_LINES_SHOWN
    tail = f"\n  ... and {more} more" if more > 0 else ""
    print(
        f"flynn: {name} held {len(gone)} line(s) that yours has not, now replaced:\n{shown}{tail}",
        file=sys.stderr,
    )


def _saved(files: PersonFiles, namespace: str, name: str, text: str) -> int:
    kept = files.read(namespace, name)
    note = " (a credential in it was redacted)" if kept != text else ""
    print(f"{name} saved, {len(kept):,} characters{note} ({files.where(namespace, name)})")
    return EXIT_OK


def _text_from(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError("--set-from", f"cannot read {source}: {exc}") from None


def _edited(text: str, name: str) -> str | None:
    """``text`` after the person edited it in ``$VISUAL`` / ``$EDITOR`` (``vi`` without
    either), in a private temporary copy deleted afterwards; ``None`` (said on stderr) when the
    editor failed, so a crash never writes a half-edited file."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.TemporaryDirectory(prefix="flynn-file-") as folder:
        path = Path(folder) / name  # the folder is 0700: nobody else reads the copy
        path.write_text(text, encoding="utf-8")
        try:
            done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        except OSError as exc:
            print(f"flynn: cannot run the editor {editor!r}: {exc}", file=sys.stderr)
            return None
        if done.returncode != 0:
            print(
                f"flynn: the editor exited with {done.returncode}; nothing saved", file=sys.stderr
            )
            return None
        return path.read_text(encoding="utf-8", errors="replace")
