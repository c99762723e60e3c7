"""The ``schedule:`` settings: they reach the push outbox and the reminder tool of a real
``App``, and a bad value is refused as one line naming the key."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.app import App, push_limits
from flynn.errors import ConfigError
from flynn.messages import SessionKey
from flynn.providers.base import ToolCall
from flynn.schedule.jobs import PushLimits
from flynn.sessions.personal import zone_name
from flynn.settings import load_settings
from flynn.tools.base import ToolContext

NOW = datetime(2026, 3, 25, 9, 0, 5, tzinfo=UTC)


def _context(client: str, namespace: str, tmp_path: Path) -> ToolContext:
    return ToolContext(
        namespace=namespace,
        session=SessionKey("gateway", client),
        person_dir=tmp_path / client,
        timezone=UTC,
        timezone_name=zone_name(UTC),
        now=NOW,
    )


async def test_the_schedule_section_bounds_the_outbox_and_the_reminder_tool(
    tmp_path: Path,
) -> None:
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "memory": {"user_namespace": None},
            "schedule": {
                "max_reminders_per_person": 2,
                "max_reminders_total": 3,
                "max_pending_per_person": 1,
                "max_pending_total": 5,
                "expire_after_days": 0.5,
            },
        }
    )
    assert push_limits(settings) == PushLimits(
        per_person=1, total=5, expire_after=timedelta(hours=12)
    )
    app = App.open(settings, {}, clock=lambda: NOW)
    try:
        tools = app.services.person.tools
        assert tools is not None
        outcomes = []
        for client in ("alice", "alice", "alice", "bob", "bob"):
            call = ToolCall(
                "1", "reminder_set", json.dumps({"text": "stand up", "repeat": "@hourly"})
            )
            context = _context(client, f"sessions/gateway/{client}", tmp_path)
            (result,) = await tools.run([call], context)
            outcomes.append((result.is_error, result.content))
        assert [failed for failed, _ in outcomes] == [False, False, True, False, True]
        assert "already has 2 reminders" in outcomes[2][1]
        assert "holds 3 reminders over everyone (schedule.max_reminders_total)" in outcomes[4][1]

        # alice's two hourly reminders: one pending push at most, the other firing held back.
        fired = app.schedule.fire_due(
            now=NOW + timedelta(hours=1), late_after_seconds=300, limit=10
        )
        assert len([push for push in fired if push.namespace.endswith("alice")]) == 1
        assert app.pushes.backlog().digests == 1
        # Pending since 10:00, expiring after 12 hours: not at 21:59, at 22:00.
        assert app.pushes.expire(now=NOW + timedelta(hours=12, minutes=59)) == 0
        assert app.pushes.expire(now=NOW + timedelta(hours=13)) == 2
    finally:
        await app.aclose()


@pytest.mark.parametrize(
    ("section", "words"),
    [
        ({"max_pending_per_person": 0}, "schedule.max_pending_per_person"),
        ({"expire_after_days": -1}, "schedule.expire_after_days"),
        ({"max_reminders_total": "many"}, "schedule.max_reminders_total"),
        ({"max_pending_total": 10}, "max_pending_total (10) must be at least"),
        ({"max_pending_per_hour": 10}, "max_pending_per_hour"),
    ],
)
def test_a_bad_schedule_setting_is_one_line_naming_it(
    section: dict[str, object], words: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings({"schedule": section})
    message = str(caught.value)
    assert words in message and "\n" not in message, message
