"""Per-person files (DESIGN 15): USER.md and the distilled MEMORY_*.md are each person's own,
in ``data_dir/<namespace>/``; nobody's prompt carries another's, and an older install's copies in
the shared persona folder move to the owner's folder once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SMALL_WINDOW, Harness

from flynn.messages import ChannelAccount, CommandCall, SessionKey

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}
PEOPLE = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-laptop"]}}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


async def test_each_persons_files_reach_only_their_prompt(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SMALL_WINDOW, users=PEOPLE, persona={"tier": 3})
    app = h.open()
    _write(h.data_dir / "users/alice/USER.md", "Alice: a potter in Porto")
    _write(h.data_dir / "users/alice/MEMORY_SHORT.md", "alice was glazing the blue vase")
    _write(h.data_dir / "users/alice/MEMORY_LONG.md", "alice's long memory: kiln course 2025")
    _write(h.data_dir / "users/bob/USER.md", "Bob: a sailor")
    alice = app.sessions.orchestrator(
        SessionKey("gateway", "alice@alice-laptop"), ChannelAccount("gateway", "alice@alice-laptop")
    )
    bob = app.sessions.orchestrator(
        SessionKey("gateway", "bob@bob-laptop"), ChannelAccount("gateway", "bob@bob-laptop")
    )
    stranger = app.sessions.orchestrator(
        SessionKey("gateway", "kiosk"), ChannelAccount("gateway", "kiosk")
    )

    await alice.handle("hello")
    system = h.chat.requests[-1].system
    assert "--- USER.md ---\nAlice: a potter in Porto" in system
    assert "--- MEMORY_SHORT.md ---\nalice was glazing the blue vase" in system
    assert "kiln course 2025" in system
    assert "Bob" not in system

    for session in (bob, stranger):
        await session.handle("hello")
        system = h.chat.requests[-1].system
        assert "alice" not in system.casefold()
        assert "potter" not in system
    assert "Bob: a sailor" not in h.chat.requests[-1].system  # the stranger is nobody's


async def test_a_person_gets_their_templates_at_their_first_message(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SMALL_WINDOW, users=PEOPLE)
    app = h.open()
    folder = h.data_dir / "users" / "bob"
    assert not folder.exists()
    bob = app.sessions.orchestrator(
        SessionKey("gateway", "bob@bob-laptop"), ChannelAccount("gateway", "bob@bob-laptop")
    )
    await bob.handle("hi")
    # and the lock every write takes in a folder (each template is written only where no
    # file is, under it)
    assert sorted(path.name for path in folder.iterdir()) == [
        ".lock",
        "MEMORY_LONG.md",
        "MEMORY_MID.md",
        "MEMORY_SHORT.md",
        "REMINDERS.md",
        "USER.md",
    ]
    assert folder.stat().st_mode & 0o777 == 0o700
    assert "<!--" not in h.chat.requests[-1].system  # guidance is for the person, not the model
    stranger = app.sessions.orchestrator(
        SessionKey("gateway", "kiosk"), ChannelAccount("gateway", "kiosk")
    )
    await stranger.handle("hi")
    assert not (h.data_dir / "sessions").exists()  # no folders for people Flynn does not know


async def test_an_edit_to_a_persons_file_applies_on_the_next_turn(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    session = h.session()
    await session.handle("hi")
    _write(h.data_dir / "user/MEMORY_MID.md", "- planning the Lisbon trip")
    await session.handle("and now?")
    assert "planning the Lisbon trip" in h.chat.requests[-1].system


async def test_an_older_installs_person_files_move_to_the_owner_once(
    harness: Callable[..., Harness], caplog: pytest.LogCaptureFixture
) -> None:
    h = harness(**SHARED)
    persona = h.data_dir / "persona" / "flynn"
    _write(persona / "USER.md", "Ana, backend engineer")
    _write(persona / "MEMORY_SHORT.md", "- was fixing the flaky deploy")
    _write(persona / "SOUL.md", "warm and brief")
    h.open()
    owner = h.data_dir / "user"
    assert (owner / "USER.md").read_text(encoding="utf-8") == "Ana, backend engineer"
    assert (owner / "MEMORY_SHORT.md").exists()
    assert not (persona / "USER.md").exists()
    assert (persona / "SOUL.md").exists()  # the assistant's own persona stays shared
    await h.session().handle("hi")
    system = h.chat.requests[-1].system
    assert "Ana, backend engineer" in system
    assert "was fixing the flaky deploy" in system
    assert "warm and brief" in system

    await h.close()
    h.open()  # nothing left to move: nothing said
    assert (owner / "USER.md").exists()


async def test_with_several_people_old_shared_files_are_moved_to_nobody(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SMALL_WINDOW, users=PEOPLE)
    persona = h.data_dir / "persona" / "flynn"
    _write(persona / "USER.md", "whose is this?")
    app = h.open()
    assert (persona / "USER.md").exists()
    assert not (h.data_dir / "users" / "alice" / "USER.md").exists()
    alice = app.sessions.orchestrator(
        SessionKey("gateway", "alice@alice-laptop"), ChannelAccount("gateway", "alice@alice-laptop")
    )
    await alice.handle("hi")
    assert "whose is this?" not in h.chat.requests[-1].system


async def test_forgetting_deletes_the_distilled_notes_but_not_user_md(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    owner = h.data_dir / "user"
    session = h.session()
    await session.handle("my name is Ana")
    _write(owner / "USER.md", "Ana's own words")
    _write(owner / "MEMORY_SHORT.md", "- Ana asked about her name")
    reply = await session.handle(CommandCall("forget", "name"))
    assert "distilled notes" in reply.text
    assert not (owner / "MEMORY_SHORT.md").exists()
    assert (owner / "USER.md").read_text(encoding="utf-8") == "Ana's own words"


async def test_an_unedited_template_in_the_owners_folder_gives_way_to_the_old_file(
    harness: Callable[..., Harness],
) -> None:
    from flynn.people.files import write_person_templates

    h = harness(**SHARED)
    write_person_templates(h.data_dir / "user")  # `flynn init` run again on an old data dir
    _write(h.data_dir / "persona" / "flynn" / "USER.md", "Ana, backend engineer")
    h.open()
    assert (h.data_dir / "user" / "USER.md").read_text(encoding="utf-8") == "Ana, backend engineer"
    assert not (h.data_dir / "persona" / "flynn" / "USER.md").exists()
