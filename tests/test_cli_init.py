"""``flynn init DIR`` where DIR cannot hold a flynn: one line on stderr naming the place and why,
exit 2, nothing half-written."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest
from test_cli import flynn

from flynn.scaffold import prepare_init_directory


def assert_one_line(result: subprocess.CompletedProcess[str], *words: str) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0]
    return lines[0]


def test_a_file_is_no_directory_to_init(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    line = assert_one_line(flynn("init", str(target), home=tmp_path), str(target), "a file")
    assert line == f"flynn: cannot init {target}: it is a file, not a directory"
    assert target.read_text() == "mine\n"


def test_a_place_below_a_file_names_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "x" / "file.txt"
    blocker.parent.mkdir()
    blocker.write_text("")
    target = blocker / "sub" / "deeper"
    line = assert_one_line(flynn("init", str(target), home=tmp_path), str(target))
    assert line.endswith(f": {blocker} is a file, not a directory")


def test_a_config_path_taken_by_a_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "assistant" / "config.yaml").mkdir(parents=True)
    result = flynn("init", str(tmp_path / "assistant"), home=tmp_path)
    assert_one_line(result, "config.yaml", "not a file")


def test_a_place_nothing_can_be_written_in_is_refused(tmp_path: Path) -> None:
    # Tests run as root, for whom file modes do not stop a write; sysfs refuses even root.
    target = Path("/sys/flynn-init-test")
    if not Path("/sys/kernel").is_dir():
        pytest.skip("no sysfs here")
    result = flynn("init", str(target), home=tmp_path)
    if result.returncode == 0:
        pytest.skip("this /sys is writable")
    assert_one_line(result, str(target), "cannot write there")
    assert not target.exists()


def test_the_new_directory_is_private_and_keeps_no_probe(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert prepare_init_directory(target) is None
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
    assert list(target.iterdir()) == []


def test_init_still_writes_into_an_existing_directory(tmp_path: Path) -> None:
    result = flynn("init", str(tmp_path), home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "config.yaml").is_file()
