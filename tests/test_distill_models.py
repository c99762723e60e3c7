"""Distillation as people run it, with a model (seeds/004): through the real SDKs against the fake
servers, the mid tier asks ``llm.tasks.distill_mid``'s model, the long tier ``distill_long``'s (each
falling back to ``distill``'s, then the chat model's); mid notes are asked for in the first person,
as the persona; scheduled runs announce mid and long, never the daily short digest; and
``distill.enabled: false`` schedules nothing."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import run_flynn
from fakes import FakeAnthropic, FakeModelServer, FakeOpenAI, RecordedRequest, Reply, Step
from fakes.clock import FakeClock
from fakes.words_only import words_only

from flynn.app import App
from flynn.daemon import Daemon
from flynn.distill.distiller import TIERS
from flynn.distill.runs import DistillRuns, plan_jobs
from flynn.memory.database import encode_time
from flynn.memory.store import NewFact
from flynn.people.files import DirectoryPersonFiles
from flynn.schedule.jobs import Run, Target
from flynn.settings import Settings, load_settings
from flynn.tokens import estimate_tokens

MID_NOTES = "## These weeks\n- I helped Ana move the launch to March; we still owe the venue"
LONG_NOTES = "## 2026\n- Ana led the launch, moved to March"
IDENTITY = "You are Nia, Ana's assistant: calm, brief, a little dry."


def system_of(request: RecordedRequest) -> str:
    body = request.json
    if "system" in body:  # Anthropic
        system = body["system"]
        return system if isinstance(system, str) else " ".join(b["text"] for b in system)
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


def answer(request: RecordedRequest) -> Step:
    system = system_of(request)
    if "MEMORY_MID.md, your own" in system:
        return Reply(MID_NOTES, input_tokens=700, output_tokens=30)
    if "MEMORY_LONG.md" in system:
        return Reply(LONG_NOTES, input_tokens=500, output_tokens=20)
    return Reply("noted")


@pytest.fixture(params=["openai", "anthropic"])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[FakeModelServer]:
    fake: FakeModelServer = FakeOpenAI() if request.param == "openai" else FakeAnthropic()
    fake.responder = answer
    async with fake:
        yield fake


def config_for(tmp_path: Path, server: FakeModelServer, **sections: Any) -> dict[str, Any]:
    vendor = "openai" if isinstance(server, FakeOpenAI) else "anthropic"
    llm = {
        "provider": vendor,
        "base_url": server.base_url,
        "model": "chat-model",
        "api_key": "sk-test",
        "max_retries": 0,
        "stream": False,
        **sections.pop("llm", {}),
    }
    return {
        "data_dir": str(tmp_path / "data"),
        "llm": llm,
        "memory": {"user_namespace": "user", "auto_extract": False},
        "persona": {"timezone": "UTC"},
        **sections,
    }


def settings_for(tmp_path: Path, server: FakeModelServer, **sections: Any) -> Settings:
    return load_settings(config_for(tmp_path, server, **sections))


def remember(app: App, clock: FakeClock) -> None:
    """A day of Ana's conversation, what was learnt and the persona she gave her assistant."""
    day = clock.now - timedelta(days=1)
    for role, text in (
        ("user", "We decided to move the launch to March."),
        ("assistant", "Noted: the launch moves to March."),
    ):
        app.memory.history.append(
            "gateway:laptop", "user", role, text, tokens=estimate_tokens(text), now=day
        )
    app.memory.facts.add(NewFact("user/profile", "profile", "Ana", field="name"), now=day)
    identity = app.services.person.persona.directory / "IDENTITY.md"
    identity.parent.mkdir(parents=True, exist_ok=True)
    identity.write_text(IDENTITY, encoding="utf-8")


@pytest.mark.parametrize(
    ("tasks", "mid_model", "long_model"),
    [
        (
            {"distill_mid": {"model": "mid-model"}, "distill_long": {"model": "long-model"}},
            "mid-model",
            "long-model",
        ),
        # Without entries of their own: distill's model, else the chat model.
        ({"distill": {"model": "weekly-model"}}, "weekly-model", "weekly-model"),
        ({"distill_long": {"model": "long-model"}}, "chat-model", "long-model"),
    ],
    ids=["own", "distill", "chat"],
)
async def test_each_tier_asks_its_own_model(
    tmp_path: Path,
    server: FakeModelServer,
    tasks: dict[str, Any],
    mid_model: str,
    long_model: str,
) -> None:
    clock = FakeClock()
    app = App.open(settings_for(tmp_path, server, llm={"tasks": tasks}), {}, clock=clock)
    try:
        remember(app, clock)
        mid = await app.distiller.run("mid", "user")
        long = await app.distiller.run("long", "user")
        totals = app.memory.costs.totals()
    finally:
        await app.aclose()

    asked_mid, asked_long = server.requests
    assert asked_mid.json["model"] == mid_model and asked_long.json["model"] == long_model
    assert (mid.model, long.model) == (mid_model, long_model)
    # Metered under the tier's task, so `flynn costs` tells the weekly from the monthly.
    assert totals["distill_mid"] == (700, 30) and totals["distill_long"] == (500, 20)
    assert "I helped Ana move the launch" in DirectoryPersonFiles(tmp_path / "data").read(
        "user", mid.name
    )
    # The long tier integrates what the mid tier wrote.
    assert "I helped Ana move the launch to March" in str(asked_long.json["messages"])


