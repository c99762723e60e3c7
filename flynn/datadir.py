"""The data directory: where it may be, checked before anything is written there."""

from __future__ import annotations

import stat
from pathlib import Path

from flynn.errors import ConfigError, ConfigProblem


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
