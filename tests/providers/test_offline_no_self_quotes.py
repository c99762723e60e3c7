"""Offline replies never quote themselves: recalled memory reads from the person's side, the
assistant's own earlier replies are left out, and a statement gets a short acknowledgement; the
offline provider's replies are kept in their conversation but never searched, distilled or
embedded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from flynn.app import App
from flynn.distill.material import gather
from flynn.memory.vectors import SqliteVectors
from flynn.messages import ChannelAccount, SessionKey
from flynn.people.files import DirectoryPersonFiles
from flynn.providers import offline
from flynn.providers.offline import LATER_HINT, acknowledgement, compose_reply, memory_in
from flynn.recall import recall
from flynn.sessions import prompt
from flynn.settings import load_settings


def recalled(*lines: str) -> str:
    return "\n".join(
        [
            prompt.RECALL_HEADING,
            prompt.TRUST_CURRENT,
            "[Past conversations, verbatim (trust: high)]",
            *lines,
        ]
    )


def test_recalled_words_read_from_the_persons_side_and_its_own_are_left_out() -> None:
    system = recalled(
        "- 2026-11-17 Tue, they said: I live in Lisbon",
        "- 2026-11-17 Tue, you said: Related things from earlier: - I live in Lisbon",
    )
    reply = compose_reply(memory_in(system), explain=False, said="where do I live?")
    assert "- 2026-11-17 Tue, you said: I live in Lisbon" in reply.splitlines()
    assert "they said" not in reply
    assert "Related things from earlier: -" not in reply
    assert reply.count("Lisbon") == 1


def test_the_labels_are_the_ones_recall_writes() -> None:
    # providers may not import recall, so the offline provider keeps its own copies.
    source = Path(recall.__file__).read_text(encoding="utf-8")
    assert f'"{offline.PERSON_SAID}" if item.role == "user" else "{offline.ASSISTANT_SAID}"' in (
        source
    )


def test_a_statement_gets_a_short_acknowledgement_of_what_was_noted() -> None:
    assert acknowledgement("I live in Lisbon") == "Noted: you live in Lisbon."
    assert acknowledgement("My sister is called Rita.") == "Noted: your sister is called Rita."
    assert acknowledgement("I am allergic to nuts") == "Noted: you are allergic to nuts."
    assert acknowledgement("where do I live?") is None
    assert acknowledgement("what is my name") is None
    assert acknowledgement("thanks") is None
    long = acknowledgement("I " + "really " * 60 + "like tea")
    assert long is not None and len(long) < 180 and long.endswith("….")
    reply = compose_reply(
        memory_in(recalled("- 2026-11-17 Tue, they said: hi")),
        explain=False,
        said="I live in Lisbon",
    )
    assert reply == "Noted: you live in Lisbon.\n\n" + LATER_HINT


async def test_replies_stay_short_over_many_conversations(tmp_path: Path) -> None:
    settings = load_settings({"data_dir": str(tmp_path), "llm": {"provider": "offline"}})
    replies: list[str] = []
    app = App.open(settings, {})
    try:
        orchestrator = app.sessions.orchestrator(
            SessionKey("cli", "ana"), ChannelAccount("cli", "ana")
        )
        for _ in range(4):  # four conversations, each recalling the ones before
            for text in ("my name is Ana", "I live in Lisbon", "where do I live?"):
                replies.append((await orchestrator.handle(text)).text)
            replies.append((await orchestrator.handle("what is my name?")).text)
            orchestrator.clear_conversation()
    finally:
        await app.aclose()
    last = replies[-1]
    assert len(last) < 600, last
    for reply in replies:
        assert (
            "Related things from earlier:" not in reply.partition("Related things from earlier:")[2]
        )
        assert "they said" not in reply
        assert "(No language model" not in reply.removesuffix(LATER_HINT)


class UncalledEmbedder:
    """Names a model; what waits to be embedded is read, nothing is embedded."""

    model = "uncalled"
    ready = True

    def embed(self, texts: Sequence[str]) -> NoReturn:
        raise AssertionError("nothing is embedded here")


async def test_offline_replies_stay_in_the_conversation_not_in_search_distill_or_vectors(
    tmp_path: Path,
) -> None:
    settings = load_settings({"data_dir": str(tmp_path), "llm": {"provider": "offline"}})
    app = App.open(settings, {})
    try:
        key = SessionKey("cli", "ana")
        orchestrator = app.sessions.orchestrator(key, ChannelAccount("cli", "ana"))
        for text in ("I live in Lisbon", "where do I live?"):
            await orchestrator.handle(text)
        await orchestrator.wait_idle()
        history = app.memory.history
        session = orchestrator.session_id
        kept = history.latest(session, 10)
        root = kept[0].namespace
        now = kept[-1].created_at
        material = gather(
            root,
            facts=app.memory.facts,
            history=history,
            documents=app.memory.documents,
            files=DirectoryPersonFiles(tmp_path),
            now=now,
            days=1,
        )
        hits = history.search(root, "Lisbon", limit=10)
        vectors = SqliteVectors(app.memory.db, UncalledEmbedder())
        pending = vectors.pending(root, after=0, limit=10)
        unembedded = vectors.unembedded(root)
    finally:
        await app.aclose()
    # The conversation keeps both sides; each reply is marked as the offline provider's.
    assert [m.role for m in kept] == ["user", "assistant", "user", "assistant"]
    assert [m.offline for m in kept] == [False, True, False, True]
    assert [hit.message.role for hit in hits] == ["user"]
    assert [m.role for m in material.messages] == ["user", "user"]
    assert unembedded == len(pending) == 2