async def test_mid_notes_are_asked_for_in_the_first_person_as_the_persona(
    tmp_path: Path, server: FakeModelServer
) -> None:
    clock = FakeClock()
    app = App.open(settings_for(tmp_path, server), {}, clock=clock)
    try:
        remember(app, clock)
        await app.distiller.run("mid", "user")
        await app.distiller.run("long", "user")
    finally:
        await app.aclose()

    mid, long = (system_of(request) for request in server.requests)
    assert f"<identity>\n{IDENTITY}\n</identity>" in mid
    assert "in the first person, as yourself, the assistant: 'I' is you" in mid
    assert "third person" not in mid
    # The long-term memory stays a record about the person, in one voice.
    assert "in the third person about them" in long and IDENTITY not in long


async def test_scheduled_runs_announce_mid_and_long_and_never_the_short_digest(
    tmp_path: Path, server: FakeModelServer
) -> None:
    clock = FakeClock()
    tasks = {"distill_mid": {"model": "mid-model"}, "distill_long": {"model": "long-model"}}
    settings = settings_for(tmp_path, server, llm={"tasks": tasks}, distill={"notify": True})
    app = App.open(settings, {}, clock=clock)
    web = Target("gateway", "laptop")
    runs = DistillRuns(app.distiller, app.pushes, notify=lambda namespace: web, clock=clock)
    try:
        remember(app, clock)
        announced = []
        for tier in TIERS:
            await runs.run(
                Run(
                    id=TIERS.index(tier) + 1,
                    job_id=None,
                    namespace="user",
                    kind="distill",
                    text=tier,
                    due_at=clock.now,
                )
            )
            queued = app.pushes.claim_pending(now=clock.now, lease_seconds=60)
            announced.append([(p.kind, p.target, p.text) for p in queued])
    finally:
        await app.aclose()

    short, mid, long = announced
    assert short == []
    assert [(kind, target) for kind, target, _ in mid] == [("distill", web)]
    assert "my notes on recent weeks (MEMORY_MID.md" in mid[0][2]
    assert [(kind, target) for kind, target, _ in long] == [("distill", web)]
    assert "my notes on the long run (MEMORY_LONG.md" in long[0][2]
    assert [request.json["model"] for request in server.requests] == ["mid-model", "long-model"]


async def test_turned_off_nothing_is_scheduled_and_what_fired_before_is_dropped(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "llm": {"provider": "offline"},
            "persona": {"timezone": "UTC"},
            "distill": {"enabled": False},
            "channels": {"gateway": {"port": 0, "token": "t" * 32}},
        }
    )
    assert load_settings({}).distill.enabled is True
    # Jobs made while it was on, and a run that had fired and waits to be delivered.
    app = App.open(settings, {}, clock=clock)
    try:
        crons = {tier: getattr(settings.distill, tier) for tier in TIERS}
        assert plan_jobs(app.schedule, {"user": "UTC"}, crons, now=clock.now) == 3
        [job] = [job for job in app.schedule.jobs("user", kind="distill") if job.text == "mid"]
        app.memory.db.execute(
            "INSERT INTO job_runs (job_id, namespace, kind, text, due_at, created_at) "
            "VALUES (?, 'user', 'distill', 'mid', ?, ?)",
            (job.id, encode_time(clock.now), encode_time(clock.now)),
        )
        app.memory.history.append(
            "gateway:laptop", "user", "user", "hello", tokens=1, now=clock.now
        )
    finally:
        await app.aclose()

    daemon = Daemon(words_only(settings), {}, clock=clock, announce=lambda line: None)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 20)
        assert daemon.app is not None and daemon.service is not None
        assert daemon.app.schedule.jobs(None, kind="distill") == []
        await daemon.service.scheduler.asleep.wait()
        assert daemon.app.pushes.claim_pending(now=clock.now, lease_seconds=60) == []
        assert daemon.app.runs.pending() == 0  # dropped unrun
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 20) == 0
    folder = tmp_path / "data" / "user"
    assert not (folder / "MEMORY_MID.md").exists()


async def test_turned_off_flynn_distill_still_runs_a_tier_by_hand(tmp_path: Path) -> None:
    async with FakeOpenAI() as server:
        server.responder = answer
        tasks = {"distill_mid": {"model": "mid-model"}}
        data = config_for(tmp_path, server, llm={"tasks": tasks}, distill={"enabled": False})
        clock = FakeClock()
        app = App.open(load_settings(data), {}, clock=clock)
        try:
            remember(app, clock)
        finally:
            await app.aclose()
        config = tmp_path / "config.yaml"
        config.write_text(yaml.safe_dump(data), encoding="utf-8")

        ran = await run_flynn("distill", "mid", "--config", str(config), home=tmp_path)

    assert ran.code == 0, ran.stderr
    assert "MEMORY_MID.md: rewritten by mid-model" in ran.stdout
    assert [request.json["model"] for request in server.requests] == ["mid-model"]
