"""What the chat commands (``/new``, ``/status``, ...) do: the handler for each name in the
table of ``flynn.commands``.

Handlers run inside the session's lock (``Orchestrator.command``) and see the session only
through the ``Session`` Protocol below; what a command says back is a ``TurnResult`` like any
turn.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import tzinfo
from typing import Final, Protocol

from flynn.commands import ALIASES, CHAT_COMMANDS
from flynn.dates import parse_timezone
from flynn.identity import MemoryScope
from flynn.memory.costs import Spend, usd
from flynn.memory.person_facts import active_person_facts
from flynn.memory.working import read_working_memory
from flynn.persona import MAX_TIER, MIN_TIER, describe_tier, read_help
from flynn.plurals import counted
from flynn.providers.base import ToolResult
from flynn.recall.session_search import render_results, search_sessions
from flynn.sessions.compaction import CompactionOutcome
from flynn.sessions.conversation import ContextUsage, SessionStart
from flynn.sessions.result import TurnResult
from flynn.sessions.services import SessionServices

SEARCH_LIMIT = 10
MEMORY_LIMIT = 30
"""How many facts ``/memory`` lists (most important first); the memory page shows them all."""


class Session(Protocol):
    """What a command may see and do of the session it runs in (``Orchestrator``)."""

    @property
    def session_id(self) -> str: ...

    @property
    def scope(self) -> MemoryScope: ...

    @property
    def services(self) -> SessionServices: ...

    @property
    def off_the_record(self) -> bool: ...

    @property
    def compaction_error(self) -> str | None:
        """Why the last ``compact_now`` failed, if it did."""
        ...

    def set_off_the_record(self, on: bool) -> None: ...

    @property
    def tier(self) -> int:
        """The context tier the session's prompts load."""
        ...

    @property
    def chosen_tier(self) -> int | None:
        """The tier chosen with ``/tier``, if one was."""
        ...

    def choose_tier(self, tier: int | None) -> None: ...

    def context_usage(self) -> ContextUsage: ...

    def clear_conversation(self, reason: str = "/new") -> None: ...

    @property
    def started(self) -> SessionStart | None:
        """When the session last started, and why."""
        ...

    def rebuild_context(self) -> None: ...

    def forgot(self) -> None:
        """Something of the session's memory root was forgotten: once the command is done, the
        person's other live sessions, here and on the other workers, drop what they loaded."""
        ...

    async def compact_now(
        self, *, shrink: bool = False, use_model: bool | None = None
    ) -> CompactionOutcome | None: ...

    async def run_tool(self, name: str, arguments: str = "{}") -> ToolResult | None: ...


INTRODUCTION = "I'm Flynn, your assistant. I remember what you tell me across our conversations."


def help_text(introduction: str = INTRODUCTION) -> str:
    """``/help``: ``introduction`` (the persona's ``HELP.md`` when it has one), then every
    command, so a command is never hidden by a help text written before it existed."""
    usages = "\n".join(command.usage for command in CHAT_COMMANDS if command.name != "help")
    joint = "\n" if introduction == INTRODUCTION else "\n\nCommands:\n"
    return introduction + joint + usages


async def run(session: Session, name: str, arg: str) -> TurnResult:
    """Runs command ``name`` (without its slash) for ``session``; an unknown name gets a
    reply listing the commands."""
    handler = _HANDLERS.get(ALIASES.get(name, name))
    if handler is None:
        return TurnResult(
            f"Unknown command /{name}. Commands: "
            + ", ".join(f"/{command.name}" for command in CHAT_COMMANDS)
            + ".",
            "bad_request",
        )
    return await handler(session, arg)


async def _help(session: Session, arg: str) -> TurnResult:
    own = read_help(session.services.person.persona.directory)
    return TurnResult(help_text(own) if own else help_text())


