"""Durable intake: accepted messages with their text until answered, replies until delivered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from memory.conftest import Stores

from flynn.memory.database import Database
from flynn.memory.inbound import SqlInboundLog
from flynn.memory.stores import SqliteMemory
from flynn.messages import InboundMessage, IntakeKey
from flynn.schedule.migrations import SCHEMA

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def key(message_id: str, channel: str = "telegram", chat_id: str = "42") -> IntakeKey:
    return IntakeKey(channel, chat_id, message_id)


def message(
    text: str, message_id: str, channel: str = "telegram", chat_id: str = "42"
) -> InboundMessage:
    return InboundMessage(
        channel=channel,
        chat_id=chat_id,
        sender_id="7",
        text=text,
        message_id=message_id,
        received_at=T0,
        thread="t",
        sender_name="Ana",
        is_group=True,
        forwarded=True,
    )


def test_a_message_is_new_once_pending_while_running_and_answered_after(
    inbound: SqlInboundLog,
) -> None:
    first = message("hello", "1")
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).state == "new"
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).state == "pending"
    other = message("hello", "1", channel="discord")
    assert inbound.accept(other, "discord:42", "user", keep_text=True, now=T0).state == "new"
    inbound.answered(key("1"), reply="hi!", error_code=None, now=T0)
    again = inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0)
    assert (again.state, again.reply, again.error_code) == ("answered", "hi!", None)
    assert inbound.delivered(key("1"), now=T0)
    assert not inbound.delivered(key("1"), now=T0)  # a second tab's acknowledgement
    again = inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0)
    assert (again.state, again.reply) == ("delivered", "hi!")  # the person has it: send nothing


def test_a_failed_turn_runs_again_when_the_same_id_comes_back(inbound: SqlInboundLog) -> None:
    first = message("hello", "1")
    inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0)
    inbound.answered(key("1"), reply="model down", error_code="llm_unavailable", now=T0)
    inbound.delivered(key("1"), now=T0)
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).state == "new"
    assert [item.message.text for item in inbound.unfinished()] == ["hello"]


def test_what_a_restart_must_finish_survives_it_in_order(stores: Stores) -> None:
    inbound = stores.inbound
    for number in range(1, 5):
        inbound.accept(
            message(f"m{number}", str(number)),
            "telegram:42",
            "user",
            keep_text=number != 4,
            now=T0,
        )
    inbound.answered(key("1"), reply="r1", error_code=None, now=T0)
    inbound.delivered(key("1"), now=T0)
    inbound.answered(key("2"), reply="r2", error_code=None, now=T0)
    with stores.reopened() as again:  # another process, or this one after a restart
        unfinished = again.inbound.unfinished()
    assert [(u.message.message_id, u.reply, u.has_text) for u in unfinished] == [
        ("2", "r2", False),  # answered, not sent: its text is gone, its reply kept
        ("3", None, True),
        ("4", None, False),  # off the record: never had its text kept
    ]
    replayed = unfinished[1].message
    assert (replayed.text, replayed.chat_id, replayed.thread, replayed.sender_name) == (
        "m3",
        "42",
        "t",
        "Ana",
    )
    assert replayed.is_group and replayed.forwarded and unfinished[1].session == "telegram:42"


def test_text_is_dropped_once_answered(stores: Stores) -> None:
    stores.inbound.accept(
        message("secret plans", "1"), "telegram:42", "user", keep_text=True, now=T0
    )
    stores.inbound.answered(key("1"), reply="ok", error_code=None, now=T0)
    row = stores.sql.fetchone("SELECT text FROM intake WHERE message_id = '1'")
    assert row is not None and row["text"] is None


def test_prune_forgets_only_finished_old_messages(inbound: SqlInboundLog) -> None:
    inbound.accept(message("old", "old"), "s", "user", keep_text=True, now=T0)
    inbound.answered(key("old"), reply="ok", error_code=None, now=T0)
    inbound.delivered(key("old"), now=T0)
    inbound.accept(message("stuck", "stuck"), "s", "user", keep_text=True, now=T0)
    inbound.accept(message("new", "new"), "s", "user", keep_text=True, now=T0 + timedelta(days=2))
    assert inbound.prune(before=T0 + timedelta(days=1)) == 1
    assert inbound.accept(message("old", "old"), "s", "user", keep_text=True, now=T0).state == "new"
    assert [u.message.message_id for u in inbound.unfinished()] == ["stuck", "new", "old"]


def test_prune_forgets_old_replies_nobody_acknowledged(inbound: SqlInboundLog) -> None:
    """A protocol 2 client that never acknowledges (or a client id never seen again) left its
    replies stored forever: never pruned, all of them sent again at every restart and every
    hello. Past the keep horizon they go like delivered ones (the conversation keeps them)."""
    for frame in ("unacked", "refused", "stuck"):
        inbound.accept(
            message(frame, frame, "gateway", "bot"), "gateway:bot", "user", keep_text=True, now=T0
        )
    inbound.answered(key("unacked", "gateway", "bot"), reply="r", error_code=None, now=T0)
    inbound.answered(key("refused", "gateway", "bot"), reply="e", error_code="internal", now=T0)
    assert inbound.prune(before=T0 + timedelta(days=1)) == 2
    assert inbound.undelivered("gateway", "bot") == []
    assert [u.message.message_id for u in inbound.unfinished()] == ["stuck"]


def test_forgetting_a_person_forgets_their_intake(memory: SqliteMemory) -> None:
    memory.inbound.accept(message("mine", "1"), "s", "users/alice", keep_text=True, now=T0)
    memory.inbound.accept(message("theirs", "2"), "s", "users/bob", keep_text=True, now=T0)
    memory.forget_namespace("users/alice")
    assert [u.message.text for u in memory.inbound.unfinished()] == ["theirs"]


IDS = ["x:1", "1", "x", ":", "a/b", "a b", "ünï", "日本:語", "x:1:", " "]


def test_ids_holding_colons_slashes_spaces_or_unicode_never_collide(inbound: SqlInboundLog) -> None:
    """The gateway used to key a message as ``<client_id>:<frame_id>``: ``alice-laptop`` + ``x:1``
    and ``alice-laptop:x`` + ``1`` were one message, so one was never stored and the other's
    reply went to the wrong client."""
    chats = ["alice-laptop", "alice-laptop:x", "alice", "alice:", "a/b", "ü"]
    for chat in chats:
        for frame in IDS:
            accepted = inbound.accept(
                message(f"{chat}|{frame}", frame, channel="gateway", chat_id=chat),
                f"gateway:{chat}",
                "user",
                keep_text=True,
                now=T0,
            )
            assert accepted.state == "new", (chat, frame)
    for chat in chats:
        for frame in IDS:
            inbound.answered(
                key(frame, "gateway", chat), reply=f"re {chat}|{frame}", error_code=None, now=T0
            )
    for chat in chats:
        undelivered = inbound.undelivered("gateway", chat)
        assert [(u.message.message_id, u.reply) for u in undelivered] == [
            (frame, f"re {chat}|{frame}") for frame in IDS
        ]


def test_undelivered_replies_are_one_chats_in_order_until_delivered(inbound: SqlInboundLog) -> None:
    for number, chat in enumerate(["web-a", "web-b", "web-a", "web-a"]):
        inbound.accept(
            message(f"m{number}", f"c{number}", "gateway", chat),
            "s",
            "user",
            keep_text=True,
            now=T0,
        )
    inbound.answered(key("c0", "gateway", "web-a"), reply="r0", error_code=None, now=T0)
    inbound.answered(key("c1", "gateway", "web-b"), reply="r1", error_code=None, now=T0)
    inbound.answered(key("c3", "gateway", "web-a"), reply="r3", error_code="internal", now=T0)
    # c2 is still running: not a reply yet.
    assert [u.reply for u in inbound.undelivered("gateway", "web-a")] == ["r0", "r3"]
    inbound.delivered(key("c0", "gateway", "web-a"), now=T0)
    inbound.delivered(key("c3", "gateway", "web-a"), now=T0)
    assert inbound.undelivered("gateway", "web-a") == []
    assert [u.reply for u in inbound.undelivered("gateway", "web-b")] == ["r1"]


def test_an_acknowledged_notice_leaves_the_message_to_be_answered_and_delivered(
    inbound: SqlInboundLog,
) -> None:
    """A notice under a message's id before its answer ("Flynn is restarting", "I can't reach
    my database"), acknowledged by a protocol 2 client, is not the answer: the answer, stored
    later, is delivered by its own acknowledgement, and not sent again after."""
    first = message("hello", "c1", "gateway", "web")
    inbound.accept(first, "gateway:web", "user", keep_text=True, now=T0)
    assert not inbound.delivered(key("c1", "gateway", "web"), now=T0)  # the notice's ack
    inbound.answered(key("c1", "gateway", "web"), reply="hi!", error_code=None, now=T0)
    assert [u.reply for u in inbound.undelivered("gateway", "web")] == ["hi!"]
    assert inbound.delivered(key("c1", "gateway", "web"), now=T0)
    assert inbound.undelivered("gateway", "web") == []
    assert inbound.unfinished() == []
    again = inbound.accept(first, "gateway:web", "user", keep_text=True, now=T0)
    assert again.state == "delivered"


def test_an_older_gateway_row_keeps_its_frame_id_across_the_migration(db_path: Path) -> None:
    """Rows written before intake had three key columns held ``<client_id>:<frame_id>``; the
    migration leaves the frame id, so a reply stored then is still sent under its own id."""
    keyed_from = next(n for n, m in enumerate(SCHEMA.migrations, 1) if "intake_keyed" in m)
    with Database.open(db_path, SCHEMA.up_to(keyed_from - 1)) as db:
        db.execute(
            "INSERT INTO intake (channel, message_id, session, chat_id, state, reply, received_at)"
            " VALUES ('gateway', 'laptop:x:c:7', 'gateway:laptop:x', 'laptop:x', 'answered',"
            " 'kept', '2026-01-01T00:00:00+00:00'),"
            " ('telegram', '5', 'telegram:42', '42', 'answered', 'tg', '2026-01-01T00:00:00+00:00')"
        )
    with SqliteMemory.open(db_path, SCHEMA) as memory:
        gateway = memory.inbound.undelivered("gateway", "laptop:x")
        telegram = memory.inbound.undelivered("telegram", "42")
    assert [(u.message.message_id, u.reply) for u in gateway] == [("c:7", "kept")]
    assert [(u.message.message_id, u.reply) for u in telegram] == [("5", "tg")]


def test_forgetting_a_prefix_forgets_its_intake_only(inbound: SqlInboundLog) -> None:
    for number, namespace in enumerate(("users/alice", "users/alice/x", "users/alicea", None)):
        inbound.accept(message(f"m{number}", str(number)), "s", namespace, keep_text=True, now=T0)
    assert inbound.forget("users/alice") == 2
    assert [u.message.text for u in inbound.unfinished()] == ["m2", "m3"]
