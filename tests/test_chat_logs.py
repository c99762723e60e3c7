"""``flynn chat`` keeps log lines out of the conversation: on a terminal they go to
``<data_dir>/chat.log``; piped, stdout is one reply per line and the logs stay on stderr."""

from __future__ import annotations

import json
import os
import pty
import select
import stat
import subprocess
import sys
import time
from pathlib import Path

from test_cli import flynn

PROMPT = b"you> "


def chat_env(home: Path) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET"))
    }
    # debug: every turn logs, so a log line that reached the terminal could not go unnoticed.
    return {**clean, "HOME": str(home), "USER": "ana", "FLYNN_LOGGING__LEVEL": "debug"}


def read_until(controller: int, marker: bytes, seen: bytearray, deadline: float) -> None:
    """Reads the terminal's output into ``seen`` until it ends with ``marker``."""
    while not seen.endswith(marker):
        left = deadline - time.monotonic()
        assert left > 0, f"no {marker!r} on the terminal; it showed {bytes(seen)!r}"
        ready, _, _ = select.select([controller], [], [], left)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed: the process is gone
                chunk = b""
            assert chunk, f"the terminal closed; it showed {bytes(seen)!r}"
            seen.extend(chunk)


def chat_on_a_terminal(home: Path, messages: list[str]) -> str:
    """Runs ``flynn chat`` with a terminal as stdin, stdout and stderr, types ``messages`` one
    at a time (each after the prompt), then Ctrl-D; returns everything the terminal showed."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "flynn", "chat"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=chat_env(home),
        close_fds=True,
    )
    os.close(terminal)
    seen = bytearray()
    deadline = time.monotonic() + 60
    try:
        for message in messages:
            read_until(controller, PROMPT, seen, deadline)
            os.write(controller, message.encode() + b"\n")
        read_until(controller, PROMPT, seen, deadline)
        os.write(controller, b"\x04")
        assert process.wait(timeout=60) == 0
        try:
            while chunk := os.read(controller, 65536):
                seen.extend(chunk)
        except OSError:
            pass  # the terminal closed with the process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    return seen.decode(errors="replace")


def test_on_a_terminal_log_lines_go_to_a_file_not_into_the_conversation(tmp_path: Path) -> None:
    data = tmp_path / ".flynn"
    data.mkdir(mode=0o755)
    data.chmod(0o755)  # a loose data dir: opening it logs a warning (data_dir.tightened)
    old_log = data / "chat.log"
    old_log.write_text("an old line\n" * 90_000)  # past the size at which it is moved aside
    old_log.chmod(0o644)

    shown = chat_on_a_terminal(tmp_path, ["my name is Ana", "what is my name?"])

    assert f"Logs go to {data / 'chat.log'}." in shown
    assert shown.count("flynn> ") == 2
    for event in ("turn.completed", "data_dir.tightened", '"level"', "[debug", "[info"):
        assert event not in shown, shown
    log = data / "chat.log"
    events = [json.loads(line)["event"] for line in log.read_text().splitlines()]
    assert "data_dir.tightened" in events
    assert events.count("turn.completed") == 2
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    moved = data / "chat.log.1"
    assert moved.read_text().startswith("an old line\n")
    assert stat.S_IMODE(moved.stat().st_mode) == 0o600  # tightened before it was moved


def test_piped_chat_prints_one_reply_per_line_and_no_log_lines(tmp_path: Path) -> None:
    result = flynn(
        "chat",
        home=tmp_path,
        stdin="my name is Ana\nhi\nwhat is my name?\n",
        env={"FLYNN_LOGGING__LEVEL": "debug"},
    )
    assert result.returncode == 0, result.stderr
    replies = result.stdout.splitlines()
    assert len(replies) == 3
    assert not [line for line in replies if "turn.completed" in line or line.startswith("{")]
    assert "turn.completed" in result.stderr  # piped, the logs stay where they were
    assert not (tmp_path / ".flynn" / "chat.log").exists()
