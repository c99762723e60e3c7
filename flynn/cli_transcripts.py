"""``flynn sessions export``: a person's whole conversation, every session and channel, written
as one private Markdown file per day of their timezone (``YYYY-MM-DD.md``), or to stdout."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from flynn.cli_memory import memory_files, memory_scope
from flynn.cli_settings import EXIT_OK, UsageError, command_logging, command_settings, utc_now
from flynn.errors import FlynnError

if TYPE_CHECKING:  # the command imports them when it runs (flynn.cli_settings says why)
    from flynn.identity import MemoryScope
    from flynn.transcripts import TranscriptPart

FILE_MODE = 0o600
FOLDER_MODE = 0o700
"""The transcripts are private: only their owner reads the files or lists the folder."""
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]+")


def add_sessions_export_command(
    sessions_commands: argparse._SubParsersAction[argparse.ArgumentParser],
) -> None:
    export = sessions_commands.add_parser(
        "export",
        help="the whole conversation as markdown, one file per day",
        description="A person's whole conversation (every session and channel, compacted turns "
        "included) as Markdown, one file per day of their timezone, named YYYY-MM-DD.md. Files "
        "are readable by their owner only (0600, in a 0700 folder).",
    )
    export.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    export.add_argument("--user", help="a person from the users: map")
    export.add_argument(
        "--since", metavar="DATE", help="from this day on (YYYY-MM-DD, in the person's timezone)"
    )
    export.add_argument("--until", metavar="DATE", help="up to and including this day (YYYY-MM-DD)")
    where = export.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="the folder to write (default: ./flynn-export-<person>-<today>); created if missing",
    )
    where.add_argument(
        "--stdout", action="store_true", help="write every day to stdout instead of files"
    )
    export.add_argument(
        "--force",
        action="store_true",
        help="write into a folder that already holds files (day files of the same name are "
        "replaced, others left as they are)",
    )
    export.set_defaults(handler=_cmd_sessions_export, session=None)


def _cmd_sessions_export(args: argparse.Namespace) -> int:
    from flynn.dates import host_timezone
    from flynn.sessions.personal import PersonalFiles
    from flynn.storage_place import opened_storage
    from flynn.transcripts import transcript_parts

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    scope = memory_scope(args, settings)
    since = _day("--since", args.since)
    until = _day("--until", args.until)
    if since is not None and until is not None and until < since:
        raise UsageError("--until", f"{until} is before --since {since}")
    with opened_storage(settings) as storage:
        memory = storage.memory
        files = PersonalFiles(
            settings.data_dir,
            memory.facts,
            files=memory_files(settings, storage),
            schedule=None,
            default_timezone=settings.persona.timezone or host_timezone(),
        )
        zone, zone_name = files.timezone(scope.root)
        folder = None
        if not args.stdout:
            today = utc_now().astimezone(zone).date()
            folder = args.out or Path(f"flynn-export-{_person_label(scope)}-{today}")
            _check_folder(folder, force=args.force)
        parts = transcript_parts(
            memory.history,
            scope.root,
            zone=zone,
            zone_name=zone_name,
            start=None if since is None else datetime.combine(since, time(), zone),
            end=None if until is None else datetime.combine(until + timedelta(1), time(), zone),
        )
        if folder is None:
            _write_stream(parts, sys.stdout)
            return EXIT_OK
        days, messages = _write_days(parts, folder)
    if not messages:
        print(f"nothing to export: no messages under {scope.root}{_span(since, until)}")
    else:
        print(
            f"wrote {messages} message{'' if messages == 1 else 's'} of {scope.root}"
            f"{_span(since, until)} in {days} day file{'' if days == 1 else 's'} to {folder}/"
        )
    return EXIT_OK


def _day(option: str, text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(option, f"not a date (YYYY-MM-DD): {text!r}") from None


def _span(since: date | None, until: date | None) -> str:
    if since is None and until is None:
        return ""
    return f" from {since or 'the start'} until {until or 'now'}"


def _person_label(scope: MemoryScope) -> str:
    """Who the default folder is named after: the person of ``users:``, else the last part of
    their namespace (``user``; ``cli-ana`` for a session's own memory)."""
    name = scope.user or scope.root.rsplit("/", 1)[-1]
    return _UNSAFE_NAME.sub("-", name).strip("-.") or "person"


def _check_folder(folder: Path, *, force: bool) -> None:
    """Refuses (``UsageError`` on ``--out``) a path that is a file, or a folder already holding
    files unless ``force``: an export never mixes into another quietly."""
    if not folder.exists():
        return
    if not folder.is_dir():
        raise UsageError("--out", f"{folder} exists and is not a folder")
    if not force and any(folder.iterdir()):
        raise UsageError(
            "--out", f"{folder} already holds files; add --force to write into it, or name another"
        )


def _write_days(parts: Iterable[TranscriptPart], folder: Path) -> tuple[int, int]:
    """Writes each day's parts to ``<folder>/<day>.md`` (0600), creating the folder (0700) at
    the first part; returns (days, messages) written. One file is open at a time. Raises
    ``FlynnError`` naming the path when one cannot be written."""
    days = messages = 0
    out: TextIO | None = None
    path = folder
    try:
        for part in parts:
            if days == 0:
                _make_folder(folder)
            if out is None or part.day.isoformat() != path.stem:
                if out is not None:
                    out.close()
                path = folder / f"{part.day.isoformat()}.md"
                out = _private_file(path)
                days += 1
            out.write(part.text)
            messages += part.is_message
    except OSError as exc:
        raise FlynnError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        if out is not None:
            out.close()
    return days, messages


def _write_stream(parts: Iterable[TranscriptPart], out: TextIO) -> None:
    first = True
    for part in parts:
        if not part.is_message and not first:
            out.write("\n")  # a blank line before each next day's heading
        out.write(part.text)
        first = False


def _make_folder(folder: Path) -> None:
    if folder.is_dir():
        return  # the person's own (empty, or --force): its mode is theirs
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.mkdir(mode=FOLDER_MODE)
    folder.chmod(FOLDER_MODE)  # exactly, whatever the umask


def _private_file(path: Path) -> TextIO:
    """``path`` opened for writing from empty, readable by its owner only; a symlink there is
    refused (``OSError``) rather than followed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)  # a file replaced under --force keeps no wider mode
        return os.fdopen(fd, "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise
