"""One conversation: persist, remember, assemble, ask the model, reply, compact; one turn at a time.

An ``Orchestrator`` serves one session key. Turns are serialised by its lock; a compaction that
follows a turn runs in a tracked task after the reply, and the next turn waits for it. A turn is
prepared (``sessions.preparation``), asked (``sessions.tool_loop``), then kept.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import structlog

from flynn.attachments import TurnFiles, with_files
from flynn.errors import ContextTooLong, FlynnError, ProviderError
from flynn.identity import MemoryScope
from flynn.learning.own_words import mark_forwarded
from flynn.learning.secrets import redact_secrets
from flynn.memory.store import MessageRole, StoredMessage
from flynn.messages import Attachment, CommandCall, SessionKey
from flynn.persona import files_for_tier
from flynn.providers.base import ChatMessage, ChatRequest, ToolCall, ToolResult, ToolSpec
from flynn.providers.offline import OFFLINE
from flynn.recall.recall import RecalledMemory
from flynn.sessions import commands
from flynn.sessions.compaction import CompactionOutcome
from flynn.sessions.conversation import ContextUsage, Conversation, SessionStart
from flynn.sessions.failures import cut_reply, provider_failure
from flynn.sessions.learning import BackgroundLearning
from flynn.sessions.preparation import TurnPreparation
from flynn.sessions.profile import ProfileCache
from flynn.sessions.result import TurnResult
from flynn.sessions.services import SessionServices
from flynn.sessions.tool_loop import Answer, OnDelta, ReplyCut, ToolLoop
from flynn.sessions.tool_steps import ToolStep, decode_steps, encode_steps, step_messages
from flynn.tokens import estimate_tokens
from flynn.tools.base import ToolContext

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class _Prepared:
    """A turn ready to be asked: its message, what was recalled for it, and the request (which
    a refused prompt's compaction replaces)."""

    text: str
    now: datetime
    asked: StoredMessage | None
    """The person's message as stored (None off the record)."""
    recalled: RecalledMemory
    request: ChatRequest
    compacted: bool
    shrunk: bool
    files: TurnFiles | None = None
    """The pictures and text files that came with the message, for this request only."""


async def _nobody_else(orchestrator: Orchestrator) -> None:
    pass


class Orchestrator:
    """Serves one session key with one memory scope.

    ``on_forgotten`` is called once a command that forgot something of the scope's root is done
    (outside the session's lock): the person's other sessions drop what they loaded
    (``SessionRegistry``); this one rebuilt its own already."""

    def __init__(
        self,
        key: SessionKey,
        scope: MemoryScope,
        services: SessionServices,
        *,
        on_forgotten: Callable[[Orchestrator], Awaitable[None]] = _nobody_else,
    ) -> None:
        self.key = key
        self.scope = scope
        self._services = services
        self._on_forgotten = on_forgotten
        self._forgot = False  # a command forgot something of the root: tell the others after it
        self.session_id = str(key)
        self._lock = asyncio.Lock()
        self._conversation = Conversation(services.memory.history, self.session_id)
        self._start_reason = "its first message"  # why the next session context is built
        self.started: SessionStart | None = None
        """When this session last started, and why (``/status`` says it)."""
        self._pending: asyncio.Task[CompactionOutcome | None] | None = None
        self._profile = ProfileCache(services.memory.facts, scope)
        self._preparation = TurnPreparation(key, scope, services, self._profile)
        self._tool_loop = ToolLoop(
            services.model.chat,
            services.person.tools,
            stream=services.config.stream,
            max_steps=services.config.max_tool_steps,
            turn_timeout=services.config.turn_timeout_seconds,
        )
        self._turn_steps: list[ToolStep] = []  # the tool rounds the running turn has done
        self._learning = BackgroundLearning(
            services.learning.learner,
            services.learning.every_turns,
            root=scope.root,
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
        return self._conversation.off_the_record

    def set_off_the_record(self, on: bool) -> None:
        """Turns off-the-record on or off; what was said off the record is dropped either way."""
        self._conversation.off_the_record = on
        self._conversation.otr_turns = []

    @property
    def tier(self) -> int:
        """The context tier this session's prompts load: its own choice, else ``persona.tier``."""
        chosen = self._preparation.tier
        return self._services.person.persona.tier if chosen is None else chosen

    @property
    def chosen_tier(self) -> int | None:
        """The tier chosen with ``/tier`` for this session, if one was."""
        return self._preparation.tier

    def choose_tier(self, tier: int | None) -> None:
        """Loads ``tier``'s persona files from the next turn until the session restarts
        (``/new``, ``/reset``, a long pause, a daemon restart); ``None`` goes back to
        ``persona.tier``. ``ValueError`` outside 1..4; the cap (``persona.max_tier``) is the
        command's to check."""
        if tier is not None:
            files_for_tier(tier)
        self._preparation.tier = tier

    def context_usage(self) -> ContextUsage:
        """What the conversation's context holds now (for ``/status``)."""
        return self._conversation.usage()

    def clear_conversation(self, reason: str = "/new") -> None:
        """Starts the conversation afresh: the stored turns stay, but no longer load (an empty
        summary marks where it restarts), and the session context is built anew."""
        memory = self._services.memory
        turns = self._conversation.turns()
        if turns:
            memory.history.save_summary(
                self.session_id, "", through_id=turns[-1].id, now=self._services.clock()
            )
        self.rebuild_context(reason)

    def rebuild_context(self, reason: str | None = None) -> None:
        """Drops the session context and the loaded turns, so the next turn reads them anew
        (after a forget, they may quote what was forgotten). With a ``reason``, the next turn
        starts the session afresh for it (``/status`` says so), at ``persona.tier``."""
        self._services.memory.documents.delete(self.scope.session_context(self.key))
        self._conversation.restart()
        if reason is not None:
            self._start_reason = reason
            self._preparation.tier = None

    async def handle(
        self,
        message: str | CommandCall,
        on_delta: OnDelta | None = None,
        *,
        replayed: bool = False,
        forwarded: bool = False,
        attachments: tuple[Attachment, ...] = (),
    ) -> TurnResult:
        """One message from the person: a command (parsed by its channel) or a turn's text,
        taken as it is, with any pictures and files (``attachments``: kept, shown to the model
        when it sees, described in the stored turn). Never raises except on cancellation;
        failures become an error result and the session keeps working.

        ``replayed``: the message was accepted before a restart that cut its turn off; if
        that turn had already stored it (and run tools), it goes on from there, nothing done
        twice. ``forwarded``: someone else wrote it; it is stored and shown as such."""
        if isinstance(message, CommandCall) and not attachments:
            return await self.command(message.name, message.arg)
        text = message if isinstance(message, str) else f"/{message.name} {message.arg}".strip()
        return await self.turn(
            text, on_delta, replayed=replayed, forwarded=forwarded, attachments=attachments
        )

    async def turn(
        self,
        text: str,
        on_delta: OnDelta | None = None,
        *,
        replayed: bool = False,
        forwarded: bool = False,
        attachments: tuple[Attachment, ...] = (),
    ) -> TurnResult:
        # Credentials never reach the store or the model; a forward is marked as not theirs.
        text, secrets = redact_secrets(text)
        if forwarded:
            text = mark_forwarded(text)
        async with self._lock:
            with self._services.turns.running():
                await self._await_pending()
                try:
                    files = self._take_files(attachments, text)
                    if files is not None and not files.has_content:
                        # Nothing taken and nothing said: no turn, only why.
                        return TurnResult("\n\n".join(files.notes))
                    if files is not None:
                        text = files.described
                    result = await self._turn(text, on_delta, replayed, files)
                    if files is not None and files.notes:
                        result = replace(
                            result, text=result.text + "\n\n(" + " ".join(files.notes) + ")"
                        )
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
                    return TurnResult(
                        "Something went wrong on my side; please try again.", "internal"
                    )
                except Exception:
                    log.exception("turn.crashed")
                    return TurnResult(
                        "Something went wrong on my side; please try again.", "internal"
                    )
                finally:
                    self._conversation.answering = None
                    self._turn_steps = []

    async def command(self, name: str, arg: str = "") -> TurnResult:
        async with self._lock:
            await self._await_pending()
            # A command may forget or reset what background learning is about to write.
            await self._learning.wait()
            try:
                result = await commands.run(self, name, arg)
            except Exception:
                log.exception("command.crashed", command=name)
                result = TurnResult("That command failed on my side; please try again.", "internal")
        if self._forgot:
            self._forgot = False
            # Outside this session's lock: the other sessions' wait for their turns in flight
            # must neither hold this one up nor wait on it (two /forget at once).
            try:
                await self._on_forgotten(self)
            except Exception:  # the command is done; a session not told keeps what it loaded
                log.exception("command.forgotten_not_told", command=name)
        return result

    def forgot(self) -> None:
        """Something of the scope's root was forgotten by the running command: once it is
        done, the person's other sessions drop what they loaded (``on_forgotten``)."""
        self._forgot = True

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

    # -- the turn: prepare, ask, after -------------------------------------------------------

    def _take_files(self, attachments: tuple[Attachment, ...], caption: str) -> TurnFiles | None:
        """What the message's attachments add to the turn (None without any): kept in the
        person's folder unless off the record, or refused with a reason."""
        if not attachments:
            return None
        person = self._services.person
        if person.file_store is None or person.files is None:
            return TurnFiles(caption, notes=("I can't take pictures or files here.",))
        folder = None if self.off_the_record else person.files.directory(self.scope.root)
        files = person.file_store.take(
            folder, attachments, caption, sees=self._services.config.vision
        )
        log.info(
            "turn.files",
            kept=len(files.kept) if folder is not None else 0,
            shown=len(files.images),
            refused=len(attachments) - len(files.kept),
        )
        return files

    async def _turn(
        self, text: str, on_delta: OnDelta | None, replayed: bool, files: TurnFiles | None = None
    ) -> TurnResult:
        prepared = await self._prepare(text, replayed, files)
        answer = await self._ask(prepared, on_delta)
        if isinstance(answer, TurnResult):
            return answer
        return self._after(prepared, answer)

    async def _prepare(self, text: str, replayed: bool, files: TurnFiles | None) -> _Prepared:
        """Stores the message (or finds it stored by a turn a restart cut off), recalls memory
        for it and assembles the prompt, compacting first when it would not fit."""
        conversation = self._conversation
        now = self._services.clock()
        # The question's embedding starts now, beside the rest of the preparation: ``text`` is
        # final here (the credential gate and the files have had it; it is what is stored).
        early = self._preparation.embed_early(text, now)
        turns = conversation.turns()
        idle = timedelta(hours=self._services.config.idle_restart_hours)
        if turns and now - turns[-1].created_at > idle:
            # A long pause starts the session afresh (a Telegram chat is one for good, but
            # gets who they are and what was happening anew each morning).
            hours = (now - turns[-1].created_at).total_seconds() / 3600
            self.rebuild_context(f"{hours:.0f} hours without messages")
            turns = conversation.turns()
        if conversation.session_context is None:
            conversation.session_context = self._preparation.session_context()
            self.started = SessionStart(now, self._start_reason)
        asked: StoredMessage | None = None
        if not conversation.off_the_record:
            if replayed and turns and turns[-1].role == "user" and turns[-1].content == text:
                # Stored by the turn a restart cut off: answer it, do not store it twice, and
                # go on from the tool rounds it had done (a reminder is not set twice).
                asked = turns[-1]
                conversation.answering = asked.id
                stored = self._services.memory.history.tool_steps([asked.id]).get(asked.id)
                self._turn_steps = decode_steps(stored) if stored else []
                conversation.unload()  # reloaded without it in the history, as a turn's own
                conversation.turns()
            else:
                asked = self._persist("user", text, now)
                conversation.keep(asked)
                conversation.answering = asked.id
        conversation.turn_count += 1
        conversation.added_since += estimate_tokens(text)

        recalled = await self._preparation.recall(
            text, now, skip_lines=conversation.session_context.splitlines(), query_vectors=early
        )
        compacted = shrunk = False
        prompt = self._preparation.prompt(conversation, text, recalled, now)
        if self._over_budget(prompt.system):
            compacted = await self.compact_now() is not None
            prompt = self._preparation.prompt(conversation, text, recalled, now)
            if self._over_budget(prompt.system, limit=self._services.config.context_window):
                # Compacted, it still does not fit the window itself (not only the budget that
                # leaves room to answer): shorter notes, only the last exchange.
                shrunk = await self.compact_now(shrink=True) is not None
                compacted = compacted or shrunk
                prompt = self._preparation.prompt(conversation, text, recalled, now)
        request = ChatRequest(
            system=prompt.system,
            messages=with_files(prompt.messages, files) if files else prompt.messages,
            max_tokens=self._services.config.max_output_tokens,
            tools=self._tool_specs(),
        )
        return _Prepared(text, now, asked, recalled, request, compacted, shrunk, files)

    async def _ask(self, prepared: _Prepared, on_delta: OnDelta | None) -> Answer | TurnResult:
        """The model's answer, tool rounds and all; a refused prompt is compacted, then
        shortened, and asked again. A failure becomes the result to send."""
        remedies = ["shrink"] if prepared.shrunk else ["compact", "shrink"]
        deadline = self._tool_loop.deadline()  # one budget for the turn, remedies and all
        while True:
            try:
                return await self._tool_loop.ask(
                    prepared.request,
                    on_delta,
                    steps=self._turn_steps,
                    context=lambda: self.tool_context(prepared.now),
                    keep=self._keep_steps,
                    deadline=deadline,
                )
            except ReplyCut as cut:
                self._history_after_failure(prepared.text)
                return cut_reply(cut, saved=not self.off_the_record)
            except ContextTooLong as exc:
                outcome = None
                while outcome is None and remedies:
                    remedy = remedies.pop(0)
                    log.info("turn.context_too_long", remedy=remedy)
                    outcome = await self.compact_now(shrink=remedy == "shrink")
                    if outcome is not None and remedy == "shrink":
                        prepared.shrunk = True
                if outcome is None:
                    self._history_after_failure(prepared.text)
                    return provider_failure(exc, saved=not self.off_the_record)
                prepared.compacted = True
                prompt = self._preparation.prompt(
                    self._conversation, prepared.text, prepared.recalled, prepared.now
                )
                messages = prompt.messages
                if prepared.files is not None:
                    messages = with_files(messages, prepared.files)
                prepared.request = replace(
                    prepared.request, system=prompt.system, messages=messages
                )
            except ProviderError as exc:
                self._history_after_failure(prepared.text)
                return provider_failure(exc, saved=not self.off_the_record)

    def _after(self, prepared: _Prepared, answer: Answer) -> TurnResult:
        """Keeps the exchange (stored unless off the record), learns from it, and starts a
        compaction off the reply's path when the context has grown past its budget."""
        conversation = self._conversation
        response = answer.response
        conversation.last_input_tokens = response.usage.input_tokens or None
        conversation.added_since = estimate_tokens(response.text)
        conversation.add(
            [
                ChatMessage("user", prepared.text),
                *step_messages(self._turn_steps),
                ChatMessage("assistant", response.text),
            ]
        )
        if not conversation.off_the_record:
            conversation.keep(
                self._persist(
                    "assistant",
                    response.text,
                    self._services.clock(),
                    offline=response.provider == OFFLINE,
                )
            )
            if prepared.asked is not None:
                self._services.learning.writer.learn(
                    self.scope, prepared.asked, now=prepared.now, channel=self.key.channel
                )
            self._learning.counted()
        log.info(
            "turn.completed",
            tokens_in=response.usage.input_tokens,
            tokens_out=response.usage.output_tokens,
            recalled=len(prepared.recalled.lines),
            tool_steps=len(self._turn_steps),
        )
        if not conversation.off_the_record and self._over_budget(None):
            # After the reply, off its path; the next turn (or shutdown) awaits it first.
            self._pending = asyncio.create_task(
                self.compact_now(), name=f"compaction:{self.session_id}"
            )
        elif not conversation.off_the_record:
            self._learning.start(conversation.turns())
        reply = answer.text
        if prepared.shrunk and not conversation.told_shrunk:
            conversation.told_shrunk = True  # once a session: the next shrink is no news to them
            log.warning("turn.context_shrunk")
            reply += (
                "\n\n(Our conversation had grown too long for the model, so I shortened my "
                "notes of what came before; recent messages are kept word for word.)"
            )
        return TurnResult(reply, compacted=prepared.compacted)

    def _tool_specs(self) -> tuple[ToolSpec, ...]:
        tools = self._services.person.tools
        if tools is None:
            return ()
        user = self.scope.user if self.scope.shared else None
        return tools.specs(writes=not self.off_the_record, user=user)

    def tool_context(self, now: datetime) -> ToolContext:
        """Who this session's tool calls act for: its person, their folder and time."""
        files = self._services.person.files
        root = self.scope.root
        if files is None:
            zone, name = now.tzinfo or UTC, "UTC"
            folder = Path()
        else:
            zone, name = files.timezone(root)
            folder = files.directory(root)
        return ToolContext(
            namespace=root,
            session=self.key,
            person_dir=folder,
            timezone=zone,
            timezone_name=name,
            now=now,
            off_the_record=self.off_the_record,
            user=self.scope.user if self.scope.shared else None,
            files=None if files is None else files.files,
        )

    async def run_tool(self, name: str, arguments: str = "{}") -> ToolResult | None:
        """Runs one tool for this session as the person's own command (``/reminders``);
        None when tools are off."""
        tools = self._services.person.tools
        if tools is None or tools.get(name) is None:
            return None
        call = ToolCall(f"command-{name}", name, arguments)
        (result,) = await tools.run([call], self.tool_context(self._services.clock()))
        return result

    def _keep_steps(self, steps: list[ToolStep]) -> None:
        """Stores the turn's tool rounds with the message they answer, as each ends: what a
        tool did stays known to the conversation even if the turn fails after it."""
        answering = self._conversation.answering
        if answering is not None:
            self._services.memory.history.save_tool_steps(answering, encode_steps(steps))

    def _history_after_failure(self, text: str) -> None:
        """The message is stored, with the tool rounds it got: keep both in the context, so
        the next turn sees them too."""
        if not self.off_the_record:
            self._conversation.add([ChatMessage("user", text), *step_messages(self._turn_steps)])

    def _over_budget(self, system: str | None, *, limit: int | None = None) -> bool:
        """Whether the prompt (with ``system``, else the summary) outgrows the window less its
        reserve, or ``limit`` (see ``Conversation.is_over``)."""
        config = self._services.config
        if limit is None:
            limit = config.context_window - config.reserve_tokens
        return self._conversation.is_over(limit, system=system)

    def _persist(
        self, role: MessageRole, text: str, now: datetime, *, offline: bool = False
    ) -> StoredMessage:
        """Stores a turn; its embedding (when on) is computed off the event loop. A reply the
        offline provider made is stored marked ``offline`` and never embedded."""
        writer = self._services.learning.writer
        stored = writer.message(
            self.scope, self.session_id, role, text, now=now, embed=False, offline=offline
        )
        if writer.embeds and not offline:
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
        conversation = self._conversation
        if outcome.used_model:
            conversation.summary_failures = 0
            conversation.summary_retry_turn = 0
        elif outcome.summary_error not in (None, "skipped"):
            conversation.summary_failures += 1
            wait = min(2**conversation.summary_failures, 32)
            conversation.summary_retry_turn = conversation.turn_count + wait
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
        conversation = self._conversation
        if use_model is None:
            use_model = conversation.turn_count >= conversation.summary_retry_turn
        self.compaction_error = None
        # Compaction learns from what it summarises; never alongside a background batch.
        await self._learning.wait()
        try:
            outcome = await self._services.model.compactor.compact(
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
        conversation.unload()
        conversation.last_input_tokens = None
        conversation.added_since = 0
        conversation.turns()
        return outcome
