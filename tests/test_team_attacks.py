"""Attacks on the several-workers / PostgreSQL paths: one person's token used on another
worker, a rotated gateway token, the database password in logs, /readyz and doctor, and the
server stopped mid-run. Real processes on a real PostgreSQL (``tests/worker_pool.py``)."""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_daemon import run_flynn
from postgres_server import PostgresServer
from websockets.asyncio.client import connect
from worker_pool import Client, Worker, make_worker, start_all, worker_config

pytestmark = pytest.mark.processes

OFFLINE = {"provider": "offline"}


def _config(tmp_path: Path, **extra: Any) -> Path:
    path = worker_config(tmp_path / "w", llm=OFFLINE)
    config = yaml.safe_load(path.read_text())
    for key, value in extra.items():
        if value is None:
            config["channels"]["gateway"].pop("token", None)
        else:
            config[key] = value
    path.write_text(yaml.safe_dump(config))
    return path


async def _hello(worker: Worker, token: str, client_id: str) -> tuple[Any, dict[str, Any]]:
    ws = await connect(worker.ws_url, close_timeout=0, open_timeout=20)
    await ws.send(
        json.dumps({"type": "hello", "token": token, "client_id": client_id, "protocol": 2})
    )
    try:
        answer: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 20))
    except Exception as exc:  # closed without a frame
        answer = {"type": "closed", "why": repr(exc)}
    return ws, answer


async def _ask(ws: Any, frame: dict[str, Any]) -> dict[str, Any]:
    await ws.send(json.dumps(frame))
    async with asyncio.timeout(30):
        while True:
            got: dict[str, Any] = json.loads(await ws.recv())
            if got.get("type") in ("delta", "typing", "status"):
                continue
            if got.get("id") == frame["id"] and got["type"] in (
                "reply",
                "history",
                "memory",
                "error",
            ):
                if got["type"] == "reply":
                    await ws.send(json.dumps({"type": "ack", "id": got["id"]}))
                return got


def _token(out: str) -> str:
    candidates = re.findall(r"[A-Za-z0-9_\-]{20,}", out)
    assert candidates, out
    return candidates[-1]


# -- 1. identity across workers ---------------------------------------------------------------


