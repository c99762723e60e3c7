"""Compaction: summarise old turns so a session fits its context window, without losing context.

Order on every path (DESIGN.md section 7): summarise (LLM, or an extractive summary when the call
fails), write working memory, extract facts, and only then mark the old turns summarised. Rows are
never deleted, so a failure at any step leaves the session as it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import structlog

from flynn.errors import ProviderError, StoreError
from flynn.identity import MemoryScope
from flynn.memory.learning import FactLearner
from flynn.memory.llm_extraction import format_transcript
from flynn.memory.store import Documents, History, StoredMessage
from flynn.memory.working import write_working_memory
from flynn.providers.base import ChatMessage, ChatRequest, Provider
from flynn.tokens import estimate_tokens, truncate_to_tokens

log = structlog.get_logger(__name__)

_PA_PREAMBLE = (
    "You are summarising a conversation for a personal assistant. Your summary will be injected at "
    "the start of the next session so the assistant can pick up exactly where things left off."
)
_PA_FOCUS = """Focus on:
- What the user was working on and its current status (be specific: which files, commands, or \
steps were involved)
- Decisions made and why (include rationale when stated)
- Preferences or constraints the user expressed (tools, styles, approaches to avoid or prefer)
- Open threads, unresolved questions, or explicit follow-up items"""
_GENERIC_PREAMBLE = (
    "You are a conversation summarizer. Create a concise summary of the conversation that captures "
    "all important information."
)
_GENERIC_FOCUS = """Focus on:
- Key topics discussed and conclusions reached
- Important decisions, commitments, or action items
- Technical details, code changes, or configurations that were established"""
_RULES = """Rules:
- Preserve key facts, file paths, error messages, and specific values verbatim.
- Be concise but complete — aim for roughly 20% of the original length.
- Use bullet points under short descriptive headings.
- Never invent information not present in the conversation.
- Skip purely transient content (one-off commands, status messages with no lasting significance).

Output format:
Return a markdown summary. No preamble — output only the summary."""


def build_compaction_prompt(*, personal_assistant: bool) -> str:
    """Seed 002's parameterised prompt: the rules are shared, the focus differs."""
    if personal_assistant:
        return f"{_PA_PREAMBLE}\n\n{_PA_FOCUS}\n\n{_RULES}"
    return f"{_GENERIC_PREAMBLE}\n\n{_GENERIC_FOCUS}\n\n{_RULES}"


