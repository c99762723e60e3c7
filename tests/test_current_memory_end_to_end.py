"""Memory that stays current and personal (issue 14), as people run it: a real ``flynn run``
process, a real websockets client on its gateway, the ``flynn`` command beside it, and the model
through the fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port, run_flynn
from fakes import Fail, FakeOpenAI, RecordedRequest, Reply
from fakes.clock import FakeClock
from fakes.words_only import words_only
from websockets.asyncio.client import ClientConnection, connect

from flynn.daemon import Daemon as InProcessDaemon
from flynn.settings import load_settings


class Client:
    """One web page: a gateway connection under a stable client id."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws

    async def until(self, kind: str, frame_id: str | None = None) -> dict[str, Any]:
        async with asyncio.timeout(15):
            while True:
                frame: dict[str, Any] = json.loads(await self.ws.recv())
                if frame["type"] == kind and (frame_id is None or frame.get("id") == frame_id):
                    return frame
                assert frame["type"] != "error", frame

    async def say(self, text: str) -> str:
        # Unique across connections: the gateway answers a resent id with its stored reply.
        frame_id = uuid.uuid4().hex
        await self.ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))
        reply: str = (await self.until("reply", frame_id))["text"]
        return reply

    async def command(self, name: str) -> str:
        frame_id = uuid.uuid4().hex
        await self.ws.send(json.dumps({"type": "command", "id": frame_id, "name": name}))
        reply: str = (await self.until("reply", frame_id))["text"]
        return reply


@asynccontextmanager
async def gateway(port: int, client_id: str, token: str = GATEWAY_TOKEN) -> AsyncIterator[Client]:
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "client_id": client_id}))
        ready = json.loads(await ws.recv())
        assert ready["type"] == "ready", ready
        yield Client(ws)


# -- 1. no config at all ------------------------------------------------------------------------


async def test_with_no_config_what_the_web_page_learnt_is_known_in_flynn_chat(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    port = free_port()
    # Nothing configures Flynn but the gateway's port: the default 8765 may be taken on the
    # machine running the tests, and a test cannot pick another without saying so.
    env = {"FLYNN_CHANNELS__GATEWAY__PORT": str(port)}
    daemon = Daemon(None, home, env)
    try:
        await daemon.start()
        assert daemon.seen("daemon.ready")[0]["provider"] == "offline"  # no key, no model
        # No token configured: the daemon generated one into the default data dir.
        token = (home / ".flynn" / "gateway-token").read_text().strip()
        async with gateway(port, "phone-browser", token) as page:
            await page.say("Hi! My name is Ana.")
            await page.say("I live in Porto.")
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    chat = await run_flynn("chat", home=home, stdin="what do you know about me?\n")
    assert chat.code == 0, chat.stderr
    assert "Ana" in chat.stdout


# -- the model, and configs for it ------------------------------------------------------------

SUMMARY = "- Ana is migrating the billing service to Postgres; next step: cut over on Friday"
FILLER = "We keep the old billing API stable while the Postgres migration runs in batches. " * 12
NOTHING_LEARNT = '{"profile": [], "actions": [], "observations": []}'


def _system(request: RecordedRequest) -> str:
    messages = request.json.get("messages", [])
    return str(messages[0]["content"]) if messages and messages[0]["role"] == "system" else ""


def _is_compaction(request: RecordedRequest) -> bool:
    system = _system(request)
    return "summarising a conversation" in system or "conversation summarizer" in system


def _is_distill_mid(request: RecordedRequest) -> bool:
    return "You keep MEMORY_MID.md" in _system(request)


def _is_chat(request: RecordedRequest) -> bool:
    """A turn's request (the person's message), not compaction, extraction or distillation."""
    system = _system(request)
    return "--- System ---" in system or "--- Identity ---" in system


class Model:
    """The fake model's answers: a summary to compaction, nothing learnt to extraction,
    ``distill`` to a mid distillation, "noted" to a turn."""

    def __init__(self, server: FakeOpenAI) -> None:
        self.server = server
        self.distill: Reply | Fail = Reply("## Weeks\n- nothing yet")
        server.responder = self.answer

    def answer(self, request: RecordedRequest) -> Reply | Fail:
        if _is_compaction(request):
            return Reply(SUMMARY)
        if _is_distill_mid(request):
            return self.distill
        if not _is_chat(request):
            return Reply(NOTHING_LEARNT)
        return Reply("noted")

    def chats(self) -> list[RecordedRequest]:
        return [r for r in self.server.requests if _is_chat(r)]

    def chat_saying(self, text: str) -> RecordedRequest:
        """The turn request whose last user message is ``text`` (exactly one)."""
        found = [r for r in self.chats() if self.server.last_user_text(r) == text]
        assert len(found) == 1, [self.server.last_user_text(r) for r in self.chats()]
        return found[0]


@pytest.fixture
async def model() -> AsyncIterator[Model]:
    async with FakeOpenAI() as server:
        yield Model(server)


def _write_config(tmp_path: Path, model: Model, **sections: Any) -> tuple[Path, int]:
    port = free_port()
    config: dict[str, Any] = {
        "data_dir": str(tmp_path / "data"),
        "llm": {
            "provider": "openai",
            "base_url": model.server.base_url,
            "model": "fake-model",
            "api_key": "sk-test",
            "max_retries": 0,
            "stream": False,
        },
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN}},
        "logging": {"level": "info", "format": "json"},
    }
    for name, value in sections.items():
        if isinstance(value, dict) and isinstance(config.get(name), dict):
            config[name] = {**config[name], **value}
        else:
            config[name] = value
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, port


