"""``flynn storage copy --to URL`` through the real command: the table and its JSON, exit 0 only
when every count matches, a rerun that copies nothing, and one line (never the password) for a
daemon holding the data dir, a wrong password, and a database of another install."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from postgres_server import PostgresServer
from test_storage_copy import build_install

from flynn.datadir import DataDirLock

EXIT_FAILED = 1
EXIT_STORAGE = 4
EXIT_LOCKED = 5


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLYNN_")}
    # Debug logging: every line the command may log is checked for the password too.
    env.update({"FLYNN_DATA_DIR": str(data_dir), "FLYNN_LOGGING__LEVEL": "debug"})
    return env


def _copy(data_dir: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flynn", "storage", "copy", "--to", url, *args],
        capture_output=True,
        text=True,
        env=_env(data_dir),
        timeout=120,
        check=False,
    )


def _no_password(result: subprocess.CompletedProcess[str], password: str) -> None:
    assert password not in result.stdout
    assert password not in result.stderr
    assert "Traceback" not in result.stderr, result.stderr


def test_a_copy_prints_each_kind_on_both_sides_and_a_rerun_copies_nothing(
    tmp_path: Path, postgres_url: str, postgres_server: PostgresServer
) -> None:
    install = build_install(tmp_path / "data")
    first = _copy(install.data_dir, postgres_url)
    _no_password(first, postgres_server.password)
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0].startswith(f"copied {install.data_dir / 'flynn.db'} into postgresql://")
    assert ":***@" in lines[0]
    assert ["messages", "6", "6", "6"] in [line.split() for line in lines]
    assert ["message_terms", "45", "45", "45"] in [line.split() for line in lines]
    # The log lines the password is looked for in are there.
    assert "storage.copy.started" in first.stderr and "storage.copy.table" in first.stderr
    assert "every count matches;" in lines[-1] and "copied now" in lines[-1]

    again = _copy(install.data_dir, postgres_url, "--json")
    _no_password(again, postgres_server.password)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["matches"] is True and report["copied"] == 0 and report["redacted"] == 0
    kinds = {kind["kind"]: kind for kind in report["kinds"]}
    assert kinds["uploaded files"] == {
        "kind": "uploaded files",
        "sqlite": 2,
        "postgresql": 2,
        "copied": 0,
        "redacted": 0,
        "left_out": 0,
    }
    assert "nothing to copy" in _copy(install.data_dir, postgres_url).stdout


def test_refusals_take_one_line_without_the_password(
    tmp_path: Path, postgres_url: str, postgres_server: PostgresServer
) -> None:
    password = postgres_server.password
    install = build_install(tmp_path / "data")
    with DataDirLock(install.data_dir):
        locked = _copy(install.data_dir, postgres_url)
    assert locked.returncode == EXIT_LOCKED
    assert len(locked.stderr.strip().splitlines()) == 1

    wrong = _copy(install.data_dir, postgres_url.replace(password, password[::-1]))
    _no_password(wrong, password)
    assert password[::-1] not in wrong.stderr + wrong.stdout
    assert wrong.returncode == EXIT_STORAGE
    assert len(wrong.stderr.strip().splitlines()) == 1

    other = build_install(tmp_path / "other", words="kettle")
    assert _copy(other.data_dir, postgres_url).returncode == 0
    foreign = _copy(install.data_dir, postgres_url)
    _no_password(foreign, password)
    assert foreign.returncode == EXIT_FAILED
    assert foreign.stdout == ""
    (line,) = foreign.stderr.strip().splitlines()
    assert "holds a copy of another flynn install" in line


def test_on_a_terminal_a_line_follows_the_copy(
    tmp_path: Path, postgres_url: str, postgres_server: PostgresServer
) -> None:
    install = build_install(tmp_path / "data")
    main, terminal = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-m", "flynn", "storage", "copy", "--to", postgres_url],
        stdout=subprocess.PIPE,
        stderr=terminal,
        env={**_env(install.data_dir), "FLYNN_LOGGING__LEVEL": "warning"},
    ) as process:
        os.close(terminal)
        shown = b""
        while chunk := _read(main):
            shown += chunk
        assert process.wait(timeout=120) == 0
    os.close(main)
    text = shown.decode()
    assert "copying messages: 6" in text
    assert postgres_server.password not in text


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # the terminal's other end closed: the command is done
        return b""
