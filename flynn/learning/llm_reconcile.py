"""LLM reconciliation: a model sees one new fact and the few most similar active facts,
never the conversation, and answers ADD, UPDATE, DELETE or NOOP. Anything unusable (an error,
garbage, a candidate that does not exist) falls back to the deterministic verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import structlog

from flynn.errors import ProviderError, StoreError
from flynn.learning.fact_meaning import FactMeaning, meaning_text
from flynn.learning.llm_extraction import json_objects
from flynn.learning.reconcile import (
    MAX_CANDIDATES,
    Action,
    Decision,
    Outcome,
    RuleReconciler,
    new_fact,
)
from flynn.learning.rules import ProposedFact
from flynn.memory.store import Fact, FactSource
from flynn.providers.base import ChatMessage, ChatRequest, Provider

log = structlog.get_logger(__name__)

RECONCILE_PROMPT = """\
You keep a store of facts about one person. A new fact was just extracted from a conversation.
Decide how it relates to the most similar facts already stored.

Answer with one JSON object and nothing else:
{"action": "ADD" | "UPDATE" | "DELETE" | "NOOP", "candidate": <number of the stored fact>}

- ADD: the new fact is new information; every stored fact stays true. No candidate.
- UPDATE: the new fact replaces the stored one (a correction, or the situation changed).
- DELETE: the new fact says the stored one is no longer true, without a replacement.
- NOOP: the stored fact already says the same thing.

The stored facts were learnt by rules, by the person asking to remember (source "rule",
"explicit", "tool") or by a model from what they said (source "llm"); all are one picture of the
person, and a newer value for the same thing replaces an older one whoever learnt it. A stored
fact may say the same as the new one, or contradict it, in other words ("vegetarian" and "doesn't
eat meat"). Facts the person stated outrank guesses (source "inferred")."""

_ACTIONS: dict[str, Action] = {"add": "add", "update": "update", "delete": "delete", "noop": "noop"}


def _line(field: str | None, value: str) -> str:
    return f"{field}: {value}" if field else value


def reconcile_request(proposed: ProposedFact, candidates: Sequence[Fact]) -> str:
    """The user message of the reconciliation call: the new fact and numbered candidates."""
    lines = [
        f"New fact (confidence {proposed.confidence:.2f}):",
        f"- {_line(proposed.field, proposed.value)}",
        "",
        "Most similar stored facts:",
    ]
    for number, fact in enumerate(candidates, start=1):
        lines.append(
            f"{number}. {_line(fact.field, fact.value)} (source {fact.source}, confidence "
            f"{fact.confidence:.2f}, stored {fact.created_at:%Y-%m-%d})"
        )
    return "\n".join(lines)


def parse_decision(text: str, candidates: Sequence[Fact]) -> Decision | None:
    """The verdict in a model's answer, or ``None`` when there is no usable one: UPDATE, DELETE
    and NOOP must name an existing candidate (1-based; may be left out when there is only one)."""
    for item in json_objects(text):
        raw = item.get("action")
        if not isinstance(raw, str):
            continue
        action = _ACTIONS.get(raw.strip().casefold())
        if action is None:
            continue
        if action == "add":
            return Decision("add")
        target = _candidate(item.get("candidate"), candidates)
        return None if target is None else Decision(action, target)
    return None


def _candidate(raw: object, candidates: Sequence[Fact]) -> Fact | None:
    if raw is None:
        return candidates[0] if len(candidates) == 1 else None
    number = _whole_number(raw)
    if number is None or not 1 <= number <= len(candidates):
        return None
    return candidates[number - 1]


def _whole_number(raw: object) -> int | None:
    """An integer, or a string of a few decimal digits ("2"); anything else is no number."""
    if isinstance(raw, str):
        text = raw.strip()
        # isdecimal, not isdigit: int() refuses "²"; and past 4,300 digits, it refuses any.
        return int(text) if text.isdecimal() and len(text) <= 9 else None
    if isinstance(raw, bool) or not isinstance(raw, int):
        return None
    return raw


class LlmReconciler:
    """Reconciles extracted facts with a model's judgement, on top of a ``RuleReconciler``
    (which finds the candidates, carries out the verdict, and decides when the model cannot)."""

    def __init__(
        self,
        provider: Provider,
        rules: RuleReconciler,
        *,
        clock: Callable[[], datetime],
        max_tokens: int = 200,
        meaning: FactMeaning | None = None,
    ) -> None:
        self._provider = provider
        self._rules = rules
        self._clock = clock
        self._max_tokens = max_tokens
        self._meaning = meaning

    async def apply(
        self,
        namespace: str,
        proposed: ProposedFact,
        *,
        source: FactSource = "llm",
        session: str | None = None,
        channel: str | None = None,
        message_id: int | None = None,
        said_at: datetime | None = None,
    ) -> Outcome:
        """Reconciles one fact; ``said_at`` is when the person said it (for relative dates).

        Provider failures never escape (the deterministic verdict is used); raises
        ``StoreError`` only when the store fails.
        """
        proposed = self._rules.dated(namespace, proposed, said_at or self._clock())
        candidates = self._rules.candidates(namespace, proposed, fuzzy=True)[:MAX_CANDIDATES]
        decision = self._rules.decide(proposed, candidates)
        # Nothing to weigh (a verbatim repeat, an explicit retraction): the deterministic
        # verdict is certain, and a model call would only cost time.
        if not proposed.retracts and decision.action != "noop":
            # Facts alike in meaning only reach the model's judgement: the deterministic
            # verdict (used when the model fails) rests on field and words alone.
            shown = candidates + await self._alike(namespace, proposed, candidates)
            if shown:
                decision = await self._ask(proposed, shown) or decision
        new = new_fact(
            namespace,
            proposed,
            source=source,
            session=session,
            channel=channel,
            message_id=message_id,
        )
        try:
            return self._rules.execute(decision, new, now=self._clock())
        except StoreError:
            # The target changed while the model answered (a turn's rule facts landed): decide
            # again, deterministically, on what is stored now.
            log.info("reconcile.target_changed", action=decision.action)
            return self._rules.apply(
                namespace,
                proposed,
                source=source,
                now=self._clock(),
                session=session,
                channel=channel,
                message_id=message_id,
                said_at=said_at,
            )

    async def _alike(
        self, namespace: str, proposed: ProposedFact, found: Sequence[Fact]
    ) -> list[Fact]:
        """Active facts of ``namespace`` near ``proposed`` in meaning and not already ``found``
        (none without vectors). When the embedding model fails, field and words alone decide."""
        if self._meaning is None:
            return []
        text = meaning_text(proposed.field, proposed.value)
        try:
            alike = await self._meaning.similar(namespace, text)
        except Exception:  # a model that fails to load or run costs candidates, not the fact
            log.exception("reconcile.meaning_failed")
            return []
        seen = {fact.id for fact in found}
        return [fact for fact in alike if fact.id not in seen]

    async def _ask(self, proposed: ProposedFact, candidates: Sequence[Fact]) -> Decision | None:
        request = ChatRequest(
            system=RECONCILE_PROMPT,
            messages=(ChatMessage("user", reconcile_request(proposed, candidates)),),
            task="extraction",
            max_tokens=self._max_tokens,
        )
        try:
            response = await self._provider.chat(request)
        except ProviderError as exc:
            log.info("reconcile.llm_failed", error=type(exc).__name__)
            return None
        decision = parse_decision(response.text, candidates)
        if decision is None:
            log.info("reconcile.llm_unusable")
        return decision