# -- 2. a restart starts the session afresh --------------------------------------------------


async def test_a_compacted_gateway_session_gets_profile_and_working_memory_after_a_restart(
    tmp_path: Path, model: Model
) -> None:
    config, port = _write_config(
        tmp_path,
        model,
        # A small window, so the conversation compacts and working memory is written.
        llm={"context_window": 2048},
        compaction={"reserve_tokens": 512, "keep_recent_tokens": 200},
    )
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        async with gateway(port, "laptop") as page:
            await page.say("My name is Ana.")
            for step in range(1, 16):
                await page.say(f"Step {step}: {FILLER}")
                if any(_is_compaction(r) for r in model.server.requests):
                    break
            else:
                raise AssertionError("compaction never happened")
        await daemon.wait_for("compaction.completed")
        # A reconnect within the run is the same session: its context is not rebuilt.
        async with gateway(port, "laptop") as page:
            await page.say("back on the same page")
        assert "--- Who you're talking to ---" not in _system(
            model.chat_saying("back on the same page")
        )
        assert await daemon.stop() == 0

        await daemon.start()  # a new process: the same client id, a session started afresh
        async with gateway(port, "laptop") as page:
            await page.say("good morning")
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    system = _system(model.chat_saying("good morning"))
    assert "--- Who you're talking to ---" in system
    assert "name: Ana" in system
    assert "--- Recent context ---" in system
    assert "cut over on Friday" in system


# -- 3. per-person files -----------------------------------------------------------------------

ALICE_FILES = {
    "USER.md": "# About me\n- Alice plays the bassoon on Tuesdays",
    "MEMORY_SHORT.md": "- Alice booked the zeppelin tour yesterday",
    "MEMORY_MID.md": "- Alice spent the last weeks restoring a harpsichord",
    "MEMORY_LONG.md": "- Alice grew up in Reykjavik and speaks Icelandic",
}
ALICE_WORDS = ("bassoon", "zeppelin", "harpsichord", "Reykjavik")
BOB_USER = "# About me\n- Bob keeps three axolotls"


