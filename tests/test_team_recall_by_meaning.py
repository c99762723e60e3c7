"""Recall by meaning on a team's PostgreSQL (issue 25's vectors, issue 26's workers), through two
real ``flynn run`` workers with the real int8 model: one person's turns never reach another's
prompt through the vectors, and a person forgotten by ``flynn memory forget`` is not recalled by
meaning on the worker that held their vectors in memory. (The other team tests run with
embeddings off.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from e2e_daemon import PATIENCE, run_flynn
from fakes import FakeOpenAI
from test_team_attacks_2 import Tab, _person_token, _team
from worker_pool import Worker, background_reply, model_config, rows

BOSS = "My manager Priscila approved my vacation in March."
QUESTION = "who is my boss?"  # no word in common with BOSS but "my"


async def _embedded(url: str, text: str) -> None:
    """Returns once the message ``text`` has its vector (a bound, not a measure)."""
    query = (
        "SELECT count(*) FROM embeddings e JOIN messages m ON e.kind = 'message' "
        "AND e.ref_id = m.id WHERE m.content = %s"
    )
    async with asyncio.timeout(PATIENCE):
        # Another process's database: no event to wait on.
        while rows(url, query, text) == [(0,)]:  # noqa: ASYNC110
            await asyncio.sleep(0.2)


async def test_vectors_never_carry_one_persons_turns_to_another_and_a_forget_reaches_them(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    async with FakeOpenAI() as model:
        model.responder = background_reply
        llm, memory = model_config(model), {"embeddings": True}
        path, one, two = await _team(tmp_path, postgres_url, pool, llm=llm, memory=memory)
        await asyncio.gather(
            one.daemon.wait_for("memory.embeddings_loaded"),
            two.daemon.wait_for("memory.embeddings_loaded"),
        )
        alice = await _person_token(path, tmp_path, postgres_url, "alice")
        bob = await _person_token(path, tmp_path, postgres_url, "bob")
        alice_laptop, alice_phone, bob_laptop = Tab(), Tab(), Tab()
        await alice_laptop.open(two, alice, "laptop")
        await alice_phone.open(one, alice, "phone")
        await bob_laptop.open(one, bob, "laptop")

        await alice_laptop.say("a1", BOSS)
        await _embedded(postgres_url, BOSS)
        await bob_laptop.say("b1", QUESTION)
        await alice_phone.say("a2", QUESTION)  # worker 1 now holds her vectors in memory
        done = await run_flynn(
            *("memory", "forget", "--user", "alice", "--all", "--yes", "--config", str(path)),
            home=tmp_path,
            env={"FLYNN_STORAGE__URL": postgres_url},
        )
        assert done.code == 0, done
        await alice_phone.say("a3", "so who is my boss then?")
        for tab in (alice_laptop, alice_phone, bob_laptop):
            await tab.close()

    turns = [
        json.dumps(r.json)
        for r in model.requests
        if model.last_user_text(r) in (QUESTION, "so who is my boss then?")
    ]
    bobs, alices, after = turns  # in the order asked, one request a turn
    assert "Priscila" not in bobs  # bob's recall never reads alice's vectors
    assert "Priscila" in alices  # found by meaning on the other worker: the path is live
    assert "Priscila" not in after  # forgotten, in the database and in worker 1's memory
