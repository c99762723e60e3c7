"""Attacks on Flynn for a team, second round (issue 26): a database password an operator wrote
carelessly, moving house twice, and two real workers on one PostgreSQL: what one person may
reach of another's through the other worker, what the database keeps of the install's secrets,
and frames PostgreSQL takes differently from SQLite. Each probe is made from outside (what a
command prints, the frames a client reads) and in the database. ``tests/test_team_attacks.py``
(branch t-attack) holds the first round; nothing here repeats it."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, run_flynn
from postgres_server import PostgresServer
from test_storage_copy import T0, build_install
from websockets.asyncio.client import ClientConnection, connect
from worker_pool import Worker, make_worker, rows, start_all, worker_config

from flynn.errors import CopyRefused, StorageUnusable
from flynn.people.documents import DocumentsPersonFiles
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.memory import PostgresMemory
from flynn.postgres.urls import AT_SIGNED, passwords_in, shown_url
from flynn.storage_copy import copy_to_postgres

OFFLINE = {"provider": "offline"}

# -- 1. a password an operator wrote carelessly ------------------------------------------------


def test_a_password_with_an_at_sign_left_unencoded_is_never_shown() -> None:
    # "Tr0ub@dor3" pasted into the URL as it is: libpq ends the password at the first "@" and
    # takes "dor3@127.0.0.1" for the host, which its error quotes. Before the fix, doctor and
    # `flynn run` printed "postgresql://flynn:***@dor3@127.0.0.1:1/flynn: failed to resolve
    # host 'dor3@127.0.0.1'" (half the password, twice).
    url = "postgresql://flynn:Tr0ub@dor3@127.0.0.1:1/flynn"
    assert shown_url(url) == AT_SIGNED
    assert {"Tr0ub@dor3", "Tr0ub", "dor3"} <= set(passwords_in(url))
    with pytest.raises(StorageUnusable) as raised:
        PostgresDatabase.open(url, timeout_seconds=1)
    assert "dor3" not in str(raised.value) and "Tr0ub" not in str(raised.value)
    assert "%40" in str(raised.value)
    # The client key's password is a password too.
    keyed = "postgresql://flynn:s3cr3t@db/flynn?sslpassword=k3y-pa55"
    assert "k3y-pa55" not in shown_url(keyed) and "s3cr3t" not in shown_url(keyed)


async def test_doctor_and_run_name_a_careless_url_without_any_piece_of_its_password(
    tmp_path: Path,
) -> None:
    env = {"FLYNN_STORAGE__URL": "postgresql://flynn:Tr0ub@dor3@127.0.0.1:1/flynn"}
    doctor = await run_flynn("doctor", "--no-network", home=tmp_path, env=env)
    run = await run_flynn("run", home=tmp_path, env=env)
    for finished in (doctor, run):
        told = finished.stdout + finished.stderr
        assert "dor3" not in told and "Tr0ub" not in told, told
    assert doctor.code == 1 and "%40" in doctor.stdout, doctor
    assert run.code == 4, run
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


# -- 2. moving house ---------------------------------------------------------------------------

CREDENTIAL = "Zebra-42-pond"


def _holding(url: str, needle: str) -> list[str]:
    """Every ``table.column`` of the URL's schema whose text or bytes hold ``needle``."""
    found = []
    with psycopg.connect(url, autocommit=True) as connection:
        columns = connection.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() "
            "AND data_type IN ('text', 'character varying', 'bytea', 'jsonb', 'json')"
        ).fetchall()
        for table, column, kind in columns:
            if kind == "bytea":
                test = f'position(%s::bytea IN "{column}") > 0'
                value: object = needle.encode()
            else:
                test, value = f'"{column}"::text LIKE %s', f"%{needle}%"
            hit = connection.execute(  # type: ignore[call-overload]
                f'SELECT 1 FROM "{table}" WHERE {test} LIMIT 1', (value,)
            ).fetchone()
            if hit is not None:
                found.append(f"{table}.{column}")
    return found


