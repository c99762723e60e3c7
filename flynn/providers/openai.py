"""OpenAI Chat Completions as a ``Provider``: api.openai.com or any compatible server (vLLM, Ollama,
llama.cpp, LM Studio) through ``base_url``. SDK errors become ``flynn.errors`` here, at the edge;
tool calls travel as ``tools`` / ``tool_calls`` and ``tool`` messages.
"""

from __future__ import annotations

import asyncio
import base64
import secrets
from collections.abc import AsyncGenerator, Callable, Iterable
from contextlib import aclosing
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

import openai
import structlog
from openai.types import CompletionUsage
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionContentPartImageParam,
    ChatCompletionContentPartParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.shared_params import FunctionDefinition

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
from flynn.providers.base import (
    ChatMessage,
    ChatRequest,
    ChatResponse,
    StreamEvent,
    ToolCall,
    Usage,
)
from flynn.providers.defaults import DEFAULT_OPENAI_BASE_URL
from flynn.providers.http_errors import (
    ToolsRefused,
    plain_text_of,
    retry_after_seconds,
    safe_message,
    says_tools_unsupported,
    utc_now,
)
from flynn.providers.lifecycle import paced
from flynn.providers.sdk_provider import SdkProvider
from flynn.tokens import estimate_tokens

_log = structlog.get_logger(__name__)

NO_API_KEY = "not-needed"
"""Sent to local servers that take no key; the SDK insists on having one."""

# The SDK wraps transport errors itself, even mid-stream; ValueError (json.JSONDecodeError) is
# what it lets through for a body that is not JSON.
_SDK_ERRORS = (openai.OpenAIError, ValueError)


