"""Attacks on recall by meaning (issue 25's work) through a running daemon: what a model that
fails mid-call and a credential typed in a turn do to the turn and to what is embedded."""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from fakes.embedder import FailingEmbedder, HashingEmbedder, RecordingEmbedder
from gateway_daemon import TOKEN, gateway_settings, say, serving

from evals.scripted_provider import ScriptedProvider
from flynn.app import database_path
from flynn.memory.stores import SqliteMemory
from flynn.providers.base import ChatResponse, ToolCall
from flynn.schedule.migrations import SCHEMA

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix


async def test_a_model_failing_on_the_question_still_answers_the_turn_by_words(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(default="noted")
    embedder = FailingEmbedder("Porto?")
    async with serving(gateway_settings(tmp_path / "data"), provider, embedder) as port:
        await say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        # On main: {'type': 'error', 'code': 'internal', 'message': 'Something went wrong...'}
        assert (await say(port, "second", "Did Lena like Porto?"))["type"] == "reply"
        assert "robotics" in repr(provider.requests[-1])  # recalled by words
        assert (await say(port, "third", "Where does Lena work?"))["type"] == "reply"


async def test_a_turn_redacted_by_forget_is_not_recalled_in_its_old_words_by_any_thread(
    tmp_path: Path,
) -> None:
    # A guard (it passes on main): /forget FIELD rewrites the turns that said the value; the
    # recall threads' row caches and the shared vectors must not keep the old text.
    provider = ScriptedProvider(default="noted")
    async with serving(gateway_settings(tmp_path / "data"), provider, HashingEmbedder()) as port:
        await say(port, "first", "My name is Alicia Zanzibar and I live in Porto.")
        await say(port, "second", "What is my name?")
        assert "Zanzibar" in repr(provider.requests[-1])  # recalled, so cached by a thread
        forgot = await say(port, "first", "/forget name")
        assert "mentions redacted" in forgot["text"], forgot
        for client in ("third", "fourth", "fifth"):  # both recall threads, likely
            await say(port, client, "What is my name? Alicia who?")
            assert "Zanzibar" not in repr(provider.requests[-1])


async def test_a_credential_typed_in_a_turn_is_never_embedded(tmp_path: Path) -> None:
    # A guard (it passes on main): the question, its topic and the stored turn are embedded
    # as stored, redacted, and so is the next turn's context.
    embedder = RecordingEmbedder()
    provider = ScriptedProvider(default="noted")
    async with serving(gateway_settings(tmp_path / "data"), provider, embedder) as port:
        await say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        frame = await say(port, "second", "my bank password is Zq8#tLw0vRx, where is Lena?")
        assert frame["type"] == "reply"
        await say(port, "third", "and what does Lena do?")
    assert any("where is Lena" in text for text in embedder.texts)
    assert not [text for text in embedder.texts if "Zq8#tLw0vRx" in text]


async def test_the_real_model_takes_odd_and_huge_messages_and_recall_still_finds_by_meaning(
    tmp_path: Path,
) -> None:
    from flynn.recall.embeddings import load_embedder
    from flynn.settings import load_settings

    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "channels": {
                "gateway": {"port": 0, "token": TOKEN, "max_message_bytes": 2 * 1024 * 1024}
            },
        }
    )
    provider = ScriptedProvider(default="noted")
    odd = {
        "huge": "lorem ipsum dolor " * 60_000,  # about 1 MB
        "nul": "a\x00b\x00c my cat\x00 Miso",
        "emoji": "😀" * 10_000,
        "joiners": "👩\u200d👩\u200d👧" * 2_000 + "\u0301" * 5_000,
    }
    async with serving(settings, provider, load_embedder("auto")) as port:
        await say(port, "first", "My manager Priscila approved my vacation in March.")
        for client, text in odd.items():
            assert (await say(port, client, text))["type"] == "reply", client
        assert (await say(port, "last", "who is my boss?"))["type"] == "reply"
        assert "Priscila" in repr(provider.requests[-1])  # no word shared: by meaning
    with SqliteMemory.open(database_path(settings), SCHEMA) as memory:
        stored = memory.db.fetchall("SELECT content FROM messages WHERE role = 'user'")
    assert len(stored) == 6  # nothing lost; a NUL is stored replaced (``storable``)
    assert any("my cat" in row[0] and "\x00" not in row[0] for row in stored)


def test_a_team_documents_chunks_are_embedded_as_stored_without_their_credentials(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime

    from flynn.learning.documents import DocumentIngestor
    from flynn.learning.graph_extraction import RuleGraphExtractor
    from flynn.learning.graph_ingest import GraphIngestor
    from flynn.memory.vectors import SqliteVectors

    secrets = ("Lighthouse!2024", "AKIAIOSFODNN7EXAMPLE")
    wiki = tmp_path / "wiki.md"
    wiki.write_text(
        "# Staging password: Lighthouse!2024\n\nThe staging database password is "
        "Lighthouse!2024; Maria Lopez rotates it.\n\n## Build\n\n"
        "The build uses AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE on Tuesdays.\n",
        encoding="utf-8",
    )
    embedder = RecordingEmbedder()
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as memory:
        ingestor = DocumentIngestor(
            memory.team,
            GraphIngestor(memory.graph, RuleGraphExtractor()),
            vectors=SqliteVectors(memory.db, embedder),
            clock=lambda: datetime(2026, 6, 15, tzinfo=UTC),
        )
        ingestor.add(wiki)
        stored = [row[0] for row in memory.db.fetchall("SELECT content FROM team_chunks")]
    assert stored and not [text for text in stored if any(s in text for s in secrets)]
    assert any("Maria Lopez" in text for text in embedder.texts)
    # A guard (it passes on main: ``document_text`` redacts before chunking); the credentials
    # test of team documents runs without vectors.
    assert [text for text in embedder.texts if any(s in text for s in secrets)] == []


async def test_the_memory_search_tool_recalls_off_the_event_loop(tmp_path: Path) -> None:
    # The turn's own recall runs in a recall thread so that one person's recall never holds up
    # another's stream; on main the model's memory_search tool recalled on the loop: the
    # question's embedding, the vector search and, for a person whose vectors were dropped
    # (more than VectorIndex.MAX_BYTES of people), loading them again (1.5-2.6 s at 100,000
    # turns). On main its query was embedded on MainThread.
    searched = "Lena's new city"
    embedder = _Threads(searched)
    call = ToolCall("c1", "memory_search", json.dumps({"query": searched}))
    provider = ScriptedProvider([ChatResponse("", tool_calls=(call,)), "Porto, I think."])
    async with serving(gateway_settings(tmp_path / "data"), provider, embedder) as port:
        assert (await say(port, "first", "where did Lena go?"))["type"] == "reply"
    assert embedder.threads, "memory_search never embedded its query"
    assert threading.main_thread().name not in embedder.threads


class _Threads(HashingEmbedder):
    """Names the threads that embed exactly ``text``."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.threads: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        if list(texts) == [self.text]:
            self.threads.append(threading.current_thread().name)
        return super().embed(texts)
