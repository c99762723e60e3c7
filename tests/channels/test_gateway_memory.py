"""The gateway's ``memory`` frames over a real websockets client, answered by the real
``MemoryView`` over SQLite: who a client is decides whose memory it sees (two people in
``users:``, each with their own token, and the channel token's clients), malformed requests get
error frames and the connection stays, nobody forgets or reads another person's fact by its id,
and the page's assets are served under the chat page's CSP."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from gateway_harness import TOKEN, Gateway, recv, recv_close, running_gateway, send
from websockets.asyncio.client import ClientConnection, connect

from flynn.identity import Identity
from flynn.learning.fact_relations import FactRelations
from flynn.memory.browse import SqliteMemoryBrowser
from flynn.memory.person_tokens import SqlitePersonTokens
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory_view import MemoryView, text_digest
from flynn.people.documents import DocumentsPersonFiles
from flynn.people.files import DirectoryPersonFiles
from flynn.people.store import PersonFiles
from flynn.schedule.migrations import SCHEMA
from flynn.settings import UserAccounts

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


USERS = {
    "alice": UserAccounts(gateway=["alice-laptop"]),
    "bob": UserAccounts(gateway=["bob-phone"]),
}


class World:
    """Two people, alice and bob, each with their own token, a fact and an observation (alice
    uses ``alice-laptop``, bob ``bob-phone``: ids ``users:`` lists, which prove nothing), and
    the session memory of a channel-token client (``stranger``)."""

    def __init__(
        self, tmp_path: Path, memory: SqliteMemory, files: PersonFiles | None = None
    ) -> None:
        self.data_dir = tmp_path / "data"
        self.memory = memory
        self.files = DirectoryPersonFiles(self.data_dir) if files is None else files
        self.forgotten: list[tuple[str, dict[str, int]]] = []
        self.tokens = SqlitePersonTokens(memory.db)
        self.alice_token = self.tokens.issue("alice", now=NOW)
        self.bob_token = self.tokens.issue("bob", now=NOW)
        self.view = self.memory_view(Identity(user_namespace=None, users=USERS))
        facts = memory.facts
        self.alice_name = facts.add(
            NewFact("users/alice/profile", "profile", "Alice", field="name", source="rule"),
            now=NOW - timedelta(days=2),
        )
        self.alice_tea = facts.add(
            NewFact("users/alice/facts", "observation", "prefers green tea", source="llm"),
            now=NOW - timedelta(days=1),
        )
        self.bob_name = facts.add(
            NewFact("users/bob/profile", "profile", "Bob", field="name", source="rule"), now=NOW
        )
        facts.add(NewFact("users/bob/facts", "observation", "likes chess", source="llm"), now=NOW)
        self.stranger_fact = facts.add(
            NewFact("sessions/gateway:stranger/facts", "observation", "asked about trains"),
            now=NOW,
        )
        graph = memory.graph
        alice = graph.upsert_entity("users/alice", "User", "person", confidence=1.0, now=NOW)
        maya = graph.upsert_entity("users/alice", "Maya", "person", confidence=0.9, now=NOW)
        graph.relate("users/alice", alice.id, maya.id, "sister", confidence=0.9, now=NOW)
        self.alice_maya = maya
        self.bob_entity = graph.upsert_entity(
            "users/bob", "Chess Club", "org", confidence=1, now=NOW
        )

    def memory_view(self, identity: Identity) -> MemoryView:
        return MemoryView(
            self.memory,
            SqliteMemoryBrowser(self.memory.db),
            identity,
            files=self.files,
            clock=lambda: NOW,
            on_forgotten=self._forgotten,
        )

    def person_for(self, token: str) -> str | None:
        found = self.tokens.verify(token)
        return None if found is None else found.person

    def alice(
        self, gateway: Gateway, client_id: str = "alice-laptop"
    ) -> contextlib.AbstractAsyncContextManager[ClientConnection]:
        return gateway.client(client_id, token=self.alice_token, person="alice")

    def bob(
        self, gateway: Gateway, client_id: str = "bob-phone"
    ) -> contextlib.AbstractAsyncContextManager[ClientConnection]:
        return gateway.client(client_id, token=self.bob_token, person="bob")

    async def _forgotten(self, root: str, counts: Mapping[str, int]) -> None:
        self.forgotten.append((root, dict(counts)))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[tuple[World, Gateway]]:
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA, FactRelations) as memory:
        world = World(tmp_path, memory)
        async with running_gateway(memory=world.view, person_tokens=world.person_for) as gateway:
            yield world, gateway


async def ask(ws: ClientConnection, **frame: Any) -> dict[str, Any]:
    await send(ws, {"type": "memory", **frame})
    answer = dict(await recv(ws))
    assert answer["type"] in ("memory", "error"), answer
    return answer


def values(overview: Mapping[str, Any]) -> set[str]:
    return {fact["value"] for fact in overview["facts"]}


async def test_each_client_sees_only_its_persons_memory(world: tuple[World, Gateway]) -> None:
    w, gateway = world
    async with w.alice(gateway) as alice, w.bob(gateway) as bob:
        mine = await ask(alice, op="overview", id="o1")
        theirs = await ask(bob, op="overview")
    assert mine["id"] == "o1" and mine["op"] == "overview"
    assert mine["data"]["who"] == {"namespace": "users/alice", "person": "alice", "kind": "person"}
    assert values(mine["data"]) == {"Alice", "prefers green tea"}
    [name] = [fact for fact in mine["data"]["facts"] if fact["field"] == "name"]
    assert name == {
        "id": w.alice_name.id,
        "section": "profile",
        "kind": "profile",
        "field": "name",
        "value": "Alice",
        "confidence": 1.0,
        "source": "rule",
        "learnt_at": "2026-11-18T09:00:00Z",
        "channel": None,
        "has_history": False,
    }
    assert [entity["name"] for entity in mine["data"]["entities"]] == ["User", "Maya"]
    assert values(theirs["data"]) == {"Bob", "likes chess"}
    assert [entity["name"] for entity in theirs["data"]["entities"]] == ["Chess Club"]

    # The channel token (without a user_namespace): its own session's memory, nothing of
    # alice's or bob's.
    async with gateway.client("stranger") as stranger:
        seen = await ask(stranger, op="overview")
        drawn = await ask(stranger, op="map")
    assert seen["data"]["who"]["kind"] == "session"
    assert values(seen["data"]) == {"asked about trains"}
    assert seen["data"]["entities"] == []
    assert [point["text"] for point in drawn["data"]["points"]] == ["asked about trains"]


async def test_nobody_reads_or_forgets_another_persons_fact_by_id(
    world: tuple[World, Gateway],
) -> None:
    w, gateway = world
    async with w.bob(gateway) as bob, gateway.client("stranger") as stranger:
        for ws in (bob, stranger):
            refused = await ask(ws, op="forget", fact=w.alice_name.id, id="f1")
            assert refused == {
                "type": "error",
                "id": "f1",
                "code": "bad_request",
                "message": f"There is no fact {w.alice_name.id} in your memory "
                "(it may have been forgotten already).",
            }
            history = await ask(ws, op="history", fact=w.alice_tea.id)
            assert history["code"] == "bad_request"
            graph = await ask(ws, op="graph", entity=w.alice_maya.id)
            assert graph["code"] == "bad_request"
        # Nor alice's session: a stranger's own fact is not bob's to forget.
        refused = await ask(bob, op="forget", fact=w.stranger_fact.id)
        assert refused["code"] == "bad_request"
    assert w.memory.facts.get(w.alice_name.id) is not None
    assert w.memory.facts.get(w.stranger_fact.id) is not None
    assert w.forgotten == []


async def test_forget_is_the_clis_forget_fact(world: tuple[World, Gateway]) -> None:
    w, gateway = world
    anna = w.memory.facts.supersede(
        w.alice_name.id,
        NewFact("users/alice/profile", "profile", "Alicia", field="name", source="rule"),
        now=NOW,
    )
    message = w.memory.history.append(
        "gateway:alice@alice-laptop", "users/alice", "user", "call me Alicia", tokens=3, now=NOW
    )
    folder = w.data_dir / "users" / "alice"
    folder.mkdir(parents=True)
    (folder / "MEMORY_SHORT.md").write_text("Alicia said hi\n")
    (folder / "USER.md").write_text("# About me\n")
    async with w.alice(gateway) as alice:
        history = await ask(alice, op="history", fact=anna.id)
        assert [row["value"] for row in history["data"]["history"]] == ["Alice", "Alicia"]
        assert [row["status"] for row in history["data"]["history"]] == ["superseded", "active"]
        answer = await ask(alice, op="forget", fact=anna.id, id="f2")
        assert answer["id"] == "f2" and answer["data"]["fact"] == anna.id
        counts = answer["data"]["forgotten"]
        assert counts["facts"] == 2 and counts["redacted_messages"] == 1
        assert counts["distilled notes"] == 1
        after = await ask(alice, op="overview")
        again = await ask(alice, op="forget", fact=anna.id)
    assert values(after["data"]) == {"prefers green tea"}
    assert again["code"] == "bad_request"
    # The whole chain, the mention, the distilled notes; USER.md (theirs) stays.
    assert w.memory.facts.get(w.alice_name.id) is None
    [stored] = w.memory.history.recent("gateway:alice@alice-laptop")
    assert (stored.id, stored.content) == (message.id, "call me (forgotten)")
    assert not (folder / "MEMORY_SHORT.md").exists()
    assert (folder / "USER.md").exists()
    assert [root for root, _ in w.forgotten] == ["users/alice"]
    # Bob's memory is untouched.
    assert w.memory.facts.get(w.bob_name.id) is not None


async def test_graph_map_and_history_answers(world: tuple[World, Gateway]) -> None:
    w, gateway = world
    async with w.alice(gateway) as alice:
        around = await ask(alice, op="graph")
        chosen = await ask(alice, op="graph", entity=w.alice_maya.id)
        drawn = await ask(alice, op="map", id="m1")
        history = await ask(alice, op="history", fact=w.alice_tea.id)
    # Without a choice, the person's own node is the centre.
    assert around["data"]["centre"]["name"] == "User"
    assert {node["name"]: node["ring"] for node in around["data"]["nodes"]} == {
        "User": 0,
        "Maya": 1,
    }
    assert [edge["type"] for edge in around["data"]["edges"]] == ["sister"]
    assert chosen["data"]["centre"]["name"] == "Maya"
    assert drawn["id"] == "m1" and drawn["data"]["method"] == "tfidf"
    points = drawn["data"]["points"]
    assert sorted(point["text"] for point in points) == ["name: Alice", "prefers green tea"]
    assert {point["kind"] for point in points} == {"profile", "observation"}
    assert all(-1 <= point["x"] <= 1 and -1 <= point["y"] <= 1 for point in points)
    assert [row["value"] for row in history["data"]["history"]] == ["prefers green tea"]


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (
            {},
            "Unknown memory request. "
            "Known ones: file, forget, graph, history, map, overview, save_file.",
        ),
        ({"op": "everything"}, "Unknown memory request."),
        ({"op": "forget"}, "Say which fact: its id, a whole number."),
        ({"op": "forget", "fact": "12"}, "Say which fact: its id, a whole number."),
        ({"op": "history", "fact": True}, "Say which fact: its id, a whole number."),
        ({"op": "history", "fact": 0}, "Say which fact: its id, a whole number."),
        ({"op": "forget", "fact": 2**64}, "Say which fact: its id, a whole number."),
        ({"op": "graph", "entity": "Maya"}, "An entity's id is a whole number."),
        ({"op": "file"}, "Say which file: one of USER.md, REMINDERS.md."),
        ({"op": "file", "name": "../bob/USER.md"}, "Say which file: one of USER.md, REMINDERS.md."),
        (
            {"op": "save_file", "name": "MEMORY_SHORT.md", "text": "x"},
            "Say which file: one of USER.md, REMINDERS.md.",
        ),
        ({"op": "save_file", "name": "USER.md"}, "Say what the file should hold: its text."),
        ({"op": "save_file", "name": "USER.md", "text": 7}, "Say what the file should hold"),
        ({"op": "save_file", "name": "USER.md", "text": "x", "base": 7}, "A file's base is"),
        # A lone surrogate (a broken emoji pasted in the page) could not be written: refused
        # as a chat's text is, not an internal error with a traceback.
        (
            {"op": "save_file", "name": "USER.md", "text": "- Likes: \ud83d\n"},
            "The text holds an unpaired surrogate.",
        ),
        ({"op": "save_file", "name": "USER.md", "text": "x", "base": "\udc00"}, "A file's base"),
    ],
)
async def test_malformed_requests_get_error_frames_and_the_connection_stays(
    world: tuple[World, Gateway], frame: dict[str, Any], message: str
) -> None:
    w, gateway = world
    async with w.alice(gateway) as alice:
        answer = await ask(alice, id="bad", **frame)
        assert answer["type"] == "error" and answer["code"] == "bad_request"
        assert answer["id"] == "bad" and answer["message"].startswith(message)
        assert (await ask(alice, op="overview"))["type"] == "memory"


async def test_a_wrong_token_reads_nothing(world: tuple[World, Gateway]) -> None:
    _, gateway = world
    async with connect(gateway.url) as ws:
        await send(ws, {"type": "hello", "token": f"not-{TOKEN}", "client_id": "alice-laptop"})
        refused = await recv(ws)
        assert refused["code"] == "unauthorized"
        assert await recv_close(ws) == 4401
    # A memory frame in place of hello is no way around it.
    async with connect(gateway.url) as ws:
        await send(ws, {"type": "memory", "op": "overview"})
        assert (await recv(ws))["code"] == "unauthorized"
        assert await recv_close(ws) == 4401


async def test_a_gateway_without_memory_says_so() -> None:
    async with running_gateway() as gateway, gateway.client("tab") as ws:
        answer = await ask(ws, op="overview", id="o")
    assert answer == {
        "type": "error",
        "id": "o",
        "code": "internal",
        "message": "This gateway has no memory to show.",
    }


async def test_the_memory_page_is_served_under_the_chat_pages_csp() -> None:
    async with running_gateway() as gateway:
        status, headers, body = await gateway.http("GET", "/memory")
        _, chat_headers, _ = await gateway.http("GET", "/")
        assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
        assert headers["content-security-policy"] == chat_headers["content-security-policy"]
        assert "script-src 'self'" in headers["content-security-policy"]
        assert b'<script src="memory.js" defer></script>' in body
        assert b"<script>" not in body and b"style=" not in body
        for asset, kind in (
            ("/memory.js", "text/javascript"),
            ("/memory-draw.js", "text/javascript"),
            ("/memory.css", "text/css"),
        ):
            status, headers, body = await gateway.http("GET", asset)
            assert status == 200 and headers["content-type"].startswith(kind) and body


async def test_a_persons_token_is_that_person_whatever_client_id_it_names(
    world: tuple[World, Gateway],
) -> None:
    w, gateway = world
    # Bob names alice's client id: he is still bob, with bob's memory only.
    async with w.bob(gateway, "alice-laptop") as bob:
        seen = await ask(bob, op="overview")
        drawn = await ask(bob, op="map")
        refused = await ask(bob, op="history", fact=w.alice_tea.id)
    assert seen["data"]["who"] == {"namespace": "users/bob", "person": "bob", "kind": "person"}
    assert values(seen["data"]) == {"Bob", "likes chess"}
    assert "prefers green tea" not in {point["text"] for point in drawn["data"]["points"]}
    assert refused["code"] == "bad_request"


async def test_the_channel_token_is_the_owners_never_a_listed_persons(
    world: tuple[World, Gateway],
) -> None:
    w, _ = world
    w.memory.facts.add(NewFact("user/facts", "observation", "owner likes jazz"), now=NOW)
    view = w.memory_view(Identity(user_namespace="user", users=USERS))
    # alice-laptop is listed under alice in users:, yet the channel token is not alice.
    async with (
        running_gateway(memory=view, person_tokens=w.person_for) as gateway,
        gateway.client("alice-laptop") as owner,
    ):
        seen = await ask(owner, op="overview")
        refused = await ask(owner, op="forget", fact=w.alice_name.id)
    assert seen["data"]["who"] == {"namespace": "user", "person": "user", "kind": "owner"}
    assert values(seen["data"]) == {"owner likes jazz"}
    assert refused["code"] == "bad_request"
    assert w.memory.facts.get(w.alice_name.id) is not None


async def test_two_people_naming_one_client_id_never_share_a_session(
    world: tuple[World, Gateway],
) -> None:
    w, _ = world
    history = w.memory.history
    for session, root, text in (
        ("gateway:alice@tab", "users/alice", "alice's secret plan"),
        ("gateway:bob@tab", "users/bob", "bob's surprise party"),
        ("gateway:tab", "user", "the owner's note"),
    ):
        history.append(session, root, "user", text, tokens=3, now=NOW)
    async with (
        running_gateway(memory=w.view, person_tokens=w.person_for, transcript=history) as gateway,
        w.alice(gateway, "tab") as alice,
        w.bob(gateway, "tab") as bob,
        gateway.client("tab") as owner,
    ):
        said = {}
        for name, ws in (("alice", alice), ("bob", bob), ("owner", owner)):
            await send(ws, {"type": "history", "id": "h"})
            said[name] = [entry["text"] for entry in (await recv(ws))["messages"]]
        assert said == {
            "alice": ["alice's secret plan"],
            "bob": ["bob's surprise party"],
            "owner": ["the owner's note"],
        }
        await send(bob, {"type": "message", "id": "m1", "text": "hi from bob"})
        inbound = await gateway.handler.next()
        # Bob's reply reaches bob's tab only: alice's and the owner's "tab" hear nothing.
        assert (inbound.chat_id, inbound.sender_id) == ("bob@tab", "bob@tab")
        frames = [await recv(bob) for _ in range(3)]
        assert (frames[-1]["type"], frames[-1]["text"]) == ("reply", "echo: hi from bob")
        await send(alice, {"type": "message", "id": "m2", "text": "hi from alice"})
        assert (await gateway.handler.next()).chat_id == "alice@tab"
        alice_frames = [await recv(alice) for _ in range(3)]
        assert [frame["id"] for frame in alice_frames] == ["m2", "m2", "m2"]
        await send(owner, {"type": "history", "id": "again"})
        assert (await recv(owner))["id"] == "again"  # nothing of bob's or alice's came first


async def test_a_revoked_token_is_refused_at_its_next_hello(world: tuple[World, Gateway]) -> None:
    w, gateway = world
    async with w.alice(gateway) as alice:
        assert (await ask(alice, op="overview"))["type"] == "memory"
    assert w.tokens.revoke("alice") == 1
    async with connect(gateway.url) as ws:
        await send(ws, {"type": "hello", "token": w.alice_token, "client_id": "alice-laptop"})
        assert (await recv(ws))["code"] == "unauthorized"
        assert await recv_close(ws) == 4401
    # Bob's token is his own and still works.
    async with w.bob(gateway) as bob:
        assert (await ask(bob, op="overview"))["data"]["who"]["person"] == "bob"


@pytest.fixture(params=["directory", "database"])
async def files_world(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[World, Gateway]]:
    """The world with people's files in their folders, or as documents in the database."""
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA, FactRelations) as memory:
        files = None
        if request.param == "database":
            files = DocumentsPersonFiles(memory.documents, lambda: NOW)
        world = World(tmp_path, memory, files)
        async with running_gateway(memory=world.view, person_tokens=world.person_for) as gateway:
            yield world, gateway


