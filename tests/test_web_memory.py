"""The memory page (``/memory``) in headless Chromium against the real daemon on its offline
provider: a fact learnt in chat is listed with its history after an update, the map is drawn,
and "Forget" takes the fact off the page, out of ``flynn memory show`` (another process) and out
of recall. With two people in ``users:``, each with their own token, each page shows only its own
person's memory, whatever client id it names; the channel token is the owner's.
Screenshots at desktop and phone size go to /tmp (``SCREENSHOTS``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakes.words_only import words_only
from playwright.async_api import Browser, Locator, Page, async_playwright, expect
from web_harness import ARGS, CHROMIUM, free_port
from websockets.asyncio.client import connect

from flynn.daemon import Daemon
from flynn.memory.store import NewFact
from flynn.memory.working import WorkingMemory, render_working_memory
from flynn.people.files import DirectoryPersonFiles
from flynn.people.tasks import Task, save_tasks
from flynn.settings import Settings, load_settings

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)

TOKEN = "memory-page-token"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
SCREENSHOTS = Path("/tmp")
OBSERVATIONS = [
    ("observation", "prefers green tea in the morning"),
    ("observation", "dislikes loud open-plan offices"),
    ("action", "working on the billing migration to Postgres"),
    ("observation", "likes hiking in the Serra da Estrela"),
    ("action", "working on the Postgres cut-over plan for Friday"),
    ("observation", "sister Maya lives in Porto"),
    ("observation", "prefers short answers in the morning"),
    ("action", "working on a Rust command-line tool for invoices"),
    ("observation", "likes sushi, especially salmon nigiri"),
    ("observation", "dog Pixel needs a walk at six"),
]


@dataclass
class World:
    """The daemon (in this process: its stores and recall are at hand), its config as a file
    for ``flynn`` commands, and Chromium."""

    daemon: Daemon
    settings: Settings
    config: Path
    port: int
    browser: Browser
    problems: list[str] = field(default_factory=list)

    def url(self, path: str = "/", *, client_id: str | None = None, token: str = TOKEN) -> str:
        extra = f"&client_id={client_id}" if client_id else ""
        return f"http://127.0.0.1:{self.port}{path}#token={token}{extra}"

    async def page(self, viewport: dict[str, int], **options: Any) -> Page:
        """A page in a fresh context (its own storage: its own gateway client id); script
        errors and CSP violations are collected in ``problems``."""
        context = await self.browser.new_context(viewport=viewport, **options)
        page = await context.new_page()
        page.on("pageerror", lambda error: self.problems.append(str(error)))
        page.on(
            "console",
            lambda message: self.problems.append(message.text) if message.type == "error" else None,
        )
        page.on("dialog", lambda dialog: self.problems.append(f"dialog: {dialog.message}"))
        return page

    async def flynn(self, *args: str) -> str:
        """``flynn ARGS --config CONFIG`` in another process (the database as it is on disk)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FLYNN_", "OPENAI_"))}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "flynn",
            *args,
            "--config",
            str(self.config),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
        )
        out, err = await asyncio.wait_for(process.communicate(), 30)
        assert process.returncode == 0, err.decode()
        return out.decode()

    def recalled(self, root: str, question: str) -> str:
        """What recall injects for ``question``, every session's turns included."""
        assert self.daemon.app is not None
        memory = self.daemon.app.services.recall.recall(
            root, question, now=datetime.now(UTC), budget_tokens=1500
        )
        return "\n".join(memory.lines)


@contextlib.asynccontextmanager
async def memory_world(tmp_path: Path, **config: Any) -> AsyncIterator[World]:
    port = free_port()
    raw = {
        "data_dir": str(tmp_path / "data"),
        "llm": {"provider": "offline"},
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": TOKEN}},
        "logging": {"level": "warning"},
        **config,
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(raw))
    settings = load_settings(raw, env={})
    daemon = Daemon(words_only(settings), {}, announce=lambda line: None)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    ready = asyncio.create_task(daemon.ready.wait())
    await asyncio.wait({ready, running}, return_when=asyncio.FIRST_COMPLETED, timeout=20)
    assert ready.done(), f"the daemon did not start: {running}"
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                world = World(daemon, settings, path, port, browser)
                yield world
                assert world.problems == []
            finally:
                await browser.close()
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 20) == 0