async def _tier(session: Session, arg: str) -> TurnResult:
    default = session.services.person.persona.tier
    allowed = session.services.config.max_tier
    if not arg:
        chosen = session.chosen_tier
        whence = (
            "chosen for this conversation" if chosen is not None else "the default, persona.tier"
        )
        lines = [f"Context tier: {session.tier} ({whence}). Each tier loads:"]
        for tier in range(MIN_TIER, MAX_TIER + 1):
            note = " (above persona.max_tier here)" if tier > allowed else ""
            lines.append(f"{tier} – {describe_tier(tier)}{note}")
        lines.append(
            f"/tier N loads tier N (1-{allowed}) until /new or the session restarts; "
            f"/tier {default} goes back to the default."
        )
        return TurnResult("\n".join(lines))
    if not arg.isdigit() or not MIN_TIER <= int(arg) <= MAX_TIER:
        return TurnResult(
            f"Usage: /tier, or /tier N with N from {MIN_TIER} to {allowed}.", "bad_request"
        )
    tier = int(arg)
    if tier > allowed:
        return TurnResult(
            f"Tier {tier} is above what this Flynn allows (persona.max_tier: {allowed}); "
            f"choose 1 to {allowed}.",
            "bad_request",
        )
    session.choose_tier(None if tier == default else tier)
    return TurnResult(
        f"Context tier {tier} from your next message, until /new or the session restarts: "
        f"{describe_tier(tier)}."
    )


async def _new(session: Session, arg: str) -> TurnResult:
    outcome = None if session.off_the_record else await session.compact_now()
    session.clear_conversation()
    note = " What we were doing is kept in working memory." if outcome else ""
    return TurnResult("Started a new conversation." + note)


async def _reset(session: Session, arg: str) -> TurnResult:
    session.clear_conversation("/reset")
    return TurnResult("Conversation reset. Stored facts about you are kept.")


def _started(start: SessionStart | None) -> str:
    if start is None:
        return "Started: with your next message (who you are and what was happening, built anew)"
    return f"Started: {start.at:%Y-%m-%d %H:%M} UTC, on {start.reason}"


async def _status(session: Session, arg: str) -> TurnResult:
    services = session.services
    usage = session.context_usage()
    working = read_working_memory(
        services.memory.documents, session.scope.working, now=services.clock()
    )
    config = services.config
    lines = [
        f"Session: {session.session_id}",
        _started(session.started),
        f"Memory: {session.scope.root}"
        + (" (shared across channels)" if session.scope.shared else ""),
        f"Model: {services.model.chat.name}",
        f"Timezone: {_timezone(session)}",
        f"Messages in context: {usage.messages} (~{usage.tokens} tokens of "
        f"{config.context_window - config.reserve_tokens} before compaction)",
        f"Summary of earlier turns: {'yes' if usage.summarised else 'no'}",
        "Off the record: " + ("on" if session.off_the_record else "off"),
        f"Context tier: {session.tier}"
        + (" (chosen with /tier)" if session.chosen_tier is not None else ""),
    ]
    if working is not None:
        lines.append(
            f"Working memory: updated {working.updated_at:%Y-%m-%d %H:%M} UTC, "
            f"expires {working.expires_at:%Y-%m-%d}"
        )
    spend = _spend(session)
    if spend is not None:
        lines.append(spend)
    tools = services.person.tools
    down = [name for source in (tools.sources if tools else ()) for name in source.down()]
    if down:
        lines.append(
            f"MCP servers down: {', '.join(down)} (restarting; their tools fail meanwhile)"
        )
    return TurnResult("\n".join(lines))


def _timezone(session: Session) -> str:
    """The person's timezone and where it came from: ``Europe/Lisbon, from what you told me``
    (their fact), ``..., from persona.timezone`` or ``..., the host's``."""
    files = session.services.person.files
    if files is not None:
        return files.timezone_of(session.scope.root).describe()
    name = session.services.config.timezone
    if name:
        return f"{name}, from persona.timezone"
    return f"{session.services.clock().astimezone().tzname()}, the host's"


def _zone(session: Session) -> tzinfo | None:
    """The person's calendar: their zone (as ``/status`` says it), else the configured one,
    else the machine's (``None``)."""
    files = session.services.person.files
    if files is not None:
        return files.timezone_of(session.scope.root).zone
    name = session.services.config.timezone
    return parse_timezone(name) if name else None


