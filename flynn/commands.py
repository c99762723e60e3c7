"""The chat commands (``/new``, ``/status``, ...) as a contract: their names, what each does,
its arguments. ``/help``, Telegram's command menu and the gateway's ``command`` frame read this
table; ``flynn.sessions.commands`` says what each one does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from flynn.messages import CommandCall


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    about: str
    """What it does, one line: Telegram's menu shows it (256 characters at most), and ``/help``."""
    args: str = ""

    @property
    def usage(self) -> str:
        """Its ``/help`` line."""
        head = f"/{self.name} {self.args}" if self.args else f"/{self.name}"
        return f"{head} – {self.about[0].lower()}{self.about[1:]}"


CHAT_COMMANDS: Final = (
    Command("new", "Start a fresh conversation (what we were doing is kept as working memory)"),
    Command("reset", "Clear this conversation without summarising it"),
    Command("status", "What I know about this session"),
    Command("compact", "Summarise the conversation now"),
    Command("otr", "Toggle off-the-record: nothing is stored while it is on"),
    Command("forget", "Delete this conversation's messages for good; /forget FIELD deletes a fact"),
    Command("search", "Find what we said before, grouped by day", args="WORDS"),
    Command("memory", "What I know about you; /memory WORDS searches my memory", args="[WORDS]"),
    Command("reminders", "List your reminders; /reminders cancel N cancels one", args="[cancel N]"),
    Command("tasks", "List your tasks; /tasks done N ticks one off, /tasks add TEXT adds one"),
    Command(
        "tier",
        "Say the context tier and what each loads; /tier N loads tier N for this conversation",
        args="[N]",
    ),
    Command("help", "What I can do"),
)
NAMES: Final = frozenset(command.name for command in CHAT_COMMANDS)
PRIVATE: Final = frozenset({"status", "reminders", "tasks", "forget", "memory", "search"})
"""Commands whose answer tells of the asker's memory and plans: answered where the asker alone
reads it (a private chat, an ephemeral Discord answer), never in a group's chat."""
ALIASES: Final = {"start": "help"}  # Telegram sends /start when a chat opens


def private_in_group(command: CommandCall | None) -> str | None:
    """What a group is told instead of the answer to ``command`` when the answer is private
    (``PRIVATE``: everyone in the group would read it); None for any other message."""
    if command is None or command.name not in PRIVATE:
        return None
    return (
        f"/{command.name} tells of your memory and plans, which everyone here would read: "
        "ask me in our private chat."
    )


def parse_command(text: str) -> CommandCall | None:
    """The command ``text`` gives (``/reminders cancel 2``: ``reminders``, ``cancel 2``), or None
    when it is no command. The name is lower case, without its slash or a Telegram ``@botname``,
    aliases resolved; an unknown name is still a command (the session answers it with the list).
    Channels call this once, at the edge; a forwarded message is never a command."""
    stripped = text.strip()
    if not stripped.startswith("/") or len(stripped) < 2:
        return None
    name, _, arg = stripped[1:].partition(" ")
    name = name.split("@", 1)[0].casefold()
    return CommandCall(ALIASES.get(name, name), arg.strip())
