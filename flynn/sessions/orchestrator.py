"""One conversation: persist, remember, assemble, ask the model, reply, compact; one turn at a time.

An ``Orchestrator`` serves one session key. Turns are serialised by its lock; a compaction that
follows a turn runs in a tracked task after the reply, and the next turn waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
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
from flynn.learning.model_learning import FactLearner
from flynn.learning.own_words import mark_forwarded
from flynn.learning.secrets import redact_secrets
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import (
    Documents,
    Facts,
    Forgetter,
    History,
    MessageRole,
    StoredMessage,
)
from flynn.memory.working import read_working_memory
from flynn.messages import SessionKey
from flynn.persona import Persona, system_block
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    Provider,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from flynn.providers.lifecycle import open_stream
from flynn.recall.recall import Recall, RecalledMemory
from flynn.sessions import commands
from flynn.sessions.compaction import CompactionOutcome, Compactor
from flynn.sessions.learning import BackgroundLearning
from flynn.sessions.personal import PersonalFiles
from flynn.sessions.profile import ProfileCache
from flynn.sessions.prompt import Prompt, append_turn, assemble, build_session_context
from flynn.sessions.result import TurnResult
from flynn.sessions.tool_steps import ToolStep, decode_steps, encode_steps, step_messages
from flynn.tokens import estimate_tokens
from flynn.tools.base import ToolContext, ToolRegistry

log = structlog.get_logger(__name__)

OnDelta = Callable[[str], Awaitable[None]]


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
    max_tool_steps: int = 8


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
    tools: ToolRegistry | None = None
    """What the model may call; ``None`` (or ``tools.enabled: false``) offers none."""
    personal: PersonalFiles | None = None
    """The person's folder, timezone and the personal files their prompt loads."""


def _framed_tokens(message: StoredMessage) -> int:
    """A stored turn's estimated tokens with what frames it in a request."""
    return message.tokens + 4


@dataclass(frozen=True, slots=True)
class ContextUsage:
    messages: int
    tokens: int
    summarised: bool


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
    summary_failures: int = 0  # model summaries failed in a row
    summary_retry_turn: int = 0  # no model summary is tried before this turn (backoff)
    told_shrunk: bool = False  # the person was told their notes were shortened to fit


class _ReplyCut(FlynnError):
    """The model stopped answering after part of its reply was streamed to the person: no
    retry can take that back, so the turn ends with what they saw and a note."""

    def __init__(self, partial: str, error: ProviderError) -> None:
        super().__init__(f"reply cut off after {len(partial)} characters: {error}")
        self.partial = partial
        self.error = error


@dataclass(frozen=True, slots=True)
class _Answer:
    """What the model finally said, and the tool rounds that led there."""

    response: ChatResponse
    steps: tuple[ToolStep, ...]
    text: str
    """What the person is sent: the text of every round, then the final reply."""