async def test_a_person_reads_and_saves_their_own_file_and_nobody_elses(
    files_world: tuple[World, Gateway],
) -> None:
    w, gateway = files_world
    key = "sk-ant-api03-Zq8wX2vBn5mK1pL7rT4yU9iO3aS6dF0gH2jK"
    w.files.write("users/alice", "USER.md", "<!-- guidance -->\n- Name: Alice\n")
    async with w.alice(gateway) as alice, w.bob(gateway) as bob:
        mine = await ask(alice, op="file", name="USER.md", id="f1")
        assert (mine["id"], mine["op"]) == ("f1", "file")
        assert mine["data"] == {
            "name": "USER.md",
            "text": "<!-- guidance -->\n- Name: Alice\n",
            "base": text_digest("<!-- guidance -->\n- Name: Alice\n"),
        }
        # Bob's token reaches Bob's file only, whatever he names.
        theirs = await ask(bob, op="file", name="USER.md")
        assert theirs["data"] == {"name": "USER.md", "text": "", "base": text_digest("")}
        saved = await ask(bob, op="save_file", name="USER.md", text=f"- Name: Bob\n- key {key}\n")
        assert saved["data"]["redacted"] is True and key not in str(saved)
        # Alice's file is as she left it; hers is saved and shown in her overview.
        again = await ask(alice, op="file", name="USER.md")
        assert again["data"]["text"] == "<!-- guidance -->\n- Name: Alice\n"
        await ask(alice, op="save_file", name="USER.md", text="- Name: Alice Lima\n")
        overview = await ask(alice, op="overview")
    [user_md] = [file for file in overview["data"]["files"] if file["name"] == "USER.md"]
    assert user_md["text"] == "- Name: Alice Lima"
    assert w.files.read("users/alice", "USER.md") == "- Name: Alice Lima\n"
    bob_md = w.files.read("users/bob", "USER.md")
    assert bob_md.startswith("- Name: Bob\n- key ") and key not in bob_md


