"""Parsing and encoding of gateway protocol frames (1 and 2), without a socket."""

from __future__ import annotations

import json

import pytest

from flynn.channels.gateway.protocol import (
    Ack,
    ClientText,
    Rejected,
    delta_frame,
    error_frame,
    hello_protocol,
    parse_frame,
    peek_id,
    push_frame,
    ready_frame,
    reply_frame,
)
from flynn.messages import CommandCall


def test_message_and_command_frames_become_text() -> None:
    assert parse_frame('{"type":"message","id":"c1","text":"hi"}', 1024) == ClientText("c1", "hi")
    assert parse_frame('{"type":"command","name":"otr","arg":" on "}', 1024) == ClientText(
        None, "/otr on", CommandCall("otr", "on")
    )


def test_a_slash_message_is_a_command_too() -> None:
    frame = parse_frame('{"type":"message","id":"c1","text":"/Forget my address"}', 1024)
    assert frame == ClientText("c1", "/Forget my address", CommandCall("forget", "my address"))


def test_extra_fields_are_ignored() -> None:
    frame = '{"type":"message","id":"c1","text":"hi","client_time":123}'
    assert parse_frame(frame, 1024) == ClientText("c1", "hi")


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "a\\ud83d"])
def test_lone_surrogates_are_refused(escape: str) -> None:
    frame = parse_frame(f'{{"type":"message","id":"c1","text":"{escape}"}}', 1024)
    assert frame == Rejected("bad_request", "The text holds an unpaired surrogate.", "c1")
    command = parse_frame(f'{{"type":"command","name":"search","arg":"{escape}"}}', 1024)
    assert isinstance(command, Rejected)


def test_an_escaped_surrogate_pair_is_fine() -> None:
    frame = parse_frame('{"type":"message","id":"c1","text":"\\ud83d\\ude00"}', 1024)
    assert frame == ClientText("c1", "😀")


def test_size_is_counted_in_utf8_bytes() -> None:
    text = "€" * 400  # 400 characters, 1200 bytes
    frame = json.dumps({"type": "message", "id": "c1", "text": text}, ensure_ascii=False)
    assert parse_frame(frame, 1024) == Rejected(
        "too_large", "That message is too long (1 KB max).", "c1"
    )
    assert parse_frame(frame, 2048) == ClientText("c1", text)


def test_peek_id_reads_only_the_start() -> None:
    assert peek_id('{"type":"message","id":"c7","text":"…"}') == "c7"
    assert peek_id('{"text":"' + "x" * 600 + '","id":"late"}') is None
    assert peek_id(b'{"id":"bytes"}') is None


def test_server_frames_are_compact_json_safe_for_any_text() -> None:
    assert ready_frame("gateway:tab") == '{"type":"ready","session":"gateway:tab","person":null}'
    assert ready_frame("gateway:alice@tab", person="alice") == (
        '{"type":"ready","session":"gateway:alice@tab","person":"alice"}'
    )
    assert json.loads(delta_frame("c1", "é")) == {"type": "delta", "id": "c1", "text": "é"}
    # A lone surrogate survives as an escape instead of failing the UTF-8 encoding of a send.
    reply_frame("c1", "\ud800").encode()
    assert json.loads(error_frame("internal", "oops")) == {
        "type": "error",
        "code": "internal",
        "message": "oops",
    }


def test_push_frame_names_its_kind() -> None:
    assert json.loads(push_frame("p7", "reminder", "stretch")) == {
        "type": "push",
        "id": "p7",
        "kind": "reminder",
        "text": "stretch",
    }


def test_an_ack_names_the_frame_it_acknowledges() -> None:
    assert parse_frame('{"type":"ack","id":"p17"}', 1024, protocol=2) == Ack("p17")
    assert parse_frame('{"type":"ack","id":"c:1"}', 1024) == Ack("c:1")
    rejected = parse_frame('{"type":"ack"}', 1024, protocol=2)
    assert isinstance(rejected, Rejected) and rejected.code == "bad_request"


def test_in_protocol_2_push_ids_are_the_servers() -> None:
    frame = '{"type":"message","id":"p2","text":"hi"}'
    assert parse_frame(frame, 1024) == ClientText("p2", "hi")  # protocol 1: as before
    rejected = parse_frame(frame, 1024, protocol=2)
    assert isinstance(rejected, Rejected) and rejected.id == "p2"
    assert parse_frame('{"type":"message","id":"pizza","text":"hi"}', 1024, protocol=2) == (
        ClientText("pizza", "hi")
    )


@pytest.mark.parametrize(
    ("asked", "speaks"), [(None, 1), (1, 1), (2, 2), (9, 2), (0, None), ("2", None), (True, None)]
)
def test_a_hello_asks_for_a_protocol(asked: object, speaks: int | None) -> None:
    frame: dict[str, object] = {"type": "hello"}
    if asked is not None:
        frame["protocol"] = asked
    assert hello_protocol(frame) == speaks


def test_ready_says_the_protocol_only_from_2() -> None:
    assert json.loads(ready_frame("gateway:x")) == {
        "type": "ready",
        "session": "gateway:x",
        "person": None,
    }
    assert json.loads(ready_frame("gateway:x", 2, "alice")) == {
        "type": "ready",
        "session": "gateway:x",
        "protocol": 2,
        "person": "alice",
    }