class OpenAIProvider(SdkProvider):
    """A chat model through ``openai.AsyncOpenAI``. Close with ``aclose`` (or ``async with``)."""

    vendor = "openai"

    def __init__(
        self,
        api_key: str | None,
        model: str,
        *,
        base_url: str | None,
        timeout_seconds: float,
        max_output_tokens: int,
        stream_idle_seconds: float | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(
            model=model,
            api_key=api_key,
            timeout_seconds=timeout_seconds,
            max_output_tokens=max_output_tokens,
            stream_idle_seconds=stream_idle_seconds,
            clock=clock,
        )
        # api.openai.com refuses ``max_tokens`` for its reasoning models and wants
        # ``max_completion_tokens``; many compatible servers know only ``max_tokens``.
        self._is_official = base_url is None or urlsplit(base_url).hostname == "api.openai.com"
        self._client = openai.AsyncOpenAI(
            api_key=api_key or NO_API_KEY,
            base_url=base_url or DEFAULT_OPENAI_BASE_URL,
            timeout=timeout_seconds,
            max_retries=0,
        )

    async def _close_client(self) -> None:
        await self._client.close()

    async def _chat(self, request: ChatRequest, *, offer_tools: bool) -> ChatResponse:
        max_tokens = request.max_tokens or self._max_output_tokens
        try:
            # The SDK's timeout bounds each read, not the call: a slow trickle outlasts it.
            async with asyncio.timeout(self._timeout_seconds):
                completion: object = await self._client.chat.completions.create(
                    model=self._model,
                    messages=_messages(request, native_tools=offer_tools),
                    max_tokens=openai.omit if self._is_official else max_tokens,
                    max_completion_tokens=max_tokens if self._is_official else openai.omit,
                    tools=_tools(request) if offer_tools else openai.omit,
                )
        except TimeoutError as exc:
            raise self._timed_out("deadline") from exc
        except _SDK_ERRORS as exc:
            raise self._map_error(exc, offered_tools=offer_tools) from exc
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
        calls = _ToolCallPieces()
        for index, call in enumerate(getattr(message, "tool_calls", None) or ()):
            calls.add(index, call)
        tool_calls = calls.assemble()
        usage = self._usage_of(completion.usage, request, content, tool_calls)
        return ChatResponse(
            text=content,
            usage=usage,
            model=self._model_of(completion.model),
            provider="openai",
            tool_calls=tool_calls,
        )

    async def _stream(
        self, request: ChatRequest, *, offer_tools: bool
    ) -> AsyncGenerator[StreamEvent, None]:
        max_tokens = request.max_tokens or self._max_output_tokens
        pieces: list[str] = []
        calls = _ToolCallPieces()
        usage: object = None
        model: object = None
        chunk_count = 0
        finished = False
        deadline = asyncio.get_running_loop().time() + self._timeout_seconds
        try:
            async with asyncio.timeout_at(deadline):
                chunks = await self._client.chat.completions.create(
                    model=self._model,
                    messages=_messages(request, native_tools=offer_tools),
                    max_tokens=openai.omit if self._is_official else max_tokens,
                    max_completion_tokens=max_tokens if self._is_official else openai.omit,
                    tools=_tools(request) if offer_tools else openai.omit,
                    stream=True,
                    stream_options={"include_usage": True},
                )
        except TimeoutError as exc:
            raise self._timed_out("deadline") from exc
        except _SDK_ERRORS as exc:
            raise self._map_error(exc, offered_tools=offer_tools) from exc
        try:
            timed = paced(
                chunks,
                idle_seconds=self._stream_idle_seconds,
                deadline=deadline,
                timed_out=self._timed_out,
            )
            async with chunks, aclosing(timed):
                async for chunk in timed:
                    chunk_count += 1
                    model = chunk.model or model
                    usage = chunk.usage or usage
                    for choice in chunk.choices or ():
                        finished = finished or bool(choice.finish_reason)
                        if not choice.delta:
                            continue
                        for position, piece in enumerate(choice.delta.tool_calls or ()):
                            calls.add(piece.index, piece, position=position)
                        delta = choice.delta.content
                        if delta:
                            pieces.append(delta)
                            yield delta
        except _SDK_ERRORS as exc:
            raise self._map_error(exc, offered_tools=offer_tools) from exc
        except AttributeError as exc:
            # A chunk that is JSON but not shaped like one: the SDK builds it without validation.
            raise self._malformed("a stream chunk could not be read") from exc
        if chunk_count == 0:
            # Every real stream has at least one chunk; none means the body was not a stream.
            raise self._malformed("the stream held no chunks")
        if not finished:
            # The body ended without a finish reason (and so without ``[DONE]``): a proxy or
            # server gave up mid-reply. What arrived is a fragment, not the answer.
            raise self._malformed("the stream was cut before the reply finished")
        text = "".join(pieces)
        tool_calls = calls.assemble()
        yield ChatResponse(
            text=text,
            usage=self._usage_of(usage, request, text, tool_calls),
            model=self._model_of(model),
            provider="openai",
            tool_calls=tool_calls,
        )

    # -- response -------------------------------------------------------------------------------

    def _usage_of(
        self, usage: object, request: ChatRequest, reply: str, tool_calls: tuple[ToolCall, ...]
    ) -> Usage:
        if isinstance(usage, CompletionUsage) and isinstance(usage.prompt_tokens, int):
            return Usage(
                input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens or 0
            )
        # Some compatible servers report no usage; compaction still needs a measure.
        prompt = "\n".join([request.system, *map(plain_text_of, request.messages)])
        written = "\n".join([reply, *(f"{call.name} {call.arguments}" for call in tool_calls)])
        return Usage(input_tokens=estimate_tokens(prompt), output_tokens=estimate_tokens(written))

    def _model_of(self, model: object) -> str:
        return model if isinstance(model, str) and model else self._model

    # -- errors -----------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, *, offered_tools: bool) -> ProviderError:
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
            return self._map_status_error(exc, offered_tools=offered_tools)
        if isinstance(exc, openai.APIError):
            # An error event inside a stream: no HTTP status, only the body's code.
            message = safe_message(f"{name} reported an error: {exc.message}", self._api_key)
            if _is_context_error(exc):
                return ContextTooLong(message, provider=name)
            return Unavailable(message, provider=name)
        return Unavailable(f"{name}: {type(exc).__name__}", provider=name)

    def _map_status_error(
        self, exc: openai.APIStatusError, *, offered_tools: bool
    ) -> ProviderError:
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
            if offered_tools and _is_tools_refusal(exc):
                return ToolsRefused(message, provider=name)
            return BadRequest(message, provider=name)
        return Unavailable(message, provider=name)


@dataclass
class _ToolCallPieces:
    """Tool calls as they arrive: whole in a completion, in pieces in a stream (id and name
    first, then the arguments a few characters at a time), keyed by the call's ``index``."""

    _calls: dict[int, _PartialCall] = field(default_factory=dict)

    def add(self, index: object, piece: object, *, position: int = 0) -> None:
        # Some compatible servers send whole calls without an index; their place in the list is.
        key = index if isinstance(index, int) else position
        call = self._calls.setdefault(key, _PartialCall())
        function: object = getattr(piece, "function", None)
        call.id = call.id or _text(getattr(piece, "id", None))
        call.name = call.name or _text(getattr(function, "name", None))
        call.arguments.append(_text(getattr(function, "arguments", None)))

    def assemble(self) -> tuple[ToolCall, ...]:
        return tuple(
            # A call with no id (some local servers) still needs one to pair it with its result,
            # unique in the conversation: a strict provider (a fallback) refuses repeated ids.
            ToolCall(
                id=call.id or f"call_{secrets.token_hex(8)}",
                name=call.name,
                arguments="".join(call.arguments),
            )
            for key, call in sorted(self._calls.items())
            if call.name
        )


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _messages(request: ChatRequest, *, native_tools: bool) -> list[ChatCompletionMessageParam]:
    """The history in the API's form. Tool calls and results take their native form only when
    tools are offered (a server that was sent no tools may not know ``tool`` messages); otherwise
    they are written into the text."""
    messages: list[ChatCompletionMessageParam] = []
    if request.system:
        messages.append(ChatCompletionSystemMessageParam(role="system", content=request.system))
    for message in request.messages:
        has_tools = bool(message.tool_calls or message.tool_results)
        if has_tools and not native_tools:
            messages.append(_plain(message))
        elif message.role == "user":
            messages += _user_messages(message)
        elif message.tool_calls:
            messages.append(
                ChatCompletionAssistantMessageParam(
                    role="assistant",
                    content=message.content or None,
                    tool_calls=[_tool_call(call) for call in message.tool_calls],
                )
            )
        else:
            messages.append(
                ChatCompletionAssistantMessageParam(role="assistant", content=message.content)
            )
    return messages


def _user_messages(message: ChatMessage) -> Iterable[ChatCompletionMessageParam]:
    # The API has no error flag on a tool message; the result's content has to say so.
    for result in message.tool_results:
        yield ChatCompletionToolMessageParam(
            role="tool", tool_call_id=result.call_id, content=result.content
        )
    if message.images:
        yield ChatCompletionUserMessageParam(role="user", content=_parts(message))
    elif message.content or not message.tool_results:
        yield ChatCompletionUserMessageParam(role="user", content=message.content)


def _parts(message: ChatMessage) -> list[ChatCompletionContentPartParam]:
    """A user turn with pictures: its words, then each picture as a data URL."""
    parts: list[ChatCompletionContentPartParam] = []
    if message.content:
        parts.append(ChatCompletionContentPartTextParam(type="text", text=message.content))
    for image in message.images:
        data = base64.b64encode(image.data).decode("ascii")
        url = f"data:{image.media_type};base64,{data}"
        parts.append(ChatCompletionContentPartImageParam(type="image_url", image_url={"url": url}))
    return parts


def _plain(message: ChatMessage) -> ChatCompletionMessageParam:
    content = plain_text_of(message)
    if message.role == "user":
        return ChatCompletionUserMessageParam(role="user", content=content)
    return ChatCompletionAssistantMessageParam(role="assistant", content=content)


def _tool_call(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    return ChatCompletionMessageFunctionToolCallParam(
        id=call.id, type="function", function={"name": call.name, "arguments": call.arguments}
    )


def _tools(request: ChatRequest) -> list[ChatCompletionFunctionToolParam]:
    return [
        ChatCompletionFunctionToolParam(
            type="function",
            function=FunctionDefinition(
                name=tool.name, description=tool.description, parameters=dict(tool.parameters)
            ),
        )
        for tool in request.tools
    ]


def _is_tools_refusal(exc: openai.APIStatusError) -> bool:
    # api.openai.com names the refused parameter; compatible servers only say it in words.
    if exc.code == "unsupported_parameter" and exc.param in ("tools", "tool_choice"):
        return True
    return says_tools_unsupported(exc.message)


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
