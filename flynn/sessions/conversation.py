"""What one session's conversation holds between turns: its stored turns as loaded (and in the
provider's shape, tool rounds in place), the summary before them, what was said off the record,
and the usage that decides when to compact."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from flynn.memory.store import History, StoredMessage
from flynn.providers.base import ChatMessage
from flynn.sessions.prompt import append_turn
from flynn.sessions.tool_steps import decode_steps, step_messages
from flynn.tokens import estimate_tokens


def framed_tokens(message: StoredMessage) -> int:
    """A stored turn's estimated tokens with what frames it in a request."""
    return message.tokens + 4


@dataclass(frozen=True, slots=True)
class ContextUsage:
    messages: int
    tokens: int
    summarised: bool


@dataclass(slots=True)
class Conversation:
    """One session's conversation state; ``turns()`` loads it from ``history`` when needed
    (first use, after a compaction or a restart of the conversation)."""

    history_store: History
    session_id: str
    loaded: list[StoredMessage] | None = None
    tokens: int = 0
    """What the loaded turns weigh with their framing, kept as they grow."""
    history: list[ChatMessage] = field(default_factory=list)
    """The loaded turns in provider shape."""
    summary: str | None = None
    session_context: str | None = None
    off_the_record: bool = False
    otr_turns: list[ChatMessage] = field(default_factory=list)
    last_input_tokens: int | None = None
    added_since: int = 0
    turn_count: int = 0
    """Turns taken since the session started here; the summary backoff counts in them."""
    summary_failures: int = 0  # model summaries failed in a row
    summary_retry_turn: int = 0  # no model summary is tried before this turn (backoff)
    told_shrunk: bool = False  # the person was told their notes were shortened to fit
    answering: int | None = None
    """The stored message the running turn answers: it joins ``history`` once answered."""

    def restart(self) -> None:
        """Forgets everything loaded and counted (off-the-record stays as it is)."""
        fresh = Conversation(self.history_store, self.session_id)
        for name in Conversation.__slots__:
            if name not in ("history_store", "session_id", "off_the_record", "answering"):
                setattr(self, name, getattr(fresh, name))

    def unload(self) -> None:
        """The stored turns are read again on next use (after a compaction replaced some)."""
        self.loaded = None

    def turns(self) -> list[StoredMessage]:
        """The stored turns in context, loaded with their summary and tool rounds if needed."""
        if self.loaded is None:
            store = self.history_store
            self.loaded = store.recent(self.session_id)
            self.tokens = sum(framed_tokens(message) for message in self.loaded)
            self.summary = store.summary(self.session_id)
            self.history = []
            ids = [m.id for m in self.loaded]
            stored_steps = store.tool_steps(ids) if ids else {}
            for message in self.loaded:
                # The message being answered joins the history once it is answered (a reload
                # mid-turn, after a compaction, must not put it in twice).
                if message.id == self.answering:
                    continue
                # Tool rounds follow the message that asked for them (and, as stored before,
                # precede the reply they led to): user, calls, results, reply.
                steps = step_messages(decode_steps(stored_steps.get(message.id, "[]")))
                if message.role == "assistant":
                    for replayed in steps:
                        append_turn(self.history, replayed)
                append_turn(self.history, ChatMessage(message.role, message.content))
                if message.role == "user":
                    for replayed in steps:
                        append_turn(self.history, replayed)
        return self.loaded

    def keep(self, message: StoredMessage) -> None:
        """Appends a just stored ``message`` to the loaded turns (reloaded if a compaction
        dropped them)."""
        self.turns().append(message)
        self.tokens += framed_tokens(message)

    def add(self, messages: list[ChatMessage]) -> None:
        """Puts an exchange in the context: off the record only for this session's life."""
        into = self.otr_turns if self.off_the_record else self.history
        for message in messages:
            append_turn(into, message)

    def prompt_turns(self) -> list[ChatMessage]:
        """The turns a prompt shows: the stored ones, then what was said off the record."""
        self.turns()
        if not (self.off_the_record and self.otr_turns):
            return self.history
        shown = list(self.history)
        for turn in self.otr_turns:
            append_turn(shown, turn)
        return shown

    def usage(self) -> ContextUsage:
        """What the context holds now (for ``/status``)."""
        turns = self.turns()
        tokens = estimate_tokens(self.summary or "") + sum(m.tokens for m in turns)
        return ContextUsage(len(turns), tokens, bool(self.summary))

    def is_over(self, limit: int, *, system: str | None) -> bool:
        """Measured usage (the provider's last prompt tokens plus an estimate of what was added
        since) against ``limit``. The estimate of the whole prompt (its ``system`` text, else
        the summary) is the floor: some OpenAI-compatible servers report no usage, or too
        little."""
        self.turns()
        # Stored turns carry their token estimate, summed as they were loaded and added.
        estimated = self.tokens + sum(estimate_tokens(m.content) + 4 for m in self.otr_turns)
        estimated += estimate_tokens(system if system is not None else self.summary or "")
        measured = 0
        if self.last_input_tokens is not None:
            measured = self.last_input_tokens + self.added_since
        return max(measured, estimated) > limit


@dataclass(frozen=True, slots=True)
class SessionStart:
    """When a session (re)started, building its context anew, and why."""

    at: datetime
    reason: str
