"""Typed messages that cross module boundaries: what arrives from a channel and what goes back."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from flynn.dates import local_when


@dataclass(frozen=True, slots=True)
class ChannelAccount:
    """One account on one channel; kept as a pair, never a joined string."""

    channel: str
    external_id: str


_UNSPLIT_CHANNELS = frozenset({"gateway"})
"""Channels without group chats, whose session keys' text never carries a sender: a gateway
client id may itself hold ``:u`` (``alice@laptop:u2``)."""


@dataclass(frozen=True, slots=True)
class SessionKey:
    """Identifies one conversation: a chat on a channel, optionally a thread inside it, and in a
    group chat split per person (multi-user mode) the sender it belongs to.

    ``sender`` is the person's account id on the channel, not a place: a reply or push goes to
    ``chat_id`` and ``thread``. Its text (``str()``, the form stored in the database) puts the
    sender after the thread as ``u<sender>``: ``telegram:-100:77/u1001``, ``telegram:-100:u1001``.
    """

    channel: str
    chat_id: str
    thread: str | None = None
    sender: str | None = None

    def __str__(self) -> str:
        base = f"{self.channel}:{self.chat_id}"
        thread = self.thread
        if self.sender is not None:
            thread = f"{thread}/u{self.sender}" if thread else f"u{self.sender}"
        return f"{base}:{thread}" if thread else base

    @classmethod
    def parse(cls, text: str) -> SessionKey:
        """Inverse of ``str()``: ``channel:chat_id[:thread]``, where a last part ``u<sender>`` of
        the thread is the sender (on a channel with group chats)."""
        channel, _, rest = text.partition(":")
        if not channel or not rest:
            raise ValueError(f"not a session key: {text!r}")
        chat_id, _, thread = rest.partition(":")
        sender = None
        if channel not in _UNSPLIT_CHANNELS:
            place, _, last = thread.rpartition("/")
            if last.startswith("u") and len(last) > 1:
                thread, sender = place, last[1:]
        return cls(channel, chat_id, thread or None, sender)


@dataclass(frozen=True, slots=True)
class IntakeKey:
    """Which message durable intake means: the channel, the chat, and the channel's id for the
    message there, kept apart (never joined into one string, which two ids holding ``:`` could
    make collide). Unique per message."""

    channel: str
    chat_id: str
    message_id: str


@dataclass(frozen=True, slots=True)
class CommandCall:
    """A chat command as the person gave it (``/reminders cancel 2``, or a gateway ``command``
    frame), parsed once at the edge: its name (lower case, no slash) and the rest."""

    name: str
    arg: str = ""


AttachmentKind = Literal["photo", "document"]
"""A picture the chat service shows as one (a Telegram photo), or any file sent as a file."""


@dataclass(frozen=True, slots=True)
class Attachment:
    """A picture or file that came with a message, fetched by its channel at the edge.

    ``name`` is the sender's (or the channel's) name for it, unsanitised; ``media_type`` the
    MIME type the channel gave or guessed; ``size`` what the channel said it weighs. ``data``
    is empty when the channel did not fetch it because ``size`` is over the cap it was given
    (the turn then says it was too large)."""

    name: str
    media_type: str
    data: bytes
    kind: AttachmentKind = "document"
    size: int = -1
    kept: bool = False
    """Already in the person's files folder as ``name`` (durable intake wrote it before the
    channel was told the message was taken): the turn uses that file and keeps it no second
    time. ``data`` may then be empty (a message replayed after a restart): the file is read."""
    refused: str | None = None
    """Why it was not taken at intake (over a cap), or is no longer there (forgotten before a
    replayed turn ran): the turn goes on without it and says this."""

    @property
    def byte_size(self) -> int:
        """``size`` when the channel knew it, else the length of ``data``."""
        return self.size if self.size >= 0 else len(self.data)


@dataclass(frozen=True, slots=True)
class InboundMessage:
    """A message from a person, parsed once at the channel edge."""

    channel: str
    chat_id: str
    sender_id: str
    text: str
    message_id: str
    received_at: datetime
    thread: str | None = None
    sender_name: str | None = None
    is_group: bool = False
    forwarded: bool = False
    """The text was forwarded from someone else (Telegram's ``forward_origin``, a Discord
    forward): it says nothing about the sender, so nothing is learnt from it."""
    command: CommandCall | None = None
    """Set when the message is a command, parsed by the channel; ``text`` keeps what was sent."""
    reply_handle: object | None = None
    """The channel's own note of where a reply goes (a chat and message to quote, a thread):
    opaque to everyone else, handed back in ``OutboundMessage.reply_handle``."""
    attachments: tuple[Attachment, ...] = ()
    """Pictures and files sent with it (``text`` is then their caption, possibly empty)."""

    @property
    def session_key(self) -> SessionKey:
        return SessionKey(self.channel, self.chat_id, self.thread)

    @property
    def account(self) -> ChannelAccount:
        return ChannelAccount(self.channel, self.sender_id)

    @property
    def intake_key(self) -> IntakeKey:
        return IntakeKey(self.channel, self.chat_id, self.message_id)


PushKind = Literal["reminder", "distill", "notice"]
"""What an unprompted message is (the gateway's ``push`` frame names it)."""


@dataclass(frozen=True, slots=True)
class PushTiming:
    """When the reminder a push stands for was due, for its channel to say so: ``late`` (it fired
    well after its time, while Flynn was offline), or, for a repeating one that fired
    ``occurrences`` times while the push waited, when first (``first_due_at``) and last
    (``due_at``). ``timezone`` (the person's: an IANA name or a fixed offset) is the zone its
    times are shown in."""

    due_at: datetime
    timezone: str
    late: bool = False
    occurrences: int = 1
    first_due_at: datetime | None = None

    def note(self) -> str:
        """The line a chat shows under the push's text (``local_when`` writes the times), or
        "" for a push that came on time, once."""
        if self.occurrences > 1 and self.first_due_at is not None:
            first = local_when(self.first_due_at, self.timezone)
            last = local_when(self.due_at, self.timezone)
            return (
                f"(missed {self.occurrences} times while you were away: first due {first}, "
                f"last {last})"
            )
        if self.late:
            return (
                f"(late: it was due {local_when(self.due_at, self.timezone)}, while I was offline)"
            )
        return ""


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    """Something for a channel to deliver, split to its limits by the channel itself.

    ``final`` is False for a streamed delta (only sent to channels that stream); ``error_code``
    is set on error replies and uses the gateway protocol's codes.

    ``push`` marks a message nobody just asked for (a reminder firing): it answers no message,
    and goes to ``session``'s chat, or, when ``recipient`` is set, straight to that account (a
    direct message: the person's ``notify`` channel). ``push_id`` is its stable id, so a
    redelivery can be recognised. ``timing`` says when a late or repeatedly missed reminder was
    due; each channel renders the push (``text``, its kind, its timing) in its own way.
    """

    session: SessionKey
    text: str
    reply_to: str | None = None
    final: bool = True
    error_code: str | None = None
    push: PushKind | None = None
    push_id: str | None = None
    recipient: str | None = None
    reply_handle: object | None = None
    """The ``InboundMessage.reply_handle`` this answers, as the channel gave it."""
    timing: PushTiming | None = None


DeliveryState = Literal["delivered", "deferred", "failed"]
"""What became of a send: ``delivered`` (the person has it: the chat service took it, or a
gateway client acknowledged it, or a v1 client's socket took it), ``deferred`` (nobody can take
it now, or it was sent and waits for an acknowledgement: the caller keeps it stored, and is told
when it is acknowledged or offers it again when the person is back), ``failed`` (the send went
wrong: the caller keeps it stored and tries again with backoff)."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """The typed result of ``Channel.send``: its state, the channel's ids of the parts that
    went out (several when split; some even when it failed part way), and for a failure a
    short reason (never the text, never a secret)."""

    state: DeliveryState
    ids: tuple[str, ...] = ()
    reason: str | None = None
    permanent: bool = False
    """For ``failed``: the chat service refused it for good (the chat or topic is gone, the bot
    was blocked): sending it again cannot help, so it is not retried."""

    @property
    def is_delivered(self) -> bool:
        return self.state == "delivered"

    @classmethod
    def delivered(cls, ids: Iterable[str] = ()) -> Delivery:
        return cls("delivered", tuple(ids))

    @classmethod
    def deferred(cls, ids: Iterable[str] = ()) -> Delivery:
        return cls("deferred", tuple(ids))

    @classmethod
    def failed(cls, reason: str, ids: Iterable[str] = (), *, permanent: bool = False) -> Delivery:
        return cls("failed", tuple(ids), reason, permanent)
