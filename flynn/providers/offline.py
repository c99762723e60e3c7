"""The provider used when no language model is configured: deterministic, no network. It says how
to configure one and answers from memory, so flynn can be tried (and tested) without a key.

What it remembers is what a model would read: the labelled blocks of the system prompt
(``flynn.sessions.prompt`` writes them; the headings below are theirs, and a test keeps the two
equal, since providers may not import sessions). It shows that memory from the person's side
("you said"), and never quotes its own earlier replies: they only repeated memory, and quoting
them nested each reply inside the next.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator
from dataclasses import dataclass

from flynn.errors import Unavailable
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    StreamEvent,
    ToolResult,
    Usage,
)
from flynn.providers.offline_intents import tool_call_for
from flynn.tokens import estimate_tokens

OFFLINE = "offline"
NO_MODEL = "No language model is configured"
SETUP_HINT = (
    "To connect one, set ANTHROPIC_API_KEY or OPENAI_API_KEY, or set llm.provider and "
    "llm.base_url (for a local OpenAI-compatible server) in the config."
)
PROFILE_HEADING = "--- Who you're talking to ---"
PATTERNS_HEADING = "--- How they asked you to respond ---"
RECENT_HEADING = "--- Recent context ---"
RECALL_HEADING = "--- Recalled memory ---"
LATER_HINT = "(No language model: I can only tell you what I remember.)"
# How ``flynn.recall.recall`` labels a recalled message for the model (a test keeps them equal).
PERSON_SAID = "they said"
ASSISTANT_SAID = "you said"
NOTED = "Noted: "

_HEADING = re.compile(r"--- .+ ---")
_NAME = re.compile(r"-\s*name:\s*(.+)")
_SAID = re.compile(
    rf"(?P<when>-\s*\d{{4}}-\d{{2}}-\d{{2}} \w{{3}}), (?P<who>{PERSON_SAID}|{ASSISTANT_SAID}): "
    r"(?P<text>.*)"
)
_QUESTION = re.compile(
    r"(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|am|was|were|can|could|"
    r"will|would|should|shall|may|might|have|has|had|tell|show|list|remind)\b",
    re.IGNORECASE,
)
# The person's words as said back to them: first person becomes second.
_YOURS = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
    "im": "you're",
}
_AFTER_I = {"am": "are", "was": "were"}
_ACK_MAX_CHARS = 160
_ACK_MIN_WORDS = 3


class OfflineProvider:
    """Answers ``chat`` from the memory blocks of ``request.system``; raises ``Unavailable``
    for every other task (compaction, extraction, distill, synthesis), so their callers take their
    deterministic fallbacks.

    A few plain requests (``flynn.providers.offline_intents``) become calls of the tools on
    offer, through the same loop a model's calls take; their results are then the reply.

    Only the first reply of a conversation explains that no model is configured and how to set
    one: once the history it is sent holds that explanation, a reply says what it remembers and
    ends with one short line (``LATER_HINT``), rather than the same three lines every time."""

    def __init__(self, *, stream_chunks: int = 3) -> None:
        self._stream_chunks = max(1, stream_chunks)

    @property
    def name(self) -> str:
        return OFFLINE

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The offline answer. Raises ``Unavailable`` unless ``request.task`` is ``chat``."""
        if request.task != "chat":
            raise Unavailable("no language model is configured", provider=OFFLINE)
        last = request.messages[-1] if request.messages else None
        response = self._act(request, last)
        if response is not None:
            return response
        said = last.content if last is not None and last.role == "user" else ""
        text = compose_reply(memory_in(request.system), explain=not _explained(request), said=said)
        prompt = "\n".join([request.system, *(message.content for message in request.messages)])
        usage = Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))
        return ChatResponse(text=text, usage=usage, model=OFFLINE, provider=OFFLINE)

    def _act(self, request: ChatRequest, last: ChatMessage | None) -> ChatResponse | None:
        if last is None or last.role != "user" or not request.tools:
            return None
        if last.tool_results:
            return _answer(self._usage(request, ""), last.tool_results)
        call = tool_call_for(last.content, frozenset(tool.name for tool in request.tools))
        if call is None:
            return None
        return ChatResponse(
            "", self._usage(request, ""), model=OFFLINE, provider=OFFLINE, tool_calls=(call,)
        )

    @staticmethod
    def _usage(request: ChatRequest, text: str) -> Usage:
        prompt = "\n".join([request.system, *(message.content for message in request.messages)])
        return Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(text))

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """The same answer in a few deltas, then the ``ChatResponse``."""
        response = await self.chat(request)
        for piece in _split(response.text, self._stream_chunks):
            yield piece
        yield response

    async def aclose(self) -> None:
        """Nothing to release."""


def _explained(request: ChatRequest) -> bool:
    """Whether an earlier reply in the request's history already said that no model is
    configured (a model's replies, from before its key was removed, did not)."""
    earlier = request.messages[:-1]
    return any(m.role == "assistant" and NO_MODEL in m.content for m in earlier)


def _answer(usage: Usage, results: tuple[ToolResult, ...]) -> ChatResponse:
    """What the offline assistant says once its tool calls are done: their results."""
    lines = []
    for result in results:
        if result.is_error:
            lines.append("I couldn't do that: " + result.content.removeprefix("error: "))
        else:
            lines.append(result.content)
    text = "\n".join(lines)
    return ChatResponse(text, usage, model=OFFLINE, provider=OFFLINE)


