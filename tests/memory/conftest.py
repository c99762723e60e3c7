"""Real SQLite databases in tmp_path for the memory tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from flynn.learning.fact_relations import FactRelations
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "flynn.db"


@pytest.fixture
def memory(db_path: Path) -> Iterator[SqliteMemory]:
    # As the daemon composes it: forgetting a fact retires the graph relations it stated.
    with SqliteMemory.open(db_path, SCHEMA, FactRelations) as opened:
        yield opened
