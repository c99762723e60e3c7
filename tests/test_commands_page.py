"""``docs/commands.md`` against the parsers: every ``flynn`` command and every option of it,
and every ``flynn bench`` benchmark and its options, is on the page, in a command's own line.
A command or flag added to the parser and not to the page fails here, naming it."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

from evals import cli as bench_cli
from flynn import cli

PAGE = Path(__file__).resolve().parents[1] / "docs" / "commands.md"

EVERYWHERE = frozenset({"-h", "--help", "--config"})
"""Said once for all on the page (``--help``; every command but ``init`` takes ``--config``)."""


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...]
) -> Iterator[tuple[str, set[str]]]:
    """``("flynn memory show", {"--user", "--json", ...})`` for every command that runs (a leaf
    of the subcommand tree), with its long options (a short one only when it has no long)."""
    subcommands = [
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ]
    if not subcommands:
        options = set()
        for action in parser._actions:
            strings = action.option_strings
            longs = [string for string in strings if string.startswith("--")]
            options.update(longs or strings)
        yield " ".join(path), options - EVERYWHERE
        return
    for name, sub in subcommands[0].choices.items():
        yield from _commands(sub, (*path, name))


def _bench_parser() -> argparse.ArgumentParser:
    bench = argparse.ArgumentParser(prog="flynn bench")
    bench_cli._add_bench_commands(bench)
    return bench


def _every_command() -> dict[str, set[str]]:
    found = dict(_commands(cli._parser(), ("flynn",)))
    # `flynn bench` hands its arguments to the evals' parser: the benchmarks are its commands.
    assert found.pop("flynn bench") == set()
    found.update(_commands(_bench_parser(), ("flynn", "bench")))
    return found


def _spans(text: str) -> list[str]:
    """The page's code spans that show a command: `flynn ...`."""
    return [span for span in re.findall(r"`([^`\n]+)`", text) if span.startswith("flynn ")]


def missing(text: str) -> list[str]:
    """Each command with no span of its own on the page, and each option no span of its
    command shows."""
    spans = _spans(text)
    problems = []
    for command, options in sorted(_every_command().items()):
        own = [span for span in spans if re.match(re.escape(command) + r"(?![\w-])", span)]
        if not own:
            problems.append(f"{command}: not on {PAGE.name}")
            continue
        shown = set(re.findall(r"(?<![\w-])(--?[\w-]+)", " ".join(own)))
        problems.extend(
            f"{command} {option}: not in its line on {PAGE.name}"
            for option in sorted(options - shown)
        )
    return problems


def test_the_page_shows_every_command_and_option() -> None:
    assert missing(PAGE.read_text(encoding="utf-8")) == []


def test_the_check_sees_a_command_and_an_option_left_out() -> None:
    text = PAGE.read_text(encoding="utf-8")
    commands = _every_command()
    assert {"flynn memory file edit", "flynn bench gateway", "flynn storage copy"} <= set(commands)
    assert "--set-from" in commands["flynn memory file edit"]
    assert {"--workers", "--throwaway-postgres", "--rounds"} <= commands["flynn bench gateway"]
    without_option = text.replace("--keep-other-models", "--keep")
    assert missing(without_option) == [
        f"flynn memory embed --keep-other-models: not in its line on {PAGE.name}"
    ]
    without_command = re.sub(r"`flynn costs[^`]*`", "costs", text)
    assert missing(without_command) == [f"flynn costs: not on {PAGE.name}"]
