"""``flynn storage``: the database itself. ``copy --to URL`` moves an SQLite install into
PostgreSQL (``flynn.storage_copy``) and prints each kind counted on both sides."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.cli_settings import EXIT_FAILED, EXIT_OK, UsageError, command_logging, command_settings
from flynn.errors import postgres_driver_missing

if TYPE_CHECKING:  # the command imports it when it runs (flynn.cli_settings says why)
    from flynn.storage_copy import CopyReport

_SCHEMES = ("postgresql://", "postgres://")


def add_storage_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    storage = commands.add_parser("storage", help="the database flynn keeps everything in")
    actions = storage.add_subparsers(title="storage commands", metavar="ACTION")
    described = (
        "copy this install (flynn.db and the people's folders in data_dir) into PostgreSQL, "
        "then count every kind on both sides; safe to run again until workers start on it. "
        "Stop the daemon first."
    )
    copy = actions.add_parser("copy", help=described, description=described)
    copy.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    copy.add_argument(
        "--to",
        required=True,
        metavar="URL",
        help="the PostgreSQL database: postgresql://user:password@host/name",
    )
    copy.add_argument("--json", action="store_true", help="machine-readable output")
    copy.set_defaults(handler=_cmd_copy)


def _cmd_copy(args: argparse.Namespace) -> int:
    try:
        from flynn.storage_copy import copy_to_postgres
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "psycopg":
            raise
        raise postgres_driver_missing("--to") from None

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    url: str = args.to
    if not url.startswith(_SCHEMES):
        # Not the URL itself: it may hold a password.
        raise UsageError("--to", "must be a postgresql:// URL")
    on_terminal = sys.stderr.isatty()
    try:
        report = copy_to_postgres(settings, url, progress=_progress() if on_terminal else None)
    finally:
        if on_terminal:
            print("\r\033[K", end="", file=sys.stderr, flush=True)
    print(_json(report) if args.json else _table(report))
    return EXIT_OK if report.matches else EXIT_FAILED


def _progress() -> Callable[[str, int], None]:
    """On a terminal, a line that follows the copy (a large install takes minutes)."""
    totals: dict[str, int] = {}

    def show(kind: str, rows: int) -> None:
        totals[kind] = totals.get(kind, 0) + rows
        print(f"\r\033[Kcopying {kind}: {totals[kind]}", end="", file=sys.stderr, flush=True)

    return show


def _table(report: CopyReport) -> str:
    lines = [
        f"copied {report.source} into {report.target}",
        f"{'kind':<24}{'sqlite':>10}{'postgresql':>12}{'copied now':>12}",
    ]
    for kind in report.kinds:
        mark = "" if kind.matches else "  differs"
        lines.append(f"{kind.kind:<24}{kind.source:>10}{kind.target:>12}{kind.copied:>12}{mark}")
    differing = [kind.kind for kind in report.kinds if not kind.matches]
    if report.redacted:
        lines.append(
            f"{report.redacted} rows and files held a credential an older flynn kept: removed "
            "on the way (each still one row)"
        )
    left_out = sum(kind.left_out for kind in report.kinds)
    if left_out:
        lines.append(
            f"{left_out} vectors of those messages left out: `flynn memory embed` (or a "
            "running worker) embeds them anew"
        )
    if differing:
        lines.append(f"{len(differing)} kind(s) differ: {', '.join(differing)}")
    elif report.copied:
        lines.append(f"every count matches; {report.copied} rows and files copied now")
    else:
        lines.append("every count matches; nothing to copy: the database already held all of it")
    return "\n".join(lines)


def _json(report: CopyReport) -> str:
    return json.dumps(
        {
            "source": str(report.source),
            "target": report.target,
            "matches": report.matches,
            "copied": report.copied,
            "redacted": report.redacted,
            "kinds": [
                {
                    "kind": kind.kind,
                    "sqlite": kind.source,
                    "postgresql": kind.target,
                    "copied": kind.copied,
                    "redacted": kind.redacted,
                    "left_out": kind.left_out,
                }
                for kind in report.kinds
            ],
        },
        indent=2,
    )
