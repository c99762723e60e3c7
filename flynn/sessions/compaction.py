"""Compaction: summarise old turns so a session fits its context window, without losing context.

Order on every path: summarise (LLM, or an extractive summary when the call
fails), write working memory, extract facts, and only then mark the old turns summarised. Rows are
never deleted, so a failure at any step leaves the session as it was. A summary, model-written or
extractive, never exceeds ``Compactor.summary_cap_tokens``, and the model calls of one compaction
share a deadline (``compaction.timeout_seconds``).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import structlog

from flynn.errors import ProviderError, StoreError
from flynn.identity import MemoryScope
from flynn.language import EMAIL
from flynn.learning.llm_extraction import format_transcript
from flynn.learning.model_learning import FactLearner
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
    rf"https?://\S+|{EMAIL}|`[^`\n]{{2,80}}`|"
    r"(?:[\w.-]+/)+[\w-]+\.\w{1,5}\b|(?:~|\.{1,2})?/(?:[\w.-]+/)*[\w.-]+|"
    r"\b[\w-]+\.(?:py|js|ts|go|rs|md|txt|json|yaml|yml|toml|sh|sql|html|css|csv)\b|"
    r"\b[A-Z]{2,}-\d+\b|#\d{2,}\b"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_EARLIER = "Earlier"
_ASKS = "Recent requests"
_DECISIONS = "Decisions and plans"
_IDENTIFIERS = "Identifiers mentioned"
_LISTS = (_ASKS, _DECISIONS, _IDENTIFIERS)
_HEADING = re.compile(r"^##\s+(.+?)\s*$")


def extractive_summary(
    messages: Sequence[ChatMessage], previous: str | None = None, *, max_tokens: int = 1024
) -> str:
    """A summary made without a model: recent asks, decisions, and identifiers, verbatim, at
    most ``max_tokens``.

    Used when the summary call fails, so compaction never loses context and never wedges. A
    ``previous`` extractive summary is merged, not nested (its lists carry on, keeping the
    newest items); anything else in it (a model's summary) becomes one clipped ``Earlier``
    section, so repeated failures neither nest nor grow.
    """
    earlier, carried = _read_previous(previous)
    asks = carried[_ASKS] + [_clip(m.content, 200) for m in messages if m.role == "user"]
    decisions = list(carried[_DECISIONS])
    identifiers = list(carried[_IDENTIFIERS])
    for message in messages:
        for sentence in _SENTENCE.split(message.content):
            if _DECISION.search(sentence):
                clipped = _clip(sentence, 200)
                if clipped not in decisions:
                    decisions.append(clipped)
        for match in _IDENTIFIER.findall(message.content):
            token = match.strip(".,;:)(")
            if token and token not in identifiers:
                identifiers.append(token)
    # Each list gets a quarter of the room at most, its newest items first, so no one of
    # them (long asks, say) crowds out the identifiers.
    share = max_tokens // 4
    lists = [
        section
        for title, items in ((_ASKS, asks[-8:]), (_DECISIONS, decisions[-8:]))
        if (section := _list_section(title, items, share))
    ]
    if section := _list_section(_IDENTIFIERS, identifiers[-20:], share):
        lists.append(section)
    parts = []
    # What is older than the lists gets whatever room they leave (a quarter of it at least).
    room = max(max_tokens // 4, max_tokens - estimate_tokens("\n\n".join(lists)) - 8)
    if earlier:
        parts.append(f"## {_EARLIER}\n" + truncate_to_tokens(earlier, room).strip())
    parts += lists
    return truncate_to_tokens("\n\n".join(parts) or "(nothing to summarise)", max_tokens)


def _list_section(title: str, items: Sequence[str], budget_tokens: int) -> str:
    """``## title`` and the newest ``items`` that fit in ``budget_tokens``, oldest first."""
    lines: list[str] = []
    used = estimate_tokens(title) + 3
    for item in reversed(items):
        line = f"- {item}"
        used += estimate_tokens(line) + 1
        if lines and used > budget_tokens:
            break
        lines.insert(0, truncate_to_tokens(line, budget_tokens))
    return f"## {title}\n" + "\n".join(lines) if lines else ""


def _read_previous(previous: str | None) -> tuple[str, dict[str, list[str]]]:
    """(earlier text, the items of each extractive list) of a stored summary. Headings other
    than the lists' are demoted, so that the text never reads as a section of its own again."""
    carried: dict[str, list[str]] = {title: [] for title in _LISTS}
    earlier: list[str] = []
    section: str | None = None
    for line in (previous or "").strip().splitlines():
        heading = _HEADING.match(line)
        if heading is not None:
            title = heading.group(1)
            section = title if title in _LISTS else None
            if section is None and title != _EARLIER:
                earlier.append(f"### {title}")
            continue
        if section is not None:
            if line.startswith("- ") and line[2:].strip():
                carried[section].append(line[2:].strip())
            continue
        earlier.append(line)
    return "\n".join(earlier).strip(), carried


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
    through_id: int = 0
    """The newest message summarised (and learnt from, when extraction is on)."""
    summary_error: str | None = None
    """Why the summary is extractive: the model's error, ``timeout``, ``empty``, or ``skipped``
    (the caller asked for no model call); None when the model wrote it."""

    @property
    def shortened_only(self) -> bool:
        """Nothing new was summarised; the stored summary was too long and was shortened."""
        return self.summarized == 0


@dataclass(frozen=True, slots=True)
class CompactionConfig:
    keep_recent_tokens: int
    input_budget_tokens: int
    working_memory_ttl_days: int
    working_memory_max_tokens: int
    auto_extract: bool
    summary_max_tokens: int = 1024
    timeout_seconds: float = 20.0
    """The deadline of one compaction's model calls (summary, then extraction), each."""


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

    @property
    def summary_cap_tokens(self) -> int:
        """The most a stored summary may weigh: the summary's output budget, and never more
        than a quarter of the prompt's budget, so a model that ignores ``max_tokens`` (or a
        run of extractive summaries) cannot crowd the conversation out of its window."""
        config = self._config
        return max(64, min(config.summary_max_tokens, config.input_budget_tokens // 4))

    async def compact(
        self,
        session: str,
        scope: MemoryScope,
        *,
        extracted_through: int = 0,
        use_model: bool = True,
        shrink: bool = False,
    ) -> CompactionOutcome | None:
        """Summarise the session's older turns; ``None`` when there is nothing to summarise and
        the stored summary is within its cap (an oversized one is shortened, ``summarized`` 0).
        Facts are learnt from the summarised turns newer than ``extracted_through`` (the caller
        already learnt from the older ones). ``use_model=False`` makes an extractive summary
        without calling the model; ``shrink`` (for a prompt that does not fit) keeps only the
        last exchange verbatim and a summary of a quarter of the cap, extractively.

        Raises only on storage failure (``StoreError``), in which case nothing was marked.
        """
        cap = self.summary_cap_tokens
        keep_recent_tokens = self._config.keep_recent_tokens
        if shrink:
            cap, keep_recent_tokens, use_model = max(64, cap // 4), 0, False
        messages = self._history.recent(session)
        previous = self._history.summary(session)
        older, kept = split_for_compaction(messages, keep_recent_tokens=keep_recent_tokens)
        oversized = previous is not None and estimate_tokens(previous) > cap
        if not older and not oversized:
            return None
        turns = [ChatMessage(m.role, m.content) for m in older]
        summary, error = await self._summarise(turns, previous, scope.shared, cap, use_model)
        used_model = error is None

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
        through_id = older[-1].id if older else 0
        self._history.save_summary(session, summary, through_id=through_id, now=self._clock())
        before = estimate_tokens(previous or "") + sum(m.tokens for m in messages)
        after = estimate_tokens(summary) + sum(m.tokens for m in kept)
        log.info(
            "compaction.completed",
            summarized=len(older),
            kept=len(kept),
            used_model=used_model,
            summary_error=error,
            summary_tokens=estimate_tokens(summary),
            tokens_before=before,
            tokens_after=after,
            facts=extracted,
        )
        return CompactionOutcome(
            len(older),
            len(kept),
            summary,
            used_model,
            before,
            after,
            through_id,
            summary_error=error,
        )

    async def _summarise(
        self,
        turns: list[ChatMessage],
        previous: str | None,
        personal: bool,
        cap: int,
        use_model: bool,
    ) -> tuple[str, str | None]:
        """(summary of at most ``cap`` tokens, why it is extractive or None)."""
        if not turns:
            # Only the stored summary is to be shortened; a model would rewrite it, not cut it.
            return extractive_summary([], previous, max_tokens=cap), "skipped"
        if not use_model:
            return extractive_summary(turns, previous, max_tokens=cap), "skipped"
        try:
            async with asyncio.timeout(self._config.timeout_seconds):
                summary = await self._model_summary(turns, previous, personal, cap)
        except TimeoutError:
            log.warning("compaction.summary_timed_out", seconds=self._config.timeout_seconds)
            return extractive_summary(turns, previous, max_tokens=cap), "timeout"
        except ProviderError as exc:
            log.warning("compaction.summary_failed", error=type(exc).__name__)
            return extractive_summary(turns, previous, max_tokens=cap), type(exc).__name__
        if summary is None:
            log.warning("compaction.summary_empty")
            return extractive_summary(turns, previous, max_tokens=cap), "empty"
        return summary, None

    async def _model_summary(
        self, turns: list[ChatMessage], previous: str | None, personal: bool, cap: int
    ) -> str | None:
        """The model's rolling summary of ``turns`` after ``previous``; None if it wrote nothing."""
        prompt = build_compaction_prompt(personal_assistant=personal)
        budget = max(self._config.input_budget_tokens - estimate_tokens(prompt), 512)
        summary = truncate_to_tokens(previous, cap) if previous else None
        # A rolling summary over chunks that each fit the model, so an oversized history
        # (the context-too-long path) still gets summarised rather than cut.
        for chunk in _chunks(turns, budget - estimate_tokens(summary or "")):
            body = format_transcript(chunk)
            if summary:
                body = f"Summary of the conversation so far:\n{summary}\n\nContinuation:\n{body}"
            request = ChatRequest(
                system=prompt,
                messages=(ChatMessage("user", body),),
                task="compaction",
                max_tokens=min(self._config.summary_max_tokens, cap),
            )
            response = await self._provider.chat(request)
            text = response.text.strip()
            if not text:
                return None
            if estimate_tokens(text) > cap:
                # A model may ignore ``max_tokens``; stored whole, it would fill the window.
                log.warning("compaction.summary_capped", tokens=estimate_tokens(text), cap=cap)
            summary = truncate_to_tokens(text, cap)
        return summary

    async def _extract(
        self, messages: list[StoredMessage], scope: MemoryScope, session: str
    ) -> int:
        """Facts learnt from ``messages``; 0 when learning fails, which never stops the
        compaction. Raises only ``StoreError``."""
        if self._learner is None or not messages:
            return 0
        try:
            async with asyncio.timeout(self._config.timeout_seconds):
                return await self._learner.learn(
                    messages, scope.root, session=session, graph_namespace=scope.root
                )
        except TimeoutError:
            log.info("extraction.skipped", error="timeout")
            return 0
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
