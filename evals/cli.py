"""``flynn bench turn|recall|schedule|storage-copy|gateway|embed``: each runs on a temporary
store with a scripted model and prints one JSON object. ``flynn.cli`` hands the arguments after
``bench`` to ``main``, from a checkout. Wrong arguments (a negative count, no clients, a cut-off
of 0) are refused while parsing, in one line, exit 2; configuration errors are raised for
``flynn.cli`` to report."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from evals.datasets import NAMES
from evals.distill import bench_distill
from evals.embed import bench_embed
from evals.embedding_cache import CACHE_ENV, default_directory
from evals.gateway import bench_gateway
from evals.gateway_workers import bench_gateway_workers, bench_workers_rounds, throwaway_postgres
from evals.rankers import RANKERS
from evals.recall import bench_recall, compare_table, load_dataset
from evals.schedule import bench_schedule
from evals.storage_copy import bench_storage_copy
from evals.turn import bench_turn
from flynn.cli_settings import EXIT_CONFIG, EXIT_FAILED, EXIT_OK, command_settings
from flynn.errors import FlynnError
from flynn.logs import configure_logging
from flynn.recall.embeddings import EMBEDDING_MODELS
from flynn.recall.recall import DEPTHS


def main(argv: Sequence[str]) -> int:
    parser = _BenchParser(prog="flynn bench", description="benchmarks; each prints one JSON object")
    _add_bench_commands(parser)
    try:
        args = parser.parse_args(argv)
    except _WrongArguments as exc:
        print(exc, file=sys.stderr)
        return EXIT_CONFIG
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_CONFIG
    return int(args.handler(args))


class _WrongArguments(Exception):
    """What argparse found wrong with the arguments, as the one line to print."""


class _BenchParser(argparse.ArgumentParser):
    """argparse, but a wrong argument is one line (``flynn bench turn: error: argument
    --messages: must be at least 0, not -5``) rather than the usage and an exit: ``main``
    prints it and returns 2, so ``flynn.cli`` (and a test calling it) gets a code back."""

    def error(self, message: str) -> NoReturn:
        raise _WrongArguments(f"{self.prog}: error: {message}")


def _count(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"takes a whole number, not {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {value}")
        return value

    return parse


def _seconds(text: str) -> float:
    """An argparse type: a finite number of seconds greater than 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes a number of seconds, not {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number of seconds above 0, not {text}")
    return value


def _cutoffs(text: str) -> list[int]:
    """An argparse type: comma-separated recall@k cut-offs, each at least 1."""
    try:
        ks = [int(k) for k in text.split(",") if k.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"takes comma-separated numbers, not {text!r}") from None
    if not ks or min(ks) < 1:
        raise argparse.ArgumentTypeError(f"needs cut-offs of at least 1, not {text!r}")
    return sorted(set(ks))


def _add_bench_commands(bench: argparse.ArgumentParser) -> None:
    """``flynn bench ...``: each runs on a temporary store with a scripted model. Flags left out
    take the configured memory settings, so ``--config`` benchmarks a configuration."""
    bench_commands = bench.add_subparsers(title="benchmarks", metavar="BENCH")

    def bench_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = bench_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "--config",
            type=Path,
            help="YAML config file (default: $FLYNN_CONFIG) whose memory settings to measure",
        )
        return sub

    turn = bench_command("turn", "per-turn overhead with an instant provider")
    turn.add_argument(
        "--messages", type=_count(0), default=100_000, help="messages stored first (default 100000)"
    )
    turn.add_argument(
        "--facts", type=_count(0), default=10_000, help="facts stored first (default 10000)"
    )
    turn.add_argument("--turns", type=_count(1), default=1000, help="turns timed (default 1000)")
    turn.add_argument("--seed", type=int, default=7)
    turn.add_argument(
        "--recall-depth", choices=DEPTHS, help="memory.recall_depth to use (default: configured)"
    )
    turn.add_argument(
        "--tools",
        action=argparse.BooleanOptionalAction,
        help="offer Flynn's tools on every turn (default: tools.enabled)",
    )
    turn.add_argument(
        "--reminders", type=_count(0), default=0, help="reminders scheduled for the person first"
    )
    turn.add_argument(
        "--embeddings",
        action=argparse.BooleanOptionalAction,
        help="embed and recall with local embeddings; the stored messages get random vectors "
        "(default: memory.embeddings)",
    )
    turn.add_argument(
        "--embeddings-model",
        choices=EMBEDDING_MODELS,
        help="memory.embeddings_model to use with --embeddings (default: configured)",
    )
    turn.add_argument(
        "--mcp-servers",
        type=_count(0),
        default=0,
        help="stdio MCP servers started and their tools offered (default 0)",
    )
    turn.add_argument(
        "--mcp-tools",
        type=_count(0),
        default=40,
        help="tools the MCP servers offer between them (default 40)",
    )
    turn.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="write cProfile statistics of the timed turns only to FILE (python -m pstats FILE)",
    )
    turn.add_argument(
        "--pause-ms",
        type=_count(0),
        default=0,
        metavar="MS",
        help="wait MS between timed turns, untimed, as a real model's answer would "
        "(default 0: back to back)",
    )
    turn.set_defaults(handler=_cmd_bench_turn)
    recall = bench_command(
        "recall", "recall quality (recall@k), injected tokens and latency over a dataset"
    )
    recall.add_argument(
        "--dataset",
        required=True,
        help=f"a set built from evals/datasets ({', '.join(NAMES)}) or a JSON file",
    )
    recall.add_argument(
        "--k", type=_cutoffs, default=[1, 5, 10, 50], help="comma-separated cut-offs (1,5,10,50)"
    )
    recall.add_argument(
        "--ranker",
        choices=RANKERS,
        default="hybrid",
        help="hybrid (what people get), or bm25, bm25_vector (0.3 x bm25 + 0.7 x cosine, "
        "with --embeddings) or baseline to compare against",
    )
    recall.add_argument(
        "--compare",
        action="store_true",
        help="with embeddings on, rank the same store with the hybrid ranker (fused), the "
        "lexical ranker (embeddings off) and bm25_vector, and print them side by side",
    )
    recall.add_argument(
        "--embeddings-cache",
        type=Path,
        help=f"keep embeddings in this directory and reuse them (a dev cache; default: "
        f"${CACHE_ENV} if set)",
    )
    recall.add_argument(
        "--recall-depth", choices=DEPTHS, help="memory.recall_depth to use (default: configured)"
    )
    recall.add_argument(
        "--embeddings",
        action=argparse.BooleanOptionalAction,
        help="rank with local embeddings (default: memory.embeddings)",
    )
    recall.add_argument(
        "--embeddings-model",
        choices=EMBEDDING_MODELS,
        help="memory.embeddings_model to use with --embeddings (default: configured)",
    )
    recall.add_argument(
        "--scale",
        type=_count(0),
        default=0,
        help="pad the store with filler turns up to this total",
    )
    recall.add_argument(
        "--docs",
        type=_count(0),
        default=0,
        help="store about this many team document chunks first; recall searches them too",
    )
    recall.add_argument("--seed", type=int, default=7)
    recall.add_argument(
        "--storage-url",
        metavar="URL",
        help="keep every store (facts, history, graph, vectors, team documents) on this "
        "PostgreSQL database (postgresql://...), in a schema of the run's own, dropped "
        "afterwards (default: SQLite in a temporary directory)",
    )
    recall.add_argument(
        "--synthesis-model",
        choices=("stand-in", "configured"),
        default="stand-in",
        help="what episodic synthesis is measured with: an in-process stand-in (no model, "
        "Flynn's overhead only), or the synthesis task model the config resolves to (a real "
        "call per question, with its keys from the environment)",
    )
    recall.add_argument(
        "--slowest",
        type=_count(0),
        default=0,
        metavar="N",
        help="list the N slowest questions with their wall, CPU and garbage-collection times",
    )
    recall.add_argument(
        "--profile",
        type=Path,
        metavar="FILE",
        help="write cProfile statistics to FILE (python -m pstats FILE): of the --slowest "
        "questions asked again after the timed pass, else of every timed question",
    )
    recall.set_defaults(handler=_cmd_bench_recall)
    schedule = bench_command(
        "schedule", "adding reminders, fire_due among many, lag of a burst due at once"
    )
    schedule.add_argument("--jobs", type=_count(0), default=10_000, help="reminders stored")
    schedule.add_argument(
        "--burst", type=_count(0), default=1000, help="jobs due in the same second"
    )
    schedule.add_argument("--seed", type=int, default=7)
    schedule.set_defaults(handler=_cmd_bench_schedule)
    storage_copy = bench_command(
        "storage-copy",
        "flynn storage copy of a padded install into an empty PostgreSQL database, and its rerun",
    )
    storage_copy.add_argument(
        "--url", required=True, help="an empty PostgreSQL database: postgresql://user:pw@host/db"
    )
    storage_copy.add_argument(
        "--messages", type=_count(0), default=100_000, help="messages stored first (default 100000)"
    )
    storage_copy.add_argument(
        "--facts", type=_count(0), default=10_000, help="facts stored first (default 10000)"
    )
    storage_copy.add_argument(
        "--reminders", type=_count(0), default=1000, help="reminders stored first (default 1000)"
    )
    storage_copy.add_argument("--seed", type=int, default=7)
    storage_copy.set_defaults(handler=_cmd_bench_storage_copy)
    distill = bench_command(
        "distill", "tokens each distillation tier reads and writes on one person's history"
    )
    distill.add_argument(
        "--messages", type=_count(1), default=1000, help="messages stored first (default 1000)"
    )
    distill.add_argument(
        "--days", type=_count(1), default=60, help="days they are spread over (default 60)"
    )
    distill.add_argument(
        "--configured",
        action="store_true",
        help="ask the configured distill model (llm.tasks.distill) instead of the stand-in",
    )
    distill.set_defaults(handler=_cmd_bench_distill)
    gateway = bench_command("gateway", "full-path throughput against a bare websockets echo server")
    gateway.add_argument(
        "--clients", type=_count(1), default=200, help="websocket clients at once (default 200)"
    )
    gateway.add_argument(
        "--seconds", type=_seconds, default=10.0, help="how long each load runs (default 10)"
    )
    gateway.add_argument(
        "--idle-sessions",
        type=_count(1),
        default=2000,
        help="sessions opened to measure an idle one's memory (default 2000)",
    )
    embeddings = gateway.add_mutually_exclusive_group()
    embeddings.add_argument(
        "--embeddings",
        choices=EMBEDDING_MODELS,
        nargs="?",
        const="auto",
        help="embed every turn with this memory.embeddings_model (default: auto; without the "
        "flag, as memory.embeddings says)",
    )
    embeddings.add_argument(
        "--no-embeddings",
        action="store_true",
        help="embed nothing, whatever memory.embeddings says",
    )
    gateway.add_argument(
        "--workers",
        type=_count(1),
        default=1,
        help="flynn run worker processes on PostgreSQL, the clients spread across them "
        "(default 1: in this process, on SQLite); needs --storage-url or --throwaway-postgres",
    )
    database = gateway.add_mutually_exclusive_group()
    database.add_argument(
        "--storage-url",
        metavar="URL",
        help="the PostgreSQL database the workers share: postgresql://user:pw@host/db (the "
        "bench works in a schema of its own, dropped after)",
    )
    database.add_argument(
        "--throwaway-postgres",
        action="store_true",
        help="start a PostgreSQL of its own for the run, as the tests do (Debian's "
        "postgresql package), and delete it after",
    )
    gateway.add_argument(
        "--rounds",
        type=_count(1),
        default=1,
        help="with --workers N: one worker then N, alternating, this many times (default 1: "
        "N only); prints every run and the speedup",
    )
    gateway.add_argument(
        "--profile",
        metavar="DIR",
        type=Path,
        help="with --storage-url or --throwaway-postgres: run each worker under cProfile and "
        "write its statistics to DIR/worker-<n>.prof (python -m pstats FILE)",
    )
    gateway.set_defaults(handler=_cmd_bench_gateway)
    embed = bench_command(
        "embed",
        "the embedding model's cost: load time, memory, and the catch-up's turns per second "
        "and CPU per turn over a dataset's turns",
    )
    embed.add_argument(
        "--dataset",
        default="assistant_small",
        help=f"whose turns to embed: a set built from evals/datasets ({', '.join(NAMES)}) or a "
        "JSON file (default assistant_small)",
    )
    embed.add_argument(
        "--embeddings-model",
        choices=EMBEDDING_MODELS,
        help="memory.embeddings_model to measure (default: configured)",
    )
    embed.set_defaults(handler=_cmd_bench_embed)


