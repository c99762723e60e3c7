"""Where unprompted messages go: a group split per sender is still the group's chat."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from flynn.distill.people import notice_target
from flynn.memory.stores import SqliteMemory
from flynn.messages import SessionKey
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.routes import chat_target
from flynn.settings import load_settings

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_a_per_sender_group_session_is_pushed_to_the_groups_topic() -> None:
    key = SessionKey("telegram", "-100", "77", sender="1001")

    assert chat_target(key) == Target("telegram", "-100", "77")
    assert chat_target(SessionKey("discord", "5", sender="42")) == Target("discord", "5", None)
    assert chat_target(SessionKey("cli", "ana")) is None


def test_a_session_stored_in_the_old_text_routes_a_notice_to_its_chat(tmp_path: Path) -> None:
    settings = load_settings({"distill": {"notify": True}}, env={})
    with SqliteMemory.open(tmp_path / "memory.db", SCHEMA) as memory:
        # A row the router wrote before the sender was a field of the key.
        memory.history.append(
            "telegram:-100:77/u1001", "users/ana", "user", "hello", tokens=1, now=NOW
        )
        target = notice_target(settings, memory.history, lambda: NOW + timedelta(hours=1))
        assert target is not None

        assert target("users/ana") == Target("telegram", "-100", "77")
