"""The daemon as people run it, for end-to-end tests: a real ``python -m flynn run`` process
whose JSON log lines (stderr) are read as they come, and the ``flynn`` command beside it, both
in a clean environment (no FLYNN_*, no vendor keys, HOME where the test says)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from websockets.asyncio.client import ClientConnection

PATIENCE = 60.0
"""How long a wait for a frame or a log line may take before the test fails: a bound, not a
measure (a daemon starting on a loaded machine can take 20 s; a passing test never waits it)."""

GATEWAY_TOKEN = "e2e-gateway-token"

_INHERITED_NOT = ("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET")


async def next_frame(ws: ClientConnection, kind: str) -> dict[str, Any]:
    """The next gateway frame of type ``kind`` on ``ws`` (others are skipped); fails after
    ``PATIENCE``."""
    async with asyncio.timeout(PATIENCE):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] == kind:
                return frame


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def openai_llm(base_url: str, api_key: str = "sk-test") -> dict[str, Any]:
    """The ``llm`` section for a fake OpenAI server at ``base_url``: one attempt, no stream."""
    return {
        "provider": "openai",
        "base_url": base_url,
        "model": "fake-model",
        "api_key": api_key,
        "max_retries": 0,
        "stream": False,
    }


def clean_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without anything that configures Flynn or a vendor, with
    ``HOME`` at ``home`` (where ``~/.flynn`` is when no config says otherwise)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_INHERITED_NOT)}
    env["HOME"] = str(home)
    env.update(extra or {})
    return env


LOADED = frozenset({"memory.embeddings_loaded", "memory.embeddings_unavailable"})
"""What the daemon logs once the embedding model has loaded, or could not."""


@dataclass(frozen=True, slots=True)
class Finished:
    code: int
    stdout: str
    stderr: str


async def run_flynn(
    *args: str,
    home: Path,
    env: Mapping[str, str] | None = None,
    stdin: str | None = None,
) -> Finished:
    """Runs ``flynn ARGS`` to its end (stdin piped, closed after ``stdin``)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "flynn",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=clean_env(home, env),
    )
    try:
        async with asyncio.timeout(30):
            out, err = await process.communicate((stdin or "").encode())
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return Finished(process.returncode, out.decode(), err.decode())


class Daemon:
    """``flynn run`` in a subprocess. Its log lines are read in the background (a daemon whose
    stderr nobody reads would block once the pipe is full) into ``events``; ``wait_for``
    returns the next one of a name after those it already returned, as if reading the log."""

    def __init__(
        self, config: Path | None, home: Path, env: Mapping[str, str] | None = None
    ) -> None:
        self.config = config
        self.home = home
        self.env = dict(env or {})
        self.process: asyncio.subprocess.Process | None = None
        self.events: list[dict[str, Any]] = []
        self.other_lines: list[str] = []
        """What it wrote to stderr that is not a log line (a traceback)."""
        self._cursor = 0
        self._changed = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None
        self._ended = False

    async def start(self) -> None:
        args = ["run"] if self.config is None else ["run", "--config", str(self.config)]
        self.process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "flynn",
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=clean_env(self.home, self.env),
        )
        assert self.process.stderr is not None
        self._ended = False
        first = self._cursor = len(self.events)
        self._reader = asyncio.create_task(self._read(self.process.stderr))
        ready = await self.wait_for("daemon.ready")
        if ready.get("embeddings") == "loading":
            # It serves while the embedding model loads; waiting for the load keeps what
            # the tests recall the same from run to run (by meaning from the first message).
            await self._wait_since(first, LOADED)

    async def _read(self, stream: asyncio.StreamReader) -> None:
        try:
            while line := await stream.readline():
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    self.other_lines.append(line.decode(errors="replace").rstrip())
                    continue
                async with self._changed:
                    self.events.append(record)
                    self._changed.notify_all()
        finally:
            async with self._changed:
                self._ended = True
                self._changed.notify_all()

    async def _wait_since(self, first: int, events: frozenset[str]) -> dict[str, Any]:
        """The first line named in ``events`` logged at or after index ``first``."""
        async with asyncio.timeout(PATIENCE), self._changed:
            while True:
                for record in self.events[first:]:
                    if record.get("event") in events:
                        return record
                if self._ended:
                    raise AssertionError(f"daemon exited before {sorted(events)}")
                await self._changed.wait()

    def seen(self, event: str) -> list[dict[str, Any]]:
        """Every line of that name logged so far, by every process started."""
        return [record for record in self.events if record.get("event") == event]

    async def wait_for(self, event: str, *, patience: float = PATIENCE) -> dict[str, Any]:
        async with asyncio.timeout(patience), self._changed:
            while True:
                for index in range(self._cursor, len(self.events)):
                    if self.events[index].get("event") == event:
                        self._cursor = index + 1
                        return self.events[index]
                self._cursor = len(self.events)
                if self._ended:
                    raise AssertionError(
                        f"daemon exited before {event}: {self.events[-5:]}\n"
                        + "\n".join(self.other_lines[-20:])
                    )
                await self._changed.wait()

    async def stop(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        await self.wait_for("daemon.stopped")
        async with asyncio.timeout(PATIENCE):
            code = await self.process.wait()
            if self._reader is not None:
                await self._reader
        self.process = None
        self._reader = None
        return code

    async def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        self.process = None


@contextlib.asynccontextmanager
async def running_daemon(home: Path, config: Mapping[str, Any]) -> AsyncIterator[Daemon]:
    """``config`` written to ``home/config.yaml`` and ``flynn run`` started on it, ready; killed
    when the block ends (a block that wants to see it exit stops it first)."""
    path = home / "config.yaml"
    path.write_text(yaml.safe_dump(dict(config)))
    daemon = Daemon(path, home)
    try:
        await daemon.start()
        yield daemon
    finally:
        await daemon.kill()
