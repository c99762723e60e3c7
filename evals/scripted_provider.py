"""A provider that answers from a script, instantly: for the benchmarks (``flynn bench``, in
evals/) and the tests; not part of the installed package.

It records every request (unless told not to), so a test can assert exactly what the model would
have been sent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import replace

from flynn.errors import ProviderError
from flynn.providers.base import ChatMessage, ChatRequest, ChatResponse, StreamEvent, Usage
from flynn.tokens import estimate_tokens

Reply = str | ChatResponse | ProviderError | Callable[[ChatRequest], str | ChatResponse]


class ScriptedProvider:
    """Answers each request with the next scripted reply (a string, a whole ``ChatResponse`` such
    as one with tool calls, an error to raise, or a function of the request returning either);
    once the script is used up, with ``default``."""

    def __init__(
        self,
        script: Iterable[Reply] = (),
        *,
        default: Reply = "ok",
        name: str = "scripted",
        records: bool = True,
    ) -> None:
        self._script: deque[Reply] = deque(script)
        self.default = default
        self._name = name
        self._records = records
        self._counted: deque[tuple[tuple[ChatMessage, ...], int]] = deque(maxlen=4)
        """The last requests' messages and their characters (``_conversation_chars``): a few,
        as a benchmark's chat and background learning share one provider."""
        self.requests: list[ChatRequest] = []
        """Every request, unless made with ``records=False`` (a benchmark's thousands of turns:
        each request holds the whole conversation, so keeping them all grows with its square)."""

    @property
    def name(self) -> str:
        return self._name

    def push(self, *replies: Reply) -> None:
        self._script.extend(replies)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        if self._records:
            self.requests.append(request)
        reply = self._script.popleft() if self._script else self.default
        if isinstance(reply, ProviderError):
            raise reply
        answer = reply(request) if callable(reply) else reply
        chars = len(request.system) + self._conversation_chars(request.messages)
        prompt = chars // 4 + 4 * len(request.messages)
        if isinstance(answer, ChatResponse):
            if answer.usage != Usage():
                return answer
            written = "\n".join([answer.text, *(c.arguments for c in answer.tool_calls)])
            return replace(answer, usage=Usage(prompt, estimate_tokens(written)))
        return ChatResponse(answer, Usage(prompt, estimate_tokens(answer)), "script", self._name)

    def _conversation_chars(self, messages: tuple[ChatMessage, ...]) -> int:
        """``_written_chars(messages)``, counting only what follows one of the last requests'
        messages when it goes on from them (the next turn of a conversation: compared at C
        speed, and equal messages count the same); any other request is counted whole."""
        done, counted = 0, 0
        for known, chars in self._counted:
            if done < len(known) <= len(messages) and messages[: len(known)] == known:
                done, counted = len(known), chars
        counted += _written_chars(messages[done:])
        self._counted.append((messages, counted))
        return counted

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """The reply's text in words (none when it only calls tools), then the response."""
        response = await self.chat(request)
        if response.text:
            words = response.text.split(" ")
            for index, word in enumerate(words):
                yield word if index == len(words) - 1 else word + " "
        yield response

    async def aclose(self) -> None:
        return None


def _written_chars(messages: Sequence[ChatMessage]) -> int:
    """How many characters ``messages`` put in a request: their text, calls and results. Each
    request holds the whole conversation: counting it anew on every turn of ``flynn bench turn``
    grew with the session (0.3 ms a turn at 10,000 messages) and is no part of flynn's, so
    ``ScriptedProvider`` counts only what a request adds; in one pass, the rare message with
    tool rounds counted apart."""
    return sum(
        len(m.content) + (_tool_chars(m) if m.tool_calls or m.tool_results else 0) for m in messages
    )


def _tool_chars(message: ChatMessage) -> int:
    return sum(len(call.name) + len(call.arguments) for call in message.tool_calls) + sum(
        len(result.content) for result in message.tool_results
    )
