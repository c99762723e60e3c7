"""``flynn bench gateway --workers N --storage-url URL``: N ``flynn run`` worker processes on one
PostgreSQL database (a schema of the bench's own, dropped after), the load generator's clients
spread across them, and what a turn costs in CPU: the workers' (``/proc/<pid>/stat``), and
PostgreSQL's when its server runs on this machine (its postmaster and every backend)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import os
import secrets
import signal
import socket
import statistics
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import psycopg
import yaml

from evals.gateway import CHECKOUT, TOKEN, against_echo, echo_load, load
from flynn.postgres.urls import shown_url

_TICKS = os.sysconf("SC_CLK_TCK")
_NOT_INHERITED = ("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET")


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[str]:
    """A PostgreSQL cluster made and started for this run, as the tests start theirs
    (``tests/postgres_server.py``: ``initdb`` in a temporary directory, ``fsync`` off), and
    deleted after. Raises ``RuntimeError`` where Debian's server is not installed."""
    path = CHECKOUT / "tests" / "postgres_server.py"
    spec = importlib.util.spec_from_file_location("postgres_server", path)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"{path} is missing: --throwaway-postgres runs from a checkout")
    helpers = sys.modules.setdefault(spec.name, importlib.util.module_from_spec(spec))
    spec.loader.exec_module(helpers)
    with helpers.running_server() as server:
        yield str(server.url())


@contextlib.contextmanager
def _own_schema(url: str) -> Iterator[str]:
    """``url`` seeing only a new, empty schema (every run starts from an empty database),
    dropped with everything in it afterwards."""
    schema = f"flynn_bench_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options={quote(f'-c search_path={schema}')}"
    finally:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(f"DROP SCHEMA {schema} CASCADE")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def cpu_seconds(pid: int, *, children: bool = False) -> float:
    """User and system time of ``pid`` (all its threads) from ``/proc/<pid>/stat``; with
    ``children``, also that of its children it has reaped. 0 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
    return (utime + stime + ((cutime + cstime) if children else 0)) / _TICKS


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def postmaster_of(url: str) -> int | None:
    """The pid of the server's postmaster when it runs on this machine (a backend's parent),
    else ``None``."""
    with psycopg.connect(url) as connection:
        row = connection.execute("SELECT pg_backend_pid()").fetchone()
        # Read while the backend lives: it exits as the connection closes.
        parent = _parent(int(row[0])) if row is not None else None
    if parent is None or not Path(f"/proc/{parent}/cmdline").exists():
        return None
    return parent


def postgres_cpu_seconds(postmaster: int) -> float:
    """The server's CPU: the postmaster with every backend it reaped, and those alive."""
    alive = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and _parent(int(entry.name)) == postmaster:
            alive += cpu_seconds(int(entry.name))
    return cpu_seconds(postmaster, children=True) + alive


def machine_busy() -> tuple[float, float]:
    """All cores' busy and total time so far (``/proc/stat``), in ticks."""
    values = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return float(sum(values) - idle), float(sum(values))


@dataclass
class _Worker:
    process: asyncio.subprocess.Process
    port: int
    log: Path


def _config(directory: Path, port: int, embeddings: str | None) -> Path:
    directory.mkdir(parents=True)
    config = {
        "data_dir": str(directory / "data"),
        # Flynn's own model without a network: deterministic and instant, as the in-process
        # bench's scripted model, and in the worker's process, as a model's client would be.
        "llm": {"provider": "offline"},
        "memory": {"user_namespace": None}
        | (
            {"embeddings": True, "embeddings_model": embeddings}
            if embeddings is not None
            else {"embeddings": False}
        ),
        "channels": {
            "gateway": {
                "host": "127.0.0.1",
                "port": port,
                "token": TOKEN,
                # The load generator stands for a reverse proxy (evals/gateway.py).
                "trusted_proxies": ["127.0.0.1"],
            }
        },
        "logging": {"level": "warning", "format": "json"},
    }
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


async def _start(
    directory: Path, url: str, embeddings: str | None, profile: Path | None = None
) -> _Worker:
    """``profile``: run it under cProfile, its statistics written there when it stops (the
    event loop's thread only: recall's worker threads are not in it)."""
    port = _free_port()
    config = _config(directory, port, embeddings)
    env = {k: v for k, v in os.environ.items() if not k.startswith(_NOT_INHERITED)}
    env |= {"HOME": str(directory), "FLYNN_STORAGE__URL": url}
    log = directory / "worker.log"
    with log.open("wb") as output:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *(["-m", "cProfile", "-o", str(profile)] if profile is not None else []),
            "-m",
            "flynn",
            "run",
            "--config",
            str(config),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            env=env,
            cwd=CHECKOUT,
        )
    return _Worker(process, port, log)


