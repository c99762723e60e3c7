"""Durable intake: accepted messages with their text until answered, replies until delivered."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from flynn.memory.stores import SqliteMemory
from flynn.messages import InboundMessage

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def message(text: str, message_id: str, channel: str = "telegram") -> InboundMessage:
    return InboundMessage(
        channel=channel,
        chat_id="42",
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
    memory: SqliteMemory,
) -> None:
    inbound = memory.inbound
    first = message("hello", "1")
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).state == "new"
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).state == "pending"
    other = message("hello", "1", channel="discord")
    assert inbound.accept(other, "discord:42", "user", keep_text=True, now=T0).state == "new"
    inbound.answered("telegram", "1", reply="hi!", error_code=None, now=T0)
    again = inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0)
    assert (again.state, again.reply, again.error_code) == ("answered", "hi!", None)
    inbound.delivered("telegram", "1", now=T0)
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).reply == "hi!"


def test_a_failed_turn_runs_again_when_the_same_id_comes_back(memory: SqliteMemory) -> None:
    inbound = memory.inbound
    first = message("hello", "1")
    inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0)
    inbound.answered("telegram", "1", reply="model down", error_code="llm_unavailable", now=T0)
    inbound.delivered("telegram", "1", now=T0)
    assert inbound.accept(first, "telegram:42", "user", keep_text=True, now=T0).state == "new"
    assert [item.message.text for item in inbound.unfinished()] == ["hello"]


def test_what_a_restart_must_finish_survives_it_in_order(db_path: Path) -> None:
    with SqliteMemory.open(db_path) as memory:
        inbound = memory.inbound
        for number in range(1, 5):
            inbound.accept(
                message(f"m{number}", str(number)),
                "telegram:42",
                "user",
                keep_text=number != 4,
                now=T0,
            )
        inbound.answered("telegram", "1", reply="r1", error_code=None, now=T0)
        inbound.delivered("telegram", "1", now=T0)
        inbound.answered("telegram", "2", reply="r2", error_code=None, now=T0)
    with SqliteMemory.open(db_path) as memory:
        unfinished = memory.inbound.unfinished()
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


def test_text_is_dropped_once_answered(memory: SqliteMemory) -> None:
    memory.inbound.accept(
        message("secret plans", "1"), "telegram:42", "user", keep_text=True, now=T0
    )
    memory.inbound.answered("telegram", "1", reply="ok", error_code=None, now=T0)
    row = memory.db.fetchone("SELECT text FROM intake WHERE message_id = '1'")
    assert row is not None and row[0] is None


def test_prune_forgets_only_finished_old_messages(memory: SqliteMemory) -> None:
    inbound = memory.inbound
    inbound.accept(message("old", "old"), "s", "user", keep_text=True, now=T0)
    inbound.answered("telegram", "old", reply="ok", error_code=None, now=T0)
    inbound.delivered("telegram", "old", now=T0)
    inbound.accept(message("stuck", "stuck"), "s", "user", keep_text=True, now=T0)
    inbound.accept(message("new", "new"), "s", "user", keep_text=True, now=T0 + timedelta(days=2))
    assert inbound.prune(before=T0 + timedelta(days=1)) == 1
    assert inbound.accept(message("old", "old"), "s", "user", keep_text=True, now=T0).state == "new"
    assert [u.message.message_id for u in inbound.unfinished()] == ["stuck", "new", "old"]


def test_forgetting_a_person_forgets_their_intake(memory: SqliteMemory) -> None:
    memory.inbound.accept(message("mine", "1"), "s", "users/alice", keep_text=True, now=T0)
    memory.inbound.accept(message("theirs", "2"), "s", "users/bob", keep_text=True, now=T0)
    memory.forget_namespace("users/alice")
    assert [u.message.text for u in memory.inbound.unfinished()] == ["theirs"]
