"""The migration that makes one set of facts: an install whose extraction model kept its facts in
``<root>/facts`` has them beside the rules' and the ``remember`` tool's after it, nothing lost,
nothing believed twice, each person's facts still their own."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from flynn.memory.database import Database, encode_time
from flynn.memory.facts import SqliteFacts
from flynn.schedule.migrations import SCHEMA

ONE_SET_FROM = next(
    n for n, script in enumerate(SCHEMA.migrations, start=1) if "'/patterns'" in script
)
"""The migration that moved ``<root>/facts`` (found by what it does: the lead renumbers)."""

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)

# (namespace, kind, field, value, source, status, supersedes (a row number here), minutes after T0)
OLD_FACTS = (
    ("users/ana/profile", "profile", "name", "Ana", "rule", "active", None, 0),  # 1
    ("users/ana/profile", "observation", None, "prefers short answers", "tool", "active", None, 1),
    ("users/ana/profile", "profile", "employer", "Globex", "rule", "active", None, 2),  # 3
    ("users/ana/facts", "profile", "employer", "Initech", "llm", "superseded", None, 3),  # 4
    ("users/ana/facts", "profile", "employer", "Acme", "llm", "active", 4, 4),  # 5
    ("users/ana/facts", "profile", "name", "Annie", "llm", "active", None, 5),  # 6
    ("users/ana/facts", "observation", None, "Prefers short answers", "llm", "active", None, 6),
    ("users/ana/facts", "action", "ship it", "deploy to staging", "llm", "active", None, 7),  # 8
    ("users/ana/facts", "observation", None, "is vegetarian", "llm", "active", None, 8),  # 9
    ("users/bob/facts", "profile", "name", "Bob", "llm", "active", None, 9),  # 10
    ("users/bob/patterns", "action", "ship it", "merge the PR", "rule", "active", None, 10),
)


def _write_old_database(path: Path) -> None:
    with Database.open(path, SCHEMA.up_to(ONE_SET_FROM - 1)) as db:
        for number, row in enumerate(OLD_FACTS, start=1):
            namespace, kind, field, value, source, status, supersedes, minutes = row
            at = encode_time(T0 + timedelta(minutes=minutes))
            db.execute(
                "INSERT INTO facts (id, namespace, kind, field, value, confidence, source, "
                "status, supersedes, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, 0.9, ?, ?, ?, ?, ?)",
                (number, namespace, kind, field, value, source, status, supersedes, at, at),
            )
        db.execute(
            "INSERT INTO embeddings (kind, ref_id, namespace, model, vector) "
            "VALUES ('fact', 9, 'users/ana/facts', 'test-model', x'00')"
        )


def test_an_old_installs_model_facts_join_the_one_set_without_loss_or_duplicates(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memory.db"
    _write_old_database(path)

    with Database.open(path, SCHEMA) as db:
        assert db.version == SCHEMA.latest
        facts = SqliteFacts(db)
        rows = {row["id"]: row for row in db.fetchall("SELECT * FROM facts")}
        assert len(rows) == len(OLD_FACTS)  # nothing lost, nothing added
        assert not [row for row in rows.values() if row["namespace"].endswith("/facts")]

        ana = {(f.field, f.value): f for f in facts.active("users/ana/profile")}
        # The model's newer name is believed; the rule's is history, linked to it.
        assert ana[("name", "Annie")].supersedes == 1
        assert rows[1]["status"] == "superseded"
        assert rows[1]["updated_at"] == rows[6]["created_at"]
        # Acme keeps its own chain (it replaced Initech); Globex, older, is no longer believed.
        assert ana[("employer", "Acme")].supersedes == 4
        assert rows[3]["status"] == "superseded"
        # The same observation learnt twice is believed once (the newer), the older kept.
        assert [f.id for f in facts.active("users/ana/profile") if f.field is None] == [9, 7]
        assert ana[(None, "Prefers short answers")].supersedes == 2
        assert set(ana) == {
            ("name", "Annie"),
            ("employer", "Acme"),
            (None, "Prefers short answers"),
            (None, "is vegetarian"),
        }
        assert [(f.field, f.value) for f in facts.active("users/ana/patterns")] == [
            ("ship it", "deploy to staging")
        ]
        # Two people's facts never meet: bob's trigger and name stay his, ana's hers.
        assert [(f.field, f.value) for f in facts.active("users/bob/profile")] == [("name", "Bob")]
        assert [(f.value, f.source) for f in facts.active("users/bob/patterns")] == [
            ("merge the PR", "rule")
        ]
        assert {f.source for f in facts.active("users/ana/profile")} == {"llm"}
        # Found by full-text search under the new namespace, and its vector moved with it.
        assert [f.id for f in facts.search("users/ana", "vegetarian", limit=5)] == [9]
        (vector,) = db.fetchall("SELECT namespace FROM embeddings WHERE ref_id = 9")
        assert vector["namespace"] == "users/ana/profile"