def _older_rows(data_dir: Path) -> None:
    """Rows as a flynn from before credentials were redacted kept them (739daa4 stored 56 of
    the corpus's 78): a message, working memory, a fact and a sent text file holding a
    password a person typed."""
    import sqlite3

    told = f"my wifi password is {CREDENTIAL}"
    connection = sqlite3.connect(data_dir / "flynn.db")
    with connection:
        connection.execute("UPDATE messages SET content = ? WHERE id = 1", (told,))
        connection.execute(
            "UPDATE documents SET content = ? WHERE namespace = 'user/working'",
            (f"wifi: DB_PASSWORD={CREDENTIAL}",),
        )
        connection.execute(
            "UPDATE facts SET field = 'wifi password', value = ? WHERE id = 2", (CREDENTIAL,)
        )
    connection.close()
    (data_dir / "user" / "files" / "wifi.txt").write_text(f"password: {CREDENTIAL}\n")


def test_a_copy_carries_no_credential_an_older_install_kept(
    tmp_path: Path, postgres_url: str
) -> None:
    install = build_install(tmp_path / "data")
    _older_rows(install.data_dir)
    report = copy_to_postgres(install.settings, postgres_url)
    assert report.copied > 0
    held = _holding(postgres_url, CREDENTIAL)
    assert held == [], ", ".join(held)
    # Each redacted row is still one row, and the report says how many were redacted.
    kinds = {kind.kind: kind for kind in report.kinds}
    assert report.matches, report.kinds
    assert {name: kind.redacted for name, kind in kinds.items() if kind.redacted} == {
        "documents": 1,
        "messages": 1,
        "facts": 1,
        "uploaded files": 1,
    }
    assert report.redacted == 4
    # The redacted message's postings are the redacted text's; its vector (and the next
    # message's in its session, which embeds it too) is left out, to be embedded anew.
    assert kinds["message_terms"].matches
    assert kinds["embeddings"].left_out == 2
    assert rows(postgres_url, "SELECT ref_id FROM embeddings WHERE ref_id IN (1, 2)") == []
    assert rows(
        postgres_url, "SELECT count(*) FROM message_terms WHERE term = 'zebra' AND message_id = 1"
    ) == [(0,)]
    # A rerun says the same, and writes nothing.
    again = copy_to_postgres(install.settings, postgres_url)
    assert again.matches and again.copied == 0 and again.redacted == 4
    # What `flynn memory embed` and a worker's catch-up run embeds them anew, from the
    # redacted text.
    from fakes.embedder import HashingEmbedder

    from flynn.postgres.vectors import PostgresVectors

    with PostgresMemory.open(postgres_url) as pg:
        vectors = PostgresVectors(pg.db, HashingEmbedder())
        assert vectors.unembedded() == 2
        assert sum(vectors.backfill()) == 2
        assert vectors.unembedded() == 0


def _person_file(url: str, namespace: str, name: str) -> str:
    with PostgresMemory.open(url) as pg:
        return DocumentsPersonFiles(pg.documents, lambda: T0).read(namespace, name)


def test_a_rerun_after_going_live_keeps_a_file_a_person_edited_since(
    tmp_path: Path, postgres_url: str
) -> None:
    install = build_install(tmp_path / "data")
    assert copy_to_postgres(install.settings, postgres_url).matches
    # The team runs on PostgreSQL now; Ana edits her USER.md on the memory page.
    with PostgresMemory.open(postgres_url) as pg:
        files = DocumentsPersonFiles(pg.documents, lambda: T0 + timedelta(days=1))
        files.write("user", "USER.md", "# About me\n- Name: Ana\n- Moved to Porto\n")
    # The operator runs the copy again: refused, since the database went live (docs/team.md).
    with pytest.raises(CopyRefused, match=r"in use since .*first to documents"):
        copy_to_postgres(install.settings, postgres_url)
    assert "Porto" in _person_file(postgres_url, "user", "USER.md")


def test_a_rerun_after_both_sides_moved_on_never_hangs_ones_rows_on_anothers(
    tmp_path: Path, postgres_url: str
) -> None:
    from flynn.memory.stores import SqliteMemory
    from flynn.schedule.migrations import SCHEMA

    install = build_install(tmp_path / "data")
    assert copy_to_postgres(install.settings, postgres_url).matches
    now = datetime.now(UTC)
    # On PostgreSQL, bob talks (a worker stores his message) ...
    with PostgresMemory.open(postgres_url) as pg:
        bob = pg.history.append("gateway:bob@tab", "users/bob", "user", "hi", tokens=1, now=now)
    # ... while the old single daemon, started again by mistake, stored one of Ana's with a
    # tool step.
    with SqliteMemory.open(install.data_dir / "flynn.db", SCHEMA) as memory:
        ana = memory.history.append(
            "gateway:ana",
            "user",
            "assistant",
            "done",
            tokens=1,
            now=now,
            tool_steps='[{"tool": "scratch_write", "text": "Ana private notes"}]',
        )
    assert ana.id == bob.id  # the collision the rerun would meet
    with pytest.raises(CopyRefused, match="in use since"):
        copy_to_postgres(install.settings, postgres_url)
    assert (
        rows(
            postgres_url,
            "SELECT t.steps FROM message_tools t JOIN messages m ON m.id = t.message_id "
            "WHERE m.namespace = 'users/bob'",
        )
        == []
    )


