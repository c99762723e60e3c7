"""``flynn bench gateway``: the full path (gateway -> router -> orchestrator -> memory -> instant
scripted provider -> reply) against a bare ``websockets`` echo server, measured by the same load
generator (a separate process) in the same run; plus the resident memory of an idle session."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection, serve

from evals.scripted_provider import ScriptedProvider
from flynn.app import App
from flynn.channels.base import Channel, ChannelCapabilities, ChannelStatus, OnMessage
from flynn.channels.gateway import GatewayChannel
from flynn.messages import Delivery, InboundMessage, OutboundMessage
from flynn.providers.base import TASKS, Provider, Task
from flynn.router import Router
from flynn.settings import Settings, load_settings

CHECKOUT = Path(__file__).resolve().parents[1]
TOKEN = "bench-gateway-token"
_AS_BEHIND_A_PROXY = {"port": 0, "token": TOKEN, "trusted_proxies": ["127.0.0.1"]}
"""Flynn's gateway settings here: the load generator, one process on one address, stands for a
reverse proxy in front of many clients, each named by its own ``X-Forwarded-For`` address. The
admission caps then apply per client, as they would to people behind a proxy, not to the total."""


def _rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def load(
    url: str | list[str], *, clients: int, seconds: float, protocol: str
) -> dict[str, Any]:
    """The load generator's result, run as its own process against ``url`` (several: the
    clients spread across them)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "evals.load",
        *([url] if isinstance(url, str) else url),
        "--clients",
        str(clients),
        "--seconds",
        str(seconds),
        "--token",
        TOKEN,
        "--protocol",
        protocol,
        *(["--as-proxy"] if protocol == "flynn" else []),
        stdout=asyncio.subprocess.PIPE,
        cwd=CHECKOUT,  # where `-m evals.load` is found, installed or not
    )
    out, _ = await process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"load generator failed ({protocol})")
    result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return result


