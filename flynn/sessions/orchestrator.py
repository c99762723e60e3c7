"""One conversation: persist, remember, assemble, ask the model, reply, compact; one turn at a time.

An ``Orchestrator`` serves one session key. Turns are serialised by its lock; a compaction that
follows a turn runs in a tracked task after the reply, and the next turn waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog

from flynn.errors import (
    AuthFailed,
    BadRequest,
    ContextTooLong,
    FlynnError,
    ProviderError,
    RateLimited,
)
from flynn.identity import MemoryScope
from flynn.memory.dates import parse_timezone
from flynn.memory.learning import FactLearner
from flynn.memory.recall import Recall, RecalledMemory
from flynn.memory.session_search import render_results, search_sessions
from flynn.memory.store import (
    Documents,
    Fact,
    Facts,
    Forgetter,
    History,
    MessageRole,
    StoredMessage,
)
from flynn.memory.working import read_working_memory
from flynn.memory.writer import MemoryWriter
from flynn.messages import SessionKey
from flynn.persona import Persona, system_block
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, MemoryView, Provider
from flynn.providers.lifecycle import open_stream
from flynn.sessions.compaction import CompactionOutcome, Compactor
from flynn.sessions.prompt import Prompt, append_turn, assemble, build_session_context
from flynn.tokens import estimate_tokens

log = structlog.get_logger(__name__)

OnDelta = Callable[[str], Awaitable[None]]
COMMANDS = ("new", "reset", "status", "compact", "otr", "forget", "search", "help")
SEARCH_LIMIT = 10
_PROFILE_LINES_MAX = 40


@dataclass(frozen=True, slots=True)
class TurnResult:
    """What to send back. ``error_code`` follows the gateway protocol's codes when set."""

    text: str
    error_code: str | None = None
    compacted: bool = False

    @property
    def is_error(self) -> bool:
        return self.error_code is not None


@dataclass(frozen=True, slots=True)
class TurnConfig:
    context_window: int
    reserve_tokens: int
    max_output_tokens: int
    stream: bool
    recall_max_tokens: int
    proactive_greeting: bool
    inject_datetime: bool
    timezone: str | None


@dataclass(frozen=True, slots=True)
class SessionServices:
    """Everything the orchestrators of one process share; built once by ``flynn.app``."""

    documents: Documents
    facts: Facts
    history: History
    chat: Provider
    compactor: Compactor
    recall: Recall
    persona: Persona
    config: TurnConfig
    clock: Callable[[], datetime]
    writer: MemoryWriter
    """Persists turns and what they teach (rules, graph, embeddings)."""
    forgetter: Forgetter
    learner: FactLearner | None = None
    """LLM extraction + reconciliation, run in the background; ``None`` turns it off."""
    learn_every_turns: int = 0
    """Learn after this many of the person's messages (0: only at compaction)."""


def _framed_tokens(message: StoredMessage) -> int:
    """A stored turn's estimated tokens with what frames it in a request."""
    return message.tokens + 4


def fact_line(fact: Fact) -> str:
    if fact.kind == "action" and fact.field:
        return f"- when they say {fact.field!r}: {fact.value}"
    return f"- {fact.field}: {fact.value}" if fact.field else f"- {fact.value}"


@dataclass(frozen=True, slots=True)
class _Profile:
    generation: tuple[int, int]
    lines: tuple[str, ...]
    name: str | None


@dataclass(slots=True)
class _State:
    turns: list[StoredMessage] | None = None
    turns_tokens: int = 0  # what ``turns`` weigh with their framing, kept as they grow
    history: list[ChatMessage] = field(default_factory=list)  # ``turns`` in provider shape
    summary: str | None = None
    session_context: str | None = None
    off_the_record: bool = False
    otr_turns: list[ChatMessage] = field(default_factory=list)
    last_input_tokens: int | None = None
    added_since: int = 0
    turn_count: int = 0


