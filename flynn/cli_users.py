"""``flynn users list|token|pending|approve|deny|unpair``: who may talk to Flynn. A person's own
gateway token (shown once, kept hashed), and the pairing codes strangers got from a bot, let in as
a person of ``users:`` (or as the owner) without editing ``allowed_users``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.cli_settings import EXIT_OK, UsageError, command_logging, command_settings, utc_now

if TYPE_CHECKING:  # the commands import them when they run (flynn.cli_settings says why)
    from flynn.identity import Identity
    from flynn.memory.pairing import PairingRequest
    from flynn.settings import Settings
    from flynn.storage_place import Storage

_CHANNELS = ("telegram", "discord")


def add_users_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    users = commands.add_parser("users", help="people: their tokens, and strangers asking in")
    users_commands = users.add_subparsers(title="users commands", metavar="ACTION")

    def users_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = users_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
        return sub

    listing = users_command(
        "list", "people, their accounts and tokens, accounts let in by pairing, codes waiting"
    )
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=_cmd_list)
    token = users_command(
        "token",
        "print a new gateway token for a person of users: (their earlier ones stay valid), "
        "or --revoke all of theirs",
    )
    token.add_argument("name", help="a person of the users: map")
    token.add_argument(
        "--revoke",
        action="store_true",
        help="revoke every token of theirs: their connections are refused at their next hello",
    )
    token.set_defaults(handler=_cmd_token)
    pending = users_command("pending", "pairing codes strangers got, waiting for approval")
    pending.add_argument("--json", action="store_true", help="machine-readable output")
    pending.set_defaults(handler=_cmd_pending)
    approve = users_command("approve", "let the account that holds a pairing code in")
    approve.add_argument("code", help="the code the stranger was given")
    approve.add_argument(
        "--as",
        dest="name",
        required=True,
        help="who they are: a person of users:, or the owner (memory.user_namespace)",
    )
    approve.set_defaults(handler=_cmd_approve)
    deny = users_command("deny", "drop a waiting pairing code")
    deny.add_argument("code")
    deny.set_defaults(handler=_cmd_deny)
    unpair = users_command("unpair", "take back an account let in by pairing")
    unpair.add_argument("channel", choices=_CHANNELS)
    unpair.add_argument("account", help="the account's id on that channel")
    unpair.set_defaults(handler=_cmd_unpair)


@contextmanager
def _database(settings: Settings) -> Iterator[Storage]:
    from flynn.datadir import prepare_data_dir
    from flynn.storage_place import opened_storage

    prepare_data_dir(settings.data_dir)
    with opened_storage(settings) as storage:
        yield storage


def _identity(settings: Settings) -> Identity:
    from flynn.identity import Identity

    return Identity(user_namespace=settings.memory.user_namespace, users=settings.users)


def _cmd_token(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    name: str = args.name
    if not _identity(settings).is_person(name):
        known = ", ".join(sorted(settings.users)) or "nobody: the users: map is empty"
        raise UsageError("NAME", f"{name!r} is not a person of users: (known: {known})")
    with _database(settings) as storage:
        tokens = storage.person_tokens
        if args.revoke:
            count = tokens.revoke(name)
            print(
                f"Revoked {_count(count, 'token')} of {name}; "
                "connections made with them are refused at their next hello."
            )
            return EXIT_OK
        token = tokens.issue(name, now=utc_now())
    print(token)
    gateway = settings.channels.gateway
    print(
        f"{name}'s gateway token, shown this once and stored only as a hash. Their web chat: "
        f"http://{gateway.host}:{gateway.port}/#token=<this token>",
        file=sys.stderr,
    )
    return EXIT_OK


def _cmd_pending(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    now = utc_now()
    with _database(settings) as storage:
        waiting = storage.pairing.pending(now=now)
    if args.json:
        rows = [_request_json(request) for request in waiting]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return EXIT_OK
    if not waiting:
        print("No pairing codes are waiting.")
    for request in waiting:
        minutes = max(1, round((request.expires_at - now).total_seconds() / 60))
        who = f" ({request.sender_name})" if request.sender_name else ""
        print(
            f"{request.code}  {request.account.channel} {request.account.external_id}{who}"
            f"  expires in {minutes} min"
        )
    return EXIT_OK


def _cmd_approve(args: argparse.Namespace) -> int:
    from flynn.memory.pairing import normal_code

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    name: str = args.name
    if not _identity(settings).can_approve_as(name):
        raise UsageError("--as", _not_approvable(settings, name))
    with _database(settings) as storage:
        request = storage.pairing.approve(args.code, name, now=utc_now())
    if request is None:
        raise UsageError(
            "CODE",
            f"no pairing code {normal_code(args.code)!r} is waiting (codes last an hour: "
            "ask them to write to the bot again; `flynn users pending` lists the live ones)",
        )
    account = request.account
    print(f"Let {account.channel} account {account.external_id} in as {name}.")
    return EXIT_OK


def _cmd_deny(args: argparse.Namespace) -> int:
    from flynn.memory.pairing import normal_code

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    with _database(settings) as storage:
        dropped = storage.pairing.deny(args.code)
    if not dropped:
        raise UsageError("CODE", f"no pairing code {normal_code(args.code)!r} is waiting")
    print(f"Dropped pairing code {normal_code(args.code)}.")
    return EXIT_OK


def _cmd_unpair(args: argparse.Namespace) -> int:
    from flynn.messages import ChannelAccount

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    account = ChannelAccount(args.channel, args.account)
    with _database(settings) as storage:
        removed = storage.pairing.unapprove(account)
    if not removed:
        raise UsageError(
            "ACCOUNT",
            f"{account.channel} account {account.external_id} was not "
            "let in by pairing (accounts in the config are the config's)",
        )
    print(f"{account.channel} account {account.external_id} may no longer talk to Flynn.")
    return EXIT_OK


@dataclass(frozen=True, slots=True)
class _Person:
    name: str
    accounts: dict[str, list[str]]
    paired: list[str]
    tokens: int

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "accounts": self.accounts,
            "paired": self.paired,
            "tokens": self.tokens,
        }


def _cmd_list(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    command_logging(settings, quiet=True)
    now = utc_now()
    with _database(settings) as storage:
        tokens = storage.person_tokens.tokens()
        pairing = storage.pairing
        approved = pairing.approved()
        waiting = pairing.pending(now=now)

    def paired_as(name: str) -> list[str]:
        return [
            f"{entry.account.channel}:{entry.account.external_id}"
            for entry in approved
            if entry.person == name
        ]

    people = [
        _Person(
            name,
            {
                channel: list(getattr(accounts, channel))
                for channel in ("telegram", "discord", "gateway", "cli")
                if getattr(accounts, channel)
            },
            paired_as(name),
            sum(1 for token in tokens if token.person == name),
        )
        for name, accounts in sorted(settings.users.items())
    ]
    owner = settings.memory.user_namespace
    as_owner = paired_as(owner) if owner and owner not in settings.users else []
    if args.json:
        listing = {
            "owner": owner,
            "owner_paired": as_owner,
            "people": [person.as_json() for person in people],
            "pending": [_request_json(request) for request in waiting],
        }
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return EXIT_OK
    print(f"Owner: {owner or '(none: memory per session)'}; the channel token is theirs.")
    if as_owner:
        print(f"  paired: {', '.join(as_owner)}")
    if not people:
        print("No people in users:.")
    for person in people:
        print(f"{person.name}: {_count(person.tokens, 'gateway token')}")
        for channel, ids in person.accounts.items():
            print(f"  {channel}: {', '.join(ids)}")
        if person.paired:
            print(f"  paired: {', '.join(person.paired)}")
    waiting_text = _count(len(waiting), "pairing code")
    print(f"{waiting_text} waiting" + (": flynn users pending" if waiting else "."))
    return EXIT_OK


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _request_json(request: PairingRequest) -> dict[str, object]:
    return {
        "code": request.code,
        "channel": request.account.channel,
        "account": request.account.external_id,
        "name": request.sender_name,
        "expires_at": request.expires_at.isoformat(),
    }


def _not_approvable(settings: Settings, name: str) -> str:
    people = ", ".join(sorted(settings.users))
    owner = settings.memory.user_namespace
    choices = [part for part in (people, f"the owner {owner!r}" if owner else "") if part]
    return (
        f"{name!r} is neither a person of users: nor the owner; add them to users: in the "
        f"config first (choices now: {' or '.join(choices) or 'none'})"
    )
