"""Gateway protocol frames (docs/gateway-protocol.md): a client frame parsed and checked once
into what the router takes (or a ``history``, ``memory`` or ``ack``), and the server's frames
encoded as JSON text.
Error messages are sentences a person can read; the codes are the protocol's.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, get_args

from flynn.commands import NAMES, parse_command
from flynn.messages import Attachment, AttachmentKind, CommandCall, PushTiming

COMMANDS = NAMES
"""The six commands of protocol v1, plus ``help`` and ``search`` (``flynn.sessions.commands``)."""

CLIENT_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
PROTOCOLS = (1, 2)
"""The protocol versions served; a hello without ``protocol`` speaks 1, one asking for more than
2 is answered in 2 (its ``ready`` says which)."""
PUSH_ID = re.compile(r"p\d")
"""How a push's frame id starts (``p<push id>``); protocol 2 keeps these for the server."""
MAX_ID_CHARS = 128
MAX_ATTACHMENTS = 4
"""Of one ``message`` frame; together within the attachment cap (``files.max_file_bytes``)."""
_MAX_NAME_CHARS = 255


def attachment_allowance(attachment_bytes: int) -> int:
    """How much longer than ``max_message_bytes`` a ``message`` frame with attachments may be:
    their base64 (4 characters per 3 bytes) and each one's name and type."""
    if attachment_bytes <= 0:
        return 0
    return -(-attachment_bytes // 3) * 4 + MAX_ATTACHMENTS * 1024


HISTORY_DEFAULT = 50
"""Messages a ``history`` frame without a ``limit`` gets."""
HISTORY_MAX = 200
MemoryOp = Literal["overview", "history", "graph", "map", "forget", "file", "save_file"]
EDITABLE_FILES = ("USER.md", "REMINDERS.md")
"""The person's files the memory page reads whole and saves (``file``, ``save_file``): those
they write themselves; the others are Flynn's (distilled, or kept by the tools)."""
FILE_MAX_CHARS = 20_000
"""What a ``memory`` frame asks for (the memory page, ``gateway.memory``)."""
_MEMORY_OPS: dict[str, MemoryOp] = {op: op for op in get_args(MemoryOp)}
_MAX_ROW_ID = 2**63 - 1
_MAX_BASE_CHARS = 128

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
    attachments: tuple[Attachment, ...] = ()
    """A ``message``'s pictures and files, decoded (``attachments: [{name, type, data}]``)."""


@dataclass(frozen=True, slots=True)
class FrameReply:
    """The gateway's reply handle: the client, and the id its frame gave (the id its reply,
    deltas and errors carry). The frame id is the message's ``message_id`` as it is, and the
    client its ``chat_id``: durable intake keeps the two apart, so ids holding ``:`` never
    collide, and a message replayed after a restart is answered under the same id."""

    client_id: str
    frame_id: str


@dataclass(frozen=True, slots=True)
class Ack:
    """A protocol 2 ``ack``: the client has the reply or push with this ``id``."""

    id: str


@dataclass(frozen=True, slots=True)
class HistoryRequest:
    """A ``history`` frame: the session's newest ``limit`` messages, answered by the gateway
    itself. ``id`` (optional, an extension of the protocol's frame) comes back on the answer."""

    limit: int
    id: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryRequest:
    """A ``memory`` frame (an extension of protocol v1 for the memory page), answered by the
    gateway itself for the person the client is: ``fact`` names the fact of ``history`` and
    ``forget``, ``entity`` the graph's centre (``None``: the person's own node, else the most
    mentioned one)."""

    op: MemoryOp
    id: str | None = None
    fact: int | None = None
    entity: int | None = None
    name: str | None = None
    """The file of ``file`` and ``save_file`` (one of ``EDITABLE_FILES``)."""
    text: str | None = None
    """What ``save_file`` writes, whole."""
    base: str | None = None
    """``save_file``'s digest of the text the edit started from (``file``'s ``base``): when
    the file is no longer that text, nothing is written. ``None``: written whatever it holds."""


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One message of a ``history`` answer; ``html`` is ``text`` rendered, for the page."""

    role: str
    text: str
    at: datetime
    html: str | None = None
    kind: str | None = None
    """A push's kind (role ``push``)."""
    id: str | None = None
    """A push's frame id (``p<number>``), as it was sent live."""


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


def parse_frame(
    raw: str | bytes, max_bytes: int, *, protocol: int = 1, attachment_bytes: int = 0
) -> ClientText | HistoryRequest | MemoryRequest | Ack | Rejected:
    """An authenticated client's frame; ``Rejected`` says what was wrong with it. In protocol
    2 a client's own ids may not look like the server's push ids (``p`` and a digit), so an
    ``ack`` names one frame only. A ``message`` may carry attachments of ``attachment_bytes``
    together (0: none); its frame may then be longer than ``max_bytes`` by their base64."""
    if not isinstance(raw, str):
        return Rejected("bad_request", "Binary frames are not supported; send JSON text.")
    size = len(raw)
    limit = max_bytes + attachment_allowance(attachment_bytes)
    # A character takes 1-4 bytes in UTF-8: encode only when the length alone cannot tell.
    if size > limit or (size * 4 > limit and len(raw.encode()) > limit):
        return Rejected("too_large", too_large_message(max_bytes), peek_id(raw))
    frame = parse_json_object(raw)
    if frame is None:
        return Rejected("bad_request", "A frame must be a JSON object.")
    is_long = size > max_bytes or (size * 4 > max_bytes and len(raw.encode()) > max_bytes)
    if is_long and (frame.get("type") != "message" or not frame.get("attachments")):
        return Rejected("too_large", too_large_message(max_bytes), peek_id(raw))
    raw_id = frame.get("id")
    frame_id = raw_id if isinstance(raw_id, str) and 0 < len(raw_id) <= MAX_ID_CHARS else None
    kind = frame.get("type")
    if kind == "ack":
        if frame_id is None:
            return Rejected("bad_request", "An ack needs the id of what it acknowledges.")
        return Ack(frame_id)
    if frame_id is not None and ("\x00" in frame_id or not _is_unicode(frame_id)):
        # A message's id is its intake key, stored as text: PostgreSQL's text holds no NUL and
        # no store holds a lone surrogate, so such an id could never be taken, however often
        # the client tried again.
        return Rejected(
            "bad_request", "An id may not hold a NUL character or an unpaired surrogate.", frame_id
        )
    if protocol >= 2 and frame_id is not None and PUSH_ID.match(frame_id):
        return Rejected(
            "bad_request", "Ids that start with p and a digit are the server's push ids.", frame_id
        )
    if kind == "message":
        text = frame.get("text")
        if frame_id is None:
            return Rejected("bad_request", "A message needs an id of 1 to 128 characters.")
        attachments = _attachments(frame.get("attachments"), attachment_bytes, frame_id)
        if isinstance(attachments, Rejected):
            return attachments
        if text is None and attachments:
            text = ""
        if not isinstance(text, str) or not (text or attachments):
            return Rejected("bad_request", "A message needs some text.", frame_id)
        if not _is_unicode(text):
            return Rejected("bad_request", "The text holds an unpaired surrogate.", frame_id)
        if len(text.encode(errors="surrogatepass")) > max_bytes:
            return Rejected("too_large", too_large_message(max_bytes), frame_id)
        return ClientText(frame_id, text, parse_command(text), attachments)
    if kind == "command":
        if raw_id is not None and frame_id is None:
            return Rejected("bad_request", "A command's id must be 1 to 128 characters.")
        return _command(frame, frame_id)
    if kind == "history":
        return _history(frame, frame_id)
    if kind == "memory":
        return _memory(frame, frame_id)
    if kind == "hello":
        return Rejected("bad_request", "This connection has already said hello.", frame_id)
    return Rejected("bad_request", "Unknown or missing frame type.", frame_id)


def _attachments(value: object, cap: int, frame_id: str) -> tuple[Attachment, ...] | Rejected:
    """A ``message``'s ``attachments``: up to ``MAX_ATTACHMENTS`` objects ``{name, type,
    data}`` (``data`` base64), together at most ``cap`` bytes decoded."""
    if value is None or value == []:
        return ()
    if cap <= 0:
        return Rejected("bad_request", "This gateway takes no attachments.", frame_id)
    if not isinstance(value, list) or len(value) > MAX_ATTACHMENTS:
        return Rejected(
            "bad_request", f"attachments must be a list of up to {MAX_ATTACHMENTS}.", frame_id
        )
    found: list[Attachment] = []
    total = 0
    for item in value:
        if not isinstance(item, dict):
            return Rejected("bad_request", "Each attachment is an object.", frame_id)
        name, media_type, data = item.get("name"), item.get("type"), item.get("data")
        if not isinstance(name, str) or not 0 < len(name) <= _MAX_NAME_CHARS:
            return Rejected("bad_request", "An attachment needs a name.", frame_id)
        if not isinstance(media_type, str) or len(media_type) > _MAX_NAME_CHARS:
            return Rejected("bad_request", "An attachment's type must be text.", frame_id)
        if not isinstance(data, str):
            return Rejected("bad_request", "An attachment's data must be base64.", frame_id)
        try:
            decoded = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            return Rejected("bad_request", "An attachment's data must be base64.", frame_id)
        total += len(decoded)
        if total > cap:
            return Rejected(
                "too_large",
                f"Attachments may take {cap // (1024 * 1024)} MB together in one message.",
                frame_id,
            )
        kind: AttachmentKind = "photo" if media_type.startswith("image/") else "document"
        found.append(Attachment(name, media_type or "application/octet-stream", decoded, kind))
    return tuple(found)


def too_large_message(max_bytes: int) -> str:
    """``That message is too long (64 KB max).``"""
    if max_bytes >= 1 << 20 and max_bytes % (1 << 20) == 0:
        limit = f"{max_bytes >> 20} MB"
    elif max_bytes >= 1024:
        limit = f"{max_bytes / 1024:.3g} KB"
    else:
        limit = f"{max_bytes} bytes"
    return f"That message is too long ({limit} max)."


def _history(frame: dict[str, object], frame_id: str | None) -> HistoryRequest | Rejected:
    limit = frame.get("limit", HISTORY_DEFAULT)
    # bool is an int in Python, never in JSON: true is not a limit.
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= HISTORY_MAX:
        return Rejected(
            "bad_request", f"A history limit is a whole number from 1 to {HISTORY_MAX}.", frame_id
        )
    return HistoryRequest(limit, frame_id)


def _memory(frame: dict[str, object], frame_id: str | None) -> MemoryRequest | Rejected:
    raw_op = frame.get("op")
    op = _MEMORY_OPS.get(raw_op) if isinstance(raw_op, str) else None
    if op is None:
        known = ", ".join(sorted(_MEMORY_OPS))
        return Rejected("bad_request", f"Unknown memory request. Known ones: {known}.", frame_id)
    fact, entity = frame.get("fact"), frame.get("entity")
    if op in ("history", "forget") and not _is_row_id(fact):
        return Rejected("bad_request", "Say which fact: its id, a whole number.", frame_id)
    if op == "graph" and entity is not None and not _is_row_id(entity):
        return Rejected("bad_request", "An entity's id is a whole number.", frame_id)
    if op in ("file", "save_file"):
        return _file_request(op, frame, frame_id)
    return MemoryRequest(
        op,
        frame_id,
        fact if op in ("history", "forget") and isinstance(fact, int) else None,
        entity if op == "graph" and isinstance(entity, int) else None,
    )


def _file_request(
    op: MemoryOp, frame: dict[str, object], frame_id: str | None
) -> MemoryRequest | Rejected:
    name, text, base = frame.get("name"), frame.get("text"), frame.get("base")
    if name not in EDITABLE_FILES:
        known = ", ".join(EDITABLE_FILES)
        return Rejected("bad_request", f"Say which file: one of {known}.", frame_id)
    assert isinstance(name, str)
    if op == "file":
        return MemoryRequest(op, frame_id, name=name)
    if not isinstance(text, str):
        return Rejected("bad_request", "Say what the file should hold: its text.", frame_id)
    if len(text) > FILE_MAX_CHARS:
        return Rejected(
            "too_large",
            f"A file the page saves holds at most {FILE_MAX_CHARS:,} characters.",
            frame_id,
        )
    if not _is_unicode(text):
        # No store can encode it: the write would fail as an internal error, with a traceback.
        return Rejected("bad_request", "The text holds an unpaired surrogate.", frame_id)
    if base is not None and not (
        isinstance(base, str) and 0 < len(base) <= _MAX_BASE_CHARS and _is_unicode(base)
    ):
        return Rejected(
            "bad_request", "A file's base is the one its file answer gave, a short text.", frame_id
        )
    return MemoryRequest(op, frame_id, name=name, text=text, base=base)


def _is_row_id(value: object) -> bool:
    # bool is an int in Python, never in JSON: true is not an id.
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= _MAX_ROW_ID


def _command(frame: dict[str, object], frame_id: str | None) -> ClientText | Rejected:
    name, arg = frame.get("name"), frame.get("arg")
    if not isinstance(name, str) or name not in COMMANDS:
        known = ", ".join(sorted(COMMANDS))
        return Rejected("bad_request", f"Unknown command. Known commands: {known}.", frame_id)
    if arg is not None and not (isinstance(arg, str) and _is_unicode(arg)):
        return Rejected("bad_request", "A command's arg must be a string.", frame_id)
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


def ready_frame(session: str, protocol: int = 1, person: str | None = None) -> str:
    """``ready``. ``person`` (an extension of v1, part of v2) is whom the token proved; null
    for the channel token, the owner's. A protocol 2 connection's says its protocol."""
    if protocol < 2:
        return _encode({"type": "ready", "session": session, "person": person})
    return _encode({"type": "ready", "session": session, "protocol": protocol, "person": person})


def hello_protocol(frame: dict[str, object]) -> int | None:
    """The protocol a ``hello`` asks for (1 without one, at most 2); None when it is not a
    whole number of at least 1."""
    asked = frame.get("protocol", 1)
    if not isinstance(asked, int) or isinstance(asked, bool) or asked < 1:
        return None
    return min(asked, PROTOCOLS[-1])


def delta_frame(frame_id: str, text: str) -> str:
    return _encode({"type": "delta", "id": frame_id, "text": text})


def reply_frame(frame_id: str, text: str, html: str | None = None) -> str:
    """A final reply; ``html`` (an extension of the frame) is ``text`` rendered safely."""
    if html is None:
        return _encode({"type": "reply", "id": frame_id, "text": text})
    return _encode({"type": "reply", "id": frame_id, "text": text, "html": html})


def history_frame(entries: Sequence[HistoryEntry], frame_id: str | None = None) -> str:
    """The answer to a ``history`` frame, oldest message first; ``at`` in ISO 8601."""
    messages = []
    for entry in entries:
        message = {"role": entry.role, "text": entry.text, "at": entry.at.isoformat()}
        if entry.html is not None:
            message["html"] = entry.html
        if entry.kind is not None:
            message["kind"] = entry.kind
        if entry.id is not None:
            message["id"] = entry.id
        messages.append(message)
    if frame_id is None:
        return _encode({"type": "history", "messages": messages})
    return _encode({"type": "history", "id": frame_id, "messages": messages})


def memory_frame(op: str, data: object, frame_id: str | None = None) -> str:
    """The answer to a ``memory`` frame: ``data`` is what the page shows, as JSON."""
    if frame_id is None:
        return _encode({"type": "memory", "op": op, "data": data})
    return _encode({"type": "memory", "id": frame_id, "op": op, "data": data})


def push_frame(frame_id: str, kind: str, text: str, timing: PushTiming | None = None) -> str:
    """An unprompted message (a reminder firing); ``frame_id`` is ``p<push id>``. With
    ``timing`` (a reminder that came late, or missed several times), ``text`` says when it was
    due, and ``due_at``, ``timezone``, ``late``, ``occurrences`` and ``first_due_at`` say it
    for a client to show its own way."""
    frame: dict[str, object] = {"type": "push", "id": frame_id, "kind": kind, "text": text}
    if timing is not None:
        first = timing.first_due_at
        frame |= {
            "due_at": timing.due_at.isoformat(),
            "timezone": timing.timezone,
            "late": timing.late,
            "occurrences": timing.occurrences,
            "first_due_at": None if first is None else first.isoformat(),
        }
    return _encode(frame)


def error_frame(
    code: str,
    message: str,
    frame_id: str | None = None,
    data: Mapping[str, object] | None = None,
) -> str:
    """An ``error`` frame; ``data``, when given, is what the client needs to go on (a
    ``conflict``'s file as it is now)."""
    frame: dict[str, object] = {"type": "error", "code": code, "message": message}
    if frame_id is not None:
        frame = {"type": "error", "id": frame_id, "code": code, "message": message}
    if data is not None:
        frame["data"] = data
    return _encode(frame)
