"""A fake OpenAI Chat Completions API (``POST /v1/chat/completions``) for the real ``openai`` SDK.

Point the SDK at ``server.base_url``, which ends in ``/v1`` like every OpenAI-compatible server.
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
from .script import Fail, Malformed, Reply, ToolUse

# kind -> (error type, error code); the codes are the ones api.openai.com sends.
_ERRORS: dict[str, tuple[str, str | None]] = {
    "rate_limited": ("requests", "rate_limit_exceeded"),
    "server_error": ("server_error", None),
    "overloaded": ("server_error", "overloaded"),
    "unauthorized": ("invalid_request_error", "invalid_api_key"),
    "forbidden": ("invalid_request_error", "unsupported_country_region_territory"),
    "context_too_long": ("invalid_request_error", "context_length_exceeded"),
    "bad_request": ("invalid_request_error", None),
    "not_found": ("invalid_request_error", "model_not_found"),
}


class FakeOpenAI(FakeModelServer):
    vendor = "openai"
    api_path = "/v1/chat/completions"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def is_authorized(self, request: RecordedRequest) -> bool:
        expected = f"Bearer {self.api_key}"
        return self.api_key is None or request.headers.get("authorization") == expected

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
        model = str(request.json.get("model", "gpt-fake"))
        if request.json.get("stream") is True:
            options = request.json.get("stream_options") or {}
            with_usage = bool(options.get("include_usage")) and step.include_usage
            return _stream(step, model, with_usage=with_usage)
        return json_response(
            200,
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": _message(step),
                        "finish_reason": _finish_reason(step),
                    }
                ],
                "usage": _usage(step),
            },
        )


def _message(reply: Reply) -> dict[str, Any]:
    if not reply.tool_calls:
        return {"role": "assistant", "content": reply.text}
    return {
        "role": "assistant",
        "content": reply.text or None,
        "tool_calls": [
            {
                "id": _call_id(call, position),
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments_json()},
            }
            for position, call in enumerate(reply.tool_calls)
        ],
    }


def _finish_reason(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _call_id(call: ToolUse, position: int) -> str:
    return call.call_id("call_fake_", position)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _usage(reply: Reply) -> dict[str, int]:
    completion = reply.completion_tokens()
    return {
        "prompt_tokens": reply.input_tokens,
        "completion_tokens": completion,
        "total_tokens": reply.input_tokens + completion,
    }


def _error(fail: Fail) -> HttpResponse:
    error_type, code = _ERRORS[fail.kind]
    status = 503 if fail.kind == "overloaded" else fail.status
    message = fail.message
    if fail.kind == "context_too_long":
        message = (
            "This model's maximum context length is 8192 tokens. However, your messages "
            "resulted in 250000 tokens. Please reduce the length of the messages."
        )
    headers: tuple[tuple[str, str], ...] = ()
    if fail.retry_after is not None:
        headers = (("retry-after", fail.retry_after),)
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return json_response(status, body, headers)


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
    return sse_frame(
        {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
    )


def _stream(reply: Reply, model: str, *, with_usage: bool) -> EventStream:
    frames: list[bytes | WaitFor | DropConnection] = [
        _chunk(model, {"role": "assistant", "content": ""})
    ]
    if reply.end_after == 0:
        return EventStream(tuple(frames), interval=reply.interval)
    pieces = 0
    for frame, is_piece in _delta_frames(reply, model):
        frames.append(frame)
        if not is_piece:
            continue
        pieces += 1
        if pieces == reply.drop_after:
            frames.append(DropConnection())
            return EventStream(tuple(frames), interval=reply.interval)
        if pieces == reply.error_after:
            error_type, code = _ERRORS[reply.error]
            error = {"message": f"{reply.error} mid-stream", "type": error_type, "code": code}
            frames.append(sse_frame({"error": error}))
            return EventStream(tuple(frames), interval=reply.interval)
        if pieces == reply.end_after:
            return EventStream(tuple(frames), interval=reply.interval)
        if pieces == 1 and reply.hold is not None:
            frames.append(WaitFor(reply.hold))
    frames.append(_chunk(model, {}, _finish_reason(reply)))
    if with_usage:
        frames.append(
            sse_frame(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": 1_700_000_000,
                    "model": model,
                    "choices": [],
                    "usage": _usage(reply),
                }
            )
        )
    frames.append(sse_frame("[DONE]"))
    return EventStream(tuple(frames), interval=reply.interval)


def _delta_frames(reply: Reply, model: str) -> list[tuple[bytes, bool]]:
    """Text deltas, then each tool call: its id and name first, then its arguments in pieces.
    True marks a delta (text or arguments)."""
    frames = [(_chunk(model, {"content": delta}), True) for delta in reply.deltas()]
    for position, call in enumerate(reply.tool_calls):
        opening = {
            "index": position,
            "id": _call_id(call, position),
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        frames.append((_chunk(model, {"tool_calls": [opening]}), False))
        for piece in call.pieces(reply.chunks):
            more = {"index": position, "function": {"arguments": piece}}
            frames.append((_chunk(model, {"tool_calls": [more]}), True))
    return frames
