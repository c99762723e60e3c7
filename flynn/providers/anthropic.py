"""The Anthropic Messages API as a ``Provider``; SDK errors become ``flynn.errors`` here, and tool
calls travel as ``tool_use`` / ``tool_result`` content blocks.

The SDK's own retries are off (``max_retries=0``): ``RetryingProvider`` decides, by error type.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncGenerator, Callable
from contextlib import AsyncExitStack, aclosing
from datetime import datetime
from typing import Literal, cast

import anthropic

# httpx2 is the SDK's HTTP library; its errors escape the SDK while a stream body is being read.
import httpx2
import structlog
from anthropic.types import (
    AssistantMessageParam,
    Base64ImageSourceParam,
    ImageBlockParam,
    Message,
    MessageParam,
    TextBlock,
    TextBlockParam,
    ToolParam,
    ToolResultBlockParam,
    ToolUseBlock,
    ToolUseBlockParam,
    UserMessageParam,
)
from anthropic.types import Usage as AnthropicUsage

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
    ImagePart,
    StreamEvent,
    ToolCall,
    Usage,
)
from flynn.providers.defaults import DEFAULT_ANTHROPIC_BASE_URL
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

_log = structlog.get_logger(__name__)

# What the SDK raises about a call: its own errors, transport errors while streaming, and
# ValueError (json.JSONDecodeError) for a body that is not JSON.
_SDK_ERRORS = (anthropic.AnthropicError, httpx2.HTTPError, ValueError)


class AnthropicProvider(SdkProvider):
    """Claude through ``anthropic.AsyncAnthropic``. Close with ``aclose`` (or ``async with``)."""

    vendor = "anthropic"

    def __init__(
        self,
        api_key: str,
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
        # An explicit base_url keeps the SDK from reading ANTHROPIC_BASE_URL behind the config.
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url or DEFAULT_ANTHROPIC_BASE_URL,
            timeout=timeout_seconds,
            max_retries=0,
        )

    async def _close_client(self) -> None:
        await self._client.close()

    async def _chat(self, request: ChatRequest, *, offer_tools: bool) -> ChatResponse:
        try:
            # The SDK's timeout bounds each read, not the call: a slow trickle outlasts it.
            async with asyncio.timeout(self._timeout_seconds):
                message: object = await self._client.messages.create(
                    model=self._model,
                    max_tokens=request.max_tokens or self._max_output_tokens,
                    messages=_messages(request, native_tools=offer_tools),
                    system=_system(request),
                    tools=_tools(request) if offer_tools else anthropic.omit,
                )
        except TimeoutError as exc:
            raise self._timed_out("deadline") from exc
        except _SDK_ERRORS as exc:
            raise self._map_error(exc, offered_tools=offer_tools) from exc
        if not isinstance(message, Message):
            raise self._malformed("the response is not a message")
        return ChatResponse(
            text=self._text_of(message),
            usage=self._usage_of(message),
            model=self._model_of(message),
            provider="anthropic",
            tool_calls=self._tool_calls_of(message),
        )

    async def _stream(
        self, request: ChatRequest, *, offer_tools: bool
    ) -> AsyncGenerator[StreamEvent, None]:
        pieces: list[str] = []
        deadline = asyncio.get_running_loop().time() + self._timeout_seconds
        try:
            async with AsyncExitStack() as stack:
                opening = self._client.messages.stream(
                    model=self._model,
                    max_tokens=request.max_tokens or self._max_output_tokens,
                    messages=_messages(request, native_tools=offer_tools),
                    system=_system(request),
                    tools=_tools(request) if offer_tools else anthropic.omit,
                )
                async with asyncio.timeout_at(deadline):
                    events = await stack.enter_async_context(opening)
                timed = paced(
                    events,
                    idle_seconds=self._stream_idle_seconds,
                    deadline=deadline,
                    timed_out=self._timed_out,
                )
                async with aclosing(timed):
                    # Every event counts against the idle gap (pings and tool input too), but
                    # only text is passed on. Tool input arrives as ``input_json_delta`` pieces;
                    # the SDK joins and parses them (a piece that is not JSON raises
                    # ValueError, mapped to MalformedResponse).
                    async for event in timed:
                        if event.type == "text" and event.text:
                            pieces.append(event.text)
                            yield event.text
                final: object = await events.get_final_message()
        except TimeoutError as exc:
            raise self._timed_out("deadline") from exc
        except _SDK_ERRORS as exc:
            raise self._map_error(exc, offered_tools=offer_tools) from exc
        except AssertionError as exc:
            # The SDK asserts when the stream ended before its ``message_start`` event.
            raise self._malformed("the stream ended before the message began") from exc
        if not isinstance(final, Message):
            raise self._malformed("the stream held no message")
        if final.stop_reason is None:
            # The body ended before ``message_delta`` said why the model stopped: a proxy or
            # server gave up mid-reply. What arrived is a fragment, not the answer.
            raise self._malformed("the stream was cut before the reply finished")
        yield ChatResponse(
            text="".join(pieces),
            usage=self._usage_of(final),
            model=self._model_of(final),
            provider="anthropic",
            tool_calls=self._tool_calls_of(final),
        )

    # -- request and response ---------------------------------------------------------------

    def _text_of(self, message: Message) -> str:
        content: object = message.content
        if not isinstance(content, list):
            raise self._malformed("the message has no content")
        return "".join(block.text for block in content if isinstance(block, TextBlock))

    def _tool_calls_of(self, message: Message) -> tuple[ToolCall, ...]:
        calls: list[ToolCall] = []
        for block in message.content:
            if not isinstance(block, ToolUseBlock):
                continue
            arguments: object = block.input
            if not isinstance(arguments, dict):
                # The API promises an object; anything else is a server we cannot read.
                raise MalformedResponse(
                    f"{self.name}: tool call {block.name!r} has no input object", provider=self.name
                )
            calls.append(ToolCall(id=block.id, name=block.name, arguments=json.dumps(arguments)))
        return tuple(calls)

    def _usage_of(self, message: Message) -> Usage:
        usage: object = message.usage
        if not isinstance(usage, AnthropicUsage):
            raise self._malformed("the message has no usage")
        # Cached prompt tokens are counted apart from input_tokens but fill the window all the same.
        prompt = (
            usage.input_tokens
            + (usage.cache_read_input_tokens or 0)
            + (usage.cache_creation_input_tokens or 0)
        )
        return Usage(input_tokens=prompt, output_tokens=usage.output_tokens)

    def _model_of(self, message: Message) -> str:
        model: object = message.model
        return model if isinstance(model, str) and model else self._model

    # -- errors -------------------------------------------------------------------------------

    def _map_error(self, exc: Exception, *, offered_tools: bool) -> ProviderError:
        name = self.name
        if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            return ProviderTimeout(
                f"{name}: no answer within {self._timeout_seconds:g}s", provider=name
            )
        if isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
            return Unavailable(f"{name}: connection failed ({type(exc).__name__})", provider=name)
        if isinstance(exc, anthropic.APIStatusError):
            return self._map_status_error(exc, offered_tools=offered_tools)
        if isinstance(exc, anthropic.CredentialsError):
            return AuthFailed(f"{name}: no usable credentials", provider=name)
        if isinstance(exc, anthropic.APIResponseValidationError | ValueError):
            return MalformedResponse(f"{name}: the response could not be read", provider=name)
        return Unavailable(f"{name}: {type(exc).__name__}", provider=name)

    def _map_status_error(
        self, exc: anthropic.APIStatusError, *, offered_tools: bool
    ) -> ProviderError:
        name = self.name
        status = exc.status_code
        # ``type`` is the body's ``error.type``; it also classifies errors sent mid-stream, where
        # the HTTP status is still 200.
        kind = exc.type
        message = safe_message(
            f"{name} answered {status} {kind or ''}: {exc.api_message or ''}".rstrip(": "),
            self._api_key,
        )
        if status == 429 or kind == "rate_limit_error":
            retry_after = retry_after_seconds(exc.response.headers, self._clock())
            return RateLimited(message, provider=name, retry_after=retry_after)
        if status in (401, 402, 403) or kind in (
            "authentication_error",
            "permission_error",
            "billing_error",
        ):
            # A billing refusal (402) will not pass by retrying either; another provider may work.
            return AuthFailed(message, provider=name)
        if status == 408 or kind == "timeout_error":
            return ProviderTimeout(message, provider=name)
        if status == 413:
            # request_too_large: the prompt exceeds the request size limit; compaction is the cure.
            return ContextTooLong(message, provider=name)
        if status >= 500 or status == 409 or kind in ("api_error", "overloaded_error"):
            return Unavailable(message, provider=name)
        if status == 400 and _says_prompt_too_long(exc.api_message):
            return ContextTooLong(message, provider=name)
        if 400 <= status < 500:
            if offered_tools and says_tools_unsupported(exc.api_message or ""):
                return ToolsRefused(message, provider=name)
            return BadRequest(message, provider=name)
        return Unavailable(message, provider=name)


def _messages(request: ChatRequest, *, native_tools: bool) -> list[MessageParam]:
    """The history in the API's form. Tool calls and results become content blocks only when
    tools are offered (the API refuses ``tool_use`` blocks in a request that defines no tools);
    otherwise they are written into the text."""
    messages: list[MessageParam] = []
    for message in request.messages:
        has_tools = bool(message.tool_calls or message.tool_results)
        if has_tools and not native_tools:
            content = plain_text_of(message)
            if message.role == "user":
                messages.append(UserMessageParam(role="user", content=content))
            else:
                messages.append(AssistantMessageParam(role="assistant", content=content))
        elif message.role == "user":
            messages.append(UserMessageParam(role="user", content=_user_content(message)))
        else:
            messages.append(
                AssistantMessageParam(role="assistant", content=_assistant_content(message))
            )
    return messages


def _user_content(
    message: ChatMessage,
) -> str | list[ToolResultBlockParam | TextBlockParam | ImageBlockParam]:
    if not message.tool_results and not message.images:
        return message.content
    blocks: list[ToolResultBlockParam | TextBlockParam | ImageBlockParam] = [
        ToolResultBlockParam(
            type="tool_result",
            tool_use_id=result.call_id,
            content=result.content,
            is_error=result.is_error,
        )
        for result in message.tool_results
    ]
    # The API wants the results first; the pictures come before the words about them.
    blocks += [_image_block(image) for image in message.images]
    if message.content:
        blocks.append(TextBlockParam(type="text", text=message.content))
    return blocks


def _image_block(image: ImagePart) -> ImageBlockParam:
    data = base64.b64encode(image.data).decode("ascii")
    media_type = cast(_ImageType, image.media_type)  # the caller sends only these four
    source = Base64ImageSourceParam(type="base64", media_type=media_type, data=data)
    return ImageBlockParam(type="image", source=source)


_ImageType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]


def _assistant_content(message: ChatMessage) -> str | list[TextBlockParam | ToolUseBlockParam]:
    if not message.tool_calls:
        return message.content
    # The API refuses an empty text block, so a turn that only calls tools sends none.
    blocks: list[TextBlockParam | ToolUseBlockParam] = []
    if message.content:
        blocks.append(TextBlockParam(type="text", text=message.content))
    blocks += [
        ToolUseBlockParam(type="tool_use", id=call.id, name=call.name, input=_input_of(call))
        for call in message.tool_calls
    ]
    return blocks


def _input_of(call: ToolCall) -> dict[str, object]:
    # A call whose arguments were not a JSON object was answered with an error result; the API
    # takes only an object here, so it is sent as the empty one.
    try:
        arguments: object = json.loads(call.arguments)
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def _tools(request: ChatRequest) -> list[ToolParam]:
    return [
        ToolParam(name=tool.name, description=tool.description, input_schema=dict(tool.parameters))
        for tool in request.tools
    ]


def _system(request: ChatRequest) -> str | anthropic.Omit:
    # The API refuses an empty system text block; no system prompt means leaving it out.
    return request.system if request.system else anthropic.omit


def _says_prompt_too_long(api_message: str | None) -> bool:
    # The one place message text is read: the API reports an over-long prompt as a plain
    # invalid_request_error with no distinct type or code, so only its wording tells it apart.
    text = (api_message or "").lower()
    return any(
        phrase in text
        for phrase in ("prompt is too long", "context length", "context window", "too many tokens")
    )
