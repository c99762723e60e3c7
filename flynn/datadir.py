"""The data directory: private (0700 for it, 0600 for what flynn writes there) whatever the umask,
and the lock file that keeps a second daemon off it.

It holds everyone's memory and the gateway token, so a directory others may enter is tightened to
0700 when flynn opens it (logged as ``data_dir.tightened``), not merely warned about: a loose mode
is far more often an old umask than an intent, and a warning in a log protects nobody.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path
from types import TracebackType

import structlog

from flynn.errors import ConfigError, ConfigProblem, DataDirLocked, StoreError

log = structlog.get_logger(__name__)

LOCK_FILE = "flynn.lock"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def not_a_directory(directory: Path) -> ConfigError | None:
    """The error to raise when ``directory`` (``data_dir``) exists but is no directory, or sits
    below a file; ``None`` when it is, or can be created, as a directory."""
    for candidate in (directory, *directory.parents):
        try:
            mode = candidate.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue  # the file, if any, is further up
        except OSError:
            return None  # unreadable: creating it says what is wrong
        if stat.S_ISDIR(mode):
            return None
        what = "is a file" if candidate == directory else f"is below {candidate}, a file"
        return ConfigError([ConfigProblem("data_dir", f"{directory} {what}, not a directory")])
    return None


def prepare_data_dir(directory: Path) -> None:
    """Creates ``directory`` (and its parents) with mode 0700, or tightens an existing one that
    group or others may use to 0700 (when this user owns it; otherwise logs a warning).

    Raises ``ConfigError`` when it is, or is below, a file; ``StoreError`` when it cannot be
    created or tightened for another reason (permissions, a read-only file system)."""
    error = not_a_directory(directory)
    if error is not None:
        raise error
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
        info = directory.stat()
    except OSError as exc:
        raise StoreError(f"cannot create data dir {directory}: {exc.strerror or exc}") from exc
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077 == 0 and mode & PRIVATE_DIR_MODE == PRIVATE_DIR_MODE:
        return
    if info.st_uid != os.geteuid():
        log.warning("data_dir.loose", path=str(directory), mode=f"{mode:04o}", owner=info.st_uid)
        return
    try:
        # Exact, so a strict umask (0277) cannot leave a directory we could not write in.
        directory.chmod(PRIVATE_DIR_MODE)
    except OSError as exc:
        raise StoreError(f"cannot make data dir {directory} private: {exc.strerror}") from exc
    if mode & 0o077:
        log.warning("data_dir.tightened", path=str(directory), mode=f"{mode:04o}", now="0700")


def make_private(path: Path) -> None:
    """Sets a file flynn owns to 0600 if group or others may read it; a file that is missing or
    belongs to another user is left alone (it is not ours to change)."""
    try:
        info = path.stat()
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077 and info.st_uid == os.geteuid():
            path.chmod(mode & ~0o077)  # the owner's bits stay as they are
    except FileNotFoundError:
        return


class DataDirLock:
    """An exclusive ``flock`` on ``data_dir/flynn.lock``, which holds the holder's pid.

    The kernel drops the lock when its holder exits, however it exits, so a crashed daemon's lock
    file never blocks the next start; its stale pid is simply overwritten. The file itself is never
    deleted: a holder unlinking it could let two processes lock two different files.
    Only ``flynn run`` takes it; other commands share the database through WAL.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> None:
        """Takes the lock without waiting. Raises ``DataDirLocked`` naming the holder's pid when
        another process has it, ``StoreError`` when the file cannot be opened."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path} is already held by this process")
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE_MODE)
        except OSError as exc:
            raise StoreError(f"cannot open lock file {self.path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _read_pid(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise DataDirLocked(str(self.path), pid) from None
            raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from exc
        try:
            make_private(self.path)
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot write lock file {self.path}: {exc.strerror}") from exc
        self._fd = fd

    def release(self) -> None:
        """Empties the file and drops the lock; safe to call when not held."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass  # the pid left behind is harmless: nobody holds the flock
        finally:
            os.close(fd)

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release()


def lock_holder(directory: Path) -> int | None:
    """The pid holding ``directory``'s lock, 0 when held by a process whose pid is unreadable,
    ``None`` when nobody holds it (for ``flynn doctor``; takes and drops the lock to find out)."""
    lock = DataDirLock(directory)
    if not lock.path.exists():
        return None
    try:
        lock.acquire()
    except DataDirLocked as exc:
        return exc.pid
    except StoreError:
        return None
    lock.release()
    return None


def _read_pid(fd: int) -> int:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return 0
    return int(text) if text.isdigit() else 0
