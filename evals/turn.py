"""``flynn bench turn``: everything flynn does per turn except the model call, at scale.

A temporary database is filled with synthetic history and facts through the real stores, then a
real orchestrator (with an instant scripted provider behind the daemon's redaction gate) is timed
over many turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import gc
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from evals.scripted_provider import ScriptedProvider
from flynn.app import App, database_path
from flynn.daemon import freeze_startup_heap
from flynn.memory.checkpointer import WalCheckpointer
from flynn.memory.store import MessageRole, NewFact
from flynn.memory.vectors import SqliteVectors
from flynn.messages import ChannelAccount, SessionKey
from flynn.providers.base import TASKS, Provider, Task
from flynn.providers.redacting import RedactingProvider
from flynn.recall.recall import DepthName
from flynn.schedule.jobs import Target
from flynn.settings import EmbeddingModel, load_settings
from flynn.tools.mcp import RESTART_BACKOFF, McpServer

_COMMON = tuple(
    "the a to and of in is it you that for on with this be have are was not what can do my "
    "about we at so just like get if me your how but know think when would will all there "
    "time project meeting code deploy server email plan trip book call today tomorrow week".split()
)
_SUFFIXES = ("ing", "er", "ion", "ly", "s", "ed", "ment", "ness", "al", "ity")


def vocabulary(rng: random.Random, size: int = 20_000) -> list[str]:
    consonants, vowels = "bcdfghjklmnprstvwz", "aeiou"
    words = set(_COMMON)
    while len(words) < size:
        syllables = rng.randint(1, 3)
        stem = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables))
        words.add(stem + (rng.choice(_SUFFIXES) if rng.random() < 0.4 else ""))
    ordered = sorted(words)
    rng.shuffle(ordered)
    return list(_COMMON) + [w for w in ordered if w not in _COMMON]


class Zipf:
    """Words drawn with probability proportional to 1/rank, as in real text: a few very common
    words (mostly stopwords) and a long tail of rare ones that searches actually match on."""

    def __init__(self, vocabulary: list[str]) -> None:
        self.words = vocabulary
        total = 0.0
        self.cumulative = []
        for rank in range(1, len(vocabulary) + 1):
            total += 1.0 / rank
            self.cumulative.append(total)

    def sentence(self, rng: random.Random, words: int) -> str:
        picks = rng.choices(self.words, cum_weights=self.cumulative, k=words)
        return " ".join(picks).capitalize() + "."


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


async def bench_turn(
    *,
    messages: int,
    facts: int,
    turns: int,
    seed: int = 7,
    depth: DepthName = "adaptive",
    tools: bool = True,
    reminders: int = 0,
    mcp_servers: int = 0,
    mcp_tools: int = 0,
    embeddings: bool = False,
    embeddings_model: EmbeddingModel = "auto",
    profile: Path | None = None,
    pause_ms: int = 0,
) -> dict[str, object]:
    """Times ``turns`` turns over a store holding ``messages`` messages and ``facts`` facts,
    with recall at ``depth`` (``memory.recall_depth``), Flynn's tools offered or not,
    ``reminders`` reminders scheduled for the person (their prompt lists the next few), and
    ``mcp_servers`` stdio MCP servers offering ``mcp_tools`` tools between them; with servers,
    one is then killed and the time to notice and to recover it is measured too. With
    ``profile``, cProfile statistics of the timed turns only (not the set-up, the warm-up or
    the event loop's work between turns) are written there, for ``python -m pstats``. With
    ``pause_ms``, the process waits that long between timed turns, untimed: the time a real
    model's answer and the person's next message leave between turns, in which the stored
    messages' embeddings are made in the background (back to back, a turn with vectors on also
    waits on the embeddings of the turns before it).

    With ``embeddings``, each turn is embedded and recalled with ``embeddings_model`` as in the
    daemon, and the stored messages get vectors first: random unit ones (a brute-force search
    costs the same whatever they hold, and the model would take many minutes for 100,000)."""
    rng = random.Random(seed)
    zipf = Zipf(vocabulary(rng))
    with tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
        settings = load_settings(
            {
                "data_dir": str(Path(tmp)),
                "memory": {
                    "user_namespace": "user",
                    "recall_depth": depth,
                    "embeddings": embeddings,
                    "embeddings_model": embeddings_model,
                },
                "llm": {"provider": "offline"},
                "tools": {
                    "enabled": tools,
                    "mcp_servers": _mcp_config(Path(tmp), mcp_servers, mcp_tools),
                },
            }
        )
        provider = ScriptedProvider(default="Noted, thanks.", records=False)
        # Through the gate the daemon puts before every model (``build_task_providers``): what
        # it does to each request is flynn's work, timed with the rest.
        providers: dict[Task, Provider] = {task: RedactingProvider(provider) for task in TASKS}
        app = App.open(settings, {}, providers=providers)
        supervising = asyncio.create_task(app.mcp.run()) if app.mcp is not None else None
        recovery: dict[str, object] = {}
        try:
            if app.mcp is not None:
                async with asyncio.timeout(60):
                    for server in app.mcp.servers:
                        await _settled(server, "up")
            setup_started = time.perf_counter()
            _fill(app, rng, zipf, messages=messages, facts=facts)
            if embeddings:
                app.load_embeddings()  # as the daemon does in a thread, before the timed turns
            _fill_vectors(app, seed=seed)
            _schedule(app, rng, zipf, reminders)
            setup_seconds = time.perf_counter() - setup_started

            orchestrator = app.sessions.orchestrator(
                SessionKey("bench", "1"), ChannelAccount("bench", "1")
            )
            texts = [zipf.sentence(rng, rng.randint(6, 30)) for _ in range(64)]
            texts += [
                "My name is Ana and I prefer green tea.",
                "When I say ship it, run the deploy checklist.",
                "What did we decide about the server migration last week?",
            ]
            # The daemon checkpoints the WAL in the background; so does the benchmark.
            checkpointer = asyncio.create_task(WalCheckpointer(database_path(settings)).run())
            try:
                for index in range(min(20, turns)):
                    await orchestrator.handle(texts[index % len(texts)])
                freeze_startup_heap()  # as the daemon does before it reports ready
                samples = []
                profiler = cProfile.Profile() if profile is not None else None
                for _ in range(turns):
                    text = texts[rng.randrange(len(texts))]
                    if profiler is not None:
                        profiler.enable()
                    started = time.perf_counter()
                    await orchestrator.handle(text)
                    samples.append((time.perf_counter() - started) * 1000)
                    if profiler is not None:
                        profiler.disable()
                    # A daemon's turn ends in network I/O, where the event loop runs its other
                    # tasks (the checkpointer among them); a turn with an instant provider never
                    # gives it the chance, so the loop gets it here, between timed turns.
                    await asyncio.sleep(pause_ms / 1000)
            finally:
                checkpointer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await checkpointer
                gc.unfreeze()
            if profiler is not None and profile is not None:
                profiler.dump_stats(profile)
            if app.mcp is not None:
                recovery = await _kill_and_recover(app.mcp.servers[0])
            from evals.embed import resident_mib  # it imports this module

            rss_mib = resident_mib()  # after the timed turns, before anything is closed
            loaded = app.embeddings
            embeddings_used = loaded.model if loaded is not None and loaded.ready else None
            if embeddings_used is not None:
                # As a daemon between messages: the embedding queue, quiet QUIET_SECONDS since
                # its last work (the turns' and their learning's), hands the freed heap back.
                await asyncio.wait_for(app.services.learning.writer.rested(), timeout=120)
            rss_mib_at_rest = resident_mib()
            harness_mib = harness_imports_mib()
        finally:
            if supervising is not None:
                supervising.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await supervising
            await app.aclose()
    return {
        "bench": "turn",
        "turns": turns,
        "messages": messages,
        "facts": facts,
        "recall_depth": depth,
        "embeddings": embeddings_used,
        "tools": tools,
        "reminders": reminders,
        "p50_ms": round(percentile(samples, 0.50), 3),
        "p90_ms": round(percentile(samples, 0.90), 3),
        "p99_ms": round(percentile(samples, 0.99), 3),
        "mean_ms": round(statistics.fmean(samples), 3),
        "max_ms": round(max(samples), 3),
        "setup_s": round(setup_seconds, 2),
        "rss_mib": rss_mib,
        "rss_mib_at_rest": rss_mib_at_rest,
        "rss_mib_harness_imports": harness_mib,
        "rss_mib_at_rest_less_harness": (
            None
            if rss_mib_at_rest is None or harness_mib is None
            else round(rss_mib_at_rest - harness_mib, 1)
        ),
        "mcp_servers": mcp_servers,
        "mcp_tools": mcp_tools if mcp_servers else 0,
        "pause_ms": pause_ms,
        **recovery,
    }


_RESIDENT_AFTER = (
    "import sys; import {modules}; "
    "print(next(int(line.split()[1]) for line in open('/proc/self/status') "
    "if line.startswith('VmRSS:')))"
)


def harness_imports_mib() -> float | None:
    """What this benchmark's own modules add to its resident memory, which a daemon does not
    hold: ``evals`` imports every benchmark's harness (psycopg and the MCP SDK among them). The
    difference between two fresh interpreters, one importing ``evals.cli`` and one importing
    what ``flynn run`` imports before it serves; ``None`` where /proc has no ``VmRSS``."""
    resident = []
    for modules in (
        "flynn.cli, flynn.daemon, flynn.app, evals.cli",
        "flynn.cli, flynn.daemon, flynn.app",
    ):
        try:
            done = subprocess.run(
                [sys.executable, "-c", _RESIDENT_AFTER.format(modules=modules)],
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        resident.append(int(done.stdout.strip()) / 1024)
    return round(resident[0] - resident[1], 1)


_MCP_SERVER = """
import os, sys
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")