async def echo_load(clients: int, seconds: float) -> dict[str, Any]:
    async def handler(connection: ServerConnection) -> None:
        async for message in connection:
            await connection.send(message)

    async with serve(handler, "127.0.0.1", 0, compression=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        return await load(
            f"ws://127.0.0.1:{port}/", clients=clients, seconds=seconds, protocol="echo"
        )


class _NullChannel:
    """Where replies of the idle-session measurement go."""

    name = "bench"
    capabilities = ChannelCapabilities(False, False, 1_000_000, "chars")
    listening = None

    def status(self) -> ChannelStatus:
        return ChannelStatus("bench", connected=True)

    async def run(self, on_message: OnMessage) -> None:
        await asyncio.Event().wait()

    async def send(self, message: OutboundMessage) -> Delivery:
        return Delivery.deferred()


def _unlimited_gateway(settings: Settings) -> GatewayChannel:
    """Built here rather than by ``app.build_channels``: the benchmark lifts the per-connection
    flood limit, which exists for hostile clients, not for a load generator."""
    return GatewayChannel(
        settings.channels.gateway,
        token=TOKEN,
        readiness=lambda: {"ready": True},
        rate_per_second=1e9,
        burst=1_000_000,
    )


async def _gateway_only(clients: int, seconds: float) -> dict[str, Any]:
    """The gateway with a handler that answers at once: protocol, auth, framing and routing of
    replies, without sessions or memory. Separates the transport's cost from a turn's."""
    with tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
        settings = load_settings({"data_dir": tmp, "channels": {"gateway": _AS_BEHIND_A_PROXY}})
        gateway = _unlimited_gateway(settings)

        async def answer(message: InboundMessage) -> None:
            await gateway.send(
                OutboundMessage(message.session_key, "Noted.", reply_to=message.message_id)
            )

        serving = asyncio.create_task(gateway.run(answer))
        try:
            await gateway.started.wait()
            url = f"ws://127.0.0.1:{gateway.bound_port}/ws"
            return await load(url, clients=clients, seconds=seconds, protocol="flynn")
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving


async def bench_gateway(
    *, clients: int, seconds: float, idle_sessions: int = 2000, embeddings: str | None = None
) -> dict[str, object]:
    """``embeddings`` names a ``memory.embeddings_model`` to embed every turn with (off the
    event loop, as the daemon does); ``None`` leaves embeddings off."""
    echo = await echo_load(clients, seconds)
    transport = await _gateway_only(clients, seconds)
    with tempfile.TemporaryDirectory(prefix="flynn-bench-") as tmp:
        settings = load_settings(
            {
                "data_dir": tmp,
                "memory": {"user_namespace": None}
                | (
                    {"embeddings": True, "embeddings_model": embeddings}
                    if embeddings is not None
                    else {"embeddings": False}
                ),
                "channels": {"gateway": _AS_BEHIND_A_PROXY},
            }
        )
        provider = ScriptedProvider(default="Noted; anything else?")
        providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
        app = App.open(settings, {}, providers=providers)
        app.load_embeddings()  # before the clock starts, as a daemon that has started
        gateway = _unlimited_gateway(settings)
        null = _NullChannel()
        channels: dict[str, Channel] = {"gateway": gateway, "bench": null}
        router = Router(
            app.sessions, channels, app.identity, app.memory.inbound, clock=app.services.clock
        )
        serving = asyncio.create_task(gateway.run(router.on_message))
        try:
            await gateway.started.wait()
            url = f"ws://127.0.0.1:{gateway.bound_port}/ws"
            flynn = await load(url, clients=clients, seconds=seconds, protocol="flynn")
            # Turns the background queue had not embedded when the load ended (past its bound,
            # they wait for a catch-up pass).
            behind = app.services.learning.writer.unembedded() if embeddings is not None else None
            rss_per_session = await _idle_session_rss(router, idle_sessions)
        finally:
            serving.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            router.close_intake()
            await router.drain(5)
            await app.aclose()
    return {
        **against_echo(clients, seconds, flynn, echo),
        "gateway_only_msgs_per_s": transport["msgs_per_s"],
        "gateway_only_ratio": round(transport["msgs_per_s"] / echo["msgs_per_s"], 3)
        if echo["msgs_per_s"]
        else 0.0,
        "rss_per_session_kb": rss_per_session,
        "idle_sessions_measured": idle_sessions,
        "embeddings_model": embeddings,
        "unembedded_after_load": behind,
    }


def against_echo(
    clients: int, seconds: float, flynn: dict[str, Any], echo: dict[str, Any]
) -> dict[str, object]:
    """The result's first keys: Flynn's load beside the echo server's."""
    ratio = flynn["msgs_per_s"] / echo["msgs_per_s"] if echo["msgs_per_s"] else 0.0
    return {
        "bench": "gateway",
        "clients": clients,
        "seconds": seconds,
        "flynn_msgs_per_s": flynn["msgs_per_s"],
        "p50_ms": flynn["p50_ms"],
        "p99_ms": flynn["p99_ms"],
        "echo_msgs_per_s": echo["msgs_per_s"],
        "echo_p50_ms": echo["p50_ms"],
        "ratio": round(ratio, 3),
    }


async def _idle_session_rss(router: Router, count: int) -> float:
    """RSS growth per session after ``count`` sessions each had one turn and went idle."""

    async def one_turn(index: int) -> None:
        await router.on_message(
            InboundMessage(
                channel="bench",
                chat_id=f"idle-{index}",
                sender_id=f"idle-{index}",
                text="hello there, just saying hi",
                message_id=f"idle-{index}",
                received_at=datetime.now(UTC),
            )
        )

    # Warm-up: caches, statement cache and allocator arenas reach their steady size first.
    for index in range(200):
        await one_turn(-1 - index)
    await _settle(router)
    gc.collect()
    before = _rss_kb()
    for index in range(count):
        await one_turn(index)
        if index % 100 == 99:
            await _settle(router)
    await _settle(router)
    gc.collect()
    after = _rss_kb()
    return round(max(after - before, 0) / count, 2)


async def _settle(router: Router) -> None:
    """Waits until every queued turn ran (sessions stay open: idle, not evicted)."""
    await router.quiet.wait()
