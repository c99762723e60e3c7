"""``flynn costs``: tokens and spend of the model calls, by task and model, with a total, from
the ``costs`` table (each call's cost was stored with it, at the prices of its day)."""

from __future__ import annotations

import argparse
import json
import re
from datetime import date, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.cli_memory import zone_of
from flynn.cli_settings import EXIT_OK, UsageError, command_logging, command_settings, utc_now

if TYPE_CHECKING:  # the command imports them when they run (flynn.cli_settings says why)
    from flynn.memory.costs import Spend, SpendLine

_SPAN = re.compile(r"(\d{1,6})\s*([hdw])")
_SPAN_UNITS = {"h": "hours", "d": "days", "w": "weeks"}
_HEADINGS = ("task", "model", "calls", "tokens in", "tokens out", "cost")
_UNPRICED = "unknown"


def add_costs_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    help_text = "tokens and spend of the model calls, by task and model"
    costs = commands.add_parser("costs", help=help_text, description=help_text)
    costs.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    costs.add_argument(
        "--since",
        metavar="WHEN",
        help="only calls from WHEN on: a date (YYYY-MM-DD, from its start in persona.timezone "
        "or this machine's zone), an ISO time, today, month (this month), or a span back from "
        "now (12h, 7d, 4w)",
    )
    costs.add_argument("--json", action="store_true", help="machine-readable output")
    costs.set_defaults(handler=_cmd_costs)


def _cmd_costs(args: argparse.Namespace) -> int:
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    zone = zone_of(settings)
    since = None if args.since is None else parse_since(args.since, zone, now=utc_now())
    with opened_storage(settings) as storage:
        costs = storage.memory.costs
        lines = costs.by_task_and_model(since)
        total = costs.spend(since)
    if args.json:
        report = {
            "since": None if since is None else since.isoformat(),
            "currency": "USD",
            "by_task_and_model": [
                {"task": line.task, "provider": line.provider, "model": line.model}
                | line.spend.as_json()
                for line in lines
            ],
            "total": total.as_json(),
        }
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(render_costs(lines, total, since.astimezone(zone) if since else None))
    return EXIT_OK


def parse_since(text: str, zone: tzinfo | None, *, now: datetime) -> datetime:
    """``--since``: ``today``, ``month``, a span back from ``now`` (``7d``), a date (its start)
    or an ISO time; dates and times without an offset are in ``zone``. Raises ``UsageError``
    for anything else, and for a moment after ``now``."""
    word = text.strip().casefold()
    local_now = now.astimezone(zone)
    midnight = local_now.replace(hour=0, minute=0, second=0, microsecond=0)
    try:
        if word == "today":
            since = midnight
        elif word == "month":
            since = midnight.replace(day=1)
        elif span := _SPAN.fullmatch(word):
            count, unit = span.groups()
            since = now - timedelta(**{_SPAN_UNITS[unit]: int(count)})
        elif len(word) == 10:
            since = datetime.combine(date.fromisoformat(word), time())
        else:
            since = datetime.fromisoformat(text.strip())
    except (ValueError, OverflowError):
        raise UsageError(
            "--since",
            f"not a date (YYYY-MM-DD), an ISO time, today, month or a span like 7d: {text!r}",
        ) from None
    if since.tzinfo is None:
        since = since.replace(tzinfo=zone) if zone is not None else since.astimezone()
    if since > now:
        raise UsageError("--since", f"{text} is in the future: nothing was spent yet")
    return since


def render_costs(lines: list[SpendLine], total: Spend, since: datetime | None) -> str:
    """A table of ``lines`` with the total under it, and what ``unknown`` means when it shows."""
    when = f" since {since:%Y-%m-%d %H:%M} ({since:%Z})" if since else ""
    if not lines:
        return f"No model calls recorded{when or ' yet'}."
    rows = [_HEADINGS]
    rows.extend((line.task, line.model, *_figures(line.spend)) for line in lines)
    rows.append(("total", "", *_figures(total)))
    widths = [max(len(row[column]) for row in rows) for column in range(len(_HEADINGS))]
    text = [f"Model calls{when}, in US dollars:"]
    for row in rows:
        cells = [
            cell.ljust(width) if column < 2 else cell.rjust(width)
            for column, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        text.append("  ".join(cells).rstrip())
    if total.unpriced_calls:
        text.append(
            f"{_UNPRICED}: {total.unpriced_calls} call(s) of a model without a price (their "
            "tokens are counted); llm.prices in the config prices it from then on"
        )
    return "\n".join(text)


def _figures(spend: Spend) -> tuple[str, str, str, str]:
    from flynn.memory.costs import usd

    if not spend.is_priced:
        cost = _UNPRICED
    elif spend.unpriced_calls:
        cost = f"{usd(spend.cost)} + {_UNPRICED}"
    else:
        cost = usd(spend.cost)
    return (
        f"{spend.calls:,}",
        f"{spend.input_tokens:,}",
        f"{spend.output_tokens:,}",
        cost,
    )
