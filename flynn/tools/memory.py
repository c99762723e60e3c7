"""Memory through tools: ``remember`` (a fact the person asked to keep, reconciled like any
other, source ``tool``), ``memory_search`` (recall for a query of the model's choosing) and
``session_search`` (past messages grouped by day)."""

from __future__ import annotations

from pydantic import Field

from flynn.learning.own_words import is_injection
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact
from flynn.learning.secrets import is_secret
from flynn.memory.store import History
from flynn.recall.recall import Recall
from flynn.recall.session_search import render_results, search_sessions
from flynn.recall.worker import RecallWorker
from flynn.tools.base import Arguments, ToolContext, ToolError, TypedTool

SEARCH_BUDGET_TOKENS = 1200
SESSION_SEARCH_LIMIT = 10


class RememberArguments(Arguments):
    text: str = Field(
        min_length=1,
        max_length=500,
        description="What to remember about the person, as a short statement in third person "
        "('prefers window seats').",
    )
    field: str | None = Field(
        default=None,
        max_length=64,
        pattern=r"^[a-z][a-z0-9_]*$",
        description="For a single-valued profile field (name, location, employer, timezone, "
        "birthday...): its snake_case name; the text is then its value.",
    )


class Remember(TypedTool[RememberArguments]):
    name = "remember"
    description = (
        "Keep a fact the person asked you to remember (only what they said about themselves; "
        "never passwords, keys or other credentials). A newer value replaces an older one."
    )
    arguments = RememberArguments
    writes = True

    def __init__(self, reconciler: RuleReconciler) -> None:
        self._reconciler = reconciler

    async def run(self, args: RememberArguments, context: ToolContext) -> str:
        if is_secret(args.field, args.text):
            raise ToolError(
                "credentials are never stored in memory; tell the person to keep it in a "
                "password manager instead"
            )
        if is_injection(args.text):
            raise ToolError("that reads as an order to the assistant, not a fact; not stored")
        proposed = ProposedFact(
            kind="profile" if args.field else "observation",
            field=args.field,
            value=" ".join(args.text.split()),
            confidence=0.95,
            target="profile",
        )
        outcome = self._reconciler.apply(
            f"{context.namespace}/profile",
            proposed,
            source="tool",
            now=context.now,
            session=str(context.session),
            channel=context.session.channel,
        )
        what = f"{args.field} = {proposed.value}" if args.field else proposed.value
        if outcome.action == "noop":
            return f"Already remembered: {what}"
        if outcome.action == "update":
            return f"Updated: {what}"
        return f"Remembered: {what}"


class SearchArguments(Arguments):
    query: str = Field(min_length=1, max_length=500, description="What to look for, in words.")


class MemorySearch(TypedTool[SearchArguments]):
    name = "memory_search"
    description = (
        "Search what you remember about the person (stated facts, past conversations, the "
        "knowledge graph) and the team's documents. Use it when the memory already in the "
        "prompt does not answer."
    )
    arguments = SearchArguments

    def __init__(self, recall: Recall, worker: RecallWorker | None = None) -> None:
        """``worker``: the recall threads the turns' own recall runs in; the search runs there
        too, so that it never holds up the event loop (another person's stream) for the
        question's embedding, the vector search, or a reload of the person's vectors."""
        self._recall = recall
        self._worker = worker

    async def run(self, args: SearchArguments, context: ToolContext) -> str:
        # A known person (not session memory) may read the team's documents too.
        team = context.user is not None
        if self._worker is not None:
            recalled = await self._worker.recall(
                context.namespace,
                args.query,
                now=context.now,
                budget_tokens=SEARCH_BUDGET_TOKENS,
                team=team,
            )
        else:
            recalled = self._recall.recall(
                context.namespace,
                args.query,
                now=context.now,
                budget_tokens=SEARCH_BUDGET_TOKENS,
                team=team,
            )
        if recalled.is_empty:
            return f"Nothing in memory matches “{args.query}”."
        parts = []
        for block in recalled.blocks:
            parts.append(f"[{block.title} (trust: {block.trust})]")
            parts.extend(block.lines)
        return "\n".join(parts)


class SessionSearch(TypedTool[SearchArguments]):
    name = "session_search"
    description = "Find past messages with the person by words, grouped by day with their times."
    arguments = SearchArguments

    def __init__(self, history: History) -> None:
        self._history = history

    async def run(self, args: SearchArguments, context: ToolContext) -> str:
        days = search_sessions(
            self._history,
            context.namespace,
            args.query,
            limit=SESSION_SEARCH_LIMIT,
            timezone=context.timezone,
        )
        return render_results(days, args.query)
