"""Fixtures shared by the whole suite."""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator, Iterator
from types import FrameType

import pytest
import structlog
from fakes import FakeAnthropic, FakeOpenAI
from postgres_server import MISSING, PostgresServer, running_server, server_binaries
from worker_pool import Worker

# As ``flynn.cli.main`` does for the daemon: python-telegram-bot's timedelta API, no warnings.
os.environ.setdefault("PTB_TIMEDELTA", "1")


@pytest.fixture(autouse=True)
def _logging_left_as_found() -> Iterator[None]:
    """A test that runs a command in-process (``flynn.cli.main``) configures logging to the
    stderr of that moment: under ``capsys``, a capture closed when the test ends. Every log line
    of a later test would then fail, so logging goes back to its defaults after each test."""
    yield
    structlog.reset_defaults()
    root = logging.getLogger()
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    root.setLevel(logging.WARNING)


@pytest.fixture
async def fake_openai() -> AsyncIterator[FakeOpenAI]:
    """A started fake OpenAI-compatible server; ``.base_url`` ends in ``/v1``."""
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def fake_anthropic() -> AsyncIterator[FakeAnthropic]:
    """A started fake Anthropic server; ``.base_url`` is the host root."""
    async with FakeAnthropic() as server:
        yield server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One real PostgreSQL for the whole run (``tests/postgres_server.py``), started by the
    first test that needs it; skipped, saying why, where Debian's server is not installed."""
    if server_binaries() is None:
        pytest.skip(MISSING)
    # A run stopped by SIGTERM (a CI timeout) would skip the teardown and leave the server
    # running: stopped as by Ctrl-C instead, pytest still stops it and deletes its directory.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with running_server() as server:
            yield server
    finally:
        signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A URL (with a password) whose connections see a new, empty schema of their own."""
    with postgres_server.fresh_schema() as url:
        yield url


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A cluster of the test's own, to stop and start again (``PostgresServer.stop`` and
    ``start``) while the run's shared one stays up."""
    if server_binaries() is None:
        pytest.skip(MISSING)
    with running_server() as server:
        yield server


@pytest.fixture
async def pool() -> AsyncIterator[list[Worker]]:
    """Where a test puts its ``flynn run`` workers (``tests/worker_pool.py``); whatever still
    runs at the end is killed, a paused one let go first so that it can die."""
    workers: list[Worker] = []
    yield workers
    for worker in workers:
        process = worker.daemon.process
        if process is not None and process.returncode is None:
            os.kill(process.pid, signal.SIGCONT)
        await worker.daemon.kill()
