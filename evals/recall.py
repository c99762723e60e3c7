"""``flynn bench recall``: how well recall finds the turns that answer a question, how much it
injects, and how fast it is, over a dataset of multi-session conversations.

Every turn is written through ``MemoryWriter`` (as live turns are: history, rule extraction into
facts with their source message, graph and embeddings when configured), one shared namespace per
conversation and one session key per session. Each question is then ranked and packed by the
same ``Recall`` the orchestrator uses (or, as an eval option, another ranker). A dataset is one
of ``evals.datasets`` by name, or a JSON file::

    {"conversations": [{"id": "c1", "sessions": [{"id": "s1", "time": "2023-05-08T13:56:00",
        "turns": [{"id": "t1", "speaker": "Caroline", "text": "..."}]}]}],
     "questions": [{"conversation": "c1", "question": "...", "evidence": ["t1"],
                    "category": "temporal", "time": "2023-06-01T09:00:00"}]}

A question's ``time`` (optional) is when it is asked, which "last week" and "how long ago" are
counted from; without it, a day after its conversation's last turn.

The first speaker of a conversation is the person (role ``user``); the others are stored as the
assistant's side. Text is stored as ``Speaker: text`` so names are searchable, as a person's name
is known in a live chat.
"""

from __future__ import annotations

import cProfile
import gc
import json
import random
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evals import datasets
from evals.datasets.labelled import SourceError
from evals.embedding_cache import CachedEmbedder
from evals.rankers import ComparedRecall, OtherRankerName, RankerName
from evals.recall_stores import BenchApp, StorageName, on_postgresql
from evals.scripted_provider import ScriptedProvider
from evals.synthesis import Turn as SynthesisTurn
from evals.synthesis import bench_synthesis
from evals.team import store_docs
from evals.turn import Zipf, percentile, vocabulary
from flynn.app import App
from flynn.daemon import freeze_startup_heap
from flynn.errors import FlynnError
from flynn.identity import MemoryScope
from flynn.memory.store import MessageRole, NewMessage
from flynn.providers.base import TASKS, Provider, Task
from flynn.recall.recall import DepthName, Recall, RecalledMemory, RecallItem
from flynn.recall.team import TeamRecall
from flynn.sessions.prompt import render_recalled
from flynn.settings import EmbeddingModel, LlmSettings, load_settings
from flynn.tokens import estimate_tokens

DEFAULT_KS = (1, 5, 10, 50)
TURN_SPACING = timedelta(seconds=45)
"""Time between consecutive turns of a session (a dataset gives one time per session)."""
_FILLER_PER_SESSION = 40


class DatasetError(FlynnError):
    """The dataset file is not in the expected shape."""


@dataclass(frozen=True, slots=True)
class Turn:
    id: str
    speaker: str
    text: str


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    time: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    sessions: tuple[Session, ...]


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    question: str
    evidence: tuple[str, ...]
    category: str
    time: datetime | None = None
    """When the question is asked; None: a day after its conversation's last turn."""


@dataclass(frozen=True, slots=True)
class Dataset:
    conversations: tuple[Conversation, ...]
    questions: tuple[Question, ...]
    unknown_evidence: int = 0
    """Evidence ids that name no turn of their conversation, left out (public sets have a few
    annotation slips; one should not void the run)."""