async def test_a_first_copy_into_a_database_a_worker_already_served_is_refused(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    # A worker started on the empty database before the install was copied: its start wrote
    # (its lease on life, the gateway token), and what it wrote would meet the copy's ids.
    worker = make_worker("1", worker_config(tmp_path / "w", llm=OFFLINE), tmp_path, postgres_url)
    pool.append(worker)
    await start_all([worker])
    assert await worker.daemon.stop() == 0
    install = build_install(tmp_path / "data")
    with pytest.raises(CopyRefused) as refused:
        copy_to_postgres(install.settings, postgres_url)
    assert "copy into an empty database" in str(refused.value), refused.value
    assert "\n" not in str(refused.value)
    [(first,)] = rows(postgres_url, "SELECT first FROM went_live")  # what claim() also reads
    assert first
    assert rows(postgres_url, "SELECT count(*) FROM messages") == [(0,)]
    assert rows(postgres_url, "SELECT count(*) FROM copied_from") == [(0,)]


def test_every_table_a_worker_writes_marks_the_database_live(postgres_url: str) -> None:
    # A table added later without the trigger would let a rerun of the copy write over it.
    with PostgresMemory.open(postgres_url):
        pass
    # The redaction stamp is bookkeeping like the migrations: a new store stamps it as it
    # opens, which must not make the database look lived in to a copy.
    left_out = {"flynn_migrations", "copied_from", "went_live", "redaction_stamp"}
    postings = {"message_terms", "fact_terms", "team_chunk_terms"}  # written with their rows
    unmarked = rows(
        postgres_url,
        "SELECT table_name FROM information_schema.tables t WHERE table_schema = current_schema() "
        "AND table_type = 'BASE TABLE' AND NOT EXISTS (SELECT 1 FROM information_schema.triggers "
        "WHERE event_object_schema = t.table_schema AND event_object_table = t.table_name "
        "AND trigger_name = 'flynn_went_live')",
    )
    assert {name for (name,) in unmarked} == left_out | postings


# -- 3. two workers, several people ------------------------------------------------------------


PEOPLE = {
    "alice": {"gateway": ["alice-laptop"], "notify": "gateway"},
    "bob": {"gateway": ["bob-laptop"]},
}


async def _team(
    tmp_path: Path,
    url: str,
    pool: list[Worker],
    *,
    telegram: dict[str, Any] | None = None,
    gateway_token: str | None = None,
    env: dict[str, str] | None = None,
    llm: dict[str, Any] | None = None,
    memory: dict[str, Any] | None = None,
) -> tuple[Path, Worker, Worker]:
    """Two workers for ``PEOPLE`` on ``url``, started; the config's path and the workers."""
    path = worker_config(tmp_path / "w", llm=llm or OFFLINE, telegram=telegram, memory=memory)
    config = yaml.safe_load(path.read_text())
    config["users"] = PEOPLE
    if gateway_token is not None:
        config["channels"]["gateway"]["token"] = gateway_token
    path.write_text(yaml.safe_dump(config))
    one = make_worker("1", path, tmp_path, url, env)
    two = make_worker("2", path, tmp_path / "b", url, env)
    pool += [one, two]
    await start_all([one, two], connected=("telegram.started",) if telegram else ())
    return path, one, two


async def _person_token(config: Path, home: Path, url: str, name: str) -> str:
    issued = await run_flynn(
        "users", "token", name, "--config", str(config), home=home, env={"FLYNN_STORAGE__URL": url}
    )
    assert issued.code == 0, issued
    found = re.findall(r"[A-Za-z0-9_\-]{40,}", issued.stdout)
    assert found, issued.stdout
    return found[-1]


class Tab:
    """One websocket speaking protocol 2 with a token of its choosing; every frame it reads is
    kept, and every reply and push acknowledged."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.ws: ClientConnection | None = None

    async def open(self, worker: Worker, token: str, client_id: str) -> dict[str, Any]:
        self.ws = await connect(worker.ws_url, close_timeout=0, open_timeout=20)
        hello = {"type": "hello", "token": token, "client_id": client_id, "protocol": 2}
        await self.ws.send(json.dumps(hello))
        ready: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), 20))
        assert ready["type"] == "ready", ready
        return ready

    async def ask(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Sends ``frame`` and reads until the answer carrying its id."""
        assert self.ws is not None
        await self.ws.send(json.dumps(frame))
        return await self.until(lambda got: got.get("id") == frame["id"])

    async def until(self, wanted: Any) -> dict[str, Any]:
        assert self.ws is not None
        async with asyncio.timeout(60):
            while True:
                got: dict[str, Any] = json.loads(await self.ws.recv())
                if got["type"] in ("delta", "typing", "status"):
                    continue
                self.frames.append(got)
                if got["type"] in ("reply", "push") and "id" in got:
                    await self.ws.send(json.dumps({"type": "ack", "id": got["id"]}))
                if wanted(got):
                    return got

    async def say(self, frame_id: str, text: str) -> dict[str, Any]:
        return await self.ask({"type": "message", "id": frame_id, "text": text})

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None


async def test_a_persons_token_on_the_other_worker_cannot_forget_or_overwrite_anothers(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    config, one, two = await _team(tmp_path, postgres_url, pool)
    alice_token = await _person_token(config, tmp_path, postgres_url, "alice")
    bob_token = await _person_token(config, tmp_path, postgres_url, "bob")
    alice = Tab()
    await alice.open(one, alice_token, "tab")
    told = alice.say("a1", "My name is Alicia Zanzibar.")
    await asyncio.gather(told, one.daemon.wait_for("memory.fact"))
    saved = await alice.ask(
        {
            "type": "memory",
            "id": "af",
            "op": "save_file",
            "name": "USER.md",
            "text": "# About me\n- keeps a diary about the ocelot\n",
        }
    )
    assert saved["type"] == "memory", saved
    await alice.close()
    facts = rows(
        postgres_url, "SELECT id FROM facts WHERE namespace LIKE 'users/alice%%' ORDER BY id"
    )
    assert facts, rows(postgres_url, "SELECT namespace, field, value FROM facts")

    # Bob, on the other worker, the same client id, names every fact id there is.
    bob = Tab()
    await bob.open(two, bob_token, "tab")
    top = max(fact_id for (fact_id,) in facts)
    for fact_id in range(1, top + 3):
        answer = await bob.ask(
            {"type": "memory", "id": f"f{fact_id}", "op": "forget", "fact": fact_id}
        )
        assert answer["type"] == "error", answer
    for name in ("USER.md", "REMINDERS.md"):
        answer = await bob.ask(
            {"type": "memory", "id": f"s{name}", "op": "save_file", "name": name, "text": "bob"}
        )
        assert answer["type"] == "memory", answer
    await bob.say("b1", "/forget name")
    await bob.say("b2", "/reset")
    await bob.close()

    assert rows(
        postgres_url,
        "SELECT count(*) FROM facts WHERE namespace LIKE 'users/alice%%' AND status = 'active'",
    ) == [(len(facts),)]
    alice = Tab()
    await alice.open(two, alice_token, "tab")
    assert "Zanzibar" in (await alice.say("a2", "what is my name?"))["text"]
    own = await alice.ask({"type": "memory", "id": "af2", "op": "file", "name": "USER.md"})
    assert "ocelot" in json.dumps(own), own
    await alice.close()


async def test_a_push_for_a_persons_device_never_reaches_the_owner_naming_its_id_elsewhere(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    config, one, two = await _team(tmp_path, postgres_url, pool)
    alice_token = await _person_token(config, tmp_path, postgres_url, "alice")
    # Whoever holds the channel token names alice's device id, on the other worker.
    owner = Tab()
    await owner.open(two, GATEWAY_TOKEN, "alice-laptop")
    alice = Tab()
    await alice.open(one, alice_token, "alice-laptop")
    set_ = await alice.say("a1", "remind me in 3 seconds to take the blue pills")
    assert "Reminder set" in set_["text"], set_
    await alice.close()

    fired = [asyncio.create_task(w.daemon.wait_for("schedule.push_deferred")) for w in (one, two)]
    async with asyncio.timeout(60):
        await asyncio.wait(fired, return_when=asyncio.FIRST_COMPLETED)
    for task in fired:
        task.cancel()
    # The owner keeps talking on worker 2 and reconnects to worker 1, where anything waiting
    # for its key would be sent after its hello.
    await owner.say("o1", "hello")
    await owner.close()
    await owner.open(one, GATEWAY_TOKEN, "alice-laptop")
    await owner.say("o2", "hello again")
    await owner.close()
    # Alice, back on worker 2, gets it: it waited for her, not for the name of her device.
    alice = Tab()
    await alice.open(two, alice_token, "alice-laptop")
    push = await alice.until(lambda got: got["type"] == "push")
    assert push["text"] == "take the blue pills", push
    await alice.say("a2", "thanks")  # a barrier: the acknowledgement was read before this turn
    await alice.close()
    assert not [frame for frame in owner.frames if frame["type"] == "push"], owner.frames
    assert "blue pills" not in json.dumps(owner.frames)
    assert rows(postgres_url, "SELECT count(*), count(delivered_at) FROM pushes") == [(1, 1)]


async def test_one_message_resent_to_both_workers_at_once_is_answered_once(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    config, one, two = await _team(tmp_path, postgres_url, pool)
    alice_token = await _person_token(config, tmp_path, postgres_url, "alice")
    tabs = [Tab(), Tab()]
    await tabs[0].open(one, alice_token, "tab")
    await tabs[1].open(two, alice_token, "tab")
    for round_ in range(5):
        frame = {"type": "message", "id": f"m{round_}", "text": f"note number {round_} please"}
        await asyncio.gather(*(tab.ws.send(json.dumps(frame)) for tab in tabs if tab.ws))
        # Whichever worker ran it, its reply reaches that worker's tab (the other is told
        # nothing, or the same reply): waited for on both, the first one is enough.
        waits = [
            asyncio.create_task(tab.until(lambda got, i=frame["id"]: got.get("id") == i))
            for tab in tabs
        ]
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        assert [task.result()["type"] for task in done] in (["reply"], ["reply", "reply"])
    for index, tab in enumerate(tabs):  # a barrier on each: whatever was owed to it came first
        await tab.say(f"b{index}", "one more")
        assert not [frame for frame in tab.frames if frame["type"] == "error"], tab.frames
    for tab in tabs:
        await tab.close()
    told = rows(
        postgres_url,
        "SELECT content, count(*) FROM messages WHERE role = 'user' GROUP BY content ORDER BY 1",
    )
    assert told == [(f"note number {n} please", 1) for n in range(5)] + [("one more", 2)], told
    replies = rows(
        postgres_url,
        "SELECT count(*) FROM messages WHERE role = 'assistant' AND session = 'gateway:alice@tab'",
    )
    assert replies == [(7,)], replies
    assert rows(postgres_url, "SELECT count(*), count(DISTINCT message_id) FROM intake") == [(7, 7)]


# -- 4. the install's secrets ------------------------------------------------------------------

BOT_TOKEN = "4242:team-attack-bot-token-value"
"""Not shaped like a real bot token, so no redaction by shape hides a leak from this test."""


async def test_no_install_secret_reaches_the_database_the_logs_readyz_or_doctor(
    tmp_path: Path, postgres_server: PostgresServer, postgres_url: str, pool: list[Worker]
) -> None:
    from fakes.fake_telegram import OWNER_ID, FakeTelegram

    from flynn.channels.telegram_webhook import SECRET_HEADER, webhook_secret
    from flynn.settings import TelegramSettings

    gateway_token = "gw-" + "Qx7" * 8
    async with FakeTelegram(token=BOT_TOKEN) as telegram:
        section = {
            "enabled": True,
            "token": BOT_TOKEN,
            "base_url": telegram.base_url,
            "allowed_users": [OWNER_ID],
            "webhook_url": "https://bot.example.com/telegram",
        }
        debug = {"FLYNN_LOGGING__LEVEL": "debug"}
        config, one, two = await _team(
            tmp_path, postgres_url, pool, telegram=section, gateway_token=gateway_token, env=debug
        )
        secret = webhook_secret(TelegramSettings(token=BOT_TOKEN))  # type: ignore[arg-type]
        near_miss = secret[:-1] + ("0" if secret[-1] != "0" else "1")
        alice_token = await _person_token(config, tmp_path, postgres_url, "alice")

        import httpx

        async with httpx.AsyncClient(timeout=30) as http:
            hook = f"http://127.0.0.1:{one.webhook_port}/telegram"
            update = telegram.update_body(telegram.queue_private("remind me in 1 hour to call"))
            refused = await http.post(hook, json=update, headers={SECRET_HEADER: near_miss})
            assert refused.status_code == 403
            taken = await http.post(hook, json=update, headers={SECRET_HEADER: secret})
            assert taken.status_code == 200
            await telegram.wait_for_sent(1)
            probes = [
                (await http.get(f"http://127.0.0.1:{w.gateway_port}/readyz")).text
                for w in (one, two)
            ]
        alice = Tab()
        await alice.open(two, alice_token, "tab")
        await alice.say("a1", "hello from the tab")
        await alice.close()
        owner = Tab()
        await owner.open(one, gateway_token, "desk")
        await owner.say("o1", "hello from the desk")
        await owner.close()
        doctor = await run_flynn(
            "doctor",
            "--no-network",
            "--config",
            str(config),
            home=tmp_path,
            env={"FLYNN_STORAGE__URL": postgres_url},
        )
        assert await asyncio.gather(one.daemon.stop(), two.daemon.stop()) == [0, 0]

    secrets = {
        "database password": postgres_server.password,
        "gateway token": gateway_token,
        "bot token": BOT_TOKEN,
        "bot token's secret half": BOT_TOKEN.split(":", 1)[1],
        "webhook secret": secret,
        "a near miss of the webhook secret": near_miss,
        "alice's token": alice_token,
    }
    logs = "\n".join(
        [json.dumps(event) for w in (one, two) for event in w.daemon.events]
        + [line for w in (one, two) for line in w.daemon.other_lines]
    )
    assert "telegram.webhook_forbidden" in logs  # the lines looked through are there
    leaks = {
        name: where
        for name, value in secrets.items()
        for where, text in (
            ("logs", logs),
            ("readyz", "\n".join(probes)),
            ("doctor", doctor.stdout + doctor.stderr),
        )
        if value in text
    }
    kept = {name: _holding(postgres_url, value) for name, value in secrets.items()}
    assert leaks == {}, leaks
    assert {name: where for name, where in kept.items() if where} == {}, kept


# -- 5. frames PostgreSQL takes differently ----------------------------------------------------


@pytest.mark.parametrize("frame_id", ["m\u0000", "m\ud800"], ids=["nul", "surrogate"])
async def test_a_frame_id_postgresql_cannot_store_gets_a_clear_refusal_and_loses_nothing(
    tmp_path: Path, postgres_url: str, pool: list[Worker], frame_id: str
) -> None:
    _, one, two = await _team(tmp_path, postgres_url, pool)
    tab = Tab()
    await tab.open(one, GATEWAY_TOKEN, "desk")
    answer = await tab.say(frame_id, "a note with a NUL\u0000 inside")
    assert answer["type"] == "error" and answer["code"] == "bad_request", answer
    # The connection and the session go on, on both workers.
    assert (await tab.say("m2", "the boiler pressure is low"))["type"] == "reply"
    await tab.close()
    await tab.open(two, GATEWAY_TOKEN, "desk")
    again = await tab.say("m3", "what about the boiler?")
    assert again["type"] == "reply", again
    await tab.close()
    assert rows(postgres_url, "SELECT message_id, state FROM intake ORDER BY id") == [
        ("m2", "delivered"),
        ("m3", "delivered"),
    ]


# -- 6. moving house, killed ------------------------------------------------------------------


async def test_a_copy_killed_with_sigkill_midway_is_completed_by_the_next_run(
    tmp_path: Path, postgres_server: PostgresServer, postgres_url: str
) -> None:
    import random
    import sys

    from e2e_daemon import clean_env

    from evals.turn import Zipf, _fill, vocabulary
    from flynn.app import App
    from flynn.settings import load_settings

    data_dir = tmp_path / "data"
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "data_dir": str(data_dir),
                "memory": {"user_namespace": "user", "embeddings": False},
                "llm": {"provider": "offline"},
            }
        )
    )
    settings = load_settings({"data_dir": str(data_dir), "llm": {"provider": "offline"}})
    rng = random.Random(3)
    app = App.open(settings, {})
    try:
        _fill(app, rng, Zipf(vocabulary(rng)), messages=8_000, facts=50)
    finally:
        await app.aclose()
    argv = ("-m", "flynn", "storage", "copy", "--config", str(config), "--to", postgres_url)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=clean_env(tmp_path, {"FLYNN_LOGGING__LEVEL": "debug"}),
    )
    assert process.stderr is not None
    stderr = process.stderr
    sessions_copied = asyncio.Event()

    async def read_log() -> None:
        # Read to the end, so a full pipe never holds the copy up.
        while line := await stderr.readline():
            if b"storage.copy.table" in line and b"sessions" in line:
                sessions_copied.set()

    reader = asyncio.create_task(read_log())
    try:
        async with asyncio.timeout(120):
            # Messages come after sessions: once sessions are logged, they are being copied.
            await sessions_copied.wait()
            while rows(postgres_url, "SELECT count(*) FROM messages") == [(0,)]:  # noqa: ASYNC110
                await asyncio.sleep(0.02)
    finally:
        process.kill()  # SIGKILL: no rollback of its own, the server drops its transaction
        await process.wait()
        await reader
    [(partial,)] = rows(postgres_url, "SELECT count(*) FROM messages")
    assert 0 < partial < 8_000, partial

    again = await run_flynn(*argv[2:], "--json", home=tmp_path)
    assert again.code == 0, again
    report = json.loads(again.stdout)
    kinds = {kind["kind"]: kind for kind in report["kinds"]}
    assert report["matches"] is True
    assert kinds["messages"]["copied"] == 8_000 - partial
    assert kinds["message_terms"]["sqlite"] == kinds["message_terms"]["postgresql"]
    assert rows(postgres_url, "SELECT count(*), count(DISTINCT id) FROM messages") == [
        (8_000, 8_000)
    ]
    assert postgres_server.password not in again.stdout + again.stderr