class Orchestrator:
    """Serves one session key with one memory scope."""

    def __init__(self, key: SessionKey, scope: MemoryScope, services: SessionServices) -> None:
        self.key = key
        self.scope = scope
        self._services = services
        self._session = str(key)
        self._lock = asyncio.Lock()
        self._state = _State()
        self._pending: asyncio.Task[CompactionOutcome | None] | None = None
        self._profile: _Profile | None = None
        self._answering: int | None = None  # id of the stored message the turn answers
        # Background LLM learning: at most one task; messages up to ``_learnt_through`` (an id)
        # were learnt from, and ``_unlearnt_turns`` person's messages arrived since.
        self._learning: asyncio.Task[int] | None = None
        self._learnt_through = 0
        self._embedding: set[asyncio.Task[object]] = set()  # background ``MemoryWriter`` work
        self._unlearnt_turns = 0

    @property
    def off_the_record(self) -> bool:
        return self._state.off_the_record

    async def handle(self, text: str, on_delta: OnDelta | None = None) -> TurnResult:
        """One message from the person: a ``/command`` or a turn. Never raises except on
        cancellation; failures become an error result and the session keeps working."""
        stripped = text.strip()
        if stripped.startswith("/") and len(stripped) > 1:
            name, _, arg = stripped[1:].partition(" ")
            name = name.split("@", 1)[0].casefold()  # Telegram appends @botname in groups
            return await self.command(name, arg.strip())
        return await self.turn(text, on_delta)

    async def turn(self, text: str, on_delta: OnDelta | None = None) -> TurnResult:
        async with self._lock:
            await self._await_pending()
            try:
                return await self._turn(text, on_delta)
            except FlynnError as exc:
                log.error("turn.failed", error=type(exc).__name__, exc_info=True)
                return TurnResult("Something went wrong on my side; please try again.", "internal")
            except Exception:
                log.exception("turn.crashed")
                return TurnResult("Something went wrong on my side; please try again.", "internal")
            finally:
                self._answering = None

    async def command(self, name: str, arg: str = "") -> TurnResult:
        async with self._lock:
            await self._await_pending()
            # A command may forget or reset what background learning is about to write.
            await self._await_learning()
            handler = {
                "new": self._cmd_new,
                "reset": self._cmd_reset,
                "status": self._cmd_status,
                "compact": self._cmd_compact,
                "otr": self._cmd_otr,
                "forget": self._cmd_forget,
                "search": self._cmd_search,
                "help": self._cmd_help,
                "start": self._cmd_help,
            }.get(name)
            if handler is None:
                return TurnResult(
                    f"Unknown command /{name}. Commands: "
                    + ", ".join(f"/{c}" for c in COMMANDS)
                    + ".",
                    "bad_request",
                )
            try:
                return await handler(arg)
            except Exception:
                log.exception("command.crashed", command=name)
                return TurnResult("That command failed on my side; please try again.", "internal")

    async def wait_idle(self) -> None:
        """Returns once no turn runs and no compaction, background learning or embedding is
        in flight."""
        async with self._lock:
            await self._await_pending()
            await self._await_learning()
            if self._embedding:
                await asyncio.gather(*self._embedding)  # ``embed_later`` never raises

    async def aclose(self) -> None:
        """Waits for a compaction or learning in flight, so nothing is left half-done."""
        await self.wait_idle()

    # -- the turn ---------------------------------------------------------------------------

    async def _turn(self, text: str, on_delta: OnDelta | None) -> TurnResult:
        services = self._services
        state = self._state
        now = services.clock()
        self._load()
        if state.session_context is None:
            state.session_context = self._session_context()
        asked: StoredMessage | None = None
        if not state.off_the_record:
            asked = self._persist("user", text, now)
            self._keep(asked)
            self._answering = asked.id
        state.turn_count += 1
        state.added_since += estimate_tokens(text)

        budget = services.config.recall_max_tokens
        recalled = services.recall.recall(
            self.scope.root,
            text,
            now=now,
            budget_tokens=budget,
            exclude_session=self._session,
            skip_lines=state.session_context.splitlines(),
            # The embedding model runs in a worker thread, not on the event loop.
            query_vector=await services.recall.query_vector(text) if budget > 0 else None,
        )
        compacted = False
        prompt = self._prompt(text, recalled, now)
        if self._over_budget(prompt):
            compacted = await self._compact_now() is not None
            prompt = self._prompt(text, recalled, now)

        request = ChatRequest(
            system=prompt.system,
            messages=prompt.messages,
            max_tokens=services.config.max_output_tokens,
            memory=self._memory_view(recalled, now),
        )
        try:
            response = await self._call(request, on_delta)
        except ContextTooLong:
            log.info("turn.context_too_long")
            compacted = await self._compact_now() is not None
            prompt = self._prompt(text, recalled, now)
            request = ChatRequest(
                system=prompt.system,
                messages=prompt.messages,
                max_tokens=services.config.max_output_tokens,
                memory=request.memory,
            )
            try:
                response = await self._call(request, on_delta)
            except ProviderError as exc:
                return self._provider_failure(exc, text)
        except ProviderError as exc:
            return self._provider_failure(exc, text)

        state.last_input_tokens = response.usage.input_tokens or None
        state.added_since = estimate_tokens(response.text)
        if state.off_the_record:
            append_turn(state.otr_turns, ChatMessage("user", text))
            append_turn(state.otr_turns, ChatMessage("assistant", response.text))
        else:
            append_turn(state.history, ChatMessage("user", text))
            append_turn(state.history, ChatMessage("assistant", response.text))
            self._keep(self._persist("assistant", response.text, services.clock()))
            if asked is not None:
                services.writer.learn(self.scope, asked, now=now, channel=self.key.channel)
            self._unlearnt_turns += 1
        log.info(
            "turn.completed",
            tokens_in=response.usage.input_tokens,
            tokens_out=response.usage.output_tokens,
            recalled=len(recalled.lines),
        )
        if not state.off_the_record and self._over_budget(None):
            # After the reply, off its path; the next turn (or shutdown) awaits it first.
            self._pending = asyncio.create_task(
                self._compact_now(), name=f"compaction:{self._session}"
            )
        elif not state.off_the_record:
            self._start_learning()
        return TurnResult(response.text, compacted=compacted)

    async def _call(self, request: ChatRequest, on_delta: OnDelta | None) -> ChatResponse:
        provider = self._services.chat
        if on_delta is None or not self._services.config.stream:
            return await provider.chat(request)
        final: ChatResponse | None = None
        async with open_stream(provider, request) as events:
            async for event in events:
                if isinstance(event, str):
                    if event:
                        await on_delta(event)
                else:
                    final = event
        if final is None:
            raise BadRequest("stream ended without a final response", provider=provider.name)
        return final

    def _provider_failure(self, exc: ProviderError, text: str) -> TurnResult:
        log.warning("turn.provider_failed", error=type(exc).__name__, provider=exc.provider)
        if not self._state.off_the_record:
            # The message is stored; keep it in the context so the next turn sees it too.
            append_turn(self._state.history, ChatMessage("user", text))
        saved = "" if self._state.off_the_record else " Your message is saved."
        if isinstance(exc, RateLimited):
            return TurnResult(
                "The language model is rate-limiting me right now; please try again in a minute."
                + saved,
                "rate_limited",
            )
        if isinstance(exc, AuthFailed):
            return TurnResult(
                "The language model refused my API key, so I can't answer. Check the key in the "
                "configuration (or the ANTHROPIC_API_KEY / OPENAI_API_KEY variable)." + saved,
                "llm_unavailable",
            )
        if isinstance(exc, ContextTooLong | BadRequest):
            return TurnResult(
                "The language model refused this request (it may be too long)." + saved,
                "bad_request",
            )
        return TurnResult(
            "I couldn't reach the language model just now; please try again shortly." + saved,
            "llm_unavailable",
        )

    def _load(self) -> list[StoredMessage]:
        state = self._state
        if state.turns is None:
            state.turns = self._services.history.recent(self._session)
            state.turns_tokens = sum(_framed_tokens(message) for message in state.turns)
            state.summary = self._services.history.summary(self._session)
            state.history = []
            for message in state.turns:
                # The message being answered joins the history once it is answered (a reload
                # mid-turn, after a compaction, must not put it in twice).
                if message.id != self._answering:
                    append_turn(state.history, ChatMessage(message.role, message.content))
        return state.turns

    def _keep(self, message: StoredMessage) -> None:
        """Appends a just stored ``message`` to the loaded turns (reloaded if a compaction
        dropped them)."""
        self._load().append(message)
        self._state.turns_tokens += _framed_tokens(message)

    def _prompt(self, text: str, recalled: RecalledMemory, now: datetime) -> Prompt:
        services = self._services
        state = self._state
        self._load()
        history: list[ChatMessage] = state.history
        if state.off_the_record and state.otr_turns:
            history = list(history)
            for turn in state.otr_turns:
                append_turn(history, turn)
        return assemble(
            system_block=system_block(
                now,
                timezone=services.config.timezone,
                inject_datetime=services.config.inject_datetime,
                off_the_record=state.off_the_record,
            ),
            persona=services.persona.render(),
            session_context=state.session_context or "",
            recalled=recalled,
            summary=state.summary,
            turns=history,
            message=text,
        )

    def _over_budget(self, prompt: Prompt | None) -> bool:
        """Measured usage (the provider's last prompt tokens plus an estimate of what was added
        since) against the window. The estimate of the whole prompt is the floor: some
        OpenAI-compatible servers report no usage, or too little."""
        config = self._services.config
        limit = config.context_window - config.reserve_tokens
        state = self._state
        # Stored turns carry their token estimate, summed as they were loaded and added.
        self._load()
        estimated = state.turns_tokens + sum(
            estimate_tokens(m.content) + 4 for m in state.otr_turns
        )
        if prompt is not None:
            estimated += estimate_tokens(prompt.system)
        else:
            estimated += estimate_tokens(state.summary or "")
        measured = 0
        if state.last_input_tokens is not None:
            measured = state.last_input_tokens + state.added_since
        return max(measured, estimated) > limit

    def _session_context(self) -> str:
        """Built once per session key and kept, so a second orchestrator for the same key (after
        eviction or a restart) reuses it rather than re-injecting; ``reset`` clears it."""
        if not self.scope.shared:
            return ""
        services = self._services
        key = self.scope.session_context(self.key)
        stored = services.documents.read(key)
        if stored is not None:
            return stored.content
        working = read_working_memory(services.documents, self.scope.working, now=services.clock())
        context = build_session_context(
            self._profile_lines(),
            working,
            proactive_greeting=services.config.proactive_greeting,
        )
        services.documents.replace(key, context, now=services.clock())
        return context

    def _current_profile(self) -> _Profile:
        """Profile and pattern lines, re-read only when some fact changed (here or elsewhere)."""
        facts = self._services.facts
        generation = facts.generation()
        if self._profile is None or self._profile.generation != generation:
            rows = facts.active(self.scope.profile) + facts.active(self.scope.patterns)
            names = [
                f.value for f in rows if f.field == "name" and f.namespace == self.scope.profile
            ]
            self._profile = _Profile(
                generation,
                tuple(fact_line(fact) for fact in rows[:_PROFILE_LINES_MAX]),
                names[0] if names else None,
            )
        return self._profile

    def _profile_lines(self) -> list[str]:
        return list(self._current_profile().lines)

    def _memory_view(self, recalled: RecalledMemory, now: datetime) -> MemoryView:
        profile = self._current_profile()
        working = read_working_memory(self._services.documents, self.scope.working, now=now)
        return MemoryView(
            user_name=profile.name,
            facts=profile.lines,
            working_memory=working.content if working is not None else None,
            recalled=recalled.lines,
        )

    def _persist(self, role: MessageRole, text: str, now: datetime) -> StoredMessage:
        """Stores a turn; its embedding (when on) is computed off the event loop."""
        writer = self._services.writer
        stored = writer.message(self.scope, self._session, role, text, now=now, embed=False)
        if writer.embeds:
            self._embed(writer.embed_later(stored))
        return stored

    def _embed(self, work: Coroutine[Any, Any, object]) -> None:
        """Runs embedding work in the background (it never raises); ``wait_idle`` awaits it."""
        task = asyncio.create_task(work, name=f"embedding:{self._session}")
        self._embedding.add(task)
        task.add_done_callback(self._embedding.discard)

    # -- compaction -------------------------------------------------------------------------

    async def _await_pending(self) -> None:
        task, self._pending = self._pending, None
        if task is not None:
            with contextlib.suppress(Exception):
                await task

    async def _compact_now(self) -> CompactionOutcome | None:
        # Compaction learns from what it summarises; never alongside a background batch.
        await self._await_learning()
        try:
            outcome = await self._services.compactor.compact(
                self._session, self.scope, extracted_through=self._learnt_through
            )
        except FlynnError:
            log.error("compaction.failed", exc_info=True)
            return None
        if outcome is not None:
            self._learnt_through = max(self._learnt_through, outcome.through_id)
        # Reload what is left verbatim; the usage anchor no longer describes the prompt.
        self._state.turns = None
        self._state.last_input_tokens = None
        self._state.added_since = 0
        self._load()
        return outcome

    # -- background learning ----------------------------------------------------------------

    def _start_learning(self) -> None:
        """Starts LLM learning from the turns not yet learnt from, once enough arrived; never a
        second batch while one runs (the next turn tries again, with a bigger batch)."""
        services = self._services
        every = services.learn_every_turns
        if services.learner is None or every <= 0 or self._unlearnt_turns < every:
            return
        if self._learning is not None and not self._learning.done():
            return
        batch = [message for message in self._load() if message.id > self._learnt_through]
        if not batch:
            return
        self._unlearnt_turns = 0
        self._learning = asyncio.create_task(
            self._learn(services.learner, batch), name=f"learning:{self._session}"
        )

    async def _learn(self, learner: FactLearner, batch: list[StoredMessage]) -> int:
        """One batch; a task boundary, so failures are logged here and never raised. On a
        provider failure the batch stays unlearnt and the next one includes it."""
        try:
            changed = await learner.learn(
                batch, self.scope.facts, session=self._session, channel=self.key.channel
            )
        except ProviderError as exc:
            log.info("learning.skipped", error=type(exc).__name__)
            return 0
        except Exception:
            log.exception("learning.crashed")
            return 0
        self._learnt_through = max(self._learnt_through, batch[-1].id)
        log.info("learning.completed", messages=len(batch), facts=changed)
        return changed

    async def _await_learning(self) -> None:
        task, self._learning = self._learning, None
        if task is not None:
            await task  # ``_learn`` never raises except on cancellation

    # -- commands ---------------------------------------------------------------------------

    async def _cmd_help(self, _: str) -> TurnResult:
        return TurnResult(
            "I'm Flynn, your assistant. I remember what you tell me across our conversations.\n"
            "/new – start a fresh conversation (what we were doing is kept as working memory)\n"
            "/reset – clear this conversation without summarising it\n"
            "/status – what I know about this session\n"
            "/compact – summarise the conversation now\n"
            "/otr – toggle off-the-record: nothing is stored while it is on\n"
            "/forget – delete this conversation's messages for good; /forget FIELD deletes a fact\n"
            "/search WORDS – find what we said before, grouped by day"
        )

    async def _cmd_new(self, _: str) -> TurnResult:
        outcome = await self._compact_all()
        self._clear_conversation()
        note = " What we were doing is kept in working memory." if outcome else ""
        return TurnResult("Started a new conversation." + note)

    async def _cmd_reset(self, _: str) -> TurnResult:
        self._clear_conversation()
        return TurnResult("Conversation reset. Stored facts about you are kept.")

    async def _compact_all(self) -> CompactionOutcome | None:
        if self._state.off_the_record:
            return None
        return await self._compact_now()

    def _clear_conversation(self) -> None:
        services = self._services
        turns = self._load()
        if turns:
            services.history.save_summary(
                self._session, "", through_id=turns[-1].id, now=services.clock()
            )
        services.documents.delete(self.scope.session_context(self.key))
        self._state = _State(off_the_record=self._state.off_the_record)

    async def _cmd_status(self, _: str) -> TurnResult:
        services = self._services
        state = self._state
        turns = self._load()
        working = read_working_memory(services.documents, self.scope.working, now=services.clock())
        tokens = estimate_tokens(state.summary or "") + sum(m.tokens for m in turns)
        lines = [
            f"Session: {self._session}",
            f"Memory: {self.scope.root}"
            + (" (shared across channels)" if self.scope.shared else ""),
            f"Model: {services.chat.name}",
            f"Messages in context: {len(turns)} (~{tokens} tokens of "
            f"{services.config.context_window - services.config.reserve_tokens} before compaction)",
            f"Summary of earlier turns: {'yes' if state.summary else 'no'}",
            "Off the record: " + ("on" if state.off_the_record else "off"),
        ]
        if working is not None:
            lines.append(
                f"Working memory: updated {working.updated_at:%Y-%m-%d %H:%M} UTC, "
                f"expires {working.expires_at:%Y-%m-%d}"
            )
        return TurnResult("\n".join(lines))

    async def _cmd_compact(self, _: str) -> TurnResult:
        if self._state.off_the_record:
            return TurnResult("Nothing to compact while off the record.")
        outcome = await self._compact_now()
        if outcome is None:
            return TurnResult("Nothing to compact yet.")
        how = "" if outcome.used_model else " (the model was unavailable, so I kept key excerpts)"
        return TurnResult(
            f"Compacted {outcome.summarized} messages into a summary; kept the last "
            f"{outcome.kept} verbatim (~{outcome.tokens_before} → ~{outcome.tokens_after} tokens)."
            + how,
            compacted=True,
        )

    async def _cmd_search(self, arg: str) -> TurnResult:
        if not arg:
            return TurnResult("Usage: /search WORDS – finds what we said before, grouped by day.")
        services = self._services
        # Days as the person lives them: the configured zone, else the machine's (DESIGN 10).
        name = services.config.timezone
        zone = parse_timezone(name) if name else services.clock().astimezone().tzinfo
        days = search_sessions(
            services.history, self.scope.root, arg, limit=SEARCH_LIMIT, timezone=zone
        )
        return TurnResult(render_results(days, arg))

    async def _cmd_otr(self, arg: str) -> TurnResult:
        wanted = {"on": True, "off": False}.get(arg.casefold(), not self._state.off_the_record)
        self._state.off_the_record = wanted
        self._state.otr_turns = []
        if wanted:
            return TurnResult(
                "Off the record: nothing from here on is stored or remembered. Send /otr to end it."
            )
        return TurnResult("Back on the record.")

    async def _cmd_forget(self, arg: str) -> TurnResult:
        services = self._services
        if arg:
            field_name = "_".join(arg.casefold().split())
            counts = services.forgetter.forget_field(self.scope.root, field_name)
            if not counts.get("facts"):
                return TurnResult(f"I had nothing stored under {field_name!r}.")
            # The session context and the loaded turns may quote the value: rebuild them.
            services.documents.delete(self.scope.session_context(self.key))
            self._state = _State(off_the_record=self._state.off_the_record)
            if services.writer.embeds and counts.get("embeddings"):
                # Redacted messages (and those after them) lost their vectors: embed them anew.
                self._embed(services.writer.embed_missing(self.scope.root))
            redacted = sum(n for kind, n in counts.items() if kind not in ("facts", "embeddings"))
            return TurnResult(
                f"Forgotten: {field_name} ({counts['facts']} stored facts deleted"
                + (f", {redacted} mentions redacted" if redacted else "")
                + ")."
            )
        removed = services.history.forget_session(self._session)
        services.documents.delete(self.scope.session_context(self.key))
        self._state = _State(off_the_record=self._state.off_the_record)
        return TurnResult(
            f"Deleted this conversation ({removed} messages). Facts you told me are kept; "
            "use /forget FIELD (e.g. /forget name) to remove one."
        )
