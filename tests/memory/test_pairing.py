"""Pairing codes with an injected clock: one code per account while it lives (asking again gives
the same one), a new one after it expired, at most ``max_pending`` at once, approving spends the
code and lets the account in as the person, and an expired or unknown code lets nobody in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.conftest import Stores

from flynn.memory.pairing import ALPHABET, CODE_LENGTH
from flynn.messages import ChannelAccount

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
STRANGER = ChannelAccount("telegram", "4242")


def test_asking_again_gives_the_same_code_until_it_expires(stores: Stores) -> None:
    pairing = stores.pairing(ttl=timedelta(hours=1))
    first = pairing.ask(STRANGER, "Carol", now=NOW)
    assert first is not None and first.is_new
    code = first.request.code
    assert len(code) == CODE_LENGTH and set(code) <= set(ALPHABET)
    assert not set(code) & set("01OIL")
    again = pairing.ask(STRANGER, "Carol", now=NOW + timedelta(minutes=59))
    assert again is not None and not again.is_new and again.request.code == code
    later = pairing.ask(STRANGER, "Carol", now=NOW + timedelta(hours=1))
    assert later is not None and later.is_new and later.request.code != code
    # The expired code lets nobody in.
    assert pairing.approve(code, "alice", now=NOW + timedelta(hours=1)) is None
    assert pairing.person_of(STRANGER) is None


def test_few_codes_wait_at_once(stores: Stores) -> None:
    pairing = stores.pairing(ttl=timedelta(hours=1), max_pending=3)
    for number in range(3):
        offer = pairing.ask(ChannelAccount("telegram", str(number)), None, now=NOW)
        assert offer is not None
    assert pairing.ask(STRANGER, None, now=NOW + timedelta(minutes=10)) is None
    # Those already waiting still get theirs.
    assert pairing.ask(ChannelAccount("telegram", "0"), None, now=NOW) is not None
    assert len(pairing.pending(now=NOW)) == 3
    # Once they expire there is room again.
    assert pairing.ask(STRANGER, None, now=NOW + timedelta(hours=1)) is not None
    assert [r.account for r in pairing.pending(now=NOW + timedelta(hours=1))] == [STRANGER]


def test_approving_spends_the_code_and_lets_the_account_in(stores: Stores) -> None:
    pairing = stores.pairing()
    offer = pairing.ask(STRANGER, "Carol", now=NOW)
    assert offer is not None
    code = offer.request.code
    typed = f"{code[:4].lower()}-{code[4:].lower()}"  # as a person might type it
    approved = pairing.approve(typed, "alice", now=NOW + timedelta(minutes=5))
    assert approved is not None and approved.account == STRANGER
    assert pairing.person_of(STRANGER) == "alice"
    assert pairing.person_of(ChannelAccount("discord", "4242")) is None
    assert pairing.approve(code, "bob", now=NOW) is None  # spent
    assert pairing.pending(now=NOW) == []
    assert [(a.account, a.person) for a in pairing.approved()] == [(STRANGER, "alice")]
    assert pairing.unapprove(STRANGER)
    assert pairing.person_of(STRANGER) is None


def test_a_denied_code_is_gone(stores: Stores) -> None:
    pairing = stores.pairing()
    offer = pairing.ask(STRANGER, None, now=NOW)
    assert offer is not None
    assert pairing.deny(offer.request.code)
    assert not pairing.deny(offer.request.code)
    assert pairing.approve(offer.request.code, "alice", now=NOW) is None
