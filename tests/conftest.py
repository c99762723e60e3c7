"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from fakes import FakeAnthropic, FakeOpenAI

# As ``flynn.cli.main`` does for the daemon: python-telegram-bot's timedelta API, no warnings.
os.environ.setdefault("PTB_TIMEDELTA", "1")


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
