"""Team documents on PostgreSQL where it differs from SQLite: two workers adding the same file at
once (``flynn docs add`` run twice) leave one document with one version's chunks."""

from __future__ import annotations

from datetime import UTC, datetime

from together import at_once

from flynn.memory.team import NewChunk
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.team import PostgresTeam

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_two_workers_adding_one_file_at_once_leave_one_version(postgres_url: str) -> None:
    with PostgresDatabase.open(postgres_url) as one, PostgresDatabase.open(postgres_url) as two:
        teams = [PostgresTeam(one), PostgresTeam(two)]

        def put(team: PostgresTeam, version: str) -> bool:
            chunks = [NewChunk(f"{version} {n}", f"Chunk {n} of {version}.") for n in range(3)]
            _, replaced = team.put(
                path="handbook.md", title=version, digest=version, chars=9, chunks=chunks, now=T0
            )
            return replaced

        replaced = at_once(lambda: put(teams[0], "first"), lambda: put(teams[1], "second"))
        assert sorted(replaced) == [False, True]
        (document,) = teams[0].documents()
        chunks = teams[1].chunks(teams[1].chunk_ids(document.id))
        assert [chunk.heading for chunk in chunks] == [f"{document.title} {n}" for n in range(3)]
