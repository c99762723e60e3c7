"""How many phrasings of the credential corpus (tests/memory/credentials_corpus.py) are stored
(in any text column of any table, or any file of the data dir) and how many are sent to the model
(in any request body), when said to the real orchestrator over the ``openai`` SDK and the fake
model server of tests/fakes. Run from the repository root:

    .venv/bin/python tools/credential_figures.py

To measure another checkout's ``flynn`` with this corpus, put it first on the path:
``PYTHONPATH=/path/to/checkout .venv/bin/python tools/credential_figures.py``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(1, str(ROOT / "tests"))

from fakes import FakeOpenAI  # noqa: E402
from fakes.clock import FakeClock  # noqa: E402
from memory.credentials_corpus import CREDENTIALS  # noqa: E402

import flynn  # noqa: E402
from flynn.app import App  # noqa: E402
from flynn.messages import ChannelAccount, SessionKey  # noqa: E402
from flynn.settings import load_settings  # noqa: E402


def stored_texts(data_dir: Path) -> list[str]:
    connection = sqlite3.connect(data_dir / "flynn.db")
    texts: list[str] = []
    try:
        tables = [
            r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        for table in tables:
            for column in [r[1] for r in connection.execute(f'PRAGMA table_info("{table}")')]:
                for (value,) in connection.execute(f'SELECT "{column}" FROM "{table}"'):
                    if isinstance(value, str):
                        texts.append(value)
                    elif isinstance(value, bytes):
                        texts.append(value.decode("utf-8", "replace"))
    finally:
        connection.close()
    for path in data_dir.rglob("*"):
        if path.is_file() and not path.name.startswith("flynn.db"):
            texts.append(path.read_text("utf-8", "replace"))
    return texts


async def measure() -> tuple[int, int, int]:
    with tempfile.TemporaryDirectory() as folder:
        async with FakeOpenAI() as server:
            settings = load_settings(
                {
                    "data_dir": str(Path(folder) / "data"),
                    "llm": {
                        "provider": "openai",
                        "base_url": server.base_url,
                        "model": "fake-model",
                        "api_key": "sk-test",
                        "max_retries": 0,
                    },
                    "memory": {"user_namespace": "user", "extract_every_turns": 2},
                }
            )
            app = App.open(settings, {}, clock=FakeClock())
            try:
                session = app.sessions.orchestrator(
                    SessionKey("gateway", "laptop"), ChannelAccount("gateway", "laptop")
                )
                for text, _ in CREDENTIALS:
                    await session.handle(text)
                await session.wait_idle()
            finally:
                await app.aclose()
            bodies = [request.raw_body.decode("utf-8", "replace") for request in server.requests]
            bodies += [str(request.body) for request in server.requests]
        texts = stored_texts(Path(folder) / "data")
    secrets = [secret for _, secret in CREDENTIALS]
    stored = sum(any(secret in text for text in texts) for secret in secrets)
    sent = sum(any(secret in body for body in bodies) for secret in secrets)
    return len(secrets), stored, sent


def main() -> None:
    total, stored, sent = asyncio.run(measure())
    print(f"flynn from {Path(flynn.__file__).parent}")
    print(f"credential corpus: {total} phrasings; stored {stored}; sent to the model {sent}")


if __name__ == "__main__":
    main()
