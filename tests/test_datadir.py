"""The data directory: private whatever the umask, and one daemon at a time."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from flynn.datadir import DataDirLock, lock_holder, prepare_data_dir
from flynn.errors import ConfigError, DataDirLocked

HOLDER = """
import sys
from pathlib import Path
from flynn.datadir import DataDirLock
lock = DataDirLock(Path(sys.argv[1]))
lock.acquire()
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextmanager
def _holder(directory: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``directory``'s lock until it is killed (or the block ends)."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(directory)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None
        try:
            assert process.stdout.readline() == "held\n"
            yield process
        finally:
            process.kill()


@pytest.mark.usefixtures("loose_umask")
def test_a_new_data_dir_is_0700(tmp_path: Path) -> None:
    directory = tmp_path / "a" / "data"
    prepare_data_dir(directory)
    assert _mode(directory) == 0o700


@pytest.mark.usefixtures("loose_umask")
def test_a_loose_data_dir_is_tightened(tmp_path: Path) -> None:
    directory = tmp_path / "data"
    directory.mkdir(mode=0o755)
    prepare_data_dir(directory)
    assert _mode(directory) == 0o700


def test_a_data_dir_that_is_a_file_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match="data_dir"):
        prepare_data_dir(tmp_path / "file")


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path: Path) -> None:
    with _holder(tmp_path) as holder:
        with pytest.raises(DataDirLocked, match=f"process {holder.pid} ") as raised:
            DataDirLock(tmp_path).acquire()
        assert raised.value.pid == holder.pid
        assert lock_holder(tmp_path) == holder.pid


def test_a_crashed_holder_does_not_block_the_next_start(tmp_path: Path) -> None:
    with _holder(tmp_path) as holder:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    assert (tmp_path / "flynn.lock").read_text().strip() == str(holder.pid)  # stale
    with DataDirLock(tmp_path):
        assert lock_holder(tmp_path) == os.getpid()
        assert (tmp_path / "flynn.lock").read_text().strip() == str(os.getpid())
        assert _mode(tmp_path / "flynn.lock") == 0o600
    assert lock_holder(tmp_path) is None


def test_nobody_holds_a_data_dir_without_a_lock_file(tmp_path: Path) -> None:
    assert lock_holder(tmp_path) is None
    assert not (tmp_path / "flynn.lock").exists()
