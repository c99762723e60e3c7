"""Arrays kept in a file no other process can open (never named, or unlinked at once) and read
through a shared mapping of it (``MappedArrays``, made by a ``FileRoom``): pages the kernel can
take back, which ``release`` hands from the process to the page cache while it is at rest.
"""

from __future__ import annotations

import errno
import mmap
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from flynn.datadir import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE

if TYPE_CHECKING:
    import numpy.typing as npt

log = structlog.get_logger(__name__)

_ALIGN = 64
"""Each array starts on a cache line (numpy's own alignment for SIMD reads)."""
_NO_TMPFILE = (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT)
"""What ``O_TMPFILE`` raises where the kernel or the file system has none: then a named file,
unlinked at once."""


class MappedArrays:
    """Arrays in one file, mapped shared: their pages are the file's, in the page cache, so the
    process holds them only while it reads them.

    The file has no name (``O_TMPFILE``, or a random one unlinked before anything is written):
    nothing is left behind after a crash, and no other process can open it. Its blocks are
    reserved when it is made (``posix_fallocate``), so a full disk is said then, by ``OSError``,
    and never later by a write through the mapping (``SIGBUS``). It is closed, and its blocks
    freed, when the mapping and every array over it are no longer referenced: a search still
    reading them keeps them (closing under it would crash the process)."""

    __slots__ = ("_mapping", "arrays")

    def __init__(self, mapping: mmap.mmap, arrays: list[npt.NDArray[Any]]) -> None:
        self._mapping = mapping
        self.arrays = arrays

    @classmethod
    def create(cls, directory: Path, specs: Sequence[tuple[tuple[int, ...], str]]) -> MappedArrays:
        """Arrays of the ``(shape, dtype)`` asked, zeroed, in a new file in ``directory``
        (created 0700 when missing). Raises ``OSError`` when it cannot be (a full disk, a
        read-only file system, no permission); nothing is left in ``directory`` then either."""
        import numpy as np

        offsets, size = [], 0
        for shape, dtype in specs:
            size += -size % _ALIGN
            offsets.append(size)
            size += int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        size = max(size, 1)  # mmap refuses an empty file
        directory.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        fd = _unnamed_file(directory)
        try:
            os.posix_fallocate(fd, 0, size)
            mapping = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        finally:
            os.close(fd)  # the mapping keeps a descriptor of its own
        arrays: list[npt.NDArray[Any]] = [
            np.frombuffer(mapping, dtype, int(np.prod(shape, dtype=np.int64)), offset).reshape(
                shape
            )
            for (shape, dtype), offset in zip(specs, offsets, strict=True)
        ]
        return cls(mapping, arrays)

    def seal(self) -> None:
        """Makes the arrays read-only (numpy's flag: they are shared with searches)."""
        for array in self.arrays:
            array.flags.writeable = False

    def release(self) -> None:
        """Takes the mapping's pages out of the process (``MADV_DONTNEED``): they stay in the page
        cache, read again by the next access, or dropped by the kernel when it wants the memory
        once written back (then read again from the disk). Safe while another thread reads."""
        self._mapping.madvise(mmap.MADV_DONTNEED)

    @property
    def nbytes(self) -> int:
        return len(self._mapping)


class FileRoom:
    """A ``flynn.memory.vector_lists.Room`` in files of ``directory``: each call a new file
    (``MappedArrays``); where one cannot be made, numpy's own memory, said in one log line (a
    search never fails for it)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._last: MappedArrays | None = None

    def __call__(self, specs: Sequence[tuple[tuple[int, ...], str]]) -> list[npt.NDArray[Any]]:
        import numpy as np

        try:
            self._last = MappedArrays.create(self._directory, specs)
        except OSError as exc:
            log.warning(
                "memory.vectors_unmapped",
                directory=str(self._directory),
                error=exc.strerror or str(exc),
                kept="in memory",
            )
            self._last = None
            return [np.empty(shape, dtype) for shape, dtype in specs]
        return list(self._last.arrays)

    def sealed(self) -> MappedArrays | None:
        """The file of the last call, its arrays made read-only; ``None`` when it is in memory."""
        if self._last is not None:
            self._last.seal()
        return self._last


def _unnamed_file(directory: Path) -> int:
    flags = os.O_RDWR | os.O_CLOEXEC
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile:
        try:
            return os.open(directory, flags | tmpfile, PRIVATE_FILE_MODE)
        except OSError as exc:
            if exc.errno not in _NO_TMPFILE:
                raise
    path = directory / f"vectors-{secrets.token_hex(8)}"
    fd = os.open(path, flags | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
    try:
        path.unlink()
    except OSError:
        os.close(fd)
        raise
    return fd
