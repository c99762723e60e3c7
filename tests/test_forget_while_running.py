"""A person forgotten by another process (``flynn memory forget``) while the daemon runs: the
daemon's next recall, in its worker threads over their own connections and the vectors they
share, holds nothing of what was forgotten. A regression guard for recall off the event loop
(it passed before the fault-injection fixes too: the race it guards against is too narrow to
hit on demand, and ``tests/memory/test_vector_index.py`` proves that one step by step)."""

from __future__ import annotations

from pathlib import Path

from fakes.embedder import HashingEmbedder
from gateway_daemon import gateway_settings, say, serving

from evals.scripted_provider import ScriptedProvider
from flynn.app import database_path
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA


async def test_what_another_process_forgot_is_not_recalled_by_the_running_daemon(
    tmp_path: Path,
) -> None:
    settings = gateway_settings(tmp_path / "data")
    provider = ScriptedProvider(default="noted")
    async with serving(settings, provider, HashingEmbedder()) as port:
        await say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        await say(port, "second", "Where did my sister Lena move to?")
        assert "Porto" in repr(provider.requests[-1])  # recalled from the first conversation

        with SqliteMemory.open(database_path(settings), SCHEMA) as other_process:
            assert other_process.forget_namespace("user")["messages"] > 0
        for client in ("third", "fourth"):  # each of the two recall threads, likely
            assert (await say(port, client, "Where did my sister Lena move to?"))["type"] == "reply"
            assert "Porto" not in repr(provider.requests[-1])