async def chat(page: Page, text: str) -> None:
    """Says ``text`` on the chat page and waits for the answer."""
    answers = page.locator(".msg.assistant:not(.pending)")
    before = await answers.count()
    await page.fill("#input", text)
    await page.press("#input", "Enter")
    await expect(answers).to_have_count(before + 1)


async def talk(port: int, client_id: str, text: str, *, token: str = TOKEN) -> None:
    """Says ``text`` as gateway client ``client_id`` over a plain websockets client."""
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "client_id": client_id}))
        assert json.loads(await ws.recv())["type"] == "ready"
        await ws.send(json.dumps({"type": "message", "id": "t1", "text": text}))
        async with asyncio.timeout(10):
            while True:
                frame = json.loads(await ws.recv())
                if frame.get("id") == "t1" and frame["type"] in ("reply", "error"):
                    break
        assert frame["type"] == "reply", frame


def seed(world: World) -> int:
    """What the offline provider cannot learn from chat, stored through the stores as learning
    would: observations, a pattern, graph relations, working memory, a task and USER.md.
    Returns how many facts are active now."""
    app = world.daemon.app
    assert app is not None
    now = datetime.now(UTC)
    for age, (kind, text) in enumerate(OBSERVATIONS):
        app.memory.facts.add(
            NewFact("user/facts", kind, text, confidence=0.8, source="llm"),
            now=now - timedelta(days=age + 1),
        )
    app.memory.facts.add(
        NewFact(
            "user/patterns", "pattern", "when I say 'ship it', open a pull request", source="rule"
        ),
        now=now - timedelta(days=3),
    )
    graph = app.memory.graph
    names = {
        name: graph.upsert_entity("user", name, kind, confidence=0.9, now=now).id
        for name, kind in (
            ("User", "person"),
            ("Maya", "person"),
            ("Acme", "organization"),
            ("Porto", "place"),
            ("Pixel", "animal"),
            ("billing", "project"),
            ("Postgres", "tool"),
        )
    }
    for source, kind, target in (
        ("User", "sister", "Maya"),
        ("Maya", "works_at", "Acme"),
        ("Maya", "lives_in", "Porto"),
        ("User", "has_pet", "Pixel"),
        ("User", "works_on", "billing"),
        ("billing", "uses", "Postgres"),
    ):
        graph.relate("user", names[source], names[target], kind, confidence=0.8, now=now)
    working = WorkingMemory(
        "- Ana is moving billing to Postgres; cut-over on Friday\n- Open: ask Maya about Porto",
        updated_at=now - timedelta(hours=2),
        expires_at=now + timedelta(days=14),
    )
    app.memory.documents.replace("user/working", render_working_memory(working), now=now)
    folder = world.settings.data_dir / "user"
    save_tasks(
        DirectoryPersonFiles(world.settings.data_dir),
        "user",
        [Task(1, "draft the cut-over checklist", False, "")],
    )
    (folder / "USER.md").write_text("# About me\n- Backend engineer in Lisbon\n")
    return len(OBSERVATIONS) + 2  # and the name, and the pattern


def fact(page: Page, text: str) -> Locator:
    """The fact whose value is ``text``."""
    return page.locator(".fact", has=page.locator(".fact-value", has_text=re.compile(f"^{text}$")))