class Orchestrator:
    """Serves one session key with one memory scope."""

    def __init__(self, key: SessionKey, scope: MemoryScope, services: SessionServices) -> None:
        self.key = key
        self.scope = scope
        self._services = services
        self.session_id = str(key)
        self._lock = asyncio.Lock()
        self._state = _State()
        self._pending: asyncio.Task[CompactionOutcome | None] | None = None
        self._profile = ProfileCache(services.facts, scope)
        self._answering: int | None = None  # id of the stored message the turn answers
        self._turn_steps: list[ToolStep] = []  # the tool rounds the running turn has done
        self._learning = BackgroundLearning(
            services.learner,
            services.learn_every_turns,
            namespace=scope.facts,
            session=self.session_id,
            channel=key.channel,
            graph_namespace=scope.root,
        )
        self._embedding: set[asyncio.Task[object]] = set()  # background ``MemoryWriter`` work
        self.compaction_error: str | None = None
        """Why the last ``compact_now`` failed (an error's name), for ``/compact`` to say."""

    @property
    def services(self) -> SessionServices:
        return self._services

    @property
    def off_the_record(self) -> bool:
        return self._state.off_the_record

    def set_off_the_record(self, on: bool) -> None:
        """Turns off-the-record on or off; what was said off the record is dropped either way."""
        self._state.off_the_record = on
        self._state.otr_turns = []

    def context_usage(self) -> ContextUsage:
        """What the conversation's context holds now (for ``/status``)."""
        state = self._state
        turns = self._load()
        tokens = estimate_tokens(state.summary or "") + sum(m.tokens for m in turns)
        return ContextUsage(len(turns), tokens, bool(state.summary))

    def clear_conversation(self) -> None:
        """Starts the conversation afresh: the stored turns stay, but no longer load (an empty
        summary marks where it restarts), and the session context is built anew."""
        services = self._services
        turns = self._load()
        if turns:
            services.history.save_summary(
                self.session_id, "", through_id=turns[-1].id, now=services.clock()
            )
        self.rebuild_context()

    def rebuild_context(self) -> None:
        """Drops the session context and the loaded turns, so the next turn reads them anew
        (after a forget, they may quote what was forgotten)."""
        self._services.documents.delete(self.scope.session_context(self.key))
        self._state = _State(off_the_record=self._state.off_the_record)

    async def handle(
        self,
        text: str,
        on_delta: OnDelta | None = None,
        *,
        replayed: bool = False,
        forwarded: bool = False,
    ) -> TurnResult:
        """One message from the person: a ``/command`` or a turn. Never raises except on
        cancellation; failures become an error result and the session keeps working.

        ``replayed``: the message was accepted before a restart that cut its turn off; if
        that turn had already stored it (and run tools), it goes on from there, nothing done
        twice. ``forwarded``: someone else wrote it; it is stored and shown as such."""
        stripped = text.strip()
        if not forwarded and stripped.startswith("/") and len(stripped) > 1:
            name, _, arg = stripped[1:].partition(" ")
            name = name.split("@", 1)[0].casefold()  # Telegram appends @botname in groups
            return await self.command(name, arg.strip())
        return await self.turn(text, on_delta, replayed=replayed, forwarded=forwarded)

    async def turn(
        self,
        text: str,
        on_delta: OnDelta | None = None,
        *,
        replayed: bool = False,
        forwarded: bool = False,
    ) -> TurnResult:
        # Credentials never reach the store or the model; a forward is marked as not theirs.
        text, secrets = redact_secrets(text)
        if forwarded:
            text = mark_forwarded(text)
        async with self._lock:
            await self._await_pending()
            try:
                result = await self._turn(text, on_delta, replayed)
                if secrets:
                    log.info("turn.secrets_removed", count=secrets)
                    note = (
                        "\n\n(I don't keep passwords, keys or card numbers: I removed "
                        + ("it" if secrets == 1 else "them")
                        + " from this message before storing it or passing it on.)"
                    )
                    result = replace(result, text=result.text + note)
                return result
            except FlynnError as exc:
                log.error("turn.failed", error=type(exc).__name__, exc_info=True)
                return TurnResult("Something went wrong on my side; please try again.", "internal")
            except Exception:
                log.exception("turn.crashed")
                return TurnResult("Something went wrong on my side; please try again.", "internal")
            finally:
                self._answering = None
                self._turn_steps = []

    async def command(self, name: str, arg: str = "") -> TurnResult:
        async with self._lock:
            await self._await_pending()
            # A command may forget or reset what background learning is about to write.
            await self._learning.wait()
            try:
                return await commands.run(self, name, arg)
            except Exception:
                log.exception("command.crashed", command=name)
                return TurnResult("That command failed on my side; please try again.", "internal")

    async def wait_idle(self) -> None:
        """Returns once no turn runs and no compaction, background learning or embedding is
        in flight."""
        async with self._lock:
            await self._await_pending()
            await self._learning.wait()
            if self._embedding:
                await asyncio.gather(*self._embedding)  # ``embed_later`` never raises

    async def aclose(self) -> None:
        """Waits for a compaction or learning in flight, so nothing is left half-done."""
        await self.wait_idle()

    # -- the turn ---------------------------------------------------------------------------

    async def _turn(self, text: str, on_delta: OnDelta | None, replayed: bool) -> TurnResult:
        services = self._services
        state = self._state
        now = services.clock()
        turns = self._load()
        if state.session_context is None:
            state.session_context = self._session_context()
        asked: StoredMessage | None = None
        if not state.off_the_record:
            if replayed and turns and turns[-1].role == "user" and turns[-1].content == text:
                # Stored by the turn a restart cut off: answer it, do not store it twice, and
                # go on from the tool rounds it had done (a reminder is not set twice).
                asked = turns[-1]
                self._answering = asked.id
                stored = services.history.tool_steps([asked.id]).get(asked.id)
                self._turn_steps = decode_steps(stored) if stored else []
                state.turns = None  # reloaded without it in the history, as a turn's own
                self._load()
            else:
                asked = self._persist("user", text, now)
                self._keep(asked)
                self._answering = asked.id
        state.turn_count += 1
        state.added_since += estimate_tokens(text)

        budget = services.config.recall_max_tokens
        # The embedding model runs in a worker thread, not on the event loop.
        vectors = await services.recall.query_vectors(text, now=now) if budget > 0 else None
        recalled = services.recall.recall(
            self.scope.root,
            text,
            now=now,
            budget_tokens=budget,
            exclude_session=self.session_id,
            skip_lines=state.session_context.splitlines(),
            query_vectors=vectors,
        )
        compacted = shrunk = False
        prompt = self._prompt(text, recalled, now)
        if self._over_budget(prompt):
            compacted = await self.compact_now() is not None
            prompt = self._prompt(text, recalled, now)
            if self._over_budget(prompt, limit=services.config.context_window):
                # Compacted, it still does not fit the window itself (not only the budget that
                # leaves room to answer): shorter notes, only the last exchange.
                shrunk = await self.compact_now(shrink=True) is not None
                compacted = compacted or shrunk
                prompt = self._prompt(text, recalled, now)

        request = ChatRequest(
            system=prompt.system,
            messages=prompt.messages,
            max_tokens=services.config.max_output_tokens,
            tools=self._tool_specs(),
        )
        # What a refused prompt tries next: a compaction, then shorter notes (DESIGN 7).
        remedies = ["shrink"] if shrunk else ["compact", "shrink"]
        answer: _Answer | None = None
        while answer is None:
            try:
                answer = await self._ask(request, on_delta, now)
            except _ReplyCut as cut:
                return self._cut_reply(cut, text)
            except ContextTooLong as exc:
                outcome = None
                while outcome is None and remedies:
                    remedy = remedies.pop(0)
                    log.info("turn.context_too_long", remedy=remedy)
                    outcome = await self.compact_now(shrink=remedy == "shrink")
                    shrunk = shrunk or (outcome is not None and remedy == "shrink")
                if outcome is None:
                    return self._provider_failure(exc, text)
                compacted = True
                prompt = self._prompt(text, recalled, now)
                request = replace(request, system=prompt.system, messages=prompt.messages)
            except ProviderError as exc:
                return self._provider_failure(exc, text)

        response = answer.response
        state.last_input_tokens = response.usage.input_tokens or None
        state.added_since = estimate_tokens(response.text)
        answered = [*step_messages(self._turn_steps), ChatMessage("assistant", response.text)]
        if state.off_the_record:
            append_turn(state.otr_turns, ChatMessage("user", text))
            for message in answered:
                append_turn(state.otr_turns, message)
        else:
            append_turn(state.history, ChatMessage("user", text))
            for message in answered:
                append_turn(state.history, message)
            self._keep(self._persist("assistant", response.text, services.clock()))
            if asked is not None:
                services.writer.learn(self.scope, asked, now=now, channel=self.key.channel)
            self._learning.counted()
        log.info(
            "turn.completed",
            tokens_in=response.usage.input_tokens,
            tokens_out=response.usage.output_tokens,
            recalled=len(recalled.lines),
            tool_steps=len(self._turn_steps),
        )
        if not state.off_the_record and self._over_budget(None):
            # After the reply, off its path; the next turn (or shutdown) awaits it first.
            self._pending = asyncio.create_task(
                self.compact_now(), name=f"compaction:{self.session_id}"
            )
        elif not state.off_the_record:
            self._learning.start(self._load())
        reply = answer.text
        if shrunk and not state.told_shrunk:
            state.told_shrunk = True  # once a session: the next shrink is no news to them
            log.warning("turn.context_shrunk")
            reply += (
                "\n\n(Our conversation had grown too long for the model, so I shortened my "
                "notes of what came before; recent messages are kept word for word.)"
            )
        return TurnResult(reply, compacted=compacted)

    def _tool_specs(self) -> tuple[ToolSpec, ...]:
        tools = self._services.tools
        if tools is None:
            return ()
        return tools.specs(writes=not self._state.off_the_record)

    def tool_context(self, now: datetime) -> ToolContext:
        """Who this session's tool calls act for: its person, their folder and time."""
        personal = self._services.personal
        root = self.scope.root
        if personal is None:
            zone, name = now.tzinfo or UTC, "UTC"
            folder = Path()
        else:
            zone, name = personal.timezone(root)
            folder = personal.directory(root)
        return ToolContext(
            namespace=root,
            session=self.key,
            person_dir=folder,
            timezone=zone,
            timezone_name=name,
            now=now,
            off_the_record=self._state.off_the_record,
            user=self.scope.user if self.scope.shared else None,
        )

    async def run_tool(self, name: str, arguments: str = "{}") -> ToolResult | None:
        """Runs one tool for this session as the person's own command (``/reminders``);
        None when tools are off."""
        tools = self._services.tools
        if tools is None or tools.get(name) is None:
            return None
        call = ToolCall(f"command-{name}", name, arguments)
        (result,) = await tools.run([call], self.tool_context(self._services.clock()))
        return result

    async def _ask(self, request: ChatRequest, on_delta: OnDelta | None, now: datetime) -> _Answer:
        """Model -> tool calls -> results -> model, up to ``max_tool_steps`` rounds. A tool's
        failure is its result, for the model to read; only provider errors propagate, as
        ``_ReplyCut`` once any of the reply was streamed to the person."""
        tools = self._services.tools
        limit = self._services.config.max_tool_steps
        # Rounds done before (a retry after compaction, a replay after a restart) are not
        # done again: the model is shown them and goes on.
        steps = self._turn_steps
        said: list[str] = [step.text for step in steps if step.text]
        messages = [*request.messages, *step_messages(steps)]
        context: ToolContext | None = None
        while True:
            if said and on_delta is not None:
                await on_delta("\n\n")  # what the next round says starts a new paragraph
            try:
                response = await self._call(replace(request, messages=tuple(messages)), on_delta)
            except _ReplyCut as cut:
                raise _ReplyCut("\n\n".join([*said, cut.partial]), cut.error) from cut.error
            except ProviderError as exc:
                if said and on_delta is not None:
                    raise _ReplyCut("\n\n".join(said), exc) from exc
                raise
            if not response.tool_calls or tools is None or not request.tools:
                break
            if len(steps) >= limit:
                log.warning("turn.tool_steps_exhausted", steps=len(steps))
                stopped = (
                    f"(I stopped after {limit} rounds of tool calls without finishing; "
                    "tell me how to go on.)"
                )
                response = replace(
                    response, text="\n\n".join(t for t in (response.text, stopped) if t)
                )
                if on_delta is not None:
                    await on_delta(stopped)
                break
            if response.text:
                said.append(response.text)
            context = context or self.tool_context(now)
            results = await tools.run(response.tool_calls, context)
            steps.append(ToolStep(response.text, response.tool_calls, results))
            self._keep_steps(steps)
            messages.append(ChatMessage("assistant", response.text, tool_calls=response.tool_calls))
            messages.append(ChatMessage("user", "", tool_results=results))
        if not response.text:
            # Some models end a tool round with no words; the person still gets an answer.
            done = [r.content for step in steps for r in step.results if not r.is_error]
            response = replace(response, text="\n".join(done) or "Done.")
        text = "\n\n".join([*said, response.text])
        return _Answer(replace(response, tool_calls=()), tuple(steps), text)

    def _keep_steps(self, steps: list[ToolStep]) -> None:
        """Stores the turn's tool rounds with the message they answer, as each ends: what a
        tool did stays known to the conversation even if the turn fails after it."""
        if self._answering is not None:
            self._services.history.save_tool_steps(self._answering, encode_steps(steps))

    def _history_after_failure(self, text: str) -> None:
        """The message is stored, with the tool rounds it got: keep both in the context, so
        the next turn sees them too."""
        if not self._state.off_the_record:
            append_turn(self._state.history, ChatMessage("user", text))
            for message in step_messages(self._turn_steps):
                append_turn(self._state.history, message)

    async def _call(self, request: ChatRequest, on_delta: OnDelta | None) -> ChatResponse:
        provider = self._services.chat
        if on_delta is None or not self._services.config.stream:
            return await provider.chat(request)
        final: ChatResponse | None = None
        streamed: list[str] = []
        try:
            async with open_stream(provider, request) as events:
                async for event in events:
                    if isinstance(event, str):
                        if event:
                            streamed.append(event)
                            await on_delta(event)
                    else:
                        final = event
        except ProviderError as exc:
            if streamed:
                raise _ReplyCut("".join(streamed), exc) from exc
            raise
        if final is None:
            raise BadRequest("stream ended without a final response", provider=provider.name)
        return final

    def _cut_reply(self, cut: _ReplyCut, text: str) -> TurnResult:
        """What the person saw, marked as cut off; nothing of it is stored as an answer."""
        log.warning(
            "turn.reply_cut",
            error=type(cut.error).__name__,
            provider=cut.error.provider,
            chars=len(cut.partial),
        )
        self._history_after_failure(text)
        saved = "" if self._state.off_the_record else " Your message is saved."
        note = (
            "(My reply was cut off here: the language model stopped answering. Ask again for "
            "the whole answer." + saved + ")"
        )
        return TurnResult(f"{cut.partial.rstrip()}\n\n{note}", "llm_unavailable")

    def _provider_failure(self, exc: ProviderError, text: str) -> TurnResult:
        log.warning("turn.provider_failed", error=type(exc).__name__, provider=exc.provider)
        self._history_after_failure(text)
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
            state.turns = self._services.history.recent(self.session_id)
            state.turns_tokens = sum(_framed_tokens(message) for message in state.turns)
            state.summary = self._services.history.summary(self.session_id)
            state.history = []
            ids = [m.id for m in state.turns]
            stored_steps = self._services.history.tool_steps(ids) if ids else {}
            for message in state.turns:
                # The message being answered joins the history once it is answered (a reload
                # mid-turn, after a compaction, must not put it in twice).
                if message.id == self._answering:
                    continue
                # Tool rounds follow the message that asked for them (and, as stored before,
                # precede the reply they led to): user, calls, results, reply.
                steps = step_messages(decode_steps(stored_steps.get(message.id, "[]")))
                if message.role == "assistant":
                    for replayed in steps:
                        append_turn(state.history, replayed)
                append_turn(state.history, ChatMessage(message.role, message.content))
                if message.role == "user":
                    for replayed in steps:
                        append_turn(state.history, replayed)
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
            persona=services.persona.render(self._personal_files(now)),
            session_context=state.session_context or "",
            recalled=recalled,
            summary=state.summary,
            turns=history,
            message=text,
        )

    def _personal_files(self, now: datetime) -> dict[str, str] | None:
        personal = self._services.personal
        if personal is None:
            return None
        return personal.prompt_files(self.scope.root, self._services.persona.files, now=now)

    def _over_budget(self, prompt: Prompt | None, *, limit: int | None = None) -> bool:
        """Measured usage (the provider's last prompt tokens plus an estimate of what was added
        since) against the window less its reserve, or ``limit``. The estimate of the whole
        prompt is the floor: some OpenAI-compatible servers report no usage, or too little."""
        config = self._services.config
        if limit is None:
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
            list(self._profile.current().lines),
            working,
            proactive_greeting=services.config.proactive_greeting,
        )
        services.documents.replace(key, context, now=services.clock())
        return context

    def _persist(
        self, role: MessageRole, text: str, now: datetime, tool_steps: str | None = None
    ) -> StoredMessage:
        """Stores a turn (with the tool steps that led to it); its embedding (when on) is
        computed off the event loop."""
        writer = self._services.writer
        stored = writer.message(
            self.scope, self.session_id, role, text, now=now, embed=False, tool_steps=tool_steps
        )
        if writer.embeds:
            self._in_background(writer.embed_later(stored))
        return stored

    def _in_background(self, work: Coroutine[Any, Any, object]) -> None:
        """Runs embedding work in the background (it never raises); ``wait_idle`` awaits it."""
        task = asyncio.create_task(work, name=f"embedding:{self.session_id}")
        self._embedding.add(task)
        task.add_done_callback(self._embedding.discard)

    # -- compaction -------------------------------------------------------------------------

    def _back_off_summaries(self, outcome: CompactionOutcome) -> None:
        """After a failed model summary, the next compactions are extractive for a while, so a
        summarizer that is down costs a call now and then instead of on every turn."""
        state = self._state
        if outcome.used_model:
            state.summary_failures = 0
            state.summary_retry_turn = 0
        elif outcome.summary_error not in (None, "skipped"):
            state.summary_failures += 1
            wait = min(2**state.summary_failures, 32)
            state.summary_retry_turn = state.turn_count + wait
            log.warning("compaction.summary_backoff", error=outcome.summary_error, turns=wait)

    async def _await_pending(self) -> None:
        task, self._pending = self._pending, None
        if task is not None:
            with contextlib.suppress(Exception):
                await task

    async def compact_now(
        self, *, shrink: bool = False, use_model: bool | None = None
    ) -> CompactionOutcome | None:
        """Compacts the session; None when there was nothing to do or it failed (then
        ``compaction_error`` says why). The model summarises unless ``use_model`` is False or,
        when None, its summaries failed lately (backoff: 2, 4 ... 32 turns); ``shrink`` for a
        prompt that does not fit even so (see ``Compactor.compact``)."""
        state = self._state
        if use_model is None:
            use_model = state.turn_count >= state.summary_retry_turn
        self.compaction_error = None
        # Compaction learns from what it summarises; never alongside a background batch.
        await self._learning.wait()
        try:
            outcome = await self._services.compactor.compact(
                self.session_id,
                self.scope,
                extracted_through=self._learning.learnt_through,
                use_model=use_model,
                shrink=shrink,
            )
        except FlynnError as exc:
            log.error("compaction.failed", exc_info=True)
            self.compaction_error = type(exc).__name__
            return None
        if outcome is not None:
            self._learning.learnt(outcome.through_id)
            self._back_off_summaries(outcome)
        # Reload what is left verbatim; the usage anchor no longer describes the prompt.
        self._state.turns = None
        self._state.last_input_tokens = None
        self._state.added_since = 0
        self._load()
        return outcome
