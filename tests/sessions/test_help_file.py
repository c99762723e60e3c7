"""``/help`` shows the persona's ``HELP.md`` when it has one, with the command list after it;
without a usable one (missing, only the template's comment, unreadable, not a file) the built-in
help; a huge one is cut."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SMALL_WINDOW, Harness

from flynn.messages import CommandCall
from flynn.persona import HELP_MAX_CHARS, write_persona_templates
from flynn.sessions.commands import help_text

SHARED = {**SMALL_WINDOW, "memory": {"user_namespace": "user"}}


def _persona(h: Harness) -> Path:
    folder = h.data_dir / "persona" / "flynn"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def _help(h: Harness) -> str:
    result = await h.session().handle(CommandCall("help"))
    assert result.error_code is None
    return result.text


async def test_the_personas_help_is_shown_with_the_commands(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    (_persona(h) / "HELP.md").write_text(
        "<!-- for the editor only -->\n# Inara\n\nAsk me about the garden.\n", encoding="utf-8"
    )
    shown = await _help(h)
    assert shown.startswith("# Inara\n\nAsk me about the garden.\n\nCommands:\n/new ")
    assert "for the editor" not in shown
    assert "I'm Flynn" not in shown
    assert "/tier [N]" in shown and "/search WORDS" in shown
    # Edits apply at the next /help, without a restart.
    (_persona(h) / "HELP.md").write_text("Ask me about bees.", encoding="utf-8")
    assert (await _help(h)).startswith("Ask me about bees.\n\nCommands:\n")


async def test_the_template_alone_keeps_the_built_in_help(
    harness: Callable[..., Harness],
) -> None:
    h = harness(**SHARED)
    h.open()
    written = write_persona_templates(_persona(h))  # what `flynn init` writes
    assert _persona(h) / "HELP.md" in written
    assert await _help(h) == help_text()


@pytest.mark.parametrize("broken", ["not utf-8", "a folder", "a fifo", "no permission"])
async def test_a_help_file_that_cannot_be_shown_falls_back(
    harness: Callable[..., Harness], broken: str
) -> None:
    h = harness(**SHARED)
    h.open()
    path = _persona(h) / "HELP.md"
    if broken == "not utf-8":
        path.write_bytes(b"\xff\xfe caf\xe9")
    elif broken == "a folder":
        path.mkdir()
    elif broken == "a fifo":
        os.mkfifo(path)  # opening it would wait for a writer forever
    else:
        path.write_text("secret help", encoding="utf-8")
        path.chmod(0)
        if os.access(path, os.R_OK):
            pytest.skip("running as root: permissions do not keep the file from being read")
    assert await _help(h) == help_text()


async def test_a_huge_help_file_is_cut_at_a_lines_end(harness: Callable[..., Harness]) -> None:
    h = harness(**SHARED)
    h.open()
    lines = [f"line {n}: " + " ".join(["tip"] * 20) for n in range(20_000)]  # ~1.9 MB
    (_persona(h) / "HELP.md").write_text("\n".join(lines), encoding="utf-8")
    shown = await _help(h)
    own, _, commands = shown.partition("\n\nCommands:\n")
    assert len(own) <= HELP_MAX_CHARS + 2
    assert own.startswith("line 0: ") and own.endswith("\n…")
    assert own.removesuffix("\n…").splitlines()[-1] in lines  # no line cut in half
    assert "/help" not in commands and "/new" in commands
