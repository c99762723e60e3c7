"""Session keys: a value with its sender apart, and the text stored in the database."""

from __future__ import annotations

import pytest

from flynn.messages import SessionKey


@pytest.mark.parametrize(
    "key",
    [
        SessionKey("telegram", "-100", "77", sender="1001"),
        SessionKey("telegram", "-100", sender="1001"),
        SessionKey("discord", "5", "6"),
        SessionKey("discord", "5", sender="42"),
        SessionKey("gateway", "alice@laptop"),
        SessionKey("cli", "ana"),
    ],
)
def test_a_key_reads_back_from_its_text(key: SessionKey) -> None:
    assert SessionKey.parse(str(key)) == key


def test_the_text_stored_before_the_sender_was_a_field_reads_as_the_same_conversation() -> None:
    # Written by the router into sessions, messages and intake rows as ``[thread/]u<sender>``.
    topic = SessionKey.parse("telegram:-100:77/u1001")
    group = SessionKey.parse("discord:5:u42")

    assert topic == SessionKey("telegram", "-100", "77", sender="1001")
    assert group == SessionKey("discord", "5", None, sender="42")
    assert (str(topic), str(group)) == ("telegram:-100:77/u1001", "discord:5:u42")


def test_a_gateway_client_id_holding_u_is_not_read_as_a_sender() -> None:
    key = SessionKey.parse("gateway:alice@laptop:u2")

    assert (key.chat_id, key.thread, key.sender) == ("alice@laptop", "u2", None)
    assert str(key) == "gateway:alice@laptop:u2"


@pytest.mark.parametrize("text", ["telegram", "telegram:", ":c1"])
def test_text_that_names_no_chat_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a session key"):
        SessionKey.parse(text)