# -- 7. forgetting while both workers hold the person's sessions -------------------------------


@pytest.mark.parametrize(
    "how",
    [
        "page",
        "command",
        "chat",
    ],
)
async def test_a_person_forgotten_while_both_workers_hold_their_sessions_reaches_no_prompt(
    tmp_path: Path, postgres_url: str, pool: list[Worker], how: str
) -> None:
    from fakes import FakeOpenAI
    from worker_pool import background_reply, model_config

    async with FakeOpenAI() as model:
        # Turns are answered "noted", learning's calls in the shapes their parsers take: what
        # is looked at is what the model is sent.
        model.responder = background_reply
        path, one, two = await _team(tmp_path, postgres_url, pool, llm=model_config(model))
        alice_token = await _person_token(path, tmp_path, postgres_url, "alice")
        laptop, phone = Tab(), Tab()
        await laptop.open(two, alice_token, "laptop")
        await phone.open(one, alice_token, "phone")
        told = laptop.say("a1", "My name is Alicia Zanzibar.")
        await asyncio.gather(told, two.daemon.wait_for("memory.fact"))
        await phone.say("q1", "What is my name?")

        if how == "chat":  # in the chat on worker 1
            assert "Forgotten" in (await phone.say("q2", "/forget name"))["text"]
        elif how == "page":  # on worker 1's memory page: the name fact, with what said it
            [(fact,)] = rows(postgres_url, "SELECT id FROM facts WHERE field = 'name'")
            forgot = await phone.ask({"type": "memory", "id": "f", "op": "forget", "fact": fact})
            assert forgot["type"] == "memory", forgot
        else:
            done = await run_flynn(
                *("memory", "forget", "--user", "alice", "--all", "--yes"),
                *("--config", str(path)),
                home=tmp_path,
                env={"FLYNN_STORAGE__URL": postgres_url},
            )
            assert done.code == 0, done
        assert rows(
            postgres_url, "SELECT count(*) FROM messages WHERE content LIKE '%%Alicia Zanzibar%%'"
        ) == [(0,)]
        seen = len(model.requests)
        await phone.say("q3", "and hello here")
        await laptop.say("a3", "hello again")
        await laptop.close()
        await phone.close()

    asked = {model.last_user_text(r): json.dumps(r.json) for r in model.requests[seen:]}
    # The worker that served the forget (for the page) ...
    assert "Zanzibar" not in asked["and hello here"], ("worker 1", asked["and hello here"])
    # ... and the other one.
    assert "Zanzibar" not in asked["hello again"], ("worker 2", asked["hello again"])