async def test_a_persons_token_on_the_other_worker_never_reads_another_persons_things(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    users = {"alice": {"gateway": ["alice-laptop"]}, "bob": {"gateway": ["bob-laptop"]}}
    config = _config(tmp_path, users=users)
    one = make_worker("1", config, tmp_path, postgres_url)
    two = make_worker("2", config, tmp_path / "b", postgres_url)
    pool += [one, two]
    await start_all([one, two])
    env = {"FLYNN_STORAGE__URL": postgres_url}
    alice_out = await run_flynn(
        "users", "token", "alice", "--config", str(config), home=tmp_path, env=env
    )
    bob_out = await run_flynn(
        "users", "token", "bob", "--config", str(config), home=tmp_path, env=env
    )
    assert alice_out.code == 0 and bob_out.code == 0, (alice_out, bob_out)
    alice, bob = _token(alice_out.stdout), _token(bob_out.stdout)

    # Bob, on worker 1, with the same client id alice will pick.
    ws_b, ready = await _hello(one, bob, "shared")
    assert ready["type"] == "ready", ready
    assert (
        "Noted"
        in (await _ask(ws_b, {"type": "message", "id": "b1", "text": "I live in Zanzibar."}))[
            "text"
        ]
    )
    reply = await _ask(
        ws_b, {"type": "message", "id": "b2", "text": "remind me in 10 minutes to feed the ocelot"}
    )
    assert "Reminder" in reply["text"], reply
    await ws_b.close()

    # Alice, on worker 2.
    ws_a, ready = await _hello(two, alice, "shared")
    assert ready["type"] == "ready", ready
    seen: list[dict[str, Any]] = [ready]
    seen.append(await _ask(ws_a, {"type": "history", "id": "h1", "limit": 100}))
    seen.append(await _ask(ws_a, {"type": "memory", "id": "m1", "op": "overview"}))
    seen.append(await _ask(ws_a, {"type": "memory", "id": "m2", "op": "map"}))
    seen.append(await _ask(ws_a, {"type": "memory", "id": "m3", "op": "graph"}))
    for name in ("USER.md", "REMINDERS.md", "MEMORY_LONG.md", "TASKS.json"):
        seen.append(
            await _ask(ws_a, {"type": "memory", "id": f"f{name}", "op": "file", "name": name})
        )
    for fact in range(1, 6):
        seen.append(
            await _ask(ws_a, {"type": "memory", "id": f"fh{fact}", "op": "history", "fact": fact})
        )
    seen.append(await _ask(ws_a, {"type": "message", "id": "a1", "text": "where do I live?"}))
    seen.append(await _ask(ws_a, {"type": "message", "id": "a2", "text": "/reminders"}))
    await ws_a.close()
    dump = json.dumps(seen)
    assert "Zanzibar" not in dump, dump
    assert "ocelot" not in dump, dump
    # The control: bob, on worker 2, does see his own.
    ws_b, ready = await _hello(two, bob, "shared")
    assert ready["type"] == "ready", ready
    own = [await _ask(ws_b, {"type": "history", "id": "h", "limit": 100})]
    own.append(await _ask(ws_b, {"type": "message", "id": "b3", "text": "/reminders"}))
    await ws_b.close()
    assert "Zanzibar" in json.dumps(own[0]) and "ocelot" in json.dumps(own[1]), own


async def test_a_rotated_gateway_token_is_refused_by_the_other_worker(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    config = _config(tmp_path, __no_token__=None)
    one = make_worker("1", config, tmp_path, postgres_url)
    two = make_worker("2", config, tmp_path / "b", postgres_url)
    pool += [one, two]
    await start_all([one, two])
    env = {"FLYNN_STORAGE__URL": postgres_url}
    first = await run_flynn(
        "gateway", "token", "--rotate", "--config", str(config), home=tmp_path, env=env
    )
    assert first.code == 0, first
    old = _token(first.stdout)
    ws, ready = await _hello(two, old, "c")
    assert ready["type"] == "ready", ready
    await ws.close()
    second = await run_flynn(
        "gateway", "token", "--rotate", "--config", str(config), home=tmp_path / "b", env=env
    )
    assert second.code == 0, second
    new = _token(second.stdout)
    assert new != old
    for worker in (one, two):
        ws, refused = await _hello(worker, old, "c")
        assert refused["type"] != "ready", (worker.name, refused)
        await ws.close()
        ws, ready = await _hello(worker, new, "c")
        assert ready["type"] == "ready", (worker.name, ready)
        await ws.close()


# -- 2. the database password ----------------------------------------------------------------


def _readyz(worker: Worker) -> tuple[int, str]:
    url = f"http://127.0.0.1:{worker.gateway_port}/readyz"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:  # no answer at all (RemoteDisconnected, a timeout, refused)
        return -1, repr(exc)


def _leaks(server: PostgresServer, text: str) -> bool:
    from urllib.parse import quote

    return server.password in text or quote(server.password, safe="") in text


def _all_lines(worker: Worker) -> str:
    return "\n".join(
        [json.dumps(event) for event in worker.daemon.events] + worker.daemon.other_lines
    )


@dataclass(frozen=True, slots=True)
class Outage:
    """What the workers did while the server was stopped."""

    slowest_answer: float
    """The longest any ``/readyz`` took to answer (999 for no answer at all)."""
    to_not_ready: tuple[float, ...]
    """For each worker, how long after the stop its ``/readyz`` first said 503."""


async def test_the_password_stays_out_of_logs_readyz_and_doctor_across_an_outage(
    tmp_path: Path, own_server: PostgresServer, pool: list[Worker]
) -> None:
    await _through_an_outage(tmp_path, own_server, pool)


async def _through_an_outage(tmp_path: Path, server: PostgresServer, pool: list[Worker]) -> Outage:
    """Two workers; the server stopped mid-run and started again: the password never shown,
    /readyz 503 meanwhile and 200 after, a message sent meanwhile refused, recall after."""
    url = server.url()
    config = _config(tmp_path)
    debug = {"FLYNN_LOGGING__LEVEL": "debug"}
    one = make_worker("1", config, tmp_path, url, debug)
    two = make_worker("2", config, tmp_path / "b", url, debug)
    pool += [one, two]
    await start_all([one, two])
    laptop, phone = Client("laptop"), Client("phone")
    await laptop.connect(one)
    await phone.connect(two)
    assert "Noted" in await laptop.say("m1", "I live in Lisbon.")

    for worker in (one, two):
        status, body = await asyncio.to_thread(_readyz, worker)
        assert status == 200 and not _leaks(server, body), body
    env = {"FLYNN_STORAGE__URL": url}
    doctor = await run_flynn(
        "doctor", "--no-network", "--config", str(config), home=tmp_path, env=env
    )
    assert not _leaks(server, doctor.stdout + doctor.stderr), doctor
    wrong = url.replace(server.password, server.password[::-1])
    doctor = await run_flynn(
        "doctor",
        "--no-network",
        "--config",
        str(config),
        home=tmp_path,
        env={"FLYNN_STORAGE__URL": wrong},
    )
    assert not _leaks(server, doctor.stdout + doctor.stderr), doctor
    assert server.password[::-1] not in doctor.stdout + doctor.stderr, doctor

    # The server goes away mid-run.
    server.stop()
    stopped = time.monotonic()
    took_most, to_not_ready = 0.0, []
    for worker in (one, two):
        async with asyncio.timeout(120):
            while True:
                started = time.monotonic()
                answer = await asyncio.to_thread(_readyz, worker)
                took = time.monotonic() - started
                took_most = max(took_most, took)
                if answer[0] == -1:  # no answer at all: counted as the slowest
                    took_most = max(took_most, 999.0)
                if answer[0] != 200:
                    break
                await asyncio.sleep(0.5)
        to_not_ready.append(time.monotonic() - stopped)
        assert not _leaks(server, answer[1]), answer
        assert answer[0] == 503 and "storage" in answer[1], answer
    doctor = await run_flynn(
        "doctor", "--no-network", "--config", str(config), home=tmp_path, env=env
    )
    assert doctor.code != 0 and not _leaks(server, doctor.stdout + doctor.stderr), doctor
    # A message sent during the outage cannot be stored: it is refused, saying why.
    await phone.send("m2", "where do I live?")
    refused = await phone.until("error", "m2")
    assert "database" in refused["message"] and not _leaks(server, json.dumps(refused))
    server.start()

    async with asyncio.timeout(120):
        for worker in (one, two):
            while (await asyncio.to_thread(_readyz, worker))[0] != 200:  # noqa: ASYNC110
                await asyncio.sleep(0.5)
    # What was told before the outage is recalled after it, on each worker, in other sessions
    # than the laptop's. (Asked in the laptop's own session, the offline model, which reads
    # only recalled memory, says "Nothing I remember relates to that.": a session's own
    # turns are in its prompt, so recall leaves them out. That was the answer once observed
    # here, when m2 had been refused and so no phone reply quoting Lisbon existed to recall.)
    assert "Lisbon" in await phone.say("m3", "where do I live?")
    desk = Client("desk")
    await desk.connect(one)
    assert "Lisbon" in await desk.say("d1", "where do I live?")
    await desk.close()
    await laptop.close()
    await phone.close()
    for worker in (one, two):
        lines = _all_lines(worker)
        assert not _leaks(server, lines), [
            line for line in lines.splitlines() if _leaks(server, line)
        ][:5]
    return Outage(took_most, tuple(to_not_ready))


async def test_readyz_answers_within_five_seconds_while_the_server_is_down(
    tmp_path: Path, own_server: PostgresServer, pool: list[Worker]
) -> None:
    """Each worker's event loop keeps serving while the server is down: every ``/readyz``
    answers at once, and says 503 within 5 s of the stop (the probe runs in a thread, and a
    server found down fails statements at once)."""
    outage = await _through_an_outage(tmp_path, own_server, pool)
    assert outage.slowest_answer < 5, outage
    # The first worker is asked from the stop; the second only after the first said 503.
    assert outage.to_not_ready[0] < 5, outage
