"""A fake Anthropic Messages API (``POST /v1/messages``) that the real ``anthropic`` SDK talks to.

Point the SDK at ``server.base_url`` (the host root; the SDK adds ``/v1/messages``).
"""

from __future__ import annotations

import json
from typing import Any

from .http_server import (
    Action,
    DropConnection,
    EventStream,
    FakeModelServer,
    HttpResponse,
    RecordedRequest,
    WaitFor,
    json_response,
    sse_frame,
)
from .script import Fail, Malformed, Reply, ToolUse

_ERROR_TYPES = {
    "rate_limited": "rate_limit_error",
    "server_error": "api_error",
    "overloaded": "overloaded_error",
    "unauthorized": "authentication_error",
    "forbidden": "permission_error",
    "context_too_long": "invalid_request_error",
    "bad_request": "invalid_request_error",
    "not_found": "not_found_error",
}


class FakeAnthropic(FakeModelServer):
    vendor = "anthropic"
    api_path = "/v1/messages"

    def is_authorized(self, request: RecordedRequest) -> bool:
        # The API takes ``x-api-key``; SDK 2.x sends the key as a bearer token instead.
        if self.api_key is None:
            return True
        return self.api_key in (
            request.headers.get("x-api-key"),
            request.headers.get("authorization", "").removeprefix("Bearer "),
        )

    def last_user_text(self, request: RecordedRequest) -> str:
        for message in reversed(request.json.get("messages", [])):
            if message.get("role") == "user":
                return _text_of(message.get("content"))
        return ""

    def render(self, step: Reply | Fail | Malformed, request: RecordedRequest) -> Action:
        if isinstance(step, Malformed):
            return HttpResponse(200, step.body.encode(), content_type=step.content_type)
        if isinstance(step, Fail):
            return _error(step)
        model = str(request.json.get("model", "claude-fake"))
        if request.json.get("stream") is True:
            return _stream(step, model)
        content: list[dict[str, Any]] = []
        if _has_text_block(step):
            content.append({"type": "text", "text": step.text})
        for position, call in enumerate(step.tool_calls):
            content.append(_tool_use_block(call, position, _input_of(call)))
        return json_response(
            200,
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": _stop_reason(step),
                "stop_sequence": None,
                "usage": {
                    "input_tokens": step.input_tokens,
                    "output_tokens": step.completion_tokens(),
                },
            },
        )


def _has_text_block(reply: Reply) -> bool:
    # The API sends no text block before tool calls when the model wrote nothing.
    return bool(reply.text) or not reply.tool_calls


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _tool_use_block(call: ToolUse, position: int, tool_input: object) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": call.call_id("toolu_fake_", position),
        "name": call.name,
        "input": tool_input,
    }


def _input_of(call: ToolUse) -> object:
    """The call's input as the API sends it; string arguments that are not JSON are sent as the
    bare string, which no real server would do."""
    if not isinstance(call.arguments, str):
        return call.arguments
    try:
        return json.loads(call.arguments)
    except ValueError:
        return call.arguments


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return ""


def _error(fail: Fail) -> HttpResponse:
    message = fail.message
    if fail.kind == "context_too_long":
        message = "prompt is too long: 250000 tokens > 200000 maximum"
    headers: tuple[tuple[str, str], ...] = ()
    if fail.retry_after is not None:
        headers = (("retry-after", fail.retry_after),)
    body = {"type": "error", "error": {"type": _ERROR_TYPES[fail.kind], "message": message}}
    return json_response(fail.status, body, headers)


def _stream(reply: Reply, model: str) -> EventStream:
    frames: list[bytes | WaitFor | DropConnection] = [
        sse_frame(
            {
                "type": "message_start",
                "message": {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": reply.input_tokens, "output_tokens": 1},
                },
            },
            "message_start",
        ),
        sse_frame({"type": "ping"}, "ping"),
    ]
    if reply.end_after == 0:
        return EventStream(tuple(frames), interval=reply.interval)
    pieces = 0
    for frame, is_piece in _content_frames(reply):
        frames.append(frame)
        if not is_piece:
            continue
        pieces += 1
        if pieces == reply.drop_after:
            frames.append(DropConnection())
            return EventStream(tuple(frames), interval=reply.interval)
        if pieces == reply.error_after:
            error = {"type": _ERROR_TYPES[reply.error], "message": f"{reply.error} mid-stream"}
            frames.append(sse_frame({"type": "error", "error": error}, "error"))
            return EventStream(tuple(frames), interval=reply.interval)
        if pieces == reply.end_after:
            return EventStream(tuple(frames), interval=reply.interval)
        if pieces == 1 and reply.hold is not None:
            frames.append(WaitFor(reply.hold))
    frames += [
        sse_frame(
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": {"output_tokens": reply.completion_tokens()},
            },
            "message_delta",
        ),
        sse_frame({"type": "message_stop"}, "message_stop"),
    ]
    return EventStream(tuple(frames), interval=reply.interval)


def _content_frames(reply: Reply) -> list[tuple[bytes, bool]]:
    """Each content block's start, deltas and stop; True marks a delta (text or tool input)."""
    frames: list[tuple[bytes, bool]] = []
    index = 0
    if _has_text_block(reply):
        frames.append((_block_start(index, {"type": "text", "text": ""}), False))
        for delta in reply.deltas():
            frames.append((_block_delta(index, {"type": "text_delta", "text": delta}), True))
        frames.append((_block_stop(index), False))
        index += 1
    for position, call in enumerate(reply.tool_calls):
        frames.append((_block_start(index, _tool_use_block(call, position, {})), False))
        for piece in call.pieces(reply.chunks):
            delta = {"type": "input_json_delta", "partial_json": piece}
            frames.append((_block_delta(index, delta), True))
        frames.append((_block_stop(index), False))
        index += 1
    return frames


def _block_start(index: int, block: dict[str, Any]) -> bytes:
    event = {"type": "content_block_start", "index": index, "content_block": block}
    return sse_frame(event, "content_block_start")


def _block_delta(index: int, delta: dict[str, str]) -> bytes:
    event = {"type": "content_block_delta", "index": index, "delta": delta}
    return sse_frame(event, "content_block_delta")


def _block_stop(index: int) -> bytes:
    return sse_frame({"type": "content_block_stop", "index": index}, "content_block_stop")