def _spend(session: Session) -> str | None:
    """What the model calls of every conversation cost today and this month, in the
    person's calendar."""
    services = session.services
    costs = services.memory.costs
    if costs is None:
        return None
    local = services.clock().astimezone(_zone(session))
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return _spend_line(costs.spend(midnight), costs.spend(midnight.replace(day=1)))


def _spend_line(today: Spend, month: Spend) -> str:
    if not month.calls:
        return "Spend: no model calls yet this month"
    tokens = f"{month.input_tokens:,} tokens in, {month.output_tokens:,} out"
    if not month.is_priced:
        return f"Spend: {tokens} this month (no price known for the model: see llm.prices)"
    line = f"Spend: {usd(today.cost)} today, {usd(month.cost)} this month ({tokens})"
    if month.unpriced_calls:
        line += f", besides {month.unpriced_calls} calls of models without a price"
    return line


async def _compact(session: Session, arg: str) -> TurnResult:
    if session.off_the_record:
        return TurnResult("Nothing to compact while off the record.")
    # Asked for in person: the model is tried even while its summaries are backed off.
    outcome = await session.compact_now(use_model=True)
    if outcome is None:
        if session.compaction_error is not None:
            return TurnResult(
                f"Compaction failed on my side ({session.compaction_error}); nothing was changed.",
                "internal",
            )
        usage = session.context_usage()
        return TurnResult(
            f"Nothing to compact yet: the {usage.messages} messages in context (~{usage.tokens} "
            "tokens) are the recent ones I keep word for word."
        )
    sizes = f"~{outcome.tokens_before} → ~{outcome.tokens_after} tokens"
    if outcome.shortened_only:
        return TurnResult(
            "Nothing new to summarise, but the summary of earlier messages was too long, so I "
            f"shortened it ({sizes}).",
            compacted=True,
        )
    reasons = {"timeout": "took too long", "empty": "returned nothing"}
    how = ""
    if not outcome.used_model:
        why = reasons.get(outcome.summary_error or "", f"failed ({outcome.summary_error})")
        how = f" The summarizer {why}, so the summary keeps key excerpts instead."
    return TurnResult(
        f"Compacted {outcome.summarized} messages into a summary; kept the last "
        f"{outcome.kept} verbatim ({sizes})." + how,
        compacted=True,
    )


async def _search(session: Session, arg: str) -> TurnResult:
    if not arg:
        return TurnResult("Usage: /search WORDS – finds what we said before, grouped by day.")
    services = session.services
    # Days as the person lives them: their zone, else the configured one, else the
    # machine's.
    zone = _zone(session) or services.clock().astimezone().tzinfo
    days = search_sessions(
        services.memory.history, session.scope.root, arg, limit=SEARCH_LIMIT, timezone=zone
    )
    return TurnResult(render_results(days, arg))


async def _otr(session: Session, arg: str) -> TurnResult:
    wanted = {"on": True, "off": False}.get(arg.casefold(), not session.off_the_record)
    session.set_off_the_record(wanted)
    if wanted:
        return TurnResult(
            "Off the record: nothing from here on is stored or remembered. Send /otr to end it."
        )
    return TurnResult("Back on the record.")


async def _forget(session: Session, arg: str) -> TurnResult:
    services = session.services
    if arg:
        field_name = "_".join(arg.casefold().split())
        counts = services.memory.forgetter.forget_field(session.scope.root, field_name)
        if not counts.get("facts"):
            return TurnResult(f"I had nothing stored under {field_name!r}.")
        # The session context and the loaded turns may quote the value: rebuild them, here
        # and in the person's other sessions.
        session.rebuild_context()
        session.forgot()
        writer = services.learning.writer
        if writer.embeds and counts.get("embeddings"):
            # Redacted messages (and those after them) lost their vectors: embed them anew.
            writer.embed_missing_later(session.scope.root)
        redacted = sum(n for kind, n in counts.items() if kind not in ("facts", "embeddings"))
        return TurnResult(
            f"Forgotten: {field_name} ({counted(counts['facts'], 'stored facts')} deleted"
            + (f", {counted(redacted, 'mentions')} redacted" if redacted else "")
            + ")."
            + _distilled_forgotten(session)
        )
    removed = services.memory.history.forget_session(session.session_id)
    session.rebuild_context()
    session.forgot()
    return TurnResult(
        f"Deleted this conversation ({removed} messages). Facts you told me are kept; "
        "use /forget FIELD (e.g. /forget name) to remove one." + _distilled_forgotten(session)
    )


