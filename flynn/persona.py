"""Persona files by context tier, the ``flynn init`` templates, and the per-request system block.

The persona is the stable top of the system prompt; files are re-read only when they change on disk.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import structlog

from flynn.language import WEEKDAYS

log = structlog.get_logger(__name__)

TIER_FILES: tuple[tuple[str, ...], ...] = (
    ("IDENTITY.md",),
    (
        "SOUL.md",
        "PROTOCOLS.md",
        "USER.md",
        "MEMORY_SHORT.md",
        "MEMORY_MID.md",
        "REMINDERS.md",
    ),
    ("MEMORY_LONG.md", "CONTEXT_TIERS.md"),
    ("SCRATCH.md", "TASKS.json"),
)
"""The files each context tier adds, in prompt order."""

TIER_USES: tuple[str, ...] = (
    "minimal, for lightweight tasks",
    "standard chat",
    "deep sessions and long tasks",
    "full state, agent mode",
)
"""What each context tier is for, as ``/tier`` says it."""

PERSON_FILES = frozenset(
    {
        "USER.md",
        "MEMORY_SHORT.md",
        "MEMORY_MID.md",
        "MEMORY_LONG.md",
        "REMINDERS.md",
        "SCRATCH.md",
        "TASKS.json",
    }
)
"""The tier files that describe a person: each person's own, in ``data_dir/<namespace>/``,
never read from the shared persona folder."""

MIN_TIER = 1
MAX_TIER = len(TIER_FILES)

DEFAULT_IDENTITY = """\
You are Flynn, a personal assistant who remembers the person you talk with across conversations \
and channels. What you know about them comes from notes kept between conversations: use it \
naturally, without reciting it, and when you are unsure whether you remember something, say so \
rather than guess. Never claim to remember what is not in front of you. When the current message \
disagrees with something stored in memory, trust the current message: people move, change their \
minds and correct mistakes. Be direct, warm and concise."""

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_BLANK_RUNS = re.compile(r"\n{3,}")
_EMPTY_JSON = frozenset({"", "[]", "{}"})


def files_for_tier(tier: int) -> tuple[str, ...]:
    """Every persona file loaded at ``tier``, in prompt order; ``ValueError`` outside 1..4."""
    if not MIN_TIER <= tier <= MAX_TIER:
        raise ValueError(f"persona tier must be {MIN_TIER}..{MAX_TIER}, not {tier}")
    return tuple(name for added in TIER_FILES[:tier] for name in added)


def describe_tier(tier: int) -> str:
    """``+ MEMORY_LONG.md, CONTEXT_TIERS.md: deep sessions and long tasks``: what the tier adds
    to the one below and what it is for; ``ValueError`` outside 1..4."""
    files_for_tier(tier)
    added = ", ".join(TIER_FILES[tier - 1])
    return f"{'' if tier == MIN_TIER else '+ '}{added}: {TIER_USES[tier - 1]}"


def persona_directory(data_dir: Path, name: str) -> Path:
    """Where the persona called ``name`` keeps its files."""
    return data_dir / "persona" / name


@dataclass(frozen=True, slots=True)
class _Cached:
    signature: tuple[int, int, int]
    text: str


class Persona:
    """The persona text for one directory, at its default ``tier`` or one a session chose.

    ``render`` stats each file and re-reads only files whose modification time, size or inode
    changed, so edits (including an editor's write-and-rename) apply on the next turn; with
    ``recheck_seconds``, files are looked at no more often than that (by ``clock``, in
    seconds), and an edit applies within it.
    """

    def __init__(
        self,
        directory: Path,
        tier: int,
        *,
        recheck_seconds: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._files = files_for_tier(tier)
        self.directory = directory
        self.tier = tier
        self._cache: dict[str, _Cached] = {}
        self._recheck_seconds = recheck_seconds
        self._clock = clock
        # By tier: (when looked, each file's section).
        self._rendered: dict[int, tuple[float, tuple[tuple[str, str], ...]]] = {}

    @property
    def files(self) -> tuple[str, ...]:
        """The files the default tier loads, in prompt order."""
        return self._files

    def files_at(self, tier: int | None) -> tuple[str, ...]:
        """The files ``tier`` loads (the default tier's for ``None``), in prompt order."""
        return self._files if tier is None else files_for_tier(tier)

    def render(self, personal: Mapping[str, str] | None = None, *, tier: int | None = None) -> str:
        """The assembled persona at ``tier`` (the default tier for ``None``; ``ValueError``
        outside 1..4): each non-empty file under a heading naming it.

        ``personal`` holds the text of the person's own files (``PERSON_FILES``: USER.md, the
        distilled MEMORY_*.md, REMINDERS.md, TASKS.json, SCRATCH.md, kept in their folder, not
        the persona's): each one this tier loads takes its file's place. The persona folder's
        copies of those are never read, so nobody's prompt carries a file someone else left
        there. Without a usable IDENTITY.md the built-in identity stands in its place.
        Unreadable files are logged and skipped; this method does not raise for file
        problems.
        """
        shared = self._render_shared(self.tier if tier is None else tier)
        if not personal:
            return "\n\n".join(text for _, text in shared if text)
        sections = []
        for name, text in shared:
            if name in personal:
                own = personal[name].strip()
                if own:
                    sections.append(f"--- {name} ---\n{own}")
            elif text:
                sections.append(text)
        return "\n\n".join(sections)

    def identity(self) -> str:
        """Who the assistant is: IDENTITY.md's text, else the built-in identity (whatever
        the tier loads). Does not raise for file problems."""
        return self._read("IDENTITY.md") or DEFAULT_IDENTITY

    def _render_shared(self, tier: int) -> tuple[tuple[str, str], ...]:
        """Each of ``tier``'s files' section ('' when empty), from the persona folder."""
        files = self.files_at(tier)
        now = self._clock() if self._recheck_seconds > 0 else 0.0
        looked = self._rendered.get(tier)
        if looked is not None and now - looked[0] < self._recheck_seconds:
            return looked[1]
        sections: list[tuple[str, str]] = []
        for name in files:
            text = "" if name in PERSON_FILES else self._read(name)
            if name == "IDENTITY.md" and not text:
                sections.append((name, f"--- Identity ---\n{DEFAULT_IDENTITY}"))
            else:
                sections.append((name, f"--- {name} ---\n{text}" if text else ""))
        rendered = tuple(sections)
        if self._recheck_seconds > 0:
            self._rendered[tier] = (now, rendered)
        return rendered

    def _read(self, name: str) -> str:
        path = self.directory / name
        try:
            stat = path.stat()
        except (FileNotFoundError, NotADirectoryError):
            self._cache.pop(name, None)
            return ""
        except OSError as exc:
            self._cache.pop(name, None)
            log.warning("persona.file_unreadable", file=str(path), error=str(exc))
            return ""
        signature = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        cached = self._cache.get(name)
        if cached is not None and cached.signature == signature:
            return cached.text
        try:
            text = clean_file_text(name, path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return ""
        except (OSError, UnicodeDecodeError) as exc:
            # Cached as empty so a broken file is reported once per change, not once per turn.
            log.warning("persona.file_unreadable", file=str(path), error=str(exc))
            text = ""
        self._cache[name] = _Cached(signature, text)
        return text


def clean_file_text(name: str, raw: str) -> str:
    """A persona or person file's text as the prompt shows it: HTML comments hold the
    templates' guidance for the human editing the file, and would only cost tokens in every
    prompt; an empty JSON list or object is no text."""
    text = raw.strip()
    if name.endswith(".md"):
        text = _BLANK_RUNS.sub("\n\n", _COMMENT.sub("", text)).strip()
    elif name.endswith(".json") and text.replace(" ", "").replace("\n", "") in _EMPTY_JSON:
        text = ""
    return text


HELP_FILE = "HELP.md"
HELP_MAX_CHARS = 3000
"""What ``/help`` shows of ``HELP.md`` at most: a message, not a manual."""
_HELP_READ_CHARS = 64_000  # read no more of a huge file than this; its comments may be long


def read_help(directory: Path) -> str | None:
    """The persona's own help (``HELP.md`` in ``directory``) without its guidance comments,
    cut to ``HELP_MAX_CHARS`` at a line's end; ``None`` when there is none to show: no file,
    only comments, not a regular file, or unreadable (logged). Never raises for the file."""
    path = directory / HELP_FILE
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or a device would block or never end
            return None
        with path.open(encoding="utf-8") as file:
            raw = file.read(_HELP_READ_CHARS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("persona.help_unreadable", file=str(path), error=str(exc))
        return None
    text = clean_file_text(HELP_FILE, raw)
    text = text.split("<!--", 1)[0].rstrip()  # a comment the read cut before its end
    if len(text) > HELP_MAX_CHARS:
        cut = text[:HELP_MAX_CHARS]
        text = (cut[: cut.rfind("\n")] if "\n" in cut else cut).rstrip() + "\n…"
    return text or None


_DAYS = tuple(day.capitalize() for day in WEEKDAYS)
OFF_THE_RECORD_LINE = (
    "Current mode: Off The Record — this conversation is private and will not be logged or "
    "included in memory distillation"
)


def system_block(
    now: datetime,
    *,
    timezone: str | tzinfo | None,
    inject_datetime: bool,
    off_the_record: bool,
) -> str:
    """The ``--- System ---`` block, or ``""`` when it would say nothing.

    ``now`` must be timezone-aware; it is shown in ``timezone``, a zone or an IANA name (the
    system's local zone when ``None``); sessions pass the person's own
    (``PersonalFiles.timezone_of``). Raises ``ValueError`` for a naive ``now`` and
    ``ZoneInfoNotFoundError`` for an unknown name (settings validation rejects those earlier).
    """
    lines: list[str] = []
    if inject_datetime:
        if now.tzinfo is None or now.utcoffset() is None:
            raise ValueError("system_block needs a timezone-aware datetime")
        zone = ZoneInfo(timezone) if isinstance(timezone, str) else timezone
        local = now.astimezone(zone) if zone is not None else now.astimezone()
        lines.append(f"Current date and time: {_spoken(local)}")
    if off_the_record:
        lines.append(OFF_THE_RECORD_LINE)
    if not lines:
        return ""
    return "\n".join(["--- System ---", *lines])


def _spoken(local: datetime) -> str:
    # Day name and AM/PM are spelled here rather than with %A/%p, which follow the C locale.
    hour = local.hour % 12 or 12
    meridiem = "AM" if local.hour < 12 else "PM"
    zone = local.tzname() or local.strftime("%z")
    return f"{_DAYS[local.weekday()]}, {local:%Y-%m-%d} at {hour:02d}:{local:%M} {meridiem} {zone}"


_TEMPLATES: dict[str, str] = {
    "IDENTITY.md": f"""\
<!--
IDENTITY.md: who the assistant is. Loaded at every context tier (1-4), first.
Change the name, role and voice to taste. Text inside these comment markers is for you
and is never sent to the model. If this file is missing or empty, a built-in identity is used.
-->
# Identity

{DEFAULT_IDENTITY}
""",
    "SOUL.md": """\
<!--
SOUL.md: values, personality and voice. Loaded from tier 2.
-->
# Soul

- Care about the person's goals more than about sounding clever.
- Be candid: disagree politely when something looks wrong, and explain why.
- Keep answers as short as the question allows; offer detail rather than forcing it.
""",
    "PROTOCOLS.md": """\
<!--
PROTOCOLS.md: behavioural rules, how to respond and what to avoid. Loaded from tier 2.
-->
# Protocols

- Answer in the language the person writes in.
- When memory and the current message disagree, follow the message and say what changed.
- Ask before acting on anything irreversible.
- Do not invent facts about the person; if something is not remembered, say so.
""",
    "CONTEXT_TIERS.md": """\
<!--
CONTEXT_TIERS.md: tells the model which files it is seeing. Loaded from tier 3.
Set the tier with `persona.tier` in the config (default 2); a session may choose another
with /tier N, up to `persona.max_tier`.
-->
# Context tiers

1. IDENTITY.md: minimal context, for lightweight tasks.
2. + SOUL.md, PROTOCOLS.md, USER.md, MEMORY_SHORT.md, MEMORY_MID.md, REMINDERS.md: standard chat.
3. + MEMORY_LONG.md, CONTEXT_TIERS.md: deep sessions and long tasks.
4. + SCRATCH.md, TASKS.json: full state, agent mode.
""",
    HELP_FILE: f"""\
<!--
HELP.md: what /help shows, in place of the built-in introduction; the list of commands always
follows it. Write it below this comment (Markdown is fine). While the file holds nothing but
this comment, the built-in help is shown. At most {HELP_MAX_CHARS:,} characters are shown.
-->
""",
}


def write_persona_templates(directory: Path) -> list[Path]:
    """Writes the persona's template files missing from ``directory`` (creating it); returns
    those written. Existing files are never overwritten, so running ``flynn init`` again is
    safe. A person's own files have templates of their own (``flynn.people.files``)."""
    return write_templates(directory, _TEMPLATES)


def write_templates(directory: Path, templates: Mapping[str, str]) -> list[Path]:
    """Writes each of ``templates`` (name: content) that ``directory`` lacks, owner-only (0600,
    the folder 0700); returns those written, never overwriting a file."""
    # persona/ (or users/) too: mkdir(parents=True) gives the folders above the umask's mode.
    directory.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.mkdir(mode=0o700, exist_ok=True)
    written: list[Path] = []
    for name, content in templates.items():
        path = directory / name
        try:
            # Owner-only whatever the umask, like every other file Flynn keeps about a person.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(content)
        written.append(path)
    return written