_DECISION = re.compile(
    r"\b(decided|decision|let's|let us|we'll|we will|agreed|going to|plan(?:ned)? to|will use|"
    r"chose|switch(?:ed)? to|todo|follow up|remind)\b",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(
    r"https?://\S+|[\w.+-]+@[\w-]+\.[\w.]+|`[^`\n]{2,80}`|"
    r"(?:[\w.-]+/)+[\w-]+\.\w{1,5}\b|(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w.-]+|"
    r"\b[\w-]+\.(?:py|js|ts|go|rs|md|txt|json|yaml|yml|toml|sh|sql|html|css|csv)\b|"
    r"\b[A-Z]{2,}-\d+\b|#\d{2,}\b"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def extractive_summary(messages: Sequence[ChatMessage], previous: str | None = None) -> str:
    """A summary made without a model: recent asks, decisions, and identifiers, verbatim.

    Used when the summary call fails, so compaction never loses context and never wedges.
    """
    asks = [_clip(m.content, 200) for m in messages if m.role == "user"][-8:]
    decisions: list[str] = []
    identifiers: list[str] = []
    for message in messages:
        for sentence in _SENTENCE.split(message.content):
            if _DECISION.search(sentence) and len(decisions) < 12:
                clipped = _clip(sentence, 200)
                if clipped not in decisions:
                    decisions.append(clipped)
        for match in _IDENTIFIER.findall(message.content):
            token = match.strip(".,;:)(")
            if token and token not in identifiers:
                identifiers.append(token)
    parts = []
    if previous:
        parts.append("## Earlier\n" + previous.strip())
    if asks:
        parts.append("## Recent requests\n" + "\n".join(f"- {ask}" for ask in asks))
    if decisions:
        parts.append("## Decisions and plans\n" + "\n".join(f"- {d}" for d in decisions[-8:]))
    if identifiers:
        parts.append("## Identifiers mentioned\n" + "\n".join(f"- {i}" for i in identifiers[-20:]))
    return "\n\n".join(parts) or "(nothing to summarise)"


def split_for_compaction(
    messages: Sequence[StoredMessage], *, keep_recent_tokens: int
) -> tuple[list[StoredMessage], list[StoredMessage]]:
    """(to summarise, to keep): the newest turns within ``keep_recent_tokens`` stay verbatim.

    At least the newest exchange is kept and, when there is more than that, something is
    summarised, so a forced compaction always makes progress.
    """
    kept_tokens = 0
    cut = len(messages)
    while cut > 0:
        cost = messages[cut - 1].tokens
        if kept_tokens + cost > keep_recent_tokens:
            break
        kept_tokens += cost
        cut -= 1
    minimum_keep = min(2, len(messages))
    cut = min(cut, len(messages) - minimum_keep)
    if cut == 0 and len(messages) > minimum_keep:
        cut = len(messages) - minimum_keep
    # Never split an exchange: start the kept part on a user turn when possible.
    while 0 < cut < len(messages) and messages[cut].role != "user":
        cut += 1
    return list(messages[:cut]), list(messages[cut:])


@dataclass(frozen=True, slots=True)
class CompactionOutcome:
    summarized: int
    kept: int
    summary: str
    used_model: bool
    tokens_before: int
    tokens_after: int
    facts_extracted: int
    through_id: int = 0
    """The newest message summarised (and learnt from, when extraction is on)."""


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    keep_recent_tokens: int
    input_budget_tokens: int
    working_memory_ttl_days: int
    working_memory_max_tokens: int
    auto_extract: bool
    summary_max_tokens: int = 1024


class Compactor:
    """Runs one compaction for one session. The caller guarantees one at a time per session."""

    def __init__(
        self,
        *,
        history: History,
        documents: Documents,
        provider: Provider,
        learner: FactLearner | None,
        config: CompactionConfig,
        clock: Callable[[], datetime],
    ) -> None:
        self._history = history
        self._documents = documents
        self._provider = provider
        self._learner = learner
        self._config = config
        self._clock = clock

    async def compact(
        self, session: str, scope: MemoryScope, *, extracted_through: int = 0
    ) -> CompactionOutcome | None:
        """Summarise the session's older turns; ``None`` when there is nothing to summarise.
        Facts are learnt from the summarised turns newer than ``extracted_through`` (the caller
        already learnt from the older ones).

        Raises only on storage failure (``StoreError``), in which case nothing was marked.
        """
        messages = self._history.recent(session)
        previous = self._history.summary(session)
        older, kept = split_for_compaction(
            messages, keep_recent_tokens=self._config.keep_recent_tokens
        )
        if not older:
            return None
        turns = [ChatMessage(m.role, m.content) for m in older]
        summary, used_model = await self._summarise(turns, previous, scope.shared)

        # Flush invariant: working memory is written before any turn is marked summarised.
        if scope.shared:
            write_working_memory(
                self._documents,
                scope.working,
                summary,
                ttl_days=self._config.working_memory_ttl_days,
                max_tokens=self._config.working_memory_max_tokens,
                now=self._clock(),
            )
        unlearned = [message for message in older if message.id > extracted_through]
        extracted = (
            await self._extract(unlearned, scope, session) if self._config.auto_extract else 0
        )
        self._history.save_summary(session, summary, through_id=older[-1].id, now=self._clock())
        before = estimate_tokens(previous or "") + sum(m.tokens for m in messages)
        after = estimate_tokens(summary) + sum(m.tokens for m in kept)
        log.info(
            "compaction.completed",
            summarized=len(older),
            kept=len(kept),
            used_model=used_model,
            tokens_before=before,
            tokens_after=after,
            facts=extracted,
        )
        return CompactionOutcome(
            len(older), len(kept), summary, used_model, before, after, extracted, older[-1].id
        )

    async def _summarise(
        self, turns: list[ChatMessage], previous: str | None, personal: bool
    ) -> tuple[str, bool]:
        prompt = build_compaction_prompt(personal_assistant=personal)
        budget = max(self._config.input_budget_tokens - estimate_tokens(prompt), 512)
        summary = previous
        try:
            # A rolling summary over chunks that each fit the model, so an oversized history
            # (the context-too-long path) still gets summarised rather than cut.
            for chunk in _chunks(turns, budget - estimate_tokens(summary or "")):
                body = format_transcript(chunk)
                if summary:
                    body = (
                        f"Summary of the conversation so far:\n{summary}\n\nContinuation:\n{body}"
                    )
                request = ChatRequest(
                    system=prompt,
                    messages=(ChatMessage("user", body),),
                    task="compaction",
                    max_tokens=self._config.summary_max_tokens,
                )
                response = await self._provider.chat(request)
                text = response.text.strip()
                if not text:
                    log.warning("compaction.summary_empty")
                    return extractive_summary(turns, previous), False
                summary = text
        except ProviderError as exc:
            log.warning("compaction.summary_failed", error=type(exc).__name__)
            return extractive_summary(turns, previous), False
        return summary or extractive_summary(turns, previous), True

    async def _extract(
        self, messages: list[StoredMessage], scope: MemoryScope, session: str
    ) -> int:
        """Facts learnt from ``messages``; 0 when learning fails, which never stops the
        compaction. Raises only ``StoreError``."""
        if self._learner is None or not messages:
            return 0
        try:
            return await self._learner.learn(
                messages, scope.facts, session=session, graph_namespace=scope.root
            )
        except ProviderError as exc:
            log.info("extraction.skipped", error=type(exc).__name__)
            return 0
        except StoreError:
            raise
        except Exception:
            # Learning is a bonus on top of the summary: a bug it trips over (an answer the
            # parser chokes on, say) would recur at every compaction and fail every turn after.
            log.exception("extraction.crashed")
            return 0


def _chunks(turns: list[ChatMessage], budget_tokens: int) -> list[list[ChatMessage]]:
    budget = max(budget_tokens, 256)
    chunks: list[list[ChatMessage]] = [[]]
    used = 0
    for turn in turns:
        cost = estimate_tokens(turn.content) + 4
        if cost > budget:
            turn = ChatMessage(turn.role, truncate_to_tokens(turn.content, budget - 4))
            cost = budget
        if chunks[-1] and used + cost > budget:
            chunks.append([])
            used = 0
        chunks[-1].append(turn)
        used += cost
    return chunks
