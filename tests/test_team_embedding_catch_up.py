"""The start-up embedding catch-up on a team's PostgreSQL, through two real ``flynn run`` workers
with the real int8 model: each stored message is embedded by one worker, not by every worker
(the catch-up runs under a lease, one worker at a time)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from e2e_daemon import PATIENCE
from fakes import FakeOpenAI
from test_team_attacks_2 import Tab, _person_token, _team
from worker_pool import Worker, background_reply, make_worker, model_config, rows, start_all

_COPIES = 60
"""Each stored message copied this many times: a catch-up long enough for two workers that
start together to be in it at once (on main both were)."""
_COPY = """
INSERT INTO messages (session, namespace, root, role, content, tokens, created_at, terms)
SELECT session, namespace, root, role, content || ' #' || n, tokens, created_at, terms
FROM messages, generate_series(1, %s) AS n
RETURNING id
"""
_MISSING = (
    "SELECT count(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
    "WHERE e.kind = 'message' AND e.ref_id = m.id)"
)


async def test_two_workers_starting_together_embed_each_message_once(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    async with FakeOpenAI() as model:
        model.responder = background_reply
        llm = model_config(model)
        path, one, two = await _team(tmp_path, postgres_url, pool, llm=llm)  # embeddings off
        alice = await _person_token(path, tmp_path, postgres_url, "alice")
        bob = await _person_token(path, tmp_path, postgres_url, "bob")
        alice_tab, bob_tab = Tab(), Tab()
        await alice_tab.open(one, alice, "alice-laptop")
        await bob_tab.open(two, bob, "bob-laptop")
        for i in range(3):
            await alice_tab.say(f"a{i}", f"My sister Lena moved to Porto in year {i}.")
            await bob_tab.say(f"b{i}", f"The billing release is on Tuesday number {i}.")
        await alice_tab.close()
        await bob_tab.close()
        for worker in (one, two):
            assert await worker.daemon.stop() == 0
        assert len(rows(postgres_url, _COPY, _COPIES)) == 12 * _COPIES
        stored = rows(postgres_url, "SELECT count(*) FROM messages")[0][0]
        assert rows(postgres_url, _MISSING)[0][0] == stored > 12 * _COPIES

        on = {"FLYNN_MEMORY__EMBEDDINGS": "true"}
        again = [
            make_worker("3", path, tmp_path / "c", postgres_url, on),
            make_worker("4", path, tmp_path / "d", postgres_url, on),
        ]
        pool += again
        await start_all(again)
        async with asyncio.timeout(PATIENCE * 4):
            # Lines of other processes, and their database: no event to wait on.
            while not any(w.daemon.seen("memory.embeddings_backfilled") for w in again):  # noqa: ASYNC110
                await asyncio.sleep(0.2)
        assert rows(postgres_url, _MISSING) == [(0,)]
        for worker in again:
            assert await worker.daemon.stop() == 0

    embedded = [
        sum(e["messages"] for e in worker.daemon.seen("memory.embeddings_caught_up"))
        for worker in again
    ]
    # What each stored (a row is stored once, by whoever comes first): on main both workers
    # passed over the same people at once, and each stored part (316 and 404 of 732).
    assert sum(embedded) == stored, embedded
    assert sorted(embedded) == [0, stored]
