"""``flynn distill short|mid|long [--user NAME]``: one distillation now, printing what
changed in the person's MEMORY_*.md."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.cli_memory import unknown_user
from flynn.cli_settings import EXIT_FAILED, EXIT_OK, UsageError, command_logging, command_settings

if TYPE_CHECKING:  # the command imports them when it runs (flynn.cli_settings says why)
    from flynn.distill.distiller import Distilled, Tier
    from flynn.settings import Settings

TIERS = ("short", "mid", "long")
"""``flynn.distill.distiller.TIERS``, spelt out so that building the parser does not load the
distiller (``tests/test_cli_startup.py`` holds them equal)."""


def add_distill_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # By hand it runs even with distill.enabled false: that switch is for the schedule.
    help_text = "rewrite a person's MEMORY_SHORT/MID/LONG.md now, and show what changed"
    distill = commands.add_parser("distill", help=help_text, description=help_text)
    distill.add_argument(
        "tier",
        choices=TIERS,
        help="short: recent days, no model; mid: recent weeks and long: the long run, by the "
        "tier's model (llm.tasks.distill_mid / distill_long, else llm.tasks.distill)",
    )
    distill.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    distill.add_argument("--user", help="a person from the users: map (default: the owner)")
    distill.set_defaults(handler=_cmd_distill)


def person_namespace(settings: Settings, user: str | None) -> str:
    """The namespace whose notes are distilled: ``--user``'s, else the single owner's."""
    if user is not None:
        if user not in settings.users:
            raise unknown_user(settings, user)
        return f"users/{user}"
    if settings.users:
        known = ", ".join(sorted(settings.users))
        raise UsageError("--user", f"name whose notes to distill (users: {known})")
    if not settings.memory.user_namespace:
        raise UsageError(
            "memory.user_namespace",
            "is null, so memory is kept per conversation and there is no person to distill "
            "for; set it (or users:) to give Flynn an owner",
        )
    return settings.memory.user_namespace


def _cmd_distill(args: argparse.Namespace) -> int:
    from flynn.distill.distiller import DistillFailed

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    namespace = person_namespace(settings, args.user)
    tier: Tier = args.tier
    try:
        result = asyncio.run(_distill(settings, tier, namespace))
    except DistillFailed as exc:
        print(f"flynn: distill {tier} failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    diff = result.diff()
    if diff:
        print(diff)
    print(result.summary())
    if not result.empty:
        print(f"file: {result.where}")
    return EXIT_OK


async def _distill(settings: Settings, tier: Tier, namespace: str) -> Distilled:
    from flynn.app import App

    app = App.open(settings, os.environ)
    try:
        await asyncio.to_thread(app.load_embeddings)
        return await app.distiller.run(tier, namespace)
    finally:
        await app.aclose()
