"""Builds a real App (SQLite in tmp_path) around a scripted provider."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from fakes.clock import FakeClock

from evals.scripted_provider import ScriptedProvider
from flynn.app import App
from flynn.memory.vectors import Embedder
from flynn.messages import ChannelAccount, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.settings import load_settings

SMALL_WINDOW: dict[str, Any] = {
    "llm": {"context_window": 2048, "provider": "offline"},
    "compaction": {"reserve_tokens": 512, "keep_recent_tokens": 200},
}


class Harness:
    """One data directory; ``open()`` is a daemon start, ``close()`` a stop."""

    def __init__(self, data_dir: Path, overrides: dict[str, Any]) -> None:
        self.data_dir = data_dir
        self.overrides = overrides
        self.clock = FakeClock()
        self.chat = ScriptedProvider(default="ok", name="chat")
        self.compaction = ScriptedProvider(default="- summary of earlier turns", name="compaction")
        self.extraction = ScriptedProvider(default="{}", name="extraction")
        self.embedder: Embedder | None = None
        """The embedding model to load (``App.open(embedder=...)``), instead of the configured."""
        self.app: App | None = None

    def open(self, **overrides: Any) -> App:
        data: dict[str, Any] = {"data_dir": str(self.data_dir)}
        for section, values in {**self.overrides, **overrides}.items():
            data[section] = values
        settings = load_settings(data)
        self.app = App.open(
            settings,
            {},
            clock=self.clock,
            providers={
                "chat": self.chat,
                "compaction": self.compaction,
                "extraction": self.extraction,
                "distill": self.compaction,
            },
            embedder=None if self.embedder is None else self._load_embedder,
        )
        return self.app

    def _load_embedder(self, model: object) -> Embedder:
        assert self.embedder is not None
        return self.embedder

    async def close(self) -> None:
        if self.app is not None:
            await self.app.aclose()
            self.app = None

    def session(self, channel: str = "gateway", chat_id: str = "laptop") -> Orchestrator:
        assert self.app is not None
        return self.app.sessions.orchestrator(
            SessionKey(channel, chat_id), ChannelAccount(channel, chat_id)
        )


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Callable[..., Harness]]:
    made: list[Harness] = []

    def make(**overrides: Any) -> Harness:
        made.append(Harness(tmp_path / "data", overrides))
        return made[-1]

    yield make
    for item in made:
        await item.close()