async def test_the_page_shows_a_fact_learnt_in_chat_its_history_the_map_and_forgets_it(
    tmp_path: Path,
) -> None:
    async with memory_world(tmp_path, memory={"user_namespace": "user"}) as world:
        chat_page = await world.page(DESKTOP)
        await chat_page.goto(world.url("/"))
        await expect(chat_page.locator("#state")).to_have_text("connected")
        await chat(chat_page, "my name is Ana")

        # The chat page links to the memory page, which takes the token the tab holds.
        await chat_page.get_by_role("link", name="Memory").click()
        page = chat_page
        await expect(page).to_have_url(f"http://127.0.0.1:{world.port}/memory")
        await expect(page.locator("#state")).to_have_text("connected")
        await expect(page.locator("#who")).to_have_text(
            "Your memory (user), shared by every channel you use."
        )
        name = fact(page, "Ana")
        await expect(name.locator(".fact-field")).to_have_text("name")
        await expect(name.locator(".fact-meta")).to_contain_text("Profile · rule · 90% sure")

        # Updated in the chat, in another tab of this browser (the same gateway client): the
        # memory page follows.
        chat_page = await page.context.new_page()
        await chat_page.goto(world.url("/"))
        await expect(chat_page.locator(".msg.earlier")).to_have_count(2)  # the conversation so far
        await chat(chat_page, "call me Anna")
        name = fact(page, "Anna")
        await expect(name).to_be_visible()
        await expect(name.locator(".badge")).to_have_text("updated")
        await name.get_by_role("button", name="History").click()
        rows = name.locator(".history-row")
        await expect(rows).to_have_count(2)
        await expect(rows.nth(0)).to_contain_text("Ana")
        await expect(rows.nth(0)).to_contain_text("superseded")
        await expect(rows.nth(1)).to_contain_text("Anna")
        await expect(rows.nth(1)).to_contain_text("believed now")

        # The map: one point per fact, coloured by kind; hovering one shows its text.
        await chat(chat_page, "remind me in 2 hours to call Maya")
        active = seed(world)
        await page.reload()
        await expect(page.locator("#state")).to_have_text("connected")
        dots = page.locator("#map circle.dot")
        await expect(dots).to_have_count(active)
        assert await page.locator("#map circle.kind-observation").count() == 7
        assert await page.locator("#map circle.kind-profile").count() == 1
        await expect(page.locator("#legend li")).to_have_text(
            ["Profile", "Pattern", "Action", "Observation"]
        )
        await expect(page.locator("#map-note")).to_contain_text("TF-IDF")
        tipped = dots.nth(4)
        await tipped.hover()
        await expect(page.locator("#map .tip")).to_contain_text(
            await tipped.get_attribute("aria-label") or "?"
        )
        # Every point can be seen: none covers another.
        spots = await dots.evaluate_all(
            "(dots) => dots.map((d) => [d.cx.baseVal.value, d.cy.baseVal.value])"
        )
        assert all(
            (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 >= 12**2
            for i, a in enumerate(spots)
            for b in spots[i + 1 :]
        )
        # The rest of what Flynn keeps for them.
        await expect(page.locator("#graph .node.ring-0")).to_have_text("User")
        await expect(page.locator("#graph .node.ring-1")).to_have_count(3)
        await expect(page.locator("#working")).to_contain_text("cut-over on Friday")
        await expect(page.locator("#working .fact-meta")).to_contain_text("Expires")
        await expect(page.locator("#reminders")).to_contain_text("call Maya")
        # Its time reads the same in the chat's reply, on this page and in `flynn reminders`.
        jobs = json.loads(await world.flynn("reminders", "--json"))
        (maya,) = [job for job in jobs if job["kind"] == "reminder"]
        listed = await world.flynn("reminders")
        line = listed[listed.index("call Maya: next ") :]
        written = line[len("call Maya: next ") : line.index(", once")]
        assert written.endswith(f"({maya['timezone']})") and maya["next_at"][11:16] in written
        await expect(page.locator("#reminders .fact-meta")).to_have_text(f"next {written}")
        await expect(chat_page.locator(".msg.assistant").last).to_contain_text(written)
        await expect(page.locator("#tasks")).to_contain_text("draft the cut-over checklist")
        await page.locator("summary", has_text="USER.md").click()
        await expect(page.locator("#files")).to_contain_text("Backend engineer in Lisbon")
        await page.locator("summary", has_text="USER.md").click()
        await name.get_by_role("button", name="History").click()
        await dots.nth(4).hover()
        await page.screenshot(path=str(SCREENSHOTS / "flynn-memory-desktop.png"))

        # Before forgetting: Anna is in `flynn memory show` and in recall.
        shown = json.loads(await world.flynn("memory", "show", "--json"))
        assert [f["value"] for f in shown["profile"] if f["field"] == "name"] == ["Anna"]
        assert "Anna" in world.recalled("user", "What is my name, Anna?")

        # "Forget" asks first; keeping it changes nothing.
        name = fact(page, "Anna")
        await name.get_by_role("button", name="Forget").click()
        await expect(name.locator(".confirm")).to_contain_text("Forget “name: Anna” for good?")
        await name.get_by_role("button", name="Keep it").click()
        await expect(name.locator(".confirm")).to_be_hidden()
        await name.get_by_role("button", name="Forget").click()
        await name.get_by_role("button", name="Forget it").click()
        await expect(page.locator("#notice")).to_contain_text("Forgotten: “name: Anna”")
        await expect(page.locator(".fact-value", has_text="Anna")).to_have_count(0)
        await expect(page.locator(".fact-value", has_text=re.compile("^Ana$"))).to_have_count(0)
        await expect(page.locator("#map circle.dot")).to_have_count(active - 1)

        shown = json.loads(await world.flynn("memory", "show", "--json"))
        assert [f for f in shown["profile"] if f["field"] == "name"] == []
        history = json.loads(await world.flynn("memory", "show", "--history", "name", "--json"))
        assert history["history"] == []
        recalled = world.recalled("user", "What is my name, Anna?")
        assert not re.search(r"\bAnn?a\b", recalled), recalled

        # At phone size: one column, the same page.
        phone = await world.page(PHONE, is_mobile=True, has_touch=True, device_scale_factor=2)
        await phone.goto(world.url("/memory"))
        await expect(phone.locator("#map circle.dot")).to_have_count(active - 1)
        await expect(phone.locator(".fact-value", has_text="Anna")).to_have_count(0)
        await phone.screenshot(path=str(SCREENSHOTS / "flynn-memory-phone.png"))
        await phone.locator(".jumps a", has_text="Map").click()
        await phone.locator("#map circle.dot").nth(2).tap()
        await expect(phone.locator("#map .tip")).to_be_visible()
        await phone.screenshot(path=str(SCREENSHOTS / "flynn-memory-phone-map.png"))
        await phone.locator(".jumps a", has_text="Graph").click()
        await phone.screenshot(path=str(SCREENSHOTS / "flynn-memory-phone-graph.png"))
        # Nothing the page was sent ran as markup.
        assert await phone.locator("#facts script, #facts img").count() == 0


async def memory_pages(
    world: World, tokens: dict[str, str], viewport: dict[str, int]
) -> dict[str, Page]:
    """A connected memory page for each token, every one naming alice's client id."""
    pages = {}
    for who, token in tokens.items():
        page = await world.page(viewport)
        await page.goto(world.url("/memory", client_id="alice-laptop", token=token))
        await expect(page.locator("#state")).to_have_text("connected")
        pages[who] = page
    return pages


async def test_two_people_each_see_only_their_own_memory(tmp_path: Path) -> None:
    users = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-phone"]}}
    async with memory_world(tmp_path, memory={"user_namespace": "user"}, users=users) as world:
        app = world.daemon.app
        assert app is not None
        now = datetime.now(UTC)
        alice_token = app.person_tokens.issue("alice", now=now)
        bob_token = app.person_tokens.issue("bob", now=now)
        for namespace, text in (("users/alice", "water the orchids"), ("users/bob", "chess club")):
            app.schedule.add(
                namespace=namespace,
                kind="reminder",
                text=text,
                at=now + timedelta(hours=2),
                repeat=None,
                timezone="UTC",
                target=None,
                now=now,
            )
        await talk(world.port, "alice-laptop", "my name is Alice", token=alice_token)
        # Bob names alice's client id: he is bob all the same.
        await talk(world.port, "alice-laptop", "my name is Bob", token=bob_token)
        # The channel token naming a client id users: lists under alice: the owner, not alice.
        await talk(world.port, "alice-laptop", "my name is Olga")

        pages = await memory_pages(world, {"bob": bob_token, "owner": TOKEN}, PHONE)
        # Alice opens the chat page with her token, then follows its link.
        page = await world.page(PHONE)
        await page.goto(world.url("/", client_id="alice-laptop", token=alice_token))
        await expect(page.locator("#state")).to_have_text("connected")
        await expect(page.locator(".msg.earlier")).to_have_text(
            ["my name is Alice", re.compile(".")]
        )
        await page.get_by_role("link", name="Memory").click()
        await expect(page.locator("#state")).to_have_text("connected")
        pages["alice"] = page
        await expect(pages["alice"].locator("#who")).to_have_text("Memory of alice (users/alice).")
        await expect(pages["alice"].locator(".fact-value")).to_have_text(["Alice"])
        await expect(pages["alice"].locator("#reminders")).to_contain_text("water the orchids")
        await expect(pages["bob"].locator("#who")).to_have_text("Memory of bob (users/bob).")
        await expect(pages["bob"].locator(".fact-value")).to_have_text(["Bob"])
        await expect(pages["bob"].locator("#reminders")).to_contain_text("chess club")
        await expect(pages["owner"].locator("#who")).to_contain_text("Your memory (user)")
        await expect(pages["owner"].locator(".fact-value")).to_have_text(["Olga"])
        shown = {who: await page.locator("main").inner_text() for who, page in pages.items()}
        assert "Bob" not in shown["alice"] and "chess club" not in shown["alice"]
        assert "Alice" not in shown["bob"] and "orchids" not in shown["bob"]
        for secret in ("Alice", "Bob", "orchids", "chess club"):
            assert secret not in shown["owner"]
        # Bob's chat page, on alice's client id, shows bob's conversation only.
        chat_page = await world.page(PHONE)
        await chat_page.goto(world.url("/", client_id="alice-laptop", token=bob_token))
        await expect(chat_page.locator(".msg.earlier")).to_have_text(
            ["my name is Bob", re.compile(".")]
        )
        await pages["alice"].screenshot(path=str(SCREENSHOTS / "flynn-memory-alice.png"))
        # The token given in the address is not left in it.
        assert "#" not in pages["bob"].url
        assert bob_token not in pages["bob"].url


async def test_a_wrong_token_shows_nothing(tmp_path: Path) -> None:
    async with memory_world(tmp_path, memory={"user_namespace": "user"}) as world:
        await talk(world.port, "laptop", "my name is Ana")
        page = await world.page(PHONE)
        await page.goto(f"http://127.0.0.1:{world.port}/memory#token=not-{TOKEN}")
        await expect(page.locator("#state")).to_have_text("token refused")
        await expect(page.locator("#token-label")).to_contain_text("The token in this page's")
        await expect(page.locator("#token-form")).to_be_visible()
        await expect(page.locator(".fact")).to_have_count(0)
        assert "Ana" not in await page.locator("body").inner_text()


async def test_a_person_edits_their_own_user_md_on_the_page(tmp_path: Path) -> None:
    """USER.md edited on the memory page is saved where Flynn keeps it, for the person the
    token is: bob's page on alice's client id edits bob's file, never alice's; ``flynn memory
    file show`` (another process) reads what the page saved, and a credential is left out."""
    users = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-phone"]}}
    key = "sk-ant-api03-Zq8wX2vBn5mK1pL7rT4yU9iO3aS6dF0gH2jK"
    async with memory_world(tmp_path, memory={"user_namespace": "user"}, users=users) as world:
        app = world.daemon.app
        assert app is not None
        files = DirectoryPersonFiles(world.settings.data_dir)
        files.write("users/alice", "USER.md", "<!-- guidance -->\n- Name: Alice\n")
        now = datetime.now(UTC)
        alice_token = app.person_tokens.issue("alice", now=now)
        bob_token = app.person_tokens.issue("bob", now=now)
        pages = await memory_pages(world, {"alice": alice_token, "bob": bob_token}, DESKTOP)
        alice = pages["alice"]
        await expect(alice.locator("#files")).to_contain_text("- Name: Alice")
        await alice.locator(".file summary", has_text="USER.md").click()
        await alice.get_by_role("button", name="Edit USER.md").click()
        area = alice.get_by_label("USER.md text")
        await expect(area).to_have_value("<!-- guidance -->\n- Name: Alice\n")
        await area.fill("<!-- guidance -->\n- Name: Alice Lima\n- Prefers: short answers\n")
        await alice.get_by_role("button", name="Save").click()
        await expect(alice.locator("#notice")).to_have_text(
            "USER.md saved. Flynn reads it from your next message."
        )
        await expect(alice.locator("#files")).to_contain_text("- Prefers: short answers")
        await expect(alice.locator(".file-editor")).to_have_count(0)

        bob = pages["bob"]
        await bob.locator(".file summary", has_text="USER.md").click()
        await bob.get_by_role("button", name="Edit USER.md").click()
        await expect(bob.get_by_label("USER.md text")).to_have_value("")
        await bob.get_by_label("USER.md text").fill(f"- Name: Bob\n- key {key}\n")
        await bob.get_by_role("button", name="Save").click()
        await expect(bob.locator("#notice")).to_contain_text("A credential in it was left out")
        await bob.screenshot(path=str(SCREENSHOTS / "flynn-memory-edit.png"))

        shown = await world.flynn("memory", "file", "show", "USER.md", "--user", "alice")
        assert shown == "<!-- guidance -->\n- Name: Alice Lima\n- Prefers: short answers\n"
        bobs = files.read("users/bob", "USER.md")
        assert bobs.startswith("- Name: Bob\n- key ") and key not in bobs
        assert world.problems == []


async def test_a_save_over_user_md_changed_while_editing_keeps_both(tmp_path: Path) -> None:
    """USER.md changed by another process while the page's editor was open: Save writes
    nothing over it, the typed text stays in the box, the page says so and shows the file as it
    is now; "Load current version" puts that in the box and the next Save writes it."""
    async with memory_world(tmp_path, memory={"user_namespace": "user"}) as world:
        files = DirectoryPersonFiles(world.settings.data_dir)
        files.write("user", "USER.md", "- Name: Ana\n")
        [page] = (await memory_pages(world, {"owner": TOKEN}, DESKTOP)).values()
        await expect(page.locator("#files")).to_contain_text("- Name: Ana")
        await page.locator(".file summary", has_text="USER.md").click()
        await page.get_by_role("button", name="Edit USER.md").click()
        area = page.get_by_label("USER.md text")
        await expect(area).to_have_value("- Name: Ana\n")
        typed = "- Name: Ana Lima\n- Prefers: short answers\n"
        await area.fill(typed)
        # Meanwhile the file is written from another process (as a chat's turn or an editor).
        changed = tmp_path / "changed.md"
        changed.write_text("- Name: Ana\n- Allergic to penicillin\n")
        await world.flynn("memory", "file", "edit", "USER.md", "--set-from", str(changed))

        await page.get_by_role("button", name="Save").click()
        await expect(page.locator(".file-status")).to_contain_text(
            "USER.md changed since you opened it"
        )
        await expect(area).to_have_value(typed)
        await expect(page.locator(".file-conflict pre")).to_have_text(
            "- Name: Ana\n- Allergic to penicillin\n"
        )
        assert files.read("user", "USER.md") == "- Name: Ana\n- Allergic to penicillin\n"
        await page.screenshot(path=str(SCREENSHOTS / "flynn-memory-edit-conflict.png"))

        await page.get_by_role("button", name="Load current version").click()
        await expect(area).to_have_value("- Name: Ana\n- Allergic to penicillin\n")
        await expect(page.locator(".file-conflict")).to_have_count(0)
        await area.fill("- Name: Ana Lima\n- Allergic to penicillin\n- Prefers: short answers\n")
        await page.get_by_role("button", name="Save").click()
        await expect(page.locator("#notice")).to_have_text(
            "USER.md saved. Flynn reads it from your next message."
        )
        assert files.read("user", "USER.md") == (
            "- Name: Ana Lima\n- Allergic to penicillin\n- Prefers: short answers\n"
        )