async def test_alices_files_never_reach_bobs_prompts(tmp_path: Path, model: Model) -> None:
    config, port = _write_config(
        tmp_path,
        model,
        users={"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-laptop"]}},
        persona={"tier": 3},  # tier 3 loads USER.md and all three MEMORY_*.md
    )
    data = tmp_path / "data"
    (data / "users" / "alice").mkdir(parents=True)
    (data / "users" / "bob").mkdir(parents=True)
    for name, text in ALICE_FILES.items():
        (data / "users" / "alice" / name).write_text(text + "\n")
    (data / "users" / "bob" / "USER.md").write_text(BOB_USER + "\n")
    # Each proves who they are with their own token (flynn users token NAME).
    tokens = {}
    for name in ("alice", "bob"):
        made = await run_flynn("users", "token", name, "--config", str(config), home=tmp_path)
        assert made.code == 0, made.stderr
        tokens[name] = made.stdout.strip()
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        async with (
            gateway(port, "alice-laptop", tokens["alice"]) as alice,
            gateway(port, "bob-laptop", tokens["bob"]) as bob,
        ):
            await alice.say("hello, it's alice")
            await bob.say("hello, it's bob")
            await alice.say("what's on for today?")
            await bob.say("what's on for today, for me?")
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    alice_prompt = _system(model.chat_saying("hello, it's alice"))
    for name, text in ALICE_FILES.items():
        assert f"--- {name} ---" in alice_prompt
        assert text.splitlines()[-1] in alice_prompt
    assert "axolotls" not in alice_prompt

    # Everything sent for bob: his turns, and the learning calls made from his words.
    for_bob = [json.dumps(r.json) for r in model.server.requests if "bob" in json.dumps(r.json)]
    assert len(for_bob) >= 2
    for text in for_bob:
        for word in ALICE_WORDS:
            assert word not in text
    bob_prompt = _system(model.chat_saying("hello, it's bob"))
    assert "--- USER.md ---" in bob_prompt
    assert "Bob keeps three axolotls" in bob_prompt


async def test_an_older_installs_user_md_moves_to_the_owner_and_reaches_their_prompt(
    tmp_path: Path, model: Model
) -> None:
    config, port = _write_config(tmp_path, model)  # single-user: memory.user_namespace: user
    old = tmp_path / "data" / "persona" / "flynn"
    old.mkdir(parents=True)
    (old / "USER.md").write_text("# About me\n- Ana rides a red tandem bicycle\n")
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        (moved,) = daemon.seen("persona.person_files_moved")
        assert moved["files"] == ["USER.md"]
        async with gateway(port, "laptop") as page:
            await page.say("hi there")
        assert await daemon.stop() == 0
        await daemon.start()  # said once: the next start has nothing to move
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    assert len(daemon.seen("persona.person_files_moved")) == 1
    assert not (old / "USER.md").exists()
    owners = tmp_path / "data" / "user" / "USER.md"
    assert "red tandem bicycle" in owners.read_text()
    system = _system(model.chat_saying("hi there"))
    assert "--- USER.md ---" in system
    assert "red tandem bicycle" in system


# -- 4. flynn distill --------------------------------------------------------------------------


async def test_flynn_distill_short_writes_memory_short_and_the_next_session_start_injects_it(
    tmp_path: Path, model: Model
) -> None:
    config, port = _write_config(tmp_path, model)
    short = tmp_path / "data" / "user" / "MEMORY_SHORT.md"
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        async with gateway(port, "laptop") as page:
            await page.say("We decided to move the launch to March.")
            await page.say("The venue is the old tram depot in Lisbon.")

            # While the daemon runs, as a cron job or a person at a terminal would.
            ran = await run_flynn("distill", "short", "--config", str(config), home=tmp_path)
            assert ran.code == 0, ran.stderr
            assert "+++ MEMORY_SHORT.md (now)" in ran.stdout
            added = [line for line in ran.stdout.splitlines() if line.startswith("+")]
            assert any("move the launch to March" in line for line in added), ran.stdout
            assert "MEMORY_SHORT.md: rewritten without a model" in ran.stdout
            notes = short.read_text()
            assert "move the launch to March" in notes
            assert "old tram depot" in notes

            assert "new conversation" in await page.command("new")
            await page.say("so, where were we?")
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    system = _system(model.chat_saying("so, where were we?"))
    assert "--- MEMORY_SHORT.md ---" in system
    assert "move the launch to March" in system
    assert "old tram depot" in system