def _time(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def parse_dataset(data: Any) -> Dataset:
    """The dataset in ``data`` (parsed JSON); raises ``DatasetError`` naming what is wrong."""
    try:
        conversations = tuple(
            Conversation(
                id=str(conversation["id"]),
                sessions=tuple(
                    Session(
                        id=str(session["id"]),
                        time=_time(session["time"]),
                        turns=tuple(
                            Turn(str(turn["id"]), str(turn["speaker"]), str(turn["text"]))
                            for turn in session["turns"]
                        ),
                    )
                    for session in conversation["sessions"]
                ),
            )
            for conversation in data["conversations"]
        )
        questions = tuple(
            Question(
                conversation=str(question["conversation"]),
                question=str(question["question"]),
                evidence=tuple(str(turn) for turn in question.get("evidence", ())),
                category=str(question.get("category", "uncategorised")),
                time=_time(question["time"]) if question.get("time") is not None else None,
            )
            for question in data["questions"]
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise DatasetError(f"malformed dataset: {type(exc).__name__}: {exc}") from exc
    known: dict[str, set[str]] = {}
    for conversation in conversations:
        turns = known.setdefault(conversation.id, set())
        for session in conversation.sessions:
            for turn in session.turns:
                if turn.id in turns:
                    raise DatasetError(f"turn id {turn.id!r} repeats in {conversation.id!r}")
                turns.add(turn.id)
    kept: list[Question] = []
    unknown = 0
    for question in questions:
        if question.conversation not in known:
            raise DatasetError(f"question names unknown conversation {question.conversation!r}")
        turns = known[question.conversation]
        evidence = tuple(turn for turn in question.evidence if turn in turns)
        unknown += len(question.evidence) - len(evidence)
        kept.append(replace(question, evidence=evidence))
    return Dataset(conversations, tuple(kept), unknown)


def load_dataset(spec: str) -> Dataset:
    """One of the sets in ``evals.datasets`` by name (built from its sources), else a JSON
    file in the format above."""
    if spec in datasets.NAMES:
        try:
            return parse_dataset(datasets.build(spec))
        except SourceError as exc:
            raise DatasetError(f"cannot build dataset {spec}: {exc}") from exc
    path = Path(spec)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        names = ", ".join(datasets.NAMES)
        raise DatasetError(f"cannot read dataset {path} (nor is it a set: {names}): {exc}") from exc
    return parse_dataset(data)


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a stored message came from in the dataset."""

    conversation: str
    session: str
    turn: str


def _scope(conversation: str) -> MemoryScope:
    return MemoryScope(f"users/{conversation}", shared=True, user=conversation)


def _session_key(conversation: str, session: str) -> str:
    return f"bench:{conversation}/{session}"


def _ingest(app: BenchApp, dataset: Dataset) -> tuple[dict[int, _Where], dict[str, datetime]]:
    writer = app.services.learning.writer
    assert writer is not None  # App always builds one
    where: dict[int, _Where] = {}
    last: dict[str, datetime] = {}
    for conversation in dataset.conversations:
        scope = _scope(conversation.id)
        person = next(
            (turn.speaker for s in conversation.sessions for turn in s.turns), conversation.id
        )
        for session in sorted(conversation.sessions, key=lambda s: s.time):
            key = _session_key(conversation.id, session.id)
            with app.memory.db.transaction():
                for index, turn in enumerate(session.turns):
                    now = session.time + index * TURN_SPACING
                    role: MessageRole = "user" if turn.speaker == person else "assistant"
                    stored = writer.message(
                        scope, key, role, f"{turn.speaker}: {turn.text}", now=now
                    )
                    writer.learn(scope, stored, now=now, channel="bench")
                    where[stored.id] = _Where(conversation.id, session.id, turn.id)
                    last[conversation.id] = max(last.get(conversation.id, now), now)
    return where, last


async def _pad(app: BenchApp, dataset: Dataset, *, total: int, seed: int) -> int:
    """Adds synthetic filler turns until ``total`` turns are stored: half in the dataset's own
    namespaces (spread over their time span), half in other people's. Written after the dataset,
    so the filler has the newer row ids (the harder case for bounded full-text search); imported
    a session at a time, nothing learnt from it; with embeddings on, embedded at the end in the
    batches of the catch-up (``embed_missing``), several times faster than one at a time."""
    stored = sum(len(s.turns) for c in dataset.conversations for s in c.sessions)
    missing = total - stored
    if missing <= 0 or not dataset.conversations:
        return 0
    rng = random.Random(seed)
    zipf = Zipf(vocabulary(rng))
    writer = app.services.learning.writer
    assert writer is not None
    spans = []
    for each in dataset.conversations:
        times = [s.time for s in each.sessions] or [datetime(2024, 1, 1, tzinfo=UTC)]
        spans.append((each.id, min(times) - timedelta(days=365), max(times)))
    added = 0
    while added < missing:
        count = min(_FILLER_PER_SESSION, missing - added)
        index = added // _FILLER_PER_SESSION
        if index % 2 == 0:
            owner, first, final = spans[(index // 2) % len(spans)]
            scope = _scope(owner)
        else:
            first, final = spans[0][1], spans[0][2]
            scope = _scope(f"filler-{index % 97}")
        start = first + (final - first) * rng.random()
        key = f"bench:filler/{index}"
        turns: list[tuple[MessageRole, str, datetime]] = [
            (
                "user" if turn % 2 == 0 else "assistant",
                zipf.sentence(rng, rng.randint(6, 30)),
                start + turn * TURN_SPACING,
            )
            for turn in range(count)
        ]
        # One transaction per session also when embeddings make the import turn by turn.
        with app.memory.db.transaction():
            if writer.embeds:
                for role, text, now in turns:
                    writer.message(scope, key, role, text, now=now, embed=False)
            else:
                batch = [
                    NewMessage(role, text, estimate_tokens(text), now) for role, text, now in turns
                ]
                app.memory.history.append_many(key, scope.root, batch)
        added += count
    if writer.embeds:
        await writer.embed_missing(None)
    return added


def _turns_of(
    items: Sequence[RecallItem], where: dict[int, _Where], *, shown: bool = False
) -> set[str]:
    """The dataset turns ``items`` show or derive from (an exchange: each of its turns); with
    ``shown``, only those shown verbatim (not a fact's source)."""
    found: set[str] = set()
    for item in items:
        if shown and item.kind != "message":
            continue
        for message_id in item.message_ids:
            origin = where.get(message_id)
            if origin is not None:
                found.add(origin.turn)
    return found


TURN_BUDGETS = (10, 20, 25, 35)
"""Turns shown at which rankers are compared (``turn_at_turns``)."""


def _turn_budget(items: Sequence[RecallItem], where: dict[int, _Where], turns: int) -> int:
    """How many of the first ``items`` show at most ``turns`` turns (whole items)."""
    shown: set[str] = set()
    for position, item in enumerate(items):
        if item.kind == "message":
            added = {where[m].turn for m in item.message_ids if m in where} - shown
            if len(shown) + len(added) > turns:
                return position
            shown |= added
    return len(items)


def _turn_recall(
    items: Sequence[RecallItem], evidence: set[str], where: dict[int, _Where], k: int
) -> float:
    return len(_turns_of(items[:k], where) & evidence) / len(evidence)


def _session_recall(
    items: Sequence[RecallItem],
    evidence: set[str],
    conversation: str,
    k: int,
) -> float:
    ranked: list[str] = []
    for item in items:
        if item.session is None:
            continue
        prefix = f"bench:{conversation}/"
        if item.session.startswith(prefix):
            session = item.session.removeprefix(prefix)
            if session not in ranked:
                ranked.append(session)
        if len(ranked) >= k:
            break
    return len(set(ranked[:k]) & evidence) / len(evidence)


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 4) if values else 0.0


async def bench_recall(
    dataset: Dataset,
    *,
    ks: Sequence[int] = DEFAULT_KS,
    ranker: RankerName = "hybrid",
    depth: DepthName = "adaptive",
    embeddings: bool = False,
    embeddings_model: EmbeddingModel = "auto",
    scale: int = 0,
    seed: int = 7,
    warmup: int = 5,
    recall_max_tokens: int | None = None,
    retrieval_threshold: float | None = None,
    synthesis_timeout_seconds: float | None = None,
    synthesis_llm: LlmSettings | None = None,
    env: Mapping[str, str] | None = None,
    docs: int = 0,
    compare: bool = False,
    embeddings_cache: Path | None = None,
    storage_url: str | None = None,
    slowest: int = 0,
    profile: Path | None = None,
) -> dict[str, object]:
    """Runs the benchmark in a temporary data directory; returns the result object. The
    budget, the relevance floor and synthesis's time budget are the settings' defaults unless
    given. Each question's packed memory then goes through episodic synthesis
    (``evals.synthesis``): with ``synthesis_llm``, on the synthesis task model it resolves to
    (keys from ``env``), else on an in-process stand-in; ``result["synthesis"]`` says which.
    With ``docs``, about that many team document chunks are stored first (``evals.team``) and
    every question's recall searches them too.

    With ``compare`` (embeddings on), the same store is also ranked by the lexical ranker (the
    hybrid without embeddings, as people get it with embeddings off) and by ``bm25_vector``;
    ``result["compare"]`` holds the three side by side (``compare_table`` prints them). With
    ``embeddings_cache``, vectors come from that on-disk cache when it holds them
    (``evals.embedding_cache``). With ``storage_url``, every store is on that PostgreSQL
    database (in a schema of the run's own, dropped afterwards: ``evals.recall_stores``).
    ``slowest`` and ``profile`` are ``_evaluate``'s, for the hybrid ranker's pass."""
    ks = sorted(set(ks) | ({5} if compare else set()))
    tuned = {
        key: value
        for key, value in (
            ("recall_max_tokens", recall_max_tokens),
            ("retrieval_threshold", retrieval_threshold),
            ("synthesis_timeout_seconds", synthesis_timeout_seconds),
        )
        if value is not None
    }
    with tempfile.TemporaryDirectory(prefix="flynn-bench-recall-") as tmp:
        settings = load_settings(
            {
                "data_dir": str(Path(tmp)),
                "llm": {"provider": "offline"},
                "memory": {
                    "recall_depth": depth,
                    "embeddings": embeddings,
                    "embeddings_model": embeddings_model,
                    **tuned,
                },
            }
        )
        provider = ScriptedProvider(default="ok")
        providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
        opened = App.open(settings, {}, providers=providers)
        try:
            opened.load_embeddings()
            stores = (
                on_postgresql(opened, storage_url)
                if storage_url is not None
                else nullcontext(BenchApp.of(opened))
            )
            with stores as app:
                ran = await _run(
                    app,
                    dataset,
                    ks=ks,
                    ranker=ranker,
                    scale=scale,
                    seed=seed,
                    warmup=warmup,
                    docs=docs,
                    compare=compare,
                    embeddings_cache=embeddings_cache,
                    synthesis_llm=synthesis_llm,
                    env=env,
                    slowest=slowest,
                    profile=profile,
                )
        finally:
            await opened.aclose()
    result = ran.result
    result.update(
        {
            "bench": "recall",
            "config": {
                "ranker": ranker,
                "recall_depth": depth,
                "embeddings": embeddings,
                "embeddings_model": ran.model,
                "recall_max_tokens": settings.memory.recall_max_tokens,
                "retrieval_threshold": settings.memory.retrieval_threshold,
                "stored_turns": ran.dataset_turns + ran.padded,
                "dataset_turns": ran.dataset_turns,
                "filler_turns": ran.padded,
                "storage": ran.storage,
            },
            "ingest_s": round(ran.ingest_seconds, 2),
            "evidence_unknown": dataset.unknown_evidence,
        }
    )
    return result


@dataclass(frozen=True, slots=True)
class _Ran:
    """One run's figures, and what the result's ``config`` says of it."""

    result: dict[str, object]
    ingest_seconds: float
    dataset_turns: int
    padded: int
    model: str | None
    storage: StorageName


async def _run(
    app: BenchApp,
    dataset: Dataset,
    *,
    ks: Sequence[int],
    ranker: RankerName,
    scale: int,
    seed: int,
    warmup: int,
    docs: int,
    compare: bool,
    embeddings_cache: Path | None,
    synthesis_llm: LlmSettings | None,
    env: Mapping[str, str] | None,
    slowest: int = 0,
    profile: Path | None = None,
) -> _Ran:
    """Stores the dataset in ``app``'s stores and ranks its questions."""
    uncached = cache_embeddings(app, embeddings_cache) if embeddings_cache is not None else None
    started = time.perf_counter()
    where, last = _ingest(app, dataset)
    padded = await _pad(app, dataset, total=scale, seed=seed)
    ingest_seconds = time.perf_counter() - started
    if uncached is not None:
        uncached()  # questions are embedded by the model: their latency is real
    team_docs = store_docs(app, docs, seed=seed) if docs else None
    recall = app.services.recall if ranker == "hybrid" else _other_ranker(app, ranker)
    team = TeamRecall(app.memory.team) if docs else None
    # As the daemon does before it reports ready (and ``bench turn`` before its timed turns):
    # what is alive now (the filled store's leftovers and the dataset among it) is kept out of
    # the collector's sight. Else a full collection walks it inside some question: 200-575 ms
    # each, several times in a run at 100,000 turns, where the daemon has none.
    freeze_startup_heap()
    try:
        result, turns = _evaluate(
            app,
            recall,
            dataset,
            where,
            last,
            ks=ks,
            warmup=warmup,
            team=team,
            slowest=slowest,
            profile=profile,
        )
    finally:
        gc.unfreeze()
    if team_docs is not None:
        result["team_docs"] = team_docs
    if compare:
        result["compare"] = {
            "fused": compared_figures(result),
            **{
                name: compared_figures(
                    _evaluate(app, other, dataset, where, last, ks=ks, warmup=0, team=team)[0]
                )
                for name, other in (
                    ("lexical", lexical_recall(app)),
                    ("bm25_vector", _other_ranker(app, "bm25_vector")),
                )
            },
        }
    vectors = app.services.recall.vectors
    model = None if vectors is None else vectors.model
    result["synthesis"] = await bench_synthesis(
        turns,
        timeout_seconds=app.settings.memory.synthesis_timeout_seconds,
        llm=synthesis_llm,
        env=env,
    )
    return _Ran(result, ingest_seconds, len(where), padded, model, app.storage)


def _other_ranker(app: BenchApp, ranker: OtherRankerName) -> Recall:
    """The app's recall with another ranker: an eval option only (people always get the
    hybrid). The other rankers use no graph; ``bm25_vector`` uses the app's embeddings."""
    memory = app.settings.memory
    return ComparedRecall(
        app.memory.facts,
        app.memory.history,
        ranker=ranker,
        threshold=memory.retrieval_threshold,
        depth=memory.recall_depth,
        vectors=app.services.recall.vectors if ranker == "bm25_vector" else None,
    )


def lexical_recall(app: BenchApp) -> Recall:
    """The app's recall without embeddings, on the same store: what people get with
    ``memory.embeddings`` off (the ranker reads no vector, whatever the store holds)."""
    memory = app.settings.memory
    return Recall(
        app.memory.facts,
        app.memory.history,
        threshold=memory.retrieval_threshold,
        depth=memory.recall_depth,
        graph=app.memory.graph,
    )


def cache_embeddings(app: BenchApp, directory: Path) -> Callable[[], None]:
    """Puts the on-disk cache (``evals.embedding_cache``) in front of the app's embedder;
    returns what takes it away again."""
    vectors = app.services.recall.vectors
    if vectors is None:
        return lambda: None
    embedder = vectors._embedder  # type: ignore[attr-defined]  # an eval's reach
    vectors._embedder = CachedEmbedder(embedder, directory)  # type: ignore[attr-defined]

    def uncached() -> None:
        vectors._embedder = embedder  # type: ignore[attr-defined]

    return uncached


COMPARED = ("fused", "lexical", "bm25_vector")
"""The rankers ``--compare`` puts side by side."""


def compared_figures(figures: Mapping[str, Any]) -> dict[str, object]:
    """What ``--compare`` keeps of one ranker's figures: turn recall at 10/20/25/35 turns,
    session@5 and ``inj``, overall and by category."""
    return {
        "turn_at_turns": figures["turn_at_turns"],
        "session_5": figures["session"]["5"],
        "injected_turn_recall": figures["injected_turn_recall"],
        "by_category": {
            category: {
                "turn_at_turns": table["turn_at_turns"],
                "session_5": table["session"].get("5"),
                "questions": table["questions"],
            }
            for category, table in figures["by_category"].items()
        },
    }


def compare_table(compared: Mapping[str, Any]) -> str:
    """``result["compare"]`` as a text table: a row per ranker, overall then by category, with
    turn recall at 10/20/25/35 turns, session@5 and ``inj``."""

    def row(label: str, name: str, figures: Mapping[str, Any]) -> str:
        turns = "/".join(f"{figures['turn_at_turns'][str(t)]:.3f}" for t in TURN_BUDGETS)
        inj = figures.get("injected_turn_recall")
        tail = f"  inj {inj:.3f}" if inj is not None else ""
        return f"{label:<32} {name:<12} {turns}  s@5 {figures['session_5'] or 0:.3f}{tail}"

    lines = [f"{'':<32} {'ranker':<12} turns@10/20/25/35"]
    for name in COMPARED:
        lines.append(row("all", name, compared[name]))
    categories = sorted(compared["fused"]["by_category"])
    for category in categories:
        count = compared["fused"]["by_category"][category]["questions"]
        for name in COMPARED:
            table = compared[name]["by_category"].get(category)
            if table is not None and table["questions"]:
                lines.append(row(f"{category} ({count})", name, table))
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class _Timed:
    """What one question's recall cost: wall and CPU time (``time.process_time``: every
    thread of the process), and the garbage collector's share of the wall time."""

    wall_ms: float
    cpu_ms: float
    gc_ms: float


def _timed_figures(timed: _Timed) -> dict[str, float]:
    return {
        "wall_ms": round(timed.wall_ms, 3),
        "cpu_ms": round(timed.cpu_ms, 3),
        "gc_ms": round(timed.gc_ms, 3),
    }


class _GcClock:
    """Adds up the time the garbage collector runs while entered (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._began = 0.0

    def __enter__(self) -> _GcClock:
        gc.callbacks.append(self._on_gc)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self._began


def _evaluate(
    app: BenchApp,
    recall: Recall,
    dataset: Dataset,
    where: dict[int, _Where],
    last: dict[str, datetime],
    *,
    ks: Sequence[int],
    warmup: int,
    team: TeamRecall | None = None,
    slowest: int = 0,
    profile: Path | None = None,
) -> tuple[dict[str, object], list[SynthesisTurn]]:
    """The recall figures, and each question's packed memory for synthesis to condense. With
    ``slowest``, ``figures["slowest"]`` lists that many of the slowest questions with their
    wall, CPU and garbage-collection times. With ``profile``, cProfile statistics are written
    there: of those slowest questions asked again after the timed pass (with ``slowest``),
    else of every timed question."""
    budget = app.settings.memory.recall_max_tokens
    sessions_of: dict[str, dict[str, str]] = defaultdict(dict)
    for conversation in dataset.conversations:
        for session in conversation.sessions:
            for turn in session.turns:
                sessions_of[conversation.id][turn.id] = session.id
    limit = max(max(ks), 50)

    def asked_at(question: Question) -> datetime:
        if question.time is not None:
            return question.time
        return last.get(question.conversation, datetime.now(UTC)) + timedelta(days=1)

    def run(question: Question) -> tuple[list[RecallItem], _Timed, int, RecalledMemory]:
        root = _scope(question.conversation).root
        now = asked_at(question)
        with _GcClock() as collector:
            cpu = time.process_time()
            began = time.perf_counter()
            items = recall.rank(
                root,
                question.question,
                now=now,
                limit=limit,
                exclude_session=_session_key(question.conversation, "question"),
                # As the orchestrator does (there in a worker thread): one call of the model.
                query_vectors=recall.embed_query(question.question, now=now),
            )
            offered = recall.relevant(items)  # the relevance floor decides what is injected
            if team is not None:  # a known person's turn searches the team's documents too
                offered = [*offered, *team.items(question.question)]
            packed = recall.pack(offered, budget_tokens=budget, query=question.question)
            timed = _Timed(
                (time.perf_counter() - began) * 1000,
                (time.process_time() - cpu) * 1000,
                collector.seconds * 1000,
            )
        return items, timed, estimate_tokens(render_recalled(packed)), packed

    for question in dataset.questions[:warmup]:
        run(question)

    turn_at: dict[int, list[float]] = defaultdict(list)
    shown_at: dict[int, list[int]] = defaultdict(list)
    session_at: dict[int, list[float]] = defaultdict(list)
    injected: list[float] = []
    categories: dict[str, dict[str, dict[int, list[float]]]] = defaultdict(
        lambda: {
            "turn": defaultdict(list),
            "session": defaultdict(list),
            "turn_at_turns": defaultdict(list),
        }
    )
    turns_within: dict[int, list[float]] = defaultdict(list)
    timings: list[_Timed] = []
    tokens: list[int] = []
    synthesis: list[SynthesisTurn] = []
    profiler = cProfile.Profile() if profile is not None and not slowest else None
    for question in dataset.questions:
        if profiler is not None:
            profiler.enable()
        items, timed, spent, recalled = run(question)
        if profiler is not None:
            profiler.disable()
        packed = recalled.items
        timings.append(timed)
        tokens.append(spent)
        synthesis.append(SynthesisTurn(recalled, question.question, asked_at(question)))
        for k in ks:
            shown_at[k].append(len(_turns_of(items[:k], where, shown=True)))
        evidence = set(question.evidence)
        if not evidence:
            continue
        known = sessions_of[question.conversation]
        evidence_sessions = {known[turn] for turn in evidence}
        for budget_turns in TURN_BUDGETS:
            within = _turn_budget(items, where, budget_turns)
            score = _turn_recall(items, evidence, where, within)
            turns_within[budget_turns].append(score)
            categories[question.category]["turn_at_turns"][budget_turns].append(score)
        for k in ks:
            turn_score = _turn_recall(items, evidence, where, k)
            session_score = _session_recall(items, evidence_sessions, question.conversation, k)
            turn_at[k].append(turn_score)
            session_at[k].append(session_score)
            categories[question.category]["turn"][k].append(turn_score)
            categories[question.category]["session"][k].append(session_score)
        injected.append(_turn_recall(packed, evidence, where, len(packed)))
    latencies = [timed.wall_ms for timed in timings]
    cpu = [timed.cpu_ms for timed in timings]
    figures: dict[str, object] = {
        "turn": {str(k): _mean(turn_at[k]) for k in ks},
        "session": {str(k): _mean(session_at[k]) for k in ks},
        "by_category": {
            category: {
                kind: {str(k): _mean(values[k]) for k in sorted(values)}
                for kind, values in table.items()
            }
            | {"questions": len(table["turn"][ks[0]])}
            for category, table in sorted(categories.items())
        },
        # Turn recall of the first items showing at most T turns: rankers compared at the same
        # number of turns (an exchange shows a turn with its neighbours, bm25 one turn an item).
        "turn_at_turns": {str(t): _mean(turns_within[t]) for t in TURN_BUDGETS},
        "injected_turn_recall": _mean(injected),
        # How many turns the first k items show: an exchange is a turn with its neighbours.
        "turns_in_top_k_mean": {str(k): _mean(shown_at[k]) for k in ks},
        "latency_ms": {
            "p50": round(percentile(latencies, 0.50), 3),
            "p99": round(percentile(latencies, 0.99), 3),
            "max": round(max(latencies), 3) if latencies else 0.0,
            "cpu_p50": round(percentile(cpu, 0.50), 3),
            "cpu_p99": round(percentile(cpu, 0.99), 3),
            "cpu_max": round(max(cpu), 3) if cpu else 0.0,
            "gc_total": round(sum(timed.gc_ms for timed in timings), 3),
        },
        "tokens_injected_mean": round(statistics.fmean(tokens), 1) if tokens else 0.0,
        "tokens_injected_max": max(tokens, default=0),
        "questions": len(dataset.questions),
        "questions_with_evidence": len(injected),
    }
    if slowest:
        order = sorted(range(len(timings)), key=lambda i: -timings[i].wall_ms)[:slowest]
        if profile is not None:  # the slowest alone, asked again under the profiler
            profiler = cProfile.Profile()
            again = []
            for i in order:
                profiler.enable()
                again.append(run(dataset.questions[i])[1])
                profiler.disable()
        figures["slowest"] = [
            {
                "question": dataset.questions[i].question,
                "conversation": dataset.questions[i].conversation,
                "category": dataset.questions[i].category,
                **_timed_figures(timings[i]),
                **({"again": _timed_figures(again[n])} if profile is not None else {}),
            }
            for n, i in enumerate(order)
        ]
    if profiler is not None and profile is not None:
        profiler.dump_stats(profile)
    return figures, synthesis