def _distilled_forgotten(session: Session) -> str:
    """Deletes the person's distilled notes (MEMORY_*.md), which may repeat what was just
    forgotten; says so when there were any."""
    files = session.services.person.files
    if files is None or not session.scope.shared:
        return ""
    if not files.files.forget_distilled(session.scope.root):
        return ""
    return (
        " The distilled notes that may have repeated it were deleted too; the next "
        "distillation writes them anew from what remains."
    )


async def _memory(session: Session, arg: str) -> TurnResult:
    if arg:
        return await _tool(session, "memory_search", {"query": arg})
    facts = active_person_facts(session.services.memory.facts, session.scope)
    if not facts:
        return TurnResult("I have nothing stored about you yet.")
    lines = ["What I know about you:"]
    for fact in facts[:MEMORY_LIMIT]:
        name = fact.field.replace("_", " ") if fact.field else None
        lines.append(f"- {name}: {fact.value}" if name else f"- {fact.value}")
    if len(facts) > MEMORY_LIMIT:
        lines.append(f"... and {len(facts) - MEMORY_LIMIT} more (the memory page shows them all).")
    lines.append("/forget FIELD deletes one.")
    return TurnResult("\n".join(lines))


async def _reminders(session: Session, arg: str) -> TurnResult:
    verb, _, rest = arg.partition(" ")
    if verb.casefold() in ("cancel", "delete", "remove"):
        if not rest.strip().lstrip("#").isdigit():
            return TurnResult(
                "Usage: /reminders cancel N (N as /reminders lists it).", "bad_request"
            )
        return await _tool(session, "reminder_cancel", {"id": int(rest.strip().lstrip("#"))})
    if arg:
        return TurnResult("Usage: /reminders, or /reminders cancel N.", "bad_request")
    return await _tool(session, "reminder_list", {})


async def _tasks(session: Session, arg: str) -> TurnResult:
    verb, _, rest = arg.partition(" ")
    verb, rest = verb.casefold(), rest.strip()
    if verb == "add" and rest:
        return await _tool(session, "task_add", {"text": rest})
    if verb == "done" and rest.lstrip("#").isdigit():
        return await _tool(session, "task_done", {"id": int(rest.lstrip("#"))})
    if verb == "all" and not rest:
        return await _tool(session, "task_list", {"include_done": True})
    if arg:
        return TurnResult(
            "Usage: /tasks, /tasks all, /tasks add TEXT, or /tasks done N.", "bad_request"
        )
    return await _tool(session, "task_list", {})


async def _tool(session: Session, name: str, arguments: dict[str, object]) -> TurnResult:
    """Runs one of the person's tools as a command: the same code the model's calls run."""
    if session.off_the_record and name not in ("reminder_list", "task_list", "memory_search"):
        return TurnResult("Nothing is stored while off the record; send /otr off first.")
    result = await session.run_tool(name, json.dumps(arguments, ensure_ascii=False))
    if result is None:
        return TurnResult("Tools are turned off here (tools.enabled is false in the config).")
    if result.is_error:
        return TurnResult(result.content.removeprefix("error: "), "bad_request")
    return TurnResult(result.content)


_HANDLERS: Final[dict[str, Callable[[Session, str], Awaitable[TurnResult]]]] = {
    "new": _new,
    "reset": _reset,
    "status": _status,
    "compact": _compact,
    "otr": _otr,
    "forget": _forget,
    "search": _search,
    "memory": _memory,
    "reminders": _reminders,
    "tasks": _tasks,
    "tier": _tier,
    "help": _help,
}