async def test_flynn_distill_mid_is_the_models_text_and_a_failure_keeps_the_old_file(
    tmp_path: Path, model: Model
) -> None:
    config, port = _write_config(tmp_path, model)
    mid = tmp_path / "data" / "user" / "MEMORY_MID.md"
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        async with gateway(port, "laptop") as page:
            await page.say("We decided to move the launch to March.")
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    model.distill = Reply("## Recent weeks\n- The launch moved to March; the venue is open")
    ran = await run_flynn("distill", "mid", "--config", str(config), home=tmp_path)
    assert ran.code == 0, ran.stderr
    (asked,) = [r for r in model.server.requests if _is_distill_mid(r)]
    assert "move the launch to March" in json.dumps(asked.json)
    assert "MEMORY_MID.md: rewritten by fake-model" in ran.stdout
    written = mid.read_text()
    assert "- The launch moved to March; the venue is open" in written

    model.distill = Fail.server_error(500)
    failed = await run_flynn("distill", "mid", "--config", str(config), home=tmp_path)
    assert failed.code == 1
    assert failed.stdout == ""
    (line,) = failed.stderr.splitlines()
    assert line.startswith("flynn: distill mid failed: ")
    assert "old file stays" in line
    assert mid.read_text() == written


# -- 5. scheduled distillation -----------------------------------------------------------------


async def test_the_daemon_schedules_each_tier_that_is_on_at_start(
    tmp_path: Path, model: Model
) -> None:
    config, _ = _write_config(
        tmp_path, model, distill={"short": "* * * * *", "mid": "off", "long": "off"}
    )
    daemon = Daemon(config, tmp_path)
    before = datetime.now(UTC).replace(microsecond=0)
    try:
        await daemon.start()
        listed = await run_flynn("reminders", "--config", str(config), "--json", home=tmp_path)
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    assert listed.code == 0, listed.stderr
    (job,) = json.loads(listed.stdout)
    assert (job["namespace"], job["kind"], job["text"]) == ("user", "distill", "short")
    assert job["repeat"] == "* * * * *"
    assert job["target"] is None  # work Flynn does itself: nobody is sent anything
    # The next minute from start (or the one after, if a minute turned while it ran).
    next_at = datetime.fromisoformat(job["next_at"])
    assert before <= next_at <= datetime.now(UTC) + timedelta(minutes=1)


async def test_scheduled_distillations_run_in_the_daemon_and_only_mid_is_pushed_to_the_web_page(
    tmp_path: Path,
) -> None:
    # In-process, for its clock: the daily run at 03:00 fires when the test moves time on, the
    # weekly one (here daily at 03:05) after it; one person's runs go one at a time, in order.
    start = datetime.now(UTC).replace(second=30, microsecond=0)  # never 03:00 sharp
    clock = FakeClock(start)
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "llm": {"provider": "offline"},
            "persona": {"timezone": "UTC"},
            "distill": {"short": "0 3 * * *", "mid": "5 3 * * *", "long": "off", "notify": True},
            "channels": {"gateway": {"port": 0, "token": GATEWAY_TOKEN}},
        }
    )
    short = tmp_path / "data" / "user" / "MEMORY_SHORT.md"
    daemon = InProcessDaemon(words_only(settings), {}, clock=clock, announce=lambda line: None)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        ready = asyncio.create_task(daemon.ready.wait())
        await asyncio.wait({ready, running}, return_when=asyncio.FIRST_COMPLETED, timeout=20)
        if not ready.done():
            ready.cancel()
            raise AssertionError(f"the daemon did not start: {running}")
        assert daemon.app is not None and daemon.service is not None
        job, _ = daemon.app.schedule.jobs("user", kind="distill")
        due = start.replace(hour=3, minute=0, second=0)
        due = due if due > start else due + timedelta(days=1)
        assert (job.text, job.next_at) == ("short", due)
        port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
        async with gateway(port, "laptop") as page:
            await page.say("We decided to move the launch to March.")
            assert not short.exists() or "March" not in short.read_text()

            clock.now = due + timedelta(minutes=6)
            daemon.service.scheduler.wake()
            # The first note is mid's: the daily digest, which ran before it, told nobody.
            push = await page.until("push")
        assert push["kind"] == "distill"
        assert "MEMORY_MID.md" in push["text"]
        assert "move the launch to March" in short.read_text()
        jobs = daemon.app.schedule.jobs("user", kind="distill")
        assert [(job.text, job.fired_count, job.next_at) for job in jobs] == [
            ("short", 1, due + timedelta(days=1)),
            ("mid", 1, due + timedelta(days=1, minutes=5)),
        ]
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 20) == 0
