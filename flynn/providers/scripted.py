"""A provider that answers from a script, instantly: for benchmarks (``flynn bench``) and tests.

It records every request, so a test can assert exactly what the model would have been sent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable

from flynn.errors import ProviderError
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent, Usage
from flynn.tokens import estimate_tokens

Reply = str | ProviderError | Callable[[ChatRequest], str]


class ScriptedProvider:
    """Answers each request with the next scripted reply (a string, an error to raise, or a
    function of the request); once the script is used up, with ``default``."""

    def __init__(
        self, script: Iterable[Reply] = (), *, default: Reply = "ok", name: str = "scripted"
    ) -> None:
        self._script: deque[Reply] = deque(script)
        self.default = default
        self._name = name
        self.requests: list[ChatRequest] = []

    @property
    def name(self) -> str:
        return self._name

    def push(self, *replies: Reply) -> None:
        self._script.extend(replies)

    async def chat(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        reply = self._script.popleft() if self._script else self.default
        if isinstance(reply, ProviderError):
            raise reply
        text = reply(request) if callable(reply) else reply
        chars = len(request.system) + sum(len(m.content) for m in request.messages)
        prompt = chars // 4 + 4 * len(request.messages)
        return ChatResponse(text, Usage(prompt, estimate_tokens(text)), "script", self._name)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        response = await self.chat(request)
        words = response.text.split(" ")
        for index, word in enumerate(words):
            yield word if index == len(words) - 1 else word + " "
        yield response

    async def aclose(self) -> None:
        return None
