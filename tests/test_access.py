"""Who is let in, in one place: ``Identity`` on the gateway (a client id proves nothing, a
person's key does; the channel token is the owner's) and for accounts approved by pairing, and
``ChannelAccess`` at a bot's door (what a stranger is told in a private chat and in a group)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.access import ChannelAccess
from flynn.identity import GatewayClient, Identity
from flynn.memory.database import Database
from flynn.memory.pairing import SqlitePairing
from flynn.messages import ChannelAccount, SessionKey
from flynn.schedule.migrations import SCHEMA
from flynn.settings import UserAccounts

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
USERS = {
    "alice": UserAccounts(gateway=["alice-laptop"], telegram=["11"]),
    "bob": UserAccounts(),
}
STRANGER = ChannelAccount("telegram", "4242")


@pytest.fixture
def pairing(tmp_path: Path) -> Iterator[SqlitePairing]:
    with Database.open(tmp_path / "flynn.db", SCHEMA) as db:
        yield SqlitePairing(db, max_pending=1)


def gateway_scope(identity: Identity, client: GatewayClient) -> str:
    key = client.key
    return identity.resolve(ChannelAccount("gateway", key), SessionKey("gateway", key)).root


def test_on_the_gateway_the_token_decides_never_the_client_id() -> None:
    owned = Identity(user_namespace="user", users=USERS)
    assert gateway_scope(owned, GatewayClient("alice-laptop")) == "user"
    assert gateway_scope(owned, GatewayClient("alice-laptop", "bob")) == "users/bob"
    assert gateway_scope(owned, GatewayClient("x:y", "alice")) == "users/alice"
    # A person taken out of users: is nobody, not the owner.
    assert gateway_scope(owned, GatewayClient("tab", "carol")) == "sessions/gateway:carol@tab"
    session_only = Identity(user_namespace=None, users=USERS)
    assert gateway_scope(session_only, GatewayClient("alice-laptop")) == (
        "sessions/gateway:alice-laptop"
    )
    # Keys round-trip, and no client id spells a person's key.
    client = GatewayClient("a:b.c-d_e", "alice")
    assert GatewayClient.from_key(client.key) == client
    assert GatewayClient.from_key("alice-laptop") == GatewayClient("alice-laptop")
    assert GatewayClient("tab", "alice").key != GatewayClient("tab", "bob").key


def test_approved_accounts_are_their_person_while_the_person_is_known(
    pairing: SqlitePairing,
) -> None:
    offer = pairing.ask(STRANGER, "Carol", now=NOW)
    assert offer is not None
    identity = Identity(user_namespace="user", users=USERS, approvals=pairing)
    access = ChannelAccess("telegram", frozenset({"11"}), identity=identity)
    assert not access.is_allowed(STRANGER)
    assert identity.resolve(STRANGER, SessionKey("telegram", "4242")).root == (
        "sessions/telegram:4242"
    )
    pairing.approve(offer.request.code, "bob", now=NOW)
    assert access.is_allowed(STRANGER)
    assert identity.resolve(STRANGER, SessionKey("telegram", "4242")).root == "users/bob"
    # bob leaves users:: his approved account is let in no more.
    without_bob = Identity(
        user_namespace="user", users={"alice": USERS["alice"]}, approvals=pairing
    )
    assert not ChannelAccess("telegram", frozenset(), identity=without_bob).is_allowed(STRANGER)
    assert without_bob.can_approve_as("user") and not without_bob.can_approve_as("bob")


def test_a_stranger_gets_a_code_in_private_and_the_refusal_in_a_group(
    pairing: SqlitePairing,
) -> None:
    now = [NOW]
    identity = Identity(user_namespace="user", users=USERS, approvals=pairing)
    access = ChannelAccess(
        "telegram", frozenset(), identity=identity, pairing=pairing, clock=lambda: now[0]
    )
    told = access.stranger_reply(STRANGER, "Carol", private=True)
    [code] = [request.code for request in pairing.pending(now=NOW)]
    assert code in told and f"flynn users approve {code} --as NAME" in told
    # The same words while the code lives: a channel says them once.
    assert access.stranger_reply(STRANGER, "Carol", private=True) == told
    grouped = access.stranger_reply(ChannelAccount("telegram", "77"), None, private=False)
    assert "add 77 to channels.telegram.allowed_users" in grouped
    # One code may wait (max_pending=1): the next stranger is told to come back later.
    crowded = access.stranger_reply(ChannelAccount("telegram", "78"), None, private=True)
    assert "too many requests" in crowded and code not in crowded
    now[0] = NOW + timedelta(hours=1)
    fresh = access.stranger_reply(STRANGER, "Carol", private=True)
    assert fresh != told and code not in fresh


def test_whose_memory_reaches_beyond_the_chat_is_whose_commands_a_group_does_not_answer() -> None:
    """A person of ``users:`` and, alone, the owner remember across chats (their ``/search`` in
    a group would show what they said elsewhere); an account only let in, beside ``users:``, is
    remembered in its chat alone (a topic's ``/search`` shows what it said there)."""
    alice, unlisted = ChannelAccount("telegram", "11"), ChannelAccount("telegram", "77")
    people = Identity(user_namespace="user", users=USERS)
    owner_alone = Identity(user_namespace="user", users={})
    nobody = Identity(user_namespace=None, users={})
    for identity, account in ((people, unlisted), (owner_alone, unlisted), (people, alice)):
        scope = identity.resolve(
            account, SessionKey("telegram", "-100", sender=account.external_id)
        )
        assert identity.remembers_across_chats(account) is scope.shared
    assert people.remembers_across_chats(alice) and owner_alone.remembers_across_chats(unlisted)
    assert not people.remembers_across_chats(unlisted)
    assert not nobody.remembers_across_chats(unlisted)
    assert (
        ChannelAccess("telegram", frozenset({"77"}), identity=people).remembers_across_chats(
            unlisted
        )
        is False
    )