@dataclass(frozen=True, slots=True)
class Remembered:
    """What the system prompt shows of the person, block by block."""

    user_name: str | None = None
    facts: tuple[str, ...] = ()
    working_memory: str | None = None
    recalled: tuple[str, ...] = ()


def memory_in(system: str) -> Remembered:
    """The memory blocks of a system prompt: the profile (and patterns) lines, the working memory
    and the recalled lines; the notes in brackets that tell a model how to weigh them are left
    out. A block runs from its ``--- heading ---`` line to the next heading."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in system.splitlines():
        if _HEADING.fullmatch(line.strip()):
            current = blocks.setdefault(line.strip(), [])
        elif current is not None:
            current.append(line)
    profile = _lines(blocks.get(PROFILE_HEADING, [])) + _lines(blocks.get(PATTERNS_HEADING, []))
    names = [match.group(1).strip() for line in profile if (match := _NAME.fullmatch(line))]
    working = "\n".join(_notes_dropped(blocks.get(RECENT_HEADING, []))).strip()
    return Remembered(
        user_name=names[0] if names else None,
        facts=profile,
        working_memory=working or None,
        recalled=_recalled(blocks.get(RECALL_HEADING, [])),
    )


def _notes_dropped(lines: list[str]) -> list[str]:
    return [line for line in lines if not _is_note(line)]


def _is_note(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("[") and stripped.endswith("]")


def _lines(lines: list[str]) -> tuple[str, ...]:
    return tuple(line.strip() for line in _notes_dropped(lines) if line.strip())


def _recalled(lines: list[str]) -> tuple[str, ...]:
    """The lines under the recall block's labels (``[title (trust: ...)]``); the advice before
    the first label is for the model. What the person said reads from their side ("you
    said"); what the assistant said is left out: it only repeated what is remembered."""
    kept: list[str] = []
    labelled = False
    for line in lines:
        if _is_note(line):
            labelled = True
        elif labelled and line.strip():
            said = _SAID.fullmatch(line.strip())
            if said is None:
                kept.append(line.strip())
            elif said["who"] == PERSON_SAID:
                kept.append(f"{said['when']}, you said: {said['text']}")
    return tuple(kept)


def acknowledgement(text: str) -> str | None:
    """A short acknowledgement of a statement (``Noted: you live in Lisbon.``), its first
    person said back in the second; ``None`` for a question, or a word or two ("ok",
    "thanks") that state nothing."""
    text = " ".join(text.split()).rstrip(" .!")
    words = text.split(" ")
    if len(words) < _ACK_MIN_WORDS or text.endswith("?") or _QUESTION.match(text):
        return None
    said: list[str] = []
    for index, word in enumerate(words):
        bare = word.casefold()
        after_i = index > 0 and words[index - 1].casefold() == "i"
        swapped = _AFTER_I.get(bare) if after_i else _YOURS.get(bare)
        said.append(swapped if swapped is not None else word)
    noted = " ".join(said)
    if len(noted) > _ACK_MAX_CHARS:
        cut = noted[:_ACK_MAX_CHARS]
        noted = cut[: cut.rfind(" ")] + " …" if " " in cut else cut + " …"
    return f"{NOTED}{noted}."


def compose_reply(memory: Remembered, *, explain: bool = True, said: str = "") -> str:
    """What the offline assistant says, given what it remembers of the person. With ``explain``
    (the conversation's first reply) it greets them, says that no model is configured and how to
    set one; without, it ends with ``LATER_HINT``. A statement (``said`` that is no question)
    gets a short acknowledgement of what was noted; anything else, what it remembers."""
    paragraphs = []
    if explain:
        greeting = f"Hi {memory.user_name}!" if memory.user_name else "Hi!"
        paragraphs.append(
            f"{greeting} {NO_MODEL}, so I can't really answer yet; I can only tell you what I "
            "remember.\n" + SETUP_HINT
        )
    noted = acknowledgement(said)
    if noted is not None:
        paragraphs.append(noted)
        if not explain:
            paragraphs.append(LATER_HINT)
        return "\n\n".join(paragraphs)
    if memory.facts:
        paragraphs.append(_bullets("What I remember about you:", memory.facts))
    if memory.working_memory:
        paragraphs.append("What we were working on:\n" + memory.working_memory)
    if memory.recalled:
        paragraphs.append(_bullets("Related things from earlier:", memory.recalled))
    if not explain:
        paragraphs = paragraphs or ["Nothing I remember relates to that."]
        paragraphs.append(LATER_HINT)
    elif len(paragraphs) == 1:
        paragraphs.append("I don't remember anything about you yet.")
    return "\n\n".join(paragraphs)


def _bullets(title: str, items: tuple[str, ...]) -> str:
    """``items`` listed under ``title``, one bullet each: the prompt's profile and recall lines
    come already bulleted."""
    lines = (item.strip().removeprefix("- ").strip() for item in items)
    return "\n".join([title, *(f"- {line}" for line in lines if line)])


def _split(text: str, count: int) -> list[str]:
    """``text`` in about ``count`` pieces, cut after spaces so deltas end on word boundaries."""
    size = max(1, -(-len(text) // count))
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        space = text.find(" ", end)
        end = len(text) if space == -1 or end == len(text) else space + 1
        pieces.append(text[start:end])
        start = end
    return pieces
