"""Storage at start-up through the real ``flynn`` command: an unusable database stops a start with
one line and exit 4, a second daemon on a data dir exits 5 naming the first one's pid, and what
flynn creates is private whatever the umask."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, closing
from pathlib import Path

import pytest

from flynn.memory.database import Database
from flynn.schedule.migrations import SCHEMA

EXIT_STORAGE = 4
EXIT_LOCKED = 5


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET"))
    }
    env.update(
        {
            "HOME": str(home),
            "USER": "ana",
            "FLYNN_DATA_DIR": str(home / "data"),
            "FLYNN_CHANNELS__GATEWAY__PORT": "0",
            **extra,
        }
    )
    return env


def flynn(*args: str, home: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flynn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_env(home),
        cwd=home,
        umask=0o022,
        timeout=60,
        check=False,
    )


def _one_line(result: subprocess.CompletedProcess[str], code: int, *words: str) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0]
    return lines[0]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


class RunningDaemon:
    """``flynn run`` in a subprocess, followed through its JSON log on stderr."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def wait_for(self, event: str) -> None:
        assert self.process.stderr is not None
        async with asyncio.timeout(30):
            while True:
                line = await self.process.stderr.readline()
                if not line:
                    raise AssertionError(f"flynn run exited before {event}")
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("event") == event:
                    return


@asynccontextmanager
async def running(home: Path) -> AsyncIterator[RunningDaemon]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "flynn",
        "run",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=_env(home),
        cwd=home,
    )
    daemon = RunningDaemon(process)
    try:
        await daemon.wait_for("daemon.ready")
        yield daemon
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def test_an_empty_database_file_stops_the_start_and_is_kept(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir(mode=0o700)
    database = tmp_path / "data" / "flynn.db"
    database.write_bytes(b"")
    line = _one_line(flynn("chat", home=tmp_path, stdin="hi\n"), EXIT_STORAGE, str(database))
    assert "empty" in line
    assert database.stat().st_size == 0


def test_a_corrupt_database_stops_the_start(tmp_path: Path) -> None:
    database = tmp_path / "data" / "flynn.db"
    with Database.open(database, SCHEMA) as db:
        db.executemany(
            "INSERT INTO costs (provider, model, task, input_tokens, output_tokens, created_at) "
            "VALUES (?, 'm', 'chat', 1, 2, 'x')",
            [("p" * 500,) for _ in range(200)],
        )
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    with closing(sqlite3.connect(database)) as connection:
        page = connection.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'costs'")
        root = int(page.fetchone()[0])
    with database.open("r+b") as handle:
        handle.seek((root - 1) * 4096 + 8)
        handle.write(b"\xa5" * 4000)
    _one_line(flynn("run", home=tmp_path), EXIT_STORAGE, str(database), "corrupt")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a file whatever its mode")
def test_a_read_only_database_stops_the_start(tmp_path: Path) -> None:
    database = tmp_path / "data" / "flynn.db"
    Database.open(database, SCHEMA).close()
    database.chmod(0o400)
    _one_line(flynn("run", home=tmp_path), EXIT_STORAGE, str(database), "cannot be written")


def test_what_flynn_creates_is_private_whatever_the_umask(tmp_path: Path) -> None:
    said = "my name is Ana\nremind me in 10 minutes to stretch\nadd a task to call mum\n"
    result = flynn("chat", home=tmp_path, stdin=said)
    assert result.returncode == 0, result.stderr
    distilled = flynn("distill", "short", home=tmp_path)
    assert distilled.returncode == 0, distilled.stderr
    data = tmp_path / "data"
    # The persona's templates too, in persona/<name>/, whose persona/ mkdir(parents=True) made
    # with the umask's 0755.
    initialised = flynn("init", str(data), home=tmp_path)
    assert initialised.returncode == 0, initialised.stderr
    assert _mode(data) == 0o700
    for name in ("flynn.db", "flynn.db-wal", "flynn.db-shm"):
        if (data / name).exists():
            assert _mode(data / name) == 0o600, name
    assert _mode(data / "flynn.db") == 0o600
    # Every file kept about the person (their templates, reminders, tasks, distilled notes) and
    # the persona's, owner-only: they were 0644 or 0600 depending on which wrote them.
    person = data / "user"
    assert {"USER.md", "MEMORY_SHORT.md"} <= {path.name for path in person.iterdir()}
    for path in data.rglob("*"):
        expected = 0o700 if path.is_dir() else 0o600
        assert _mode(path) == expected, f"{path.relative_to(data)} is {oct(_mode(path))}"


def test_a_loose_data_dir_is_tightened_at_start(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir(mode=0o755)
    (tmp_path / "data").chmod(0o755)
    result = flynn("chat", home=tmp_path, stdin="hi\n")
    assert result.returncode == 0, result.stderr
    assert _mode(tmp_path / "data") == 0o700


async def test_a_second_daemon_on_a_data_dir_refuses_to_start(tmp_path: Path) -> None:
    async with running(tmp_path) as first:
        pid = first.process.pid
        second = await asyncio.to_thread(flynn, "run", home=tmp_path)
        _one_line(second, EXIT_LOCKED, f"process {pid} ", str(tmp_path / "data" / "flynn.lock"))
        # Everything but ``run`` shares the database with the daemon.
        chat = await asyncio.to_thread(flynn, "chat", home=tmp_path, stdin="my name is Ana\n")
        assert chat.returncode == 0, chat.stderr
        shown = await asyncio.to_thread(flynn, "memory", "show", home=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "Ana" in shown.stdout
        first.process.send_signal(signal.SIGKILL)
        await first.process.wait()
    # The dead daemon's lock does not block the next one.
    async with running(tmp_path) as again:
        again.process.send_signal(signal.SIGTERM)
        await again.wait_for("daemon.stopped")
        assert await again.process.wait() == 0