async def test_a_save_over_a_file_changed_since_it_was_opened_is_refused(
    files_world: tuple[World, Gateway],
) -> None:
    w, gateway = files_world
    w.files.write("users/alice", "USER.md", "- Name: Alice\n")
    async with w.alice(gateway) as alice:
        opened = await ask(alice, op="file", name="USER.md")
        # Meanwhile a chat's turn notes a fact in the file.
        w.files.write("users/alice", "USER.md", "- Name: Alice\n- Allergic to penicillin\n")
        refused = await ask(
            alice,
            op="save_file",
            id="s1",
            name="USER.md",
            text="- Name: Alice Lima\n",
            base=opened["data"]["base"],
        )
        assert refused == {
            "type": "error",
            "id": "s1",
            "code": "conflict",
            "message": "USER.md changed since you opened it (Flynn or another editor wrote it), "
            "so nothing was saved. Make your change to its current text and save again.",
            "data": {
                "name": "USER.md",
                "text": "- Name: Alice\n- Allergic to penicillin\n",
                "base": text_digest("- Name: Alice\n- Allergic to penicillin\n"),
            },
        }
        assert w.files.read("users/alice", "USER.md") == "- Name: Alice\n- Allergic to penicillin\n"
        # From the current text, the save is written; the connection kept going.
        saved = await ask(
            alice,
            op="save_file",
            name="USER.md",
            text="- Name: Alice Lima\n- Allergic to penicillin\n",
            base=refused["data"]["base"],
        )
        assert saved["type"] == "memory" and saved["data"]["redacted"] is False
        # Without a base, as before: written whatever the file holds.
        w.files.write("users/alice", "USER.md", "- Name: Alice\n")
        await ask(alice, op="save_file", name="USER.md", text="- Name: A.\n")
    assert w.files.read("users/alice", "USER.md") == "- Name: A.\n"
