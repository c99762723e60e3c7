"""A fake Anthropic Messages API (``POST /v1/messages``) that the real ``anthropic`` SDK talks to.

Point the SDK at ``server.base_url`` (the host root; the SDK adds ``/v1/messages``).
"""

from __future__ import annotations

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
from .script import Fail, Malformed, Reply

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
        return json_response(
            200,
            {
                "id": "msg_fake",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": step.text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": step.input_tokens,
                    "output_tokens": step.completion_tokens(),
                },
            },
        )


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
        sse_frame(
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
            "content_block_start",
        ),
        sse_frame({"type": "ping"}, "ping"),
    ]
    for number, delta in enumerate(reply.deltas(), start=1):
        frames.append(
            sse_frame(
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": delta},
                },
                "content_block_delta",
            )
        )
        if number == reply.drop_after:
            frames.append(DropConnection())
            return EventStream(tuple(frames))
        if number == reply.error_after:
            error = {"type": _ERROR_TYPES[reply.error], "message": f"{reply.error} mid-stream"}
            frames.append(sse_frame({"type": "error", "error": error}, "error"))
            return EventStream(tuple(frames))
        if number == 1 and reply.hold is not None:
            frames.append(WaitFor(reply.hold))
    frames += [
        sse_frame({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        sse_frame(
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": reply.completion_tokens()},
            },
            "message_delta",
        ),
        sse_frame({"type": "message_stop"}, "message_stop"),
    ]
    return EventStream(tuple(frames))