def _cmd_bench_embed(args: argparse.Namespace) -> int:
    memory = command_settings(args).memory
    configure_logging("error", "json")
    model = args.embeddings_model or memory.embeddings_model
    print(json.dumps(asyncio.run(bench_embed(args.dataset, model=model))))
    return EXIT_OK


def _cmd_bench_gateway(args: argparse.Namespace) -> int:
    memory = command_settings(args).memory
    configure_logging("error", "json")
    embeddings: str | None = args.embeddings
    if embeddings is None and memory.embeddings and not args.no_embeddings:
        embeddings = memory.embeddings_model
    on_postgres = args.storage_url is not None or args.throwaway_postgres
    if not on_postgres:
        if args.workers > 1 or args.rounds > 1:
            what = f"--workers {args.workers}" if args.workers > 1 else f"--rounds {args.rounds}"
            print(
                f"flynn bench gateway: error: {what} needs --storage-url "
                "postgresql://... or --throwaway-postgres (SQLite is one process's)",
                file=sys.stderr,
            )
            return EXIT_CONFIG
        result = asyncio.run(
            bench_gateway(
                clients=args.clients,
                seconds=args.seconds,
                idle_sessions=args.idle_sessions,
                embeddings=embeddings,
            )
        )
        print(json.dumps(result))
        return EXIT_OK
    with contextlib.ExitStack() as stack:
        url = args.storage_url or stack.enter_context(throwaway_postgres())
        if args.rounds > 1:
            result = asyncio.run(
                bench_workers_rounds(
                    workers=args.workers,
                    url=url,
                    clients=args.clients,
                    seconds=args.seconds,
                    rounds=args.rounds,
                )
            )
        else:
            result = asyncio.run(
                bench_gateway_workers(
                    workers=args.workers,
                    url=url,
                    clients=args.clients,
                    seconds=args.seconds,
                    embeddings=embeddings,
                    profile=args.profile,
                )
            )
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_recall(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    memory = settings.memory
    configure_logging("error", "json")
    embeddings = memory.embeddings if args.embeddings is None else args.embeddings
    if args.compare and not embeddings:
        if args.embeddings is False:
            print("flynn: --compare needs embeddings", file=sys.stderr)
            return EXIT_CONFIG
        embeddings = True
    cache = args.embeddings_cache or default_directory()
    try:
        dataset = load_dataset(args.dataset)
        if dataset.unknown_evidence:
            print(
                f"flynn: note: {dataset.unknown_evidence} evidence ids name no turn of their "
                "conversation; left out (evidence_unknown in the result)",
                file=sys.stderr,
            )
        result = asyncio.run(
            bench_recall(
                dataset,
                ks=args.k,
                ranker=args.ranker,
                depth=args.recall_depth or memory.recall_depth,
                embeddings=embeddings,
                embeddings_model=args.embeddings_model or memory.embeddings_model,
                scale=args.scale,
                seed=args.seed,
                recall_max_tokens=memory.recall_max_tokens,
                retrieval_threshold=memory.retrieval_threshold,
                synthesis_timeout_seconds=memory.synthesis_timeout_seconds,
                synthesis_llm=settings.llm if args.synthesis_model == "configured" else None,
                env=os.environ,
                docs=args.docs,
                compare=args.compare,
                embeddings_cache=cache if embeddings else None,
                storage_url=args.storage_url,
                slowest=args.slowest,
                profile=args.profile,
            )
        )
    except FlynnError as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.compare:
        print(compare_table(result["compare"]))  # type: ignore[arg-type]
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_distill(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    configure_logging("error", "json")
    try:
        result = asyncio.run(
            bench_distill(
                messages=args.messages,
                days=args.days,
                settings=settings,
                configured=args.configured,
            )
        )
    except FlynnError as exc:
        print(f"flynn: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_schedule(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    result = asyncio.run(bench_schedule(jobs=args.jobs, burst=args.burst, seed=args.seed))
    print(json.dumps(result))
    return EXIT_OK


def _cmd_bench_storage_copy(args: argparse.Namespace) -> int:
    configure_logging("error", "json")
    result = asyncio.run(
        bench_storage_copy(
            url=args.url,
            messages=args.messages,
            facts=args.facts,
            reminders=args.reminders,
            seed=args.seed,
        )
    )
    print(json.dumps(result))
    return EXIT_OK if result["matches"] and result["rerun_matches"] else EXIT_FAILED


def _cmd_bench_turn(args: argparse.Namespace) -> int:
    settings = command_settings(args)
    configure_logging("error", "json")
    result = asyncio.run(
        bench_turn(
            messages=args.messages,
            facts=args.facts,
            turns=args.turns,
            seed=args.seed,
            depth=args.recall_depth or settings.memory.recall_depth,
            tools=settings.tools.enabled if args.tools is None else args.tools,
            reminders=args.reminders,
            mcp_servers=args.mcp_servers,
            mcp_tools=args.mcp_tools,
            embeddings=settings.memory.embeddings if args.embeddings is None else args.embeddings,
            embeddings_model=args.embeddings_model or settings.memory.embeddings_model,
            profile=args.profile,
            pause_ms=args.pause_ms,
        )
    )
    print(json.dumps(result))
    return EXIT_OK
