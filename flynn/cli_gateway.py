"""``flynn gateway token``: the gateway's channel token (the owner's web chat), where it is
kept, and ``--rotate`` for a new one, shown once (on PostgreSQL only its digest is kept, so a
new one is the way to have it again)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.cli_settings import EXIT_FAILED, EXIT_OK, command_logging, command_settings, utc_now

if TYPE_CHECKING:  # the command imports them when it runs (flynn.cli_settings says why)
    from flynn.settings import Settings


def add_gateway_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    gateway = commands.add_parser("gateway", help="the gateway's channel token (the web chat's)")
    gateway_commands = gateway.add_subparsers(title="gateway commands", metavar="ACTION")
    help_text = (
        "print the generated gateway token kept in the data dir (on PostgreSQL only its digest "
        "is kept: say so), or --rotate: make a new one and print it once"
    )
    token = gateway_commands.add_parser("token", help=help_text, description=help_text)
    token.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
    token.add_argument(
        "--rotate",
        action="store_true",
        help="replace the token: the old one is refused from then on (on PostgreSQL by every "
        "worker at once; on SQLite once flynn run restarts)",
    )
    token.set_defaults(handler=_cmd_token)


def _cmd_token(args: argparse.Namespace) -> int:
    from flynn.datadir import prepare_data_dir
    from flynn.gateway_token import (
        ROTATE_COMMAND,
        TOKEN_FILE,
        kept_gateway_token,
        rotate_gateway_token,
    )
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    prepare_data_dir(settings.data_dir)
    with opened_storage(settings) as storage:
        kept = storage.gateway_token
        if args.rotate:
            token = rotate_gateway_token(settings, kept, now=utc_now)
            print(token)
            applies = (
                "every worker accepts it from now on, and refuses the old one"
                if kept is not None
                else "restart flynn run for the gateway to take it"
            )
            print(
                f"The new gateway token, shown this once; {applies}. {_web_chat(settings)}",
                file=sys.stderr,
            )
            return EXIT_OK
        if settings.channels.gateway.token is not None:
            print(
                "the gateway token is set in the config (channels.gateway.token)", file=sys.stderr
            )
            return EXIT_OK
        if kept is not None:
            what = (
                "is kept" if kept.digest() is not None else "is none yet (flynn run generates one)"
            )
            print(
                f"flynn: the gateway token {what} in the database as a digest only, so it "
                f"cannot be shown; `{ROTATE_COMMAND}` makes a new one and prints it",
                file=sys.stderr,
            )
            return EXIT_FAILED
    token_text = kept_gateway_token(settings.data_dir)
    if token_text is None:
        print(
            f"flynn: no gateway token yet: flynn run generates one into "
            f"{settings.data_dir / TOKEN_FILE}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(token_text)
    return EXIT_OK


def _web_chat(settings: Settings) -> str:
    gateway = settings.channels.gateway
    return f"Web chat: http://{gateway.host}:{gateway.port}/#token=<this token>"
