"""Measures the gateway under hostile connections that never say hello (issue 12, item 5); run by
hand, not by pytest: ``.venv/bin/python tests/channels/measure_before_hello.py [gateway.py]``.

The gateway runs in a child process (optionally an older ``gateway.py`` given by path), so its
VmRSS from ``/proc/<pid>/status`` is its own. Reports (1) its RSS before and after 300
connections each sent half of a 1 MB frame before hello, and (2) how long a legitimate client
takes from connect to ``ready`` while 1,000 raw connections that never say hello are held open
and reopened as soon as the server drops them, from the client's own address (the worst case:
both behind one proxy) and from another. The flood runs in this process, so the client's
times include waiting for this process's event loop.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import statistics
import struct
import sys
import time
from pathlib import Path

from websockets.asyncio.client import connect

TOKEN = "measure-token-for-tests"
HALF_FRAMES = 300
FLOOD = 1000
SAMPLES = 20

_SERVER = """
import asyncio, importlib.util, sys
from flynn.settings import GatewaySettings
path = sys.argv[1]
if path == "-":
    from flynn.channels.gateway import GatewayChannel
else:
    spec = importlib.util.spec_from_file_location("measured_gateway", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    GatewayChannel = module.GatewayChannel

async def main():
    channel = GatewayChannel(
        GatewaySettings(host="127.0.0.1", port=0), token=sys.argv[2], readiness=lambda: {}
    )
    async def ignore(message):
        pass
    task = asyncio.create_task(channel.run(ignore))
    await channel.started.wait()
    print(channel.bound_port, file=sys.stderr, flush=True)
    await task

asyncio.run(main())
"""


def rss_mb(pid: int) -> float:
    with Path(f"/proc/{pid}/status").open() as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def raw_upgrade(
    port: int, address: str = "127.0.0.1"
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A TCP connection from ``address`` that completed the WebSocket handshake and will answer
    nothing."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(address, 0))
    key = base64.b64encode(os.urandom(16)).decode()
    writer.write(
        (
            f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise ConnectionError(head.split(b"\r\n")[0].decode())
    return reader, writer


async def half_frames(port: int, pid: int) -> None:
    before = rss_mb(pid)
    header = b"\x81\xff" + struct.pack("!Q", 1 << 20) + os.urandom(4)
    held = []
    for _ in range(HALF_FRAMES):
        _, writer = await raw_upgrade(port)
        writer.write(header + b"x" * (1 << 19))
        held.append(writer)
    await asyncio.gather(*(w.drain() for w in held), return_exceptions=True)
    await asyncio.sleep(2.0)
    after = rss_mb(pid)
    print(f"half frames: {HALF_FRAMES} x 512 KB of a 1 MB frame before hello")
    print(f"  server VmRSS {before:.0f} MB -> {after:.0f} MB (+{after - before:.0f} MB)")
    for writer in held:
        writer.close()


async def flood_slot(port: int, address: str, opened: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            reader, writer = await raw_upgrade(port, address)
        except (OSError, asyncio.IncompleteReadError, ConnectionError):
            await asyncio.sleep(0.05)
            continue
        opened[0] += 1
        with contextlib.suppress(OSError):
            await reader.read()  # until the server drops us; then come straight back
        writer.close()


async def legitimate_connect(port: int) -> float | str:
    began = time.perf_counter()
    try:
        async with (
            asyncio.timeout(15),
            connect(f"ws://127.0.0.1:{port}/ws", compression=None) as ws,
        ):
            await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": "me"}))
            answer = json.loads(await ws.recv())
    except Exception as exc:  # a refusal is a result here
        return f"{type(exc).__name__}: {exc}"
    if answer.get("type") != "ready":
        return f"refused: {answer}"
    return time.perf_counter() - began


async def hello_flood(port: int, address: str) -> None:
    baseline = [await legitimate_connect(port) for _ in range(5)]
    stop = asyncio.Event()
    opened = [0]
    slots = [asyncio.create_task(flood_slot(port, address, opened, stop)) for _ in range(FLOOD)]
    await asyncio.sleep(5.0)
    samples = []
    for _ in range(SAMPLES):
        samples.append(await legitimate_connect(port))
        await asyncio.sleep(0.1)
    stop.set()
    for slot in slots:
        slot.cancel()
    await asyncio.gather(*slots, return_exceptions=True)
    times = [s for s in samples if isinstance(s, float)]
    failures = [s for s in samples if isinstance(s, str)]
    print(
        f"hello flood from {address} (the client connects from 127.0.0.1): {FLOOD} raw "
        "connections that never say hello, reopened as soon as they are dropped"
    )
    print(f"  flood connections opened in total: {opened[0]}")
    print(f"  idle baseline: median {statistics.median(_ms(baseline)):.1f} ms")
    if times:
        print(
            f"  legitimate client, connect to ready: {len(times)}/{SAMPLES} got in, "
            f"median {statistics.median(_ms(times)):.1f} ms, max {max(_ms(times)):.1f} ms"
        )
    if failures:
        print(f"  {len(failures)}/{SAMPLES} refused, e.g. {failures[0]}")


def _ms(values: list[float | str]) -> list[float]:
    return [v * 1000 for v in values if isinstance(v, float)]


async def main() -> None:
    path = sys.argv[1] if len(sys.argv) > 1 else "-"
    for scenario in ("half frames", "127.0.0.1", "127.0.0.2"):
        server = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _SERVER,
            path,
            TOKEN,
            stdout=asyncio.subprocess.DEVNULL,  # its logs
            stderr=asyncio.subprocess.PIPE,
        )
        assert server.stderr is not None
        port = int(await server.stderr.readline())
        try:
            if scenario == "half frames":
                await half_frames(port, server.pid)
            else:
                await hello_flood(port, scenario)
        finally:
            server.terminate()
            await server.wait()


if __name__ == "__main__":
    asyncio.run(main())
