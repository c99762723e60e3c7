"""``flynn reminders`` as a person runs it, and the schedule's line in ``flynn doctor``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flynn.distill.distiller import TIERS
from flynn.distill.runs import plan_jobs
from flynn.doctor import run_checks
from flynn.memory.database import Database
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqlitePushes, SqliteSchedule
from flynn.settings import load_settings

CONFIG = """\
data_dir: {data}
memory:
  user_namespace: null
users:
  alice:
    telegram: ["1"]
  bob:
    telegram: ["2"]
"""


def flynn(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLYNN_")}
    env.update({"HOME": str(home), "USER": "ana"})
    return subprocess.run(
        [sys.executable, "-m", "flynn", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def _seed(data: Path, now: datetime) -> None:
    with Database.open(data / "flynn.db", SCHEMA) as db:
        schedule = SqliteSchedule(db)
        schedule.add(
            namespace="users/alice",
            kind="reminder",
            text="call mum",
            at=now + timedelta(days=1),
            repeat="0 8 * * 1-5",
            timezone="Europe/Lisbon",
            target=Target("telegram", "1"),
            now=now,
        )
        schedule.add(
            namespace="users/bob",
            kind="reminder",
            text="water plants",
            at=now + timedelta(hours=1),
            repeat=None,
            timezone="UTC",
            target=Target("telegram", "", recipient="2"),
            now=now,
        )
        gone = schedule.add(
            namespace="users/alice",
            kind="reminder",
            text="cancelled one",
            at=now + timedelta(hours=2),
            repeat=None,
            timezone="UTC",
            target=None,
            now=now,
        )
        schedule.cancel("users/alice", gone.id, now=now)


def test_reminders_lists_a_persons_jobs_as_json_and_text(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.format(data=data))
    _seed(data, datetime.now(UTC))

    shown = flynn("reminders", "--config", str(config), "--user", "alice", "--json", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    (job,) = json.loads(shown.stdout)
    assert job["text"] == "call mum" and job["namespace"] == "users/alice"
    assert job["repeat"] == "0 8 * * 1-5" and job["timezone"] == "Europe/Lisbon"
    assert job["target"] == {
        "channel": "telegram",
        "chat_id": "1",
        "thread": None,
        "recipient": None,
    }
    when = datetime.fromisoformat(job["next_at"])
    assert (when.hour, when.minute) == (8, 0) and when.weekday() < 5  # local time, a weekday

    everyone = json.loads(
        flynn("reminders", "--config", str(config), "--json", home=tmp_path).stdout
    )
    assert [j["text"] for j in everyone] == ["water plants", "call mum"]  # soonest first

    text = flynn("reminders", "--config", str(config), "--user", "bob", home=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "water plants" in text.stdout and "once" in text.stdout
    assert "telegram to 2" in text.stdout and "call mum" not in text.stdout

    unknown = flynn("reminders", "--config", str(config), "--user", "zed", home=tmp_path)
    assert unknown.returncode == 2 and "no user 'zed'" in unknown.stderr


def test_reminders_shows_each_persons_numbers_and_jobs_by_kind(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG.format(data=data))
    now = datetime.now(UTC)
    with Database.open(data / "flynn.db", SCHEMA) as db:
        # A daemon's first start: the distillation runs come first (job ids 1-6).
        people = {"users/alice": "UTC", "users/bob": "UTC"}
        plan_jobs(SqliteSchedule(db), people, dict.fromkeys(TIERS, "0 3 * * *"), now=now)
    _seed(data, now)

    alice = flynn("reminders", "--config", str(config), "--user", "alice", home=tmp_path)
    assert alice.returncode == 0, alice.stderr
    lines = alice.stdout.splitlines()
    assert any(line.startswith("1. call mum: next ") for line in lines), lines
    distill = [line for line in lines if "(distill)" in line]
    assert sorted(line.split(":")[0] for line in distill) == [
        "(distill) long",
        "(distill) mid",
        "(distill) short",
    ]

    everyone = flynn("reminders", "--config", str(config), home=tmp_path).stdout
    assert "[users/bob] 1. water plants: next " in everyone
    assert "[users/alice] 1. call mum: next " in everyone
    assert "[users/bob] (distill) short: next " in everyone

    shown = json.loads(
        flynn(
            "reminders", "--config", str(config), "--user", "alice", "--json", home=tmp_path
        ).stdout
    )
    by_text = {job["text"]: job for job in shown}
    assert (by_text["call mum"]["id"], by_text["call mum"]["number"]) == (7, 1)
    assert by_text["short"]["number"] is None and by_text["short"]["kind"] == "distill"
    assert {"id", "namespace", "kind", "text", "next_at", "target"} <= set(by_text["short"])


def test_reminders_with_nothing_scheduled(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"data_dir: {tmp_path / 'data'}\nmemory:\n  user_namespace: user\n")
    shown = flynn("reminders", "--config", str(config), home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "no reminders under user"
    assert (
        json.loads(flynn("reminders", "--config", str(config), "--json", home=tmp_path).stdout)
        == []
    )


async def test_doctor_reports_the_schedule_without_failing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = load_settings({"data_dir": str(data), "channels": {"gateway": {"port": 0}}})
    checks = {c.name: c for c in await run_checks(settings, {}, network=False)}
    assert checks["schedule"].ok
    assert checks["schedule"].detail == "0 active job(s), 0 overdue, 0 undelivered push(es)"

    now = datetime.now(UTC)
    _seed(data, now)
    with Database.open(data / "flynn.db", SCHEMA) as db:
        SqliteSchedule(db).add(
            namespace="users/bob",
            kind="reminder",
            text="missed",
            at=now - timedelta(hours=1),
            repeat=None,
            timezone="Europe/Lisbon",
            target=Target("telegram", "2"),
            now=now,
        )
        SqlitePushes(db).add(
            namespace="users/bob", kind="notice", text="hi", target=Target("telegram", "2"), now=now
        )
    checks = {c.name: c for c in await run_checks(settings, {}, network=False)}
    schedule = checks["schedule"]
    assert schedule.ok and not schedule.warning
    assert schedule.detail.startswith("3 active job(s), next ")
    assert "Europe/Lisbon (job 4, reminder)" in schedule.detail
    assert schedule.detail.endswith("1 overdue, 1 undelivered push(es)")
    assert schedule.line().startswith("[ok  ] schedule: ")


def test_bench_schedule_prints_one_json_object(tmp_path: Path) -> None:
    result = flynn("bench", "schedule", "--jobs", "300", "--burst", "50", home=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["bench"] == "schedule" and report["jobs"] == 300
    assert report["burst_jobs"] == 50
    assert 0 <= report["burst_lag_p50_ms"] <= report["burst_lag_max_ms"] < 5000
    assert 0 < report["fire_due_p50_ms"] <= report["fire_due_p99_ms"]
    assert report["next_due_p99_ms"] > 0 and report["add_s"] > 0
