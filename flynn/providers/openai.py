"""OpenAI Chat Completions as a ``Provider``: api.openai.com or any compatible server (vLLM, Ollama,
llama.cpp, LM Studio) through ``base_url``. SDK errors become ``flynn.errors`` here, at the edge.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from datetime import datetime
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit

import openai
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionUserMessageParam,
)

from flynn.errors import (
    AuthFailed,
    BadRequest,
    ContextTooLong,
    MalformedResponse,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    Unavailable,
)
from flynn.providers.base import ChatRequest, ChatResponse, StreamEvent, Usage
from flynn.providers.defaults import DEFAULT_OPENAI_BASE_URL
from flynn.providers.http_errors import retry_after_seconds, safe_message, utc_now
from flynn.tokens import estimate_tokens

NO_API_KEY = "not-needed"
"""Sent to local servers that take no key; the SDK insists on having one."""

# The SDK wraps transport errors itself, even mid-stream; ValueError (json.JSONDecodeError) is
# what it lets through for a body that is not JSON.
_SDK_ERRORS = (openai.OpenAIError, ValueError)


class OpenAIProvider:
    """A chat model through ``openai.AsyncOpenAI``. Close with ``aclose`` (or ``async with``)."""

    def __init__(
        self,
        api_key: str | None,
        model: str,
        *,
        base_url: str | None,
        timeout_seconds: float,
        max_output_tokens: int,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self._model = model
        self._timeout_seconds = timeout_seconds
        self._max_output_tokens = max_output_tokens
        self._clock = clock
        # Kept only to scrub it from error text: OpenAI echoes part of a refused key, and some
        # compatible servers echo all of it.
        self._api_key = api_key
        # api.openai.com refuses ``max_tokens`` for its reasoning models and wants
        # ``max_completion_tokens``; many compatible servers know only ``max_tokens``.
        self._is_official = base_url is None or urlsplit(base_url).hostname == "api.openai.com"
        self._closed = False
        self._client = openai.AsyncOpenAI(
            api_key=api_key or NO_API_KEY,
            base_url=base_url or DEFAULT_OPENAI_BASE_URL,
            timeout=timeout_seconds,
            max_retries=0,
        )

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """The whole reply. Raises ``ProviderError`` subclasses only."""
        max_tokens = request.max_tokens or self._max_output_tokens
        try:
            completion: object = await self._client.chat.completions.create(
                model=self._model,
                messages=_messages(request),
                max_tokens=openai.omit if self._is_official else max_tokens,
                max_completion_tokens=max_tokens if self._is_official else openai.omit,
            )
        except _SDK_ERRORS as exc:
            raise self._map_error(exc) from exc
        if not isinstance(completion, ChatCompletion):
            raise self._malformed("the response is not a chat completion")
        choices: object = completion.choices
        if not isinstance(choices, list) or not choices:
            raise self._malformed("the response has no choices")
        message: object = getattr(choices[0], "message", None)
        content: object = getattr(message, "content", None)
        if content is None:
            # A refusal or a tool call carries no content; the reply is then the refusal, if any.
            content = getattr(message, "refusal", None) or ""
        if not isinstance(content, str):
            raise self._malformed("the reply is not text")
        usage = self._usage_of(completion.usage, request, content)
        return ChatResponse(
            text=content, usage=usage, model=self._model_of(completion.model), provider="openai"
        )

    async def stream(self, request: ChatRequest) -> AsyncGenerator[StreamEvent, None]:
        """Text deltas, then the ``ChatResponse``. Raises ``ProviderError`` subclasses only.

        Asks for a final usage chunk; servers that send none get estimated usage instead.
        """
        max_tokens = request.max_tokens or self._max_output_tokens
        pieces: list[str] = []
        usage: object = None
        model: object = None
        chunk_count = 0
        try:
            chunks = await self._client.chat.completions.create(
                model=self._model,
                messages=_messages(request),
                max_tokens=openai.omit if self._is_official else max_tokens,
                max_completion_tokens=max_tokens if self._is_official else openai.omit,
                stream=True,
                stream_options={"include_usage": True},
            )
            async with chunks:
                async for chunk in chunks:
                    chunk_count += 1
                    model = chunk.model or model
                    usage = chunk.usage or usage
                    for choice in chunk.choices or ():
                        delta = choice.delta.content if choice.delta else None
                        if delta:
                            pieces.append(delta)
                            yield delta
        except _SDK_ERRORS as exc:
            raise self._map_error(exc) from exc
        except AttributeError as exc:
            # A chunk that is JSON but not shaped like one: the SDK builds it without validation.
            raise self._malformed("a stream chunk could not be read") from exc
        if chunk_count == 0:
            # Every real stream has at least one chunk; none means the body was not a stream.
            raise self._malformed("the stream held no chunks")
        text = "".join(pieces)
        yield ChatResponse(
            text=text,
            usage=self._usage_of(usage, request, text),
            model=self._model_of(model),
            provider="openai",
        )

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._client.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- response -------------------------------------------------------------------------------

    def _usage_of(self, usage: object, request: ChatRequest, reply: str) -> Usage:
        if isinstance(usage, CompletionUsage) and isinstance(usage.prompt_tokens, int):
            return Usage(
                input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens or 0
            )
        # Some compatible servers report no usage; compaction still needs a measure.
        prompt = "\n".join([request.system, *(message.content for message in request.messages)])
        return Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(reply))

    def _model_of(self, model: object) -> str:
        return model if isinstance(model, str) and model else self._model

    def _malformed(self, what: str) -> MalformedResponse:
        return MalformedResponse(f"{self.name}: {what}", provider=self.name)

    # -- errors -----------------------------------------------------------------------------------

    def _map_error(self, exc: Exception) -> ProviderError:
        name = self.name
        if isinstance(exc, openai.APITimeoutError):
            return ProviderTimeout(
                f"{name}: no answer within {self._timeout_seconds:g}s", provider=name
            )
        if isinstance(exc, openai.APIConnectionError):
            return Unavailable(f"{name}: connection failed", provider=name)
        if isinstance(exc, openai.APIResponseValidationError | ValueError):
            return MalformedResponse(f"{name}: the response could not be read", provider=name)
        if isinstance(exc, openai.APIStatusError):
            return self._map_status_error(exc)
        if isinstance(exc, openai.APIError):
            # An error event inside a stream: no HTTP status, only the body's code.
            message = safe_message(f"{name} reported an error: {exc.message}", self._api_key)
            if _is_context_error(exc):
                return ContextTooLong(message, provider=name)
            return Unavailable(message, provider=name)
        return Unavailable(f"{name}: {type(exc).__name__}", provider=name)

    def _map_status_error(self, exc: openai.APIStatusError) -> ProviderError:
        name = self.name
        status = exc.status_code
        detail = f" {exc.code}" if exc.code else ""
        message = safe_message(f"{name} answered {status}{detail}: {exc.message}", self._api_key)
        if status == 429:
            if exc.code == "insufficient_quota":
                # Out of credit, not out of breath: waiting will not help, another provider may.
                return AuthFailed(message, provider=name)
            retry_after = retry_after_seconds(exc.response.headers, self._clock())
            return RateLimited(message, provider=name, retry_after=retry_after)
        if status in (401, 403):
            return AuthFailed(message, provider=name)
        if status == 408:
            return ProviderTimeout(message, provider=name)
        if status >= 500 or status == 409:
            return Unavailable(message, provider=name)
        if _is_context_error(exc):
            return ContextTooLong(message, provider=name)
        if 400 <= status < 500:
            return BadRequest(message, provider=name)
        return Unavailable(message, provider=name)


def _messages(request: ChatRequest) -> list[ChatCompletionMessageParam]:
    messages: list[ChatCompletionMessageParam] = []
    if request.system:
        messages.append(ChatCompletionSystemMessageParam(role="system", content=request.system))
    for message in request.messages:
        if message.role == "user":
            messages.append(ChatCompletionUserMessageParam(role="user", content=message.content))
        else:
            messages.append(
                ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
            )
    return messages


def _is_context_error(exc: openai.APIError) -> bool:
    # api.openai.com says so with a code; llama.cpp with an error type. vLLM and others send a
    # plain 400, so for them (only) the wording is read: the one place message text decides.
    if exc.code == "context_length_exceeded" or exc.type == "exceed_context_size_error":
        return True
    text = exc.message.lower()
    return any(
        phrase in text
        for phrase in (
            "maximum context length",
            "context length",
            "context window",
            "context size",
            "too many tokens",
        )
    )