async def _ready(worker: _Worker) -> None:
    """Until the worker's ``/readyz`` answers 200 (60 s at most)."""

    def ask() -> int:
        try:
            url = f"http://127.0.0.1:{worker.port}/readyz"
            with urllib.request.urlopen(url, timeout=5) as response:
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code
        except OSError:
            return 0

    async with asyncio.timeout(60):
        while await asyncio.to_thread(ask) != 200:
            if worker.process.returncode is not None:
                tail = worker.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"a worker exited ({worker.process.returncode}):\n{tail}")
            await asyncio.sleep(0.2)


async def _stop(worker: _Worker) -> None:
    if worker.process.returncode is None:
        worker.process.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(30):
                await worker.process.wait()
        except TimeoutError:
            worker.process.kill()
            await worker.process.wait()


async def bench_gateway_workers(
    *,
    workers: int,
    url: str,
    clients: int,
    seconds: float,
    embeddings: str | None = None,
    profile: Path | None = None,
) -> dict[str, object]:
    """Every key of ``bench_gateway``'s result (those measured in-process only, the gateway-only
    transport and an idle session's memory, are ``None``), and the workers' own: CPU seconds
    and milliseconds per turn of the workers, of PostgreSQL and of the load generator, how busy
    the machine was, and errors the clients were answered with. ``profile``: a directory where
    each worker's cProfile statistics are written (``worker-<n>.prof``, for ``python -m
    pstats``)."""
    echo = await echo_load(clients, seconds)
    with _own_schema(url) as schema_url, tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
        started = [
            await _start(
                Path(tmp) / f"worker-{index}",
                schema_url,
                embeddings,
                None if profile is None else profile / f"worker-{index}.prof",
            )
            for index in range(workers)
        ]
        try:
            await asyncio.gather(*(_ready(worker) for worker in started))
            postmaster = postmaster_of(schema_url)
            pids = [worker.process.pid for worker in started]
            before = [cpu_seconds(pid) for pid in pids]
            database_before = postgres_cpu_seconds(postmaster) if postmaster else None
            busy_before, total_before = machine_busy()
            urls = [f"ws://127.0.0.1:{worker.port}/ws" for worker in started]
            flynn = await load(urls, clients=clients, seconds=seconds, protocol="flynn")
            busy_after, total_after = machine_busy()
            spent = [cpu_seconds(pid) - start for pid, start in zip(pids, before, strict=True)]
            database = (
                postgres_cpu_seconds(postmaster) - database_before
                if postmaster and database_before is not None
                else None
            )
        finally:
            await asyncio.gather(*(_stop(worker) for worker in started))
    turns = int(flynn["messages"]) or 1
    return {
        **against_echo(clients, seconds, flynn, echo),
        "gateway_only_msgs_per_s": None,
        "gateway_only_ratio": None,
        "rss_per_session_kb": None,
        "idle_sessions_measured": None,
        "embeddings_model": embeddings,
        "unembedded_after_load": None,
        "workers": workers,
        "storage": shown_url(url),
        "turns": flynn["messages"],
        "errors": flynn["errors"],
        "error_codes": flynn["error_codes"],
        "worker_cpu_seconds": [round(value, 2) for value in spent],
        "worker_cpu_ms_per_turn": round(sum(spent) * 1000 / turns, 3),
        "postgres_cpu_seconds": None if database is None else round(database, 2),
        "postgres_cpu_ms_per_turn": None if database is None else round(database * 1000 / turns, 3),
        "load_cpu_ms_per_turn": round(float(flynn["cpu_seconds"]) * 1000 / turns, 3),
        "cpu_ms_per_turn": round(
            (sum(spent) + (database or 0.0) + float(flynn["cpu_seconds"])) * 1000 / turns, 3
        ),
        "machine_busy": round((busy_after - busy_before) / (total_after - total_before), 3)
        if total_after > total_before
        else None,
        "cores": os.cpu_count(),
    }


async def bench_workers_rounds(
    *, workers: int, url: str, clients: int, seconds: float, rounds: int
) -> dict[str, object]:
    """``rounds`` rounds of one worker then ``workers`` workers, alternating in one sitting
    (what else runs on the machine weighs on both alike): every run, and the speedup, the
    median turns/s of ``workers`` over the median of one."""
    runs: list[dict[str, object]] = []
    for _ in range(rounds):
        for count in (1, workers):
            runs.append(
                await bench_gateway_workers(
                    workers=count, url=url, clients=clients, seconds=seconds
                )
            )

    def rates(count: int) -> list[float]:
        return [float(str(run["flynn_msgs_per_s"])) for run in runs if run["workers"] == count]

    one, many = rates(1), rates(workers)
    return {
        "bench": "gateway",
        "workers": workers,
        "rounds": rounds,
        "clients": clients,
        "seconds": seconds,
        "turns_per_s_one_worker": one,
        "turns_per_s_workers": many,
        "speedup": round(statistics.median(many) / statistics.median(one), 3)
        if statistics.median(one)
        else None,
        "runs": runs,
    }
