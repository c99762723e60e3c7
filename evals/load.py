"""The load generator for ``flynn bench gateway``, run as its own process (``python -m
evals.load``) so it does not share the server's core: N websocket clients, each sending one
message and awaiting its reply, over and over, for a fixed time; given several servers (the
workers of one database), client i talks to server i mod N. Prints one JSON line."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time
from collections.abc import Sequence

from websockets.asyncio.client import connect

from evals.turn import Zipf, vocabulary

_TEMPLATES = (
    "Can you remind me what we decided about the {0} {1}?",
    "My {0} arrives on Friday; add that to my notes about {1}.",
    "What's a good way to handle {0} when the {1} is late?",
    "Summarise the plan for {0} and {1} in two lines.",
    "I prefer {0} in the afternoon, not {1}.",
)


_GRACE_SECONDS = 30.0
"""How long past the run a client waits for its last reply."""


def _texts(index: int, zipf: Zipf, count: int = 64) -> list[str]:
    """Varied messages, as people send: the same few shapes over a long tail of words, so
    searches match a handful of past turns rather than every turn of every client."""
    rng = random.Random(index)
    return [
        rng.choice(_TEMPLATES).format(*zipf.sentence(rng, 2).rstrip(".").lower().split()[:2])
        for _ in range(count)
    ]


def forwarded_for(index: int) -> str:
    """Client ``index``'s own address in the benchmarking range (RFC 2544, 198.18.0.0/15), as a
    reverse proxy would name it in ``X-Forwarded-For``."""
    return f"198.18.{index // 254 % 256}.{index % 254 + 1}"


async def _client(
    url: str,
    index: int,
    deadline: float,
    token: str,
    protocol: str,
    latencies: list[float],
    errors: list[str],
    *,
    texts: list[str],
    as_proxy: bool,
) -> int:
    sent = 0
    headers = {"X-Forwarded-For": forwarded_for(index)} if as_proxy else None
    async with connect(url, compression=None, max_size=2**22, additional_headers=headers) as ws:
        if protocol == "flynn":
            hello = {"type": "hello", "token": token, "client_id": f"bench-{index}"}
            await ws.send(json.dumps(hello))
            json.loads(await ws.recv())
        while time.perf_counter() < deadline:
            frame_id = f"{index}-{sent}"
            text = texts[sent % len(texts)]
            started = time.perf_counter()
            await ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))
            try:
                # A reply that never comes (a server that dropped the turn) ends this client
                # soon after the run, counted, rather than the run.
                async with asyncio.timeout(max(deadline - started, 0) + _GRACE_SECONDS):
                    while True:
                        answer = json.loads(await ws.recv())
                        if protocol == "echo" or answer.get("type") in ("reply", "error"):
                            if answer.get("type") == "error":
                                errors.append(str(answer.get("code")))
                            break
            except TimeoutError:
                errors.append("unanswered")
                break
            latencies.append((time.perf_counter() - started) * 1000)
            sent += 1
    return sent


async def run_load(
    urls: Sequence[str],
    *,
    clients: int,
    seconds: float,
    token: str,
    protocol: str,
    as_proxy: bool = False,
) -> dict[str, object]:
    """``as_proxy``: each client's connection says, as a reverse proxy's would, that it comes
    from an address of its own (for a server that trusts this process as its proxy)."""
    latencies: list[float] = []
    errors: list[str] = []
    cpu = time.process_time()
    # Written before the clock starts: built inside each client (20 ms apiece, the event loop
    # held), they kept 200 clients from reading their handshake answers for seconds, and the
    # server's handshake timeout (5 s) closed the first ones.
    zipf = Zipf(vocabulary(random.Random(7), size=5000))
    texts = [_texts(index, zipf) for index in range(clients)]
    deadline = time.perf_counter() + seconds
    started = time.perf_counter()
    counts = await asyncio.gather(
        *(
            _client(
                urls[i % len(urls)],
                i,
                deadline,
                token,
                protocol,
                latencies,
                errors,
                texts=texts[i],
                as_proxy=as_proxy,
            )
            for i in range(clients)
        )
    )
    elapsed = time.perf_counter() - started
    latencies.sort()

    def percentile(fraction: float) -> float:
        if not latencies:
            return 0.0
        return latencies[min(len(latencies) - 1, round(fraction * (len(latencies) - 1)))]

    return {
        "messages": sum(counts),
        "seconds": round(elapsed, 3),
        "msgs_per_s": round(sum(counts) / elapsed, 1),
        "p50_ms": round(percentile(0.5), 3),
        "p99_ms": round(percentile(0.99), 3),
        "errors": len(errors),
        "error_codes": sorted(set(errors)),
        "cpu_seconds": round(time.process_time() - cpu, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.load")
    parser.add_argument("url", nargs="+", help="one server, or several: clients spread across them")
    parser.add_argument("--clients", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--protocol", choices=("flynn", "echo"), default="flynn")
    parser.add_argument(
        "--as-proxy",
        action="store_true",
        help="send each client's own X-Forwarded-For address, as a reverse proxy does",
    )
    args = parser.parse_args()
    result = asyncio.run(
        run_load(
            args.url,
            clients=args.clients,
            seconds=args.seconds,
            token=args.token,
            protocol=args.protocol,
            as_proxy=args.as_proxy,
        )
    )
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
