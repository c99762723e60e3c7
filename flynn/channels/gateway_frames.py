"""Gateway protocol v1 frames (DESIGN.md section 8): a client frame parsed and checked once into
what the router takes, and the server's frames encoded as JSON text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from flynn.commands import NAMES, parse_command
from flynn.messages import CommandCall

COMMANDS = NAMES
"""The six commands of protocol v1, plus ``help`` and ``search`` (``flynn.sessions.commands``)."""

CLIENT_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
MAX_ID_CHARS = 128

# Finds a frame's id on error paths that do not parse the frame (too large, over the rate
# limit); the web page always sends "id" before "text".
_PEEK_ID = re.compile(r'"id"\s*:\s*"([^"\\]{1,128})"')
# ASCII output keeps a lone surrogate (which UTF-8 cannot carry) from failing a send.
_encode = json.JSONEncoder(separators=(",", ":")).encode


@dataclass(frozen=True, slots=True)
class ClientText:
    """A ``message`` (a ``/x`` text is a command too), or a ``command`` frame, whose ``text``
    is the slash text it stands for (``/otr on``: what is stored and replayed). ``id`` is None
    only for a command sent without one."""

    id: str | None
    text: str
    command: CommandCall | None = None


@dataclass(frozen=True, slots=True)
class FrameReply:
    """The gateway's reply handle: the client, and the id its frame gave (the id its reply,
    deltas and errors carry)."""

    client_id: str
    frame_id: str

    @property
    def intake_id(self) -> str:
        """The frame's ``InboundMessage.message_id``: ``<client_id>:<frame_id>``, unique per
        client, since the router's durable intake keys on (channel, message_id). The layout is
        written here only, and kept: ``replayed`` rebuilds the handle from it."""
        return f"{self.client_id}:{self.frame_id}"

    @classmethod
    def replayed(cls, client_id: str, intake_id: str) -> FrameReply:
        """The handle of a message replayed after a restart (handles are not stored), from its
        client (its session's) and ``intake_id``: the frame id is what follows the client's
        prefix, which is known, so a ``:`` inside either id is no matter."""
        return cls(client_id, intake_id[len(client_id) + 1 :])


@dataclass(frozen=True, slots=True)
class Rejected:
    """Why a frame was refused: the error frame to answer with."""

    code: str
    message: str
    id: str | None = None


def parse_json_object(raw: str | bytes) -> dict[str, object] | None:
    if not isinstance(raw, str):
        return None
    try:
        frame = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return frame if isinstance(frame, dict) else None


def parse_frame(raw: str | bytes, max_bytes: int) -> ClientText | Rejected:
    """An authenticated client's frame; ``Rejected`` says what was wrong with it."""
    if not isinstance(raw, str):
        return Rejected("bad_request", "binary frames are not supported")
    size = len(raw)
    # A character takes 1-4 bytes in UTF-8: encode only when the length alone cannot tell.
    if size > max_bytes or (size * 4 > max_bytes and len(raw.encode()) > max_bytes):
        return Rejected("too_large", f"frames are limited to {max_bytes} bytes", peek_id(raw))
    frame = parse_json_object(raw)
    if frame is None:
        return Rejected("bad_request", "a frame must be a JSON object")
    raw_id = frame.get("id")
    frame_id = raw_id if isinstance(raw_id, str) and 0 < len(raw_id) <= MAX_ID_CHARS else None
    kind = frame.get("type")
    if kind == "message":
        text = frame.get("text")
        if frame_id is None:
            return Rejected("bad_request", "a message needs an id: 1-128 characters")
        if not isinstance(text, str) or not text:
            return Rejected("bad_request", "a message needs a non-empty text", frame_id)
        if not _is_unicode(text):
            return Rejected("bad_request", "text holds an unpaired surrogate", frame_id)
        return ClientText(frame_id, text, parse_command(text))
    if kind == "command":
        if raw_id is not None and frame_id is None:
            return Rejected("bad_request", "a command id must be 1-128 characters")
        return _command(frame, frame_id)
    if kind == "hello":
        return Rejected("bad_request", "already authenticated", frame_id)
    return Rejected("bad_request", "unknown or missing frame type", frame_id)


def _command(frame: dict[str, object], frame_id: str | None) -> ClientText | Rejected:
    name, arg = frame.get("name"), frame.get("arg")
    if not isinstance(name, str) or name not in COMMANDS:
        known = ", ".join(sorted(COMMANDS))
        return Rejected("bad_request", f"unknown command; known: {known}", frame_id)
    if arg is not None and not (isinstance(arg, str) and _is_unicode(arg)):
        return Rejected("bad_request", "a command arg must be a string", frame_id)
    arg = arg.strip() if arg else ""
    return ClientText(frame_id, f"/{name} {arg}" if arg else f"/{name}", CommandCall(name, arg))


def peek_id(raw: str | bytes) -> str | None:
    """The frame's id if it is near the start, without parsing the frame."""
    if not isinstance(raw, str):
        return None
    match = _PEEK_ID.search(raw, 0, 512)
    return match.group(1) if match else None


def _is_unicode(text: str) -> bool:
    """False for text with a lone surrogate (a ``\\ud800`` escape in JSON), which nothing
    downstream could encode."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def ready_frame(session: str) -> str:
    return _encode({"type": "ready", "session": session})


def delta_frame(frame_id: str, text: str) -> str:
    return _encode({"type": "delta", "id": frame_id, "text": text})


def reply_frame(frame_id: str, text: str) -> str:
    return _encode({"type": "reply", "id": frame_id, "text": text})


def push_frame(frame_id: str, kind: str, text: str) -> str:
    """An unprompted message (a reminder firing); ``frame_id`` is ``p<push id>``."""
    return _encode({"type": "push", "id": frame_id, "kind": kind, "text": text})


def error_frame(code: str, message: str, frame_id: str | None = None) -> str:
    if frame_id is None:
        return _encode({"type": "error", "code": code, "message": message})
    return _encode({"type": "error", "id": frame_id, "code": code, "message": message})