def pid() -> str:
    \"\"\"The server's process id.\"\"\"
    return str(os.getpid())

def make(index):
    def search(query: str, limit: int = 10) -> str:
        return f"{index}: {query} ({limit})"
    search.__name__ = f"search_{index}"
    search.__doc__ = f"Searches collection {index} for the query; at most limit results."
    return search

server.add_tool(pid)
for index in range(int(sys.argv[1]) - 1):
    server.add_tool(make(index))
server.run()
"""


def _mcp_config(folder: Path, servers: int, tools: int) -> dict[str, object]:
    """``servers`` stdio servers with ``tools`` tools between them (one each says its pid)."""
    if servers <= 0:
        return {}
    script = folder / "bench_mcp_server.py"
    script.write_text(_MCP_SERVER)
    counts = [tools // servers + (1 if index < tools % servers else 0) for index in range(servers)]
    return {
        f"bench{index}": {"command": sys.executable, "args": [str(script), str(max(1, count))]}
        for index, count in enumerate(counts)
    }


async def _settled(server: McpServer, state: str) -> None:
    while True:
        changed = server.changed()
        if server.status().state == state:
            return
        await changed.wait()


async def _kill_and_recover(server: McpServer) -> dict[str, object]:
    """Kills the server's process; how long until the supervisor noticed, and until its tools
    answered again (the first restart waits ``RESTART_BACKOFF.first``)."""
    pid = int((await server.call("pid", {})).splitlines()[-1])
    started = time.perf_counter()
    os.kill(pid, signal.SIGKILL)
    async with asyncio.timeout(60):
        await _settled(server, "down")
        noticed = time.perf_counter() - started
        await _settled(server, "up")
    await server.call("pid", {})
    recovered = time.perf_counter() - started
    return {
        "mcp_dead_noticed_ms": round(noticed * 1000, 1),
        "mcp_dead_recovered_ms": round(recovered * 1000, 1),
        "mcp_restart_backoff_s": RESTART_BACKOFF.first,
    }


def _schedule(app: App, rng: random.Random, zipf: Zipf, reminders: int) -> None:
    """``reminders`` one-off and repeating reminders, all due in the coming year."""
    now = datetime.now(UTC)
    target = Target("gateway", "bench")
    for index in range(reminders):
        app.schedule.add(
            namespace="user",
            kind="reminder",
            text=zipf.sentence(rng, rng.randint(2, 8)),
            at=now + timedelta(days=1, seconds=rng.randrange(365 * 86400)),
            repeat="0 8 * * 1-5" if index % 10 == 0 else None,
            timezone="Europe/Lisbon",
            target=target,
            now=now,
        )


def _fill_vectors(app: App, *, seed: int, batch: int = 8192) -> None:
    """Random unit vectors of the model's size for every stored message without one."""
    vectors = app.services.recall.vectors
    if not isinstance(vectors, SqliteVectors):
        return
    import numpy as np

    rng = np.random.default_rng(seed)
    width = vectors.embed(["width"]).shape[1]
    while rows := vectors.pending(None, after=0, limit=batch):
        matrix = rng.standard_normal((len(rows), width)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        vectors.store("message", rows, matrix)


def _fill(app: App, rng: random.Random, zipf: Zipf, *, messages: int, facts: int) -> None:
    memory = app.memory
    start = datetime(2026, 1, 1, tzinfo=UTC)
    per_session = 200
    with memory.db.transaction():
        for index in range(messages):
            session = f"bench:history-{index // per_session}"
            role: MessageRole = "user" if index % 2 == 0 else "assistant"
            text = zipf.sentence(rng, rng.randint(5, 40))
            memory.history.append(
                session,
                "user",
                role,
                text,
                tokens=len(text) // 4 + 1,
                now=start + timedelta(minutes=index),
            )
        for index in range(facts):
            # A profile holds tens of facts; extracted observations are what grow large.
            namespace = "user/profile" if index < 50 else "user/facts"
            field = f"topic_{index}" if index % 5 == 0 else None
            memory.facts.add(
                NewFact(
                    namespace=namespace,
                    kind="observation" if field is None else "profile",
                    field=field,
                    value=zipf.sentence(rng, rng.randint(3, 12)),
                    confidence=0.5 + rng.random() / 2,
                    source="llm",
                ),
                now=start + timedelta(minutes=index),
            )
