"""``flynn users``: a token is printed once for a person of ``users:`` and verifies as them, an
unknown name is one line and exit 2, ``--revoke`` ends them, ``list`` says who has what, and
``approve`` refuses an unknown code or a name that is nobody."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from flynn.cli import main
from flynn.memory.database import Database
from flynn.memory.person_tokens import SqlitePersonTokens
from flynn.schedule.migrations import SCHEMA


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "data_dir": str(tmp_path / "data"),
                "users": {"alice": {"gateway": ["alice-laptop"]}, "bob": {"telegram": [7]}},
                "logging": {"level": "warning"},
            }
        )
    )
    return path


def test_a_token_is_printed_once_and_is_that_person(
    config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["users", "token", "alice", "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    token = out.strip()
    assert len(token) >= 43 and "\n" not in token
    assert token not in err and "shown this once" in err
    with Database.open(tmp_path / "data" / "flynn.db", SCHEMA) as db:
        found = SqlitePersonTokens(db).verify(token)
    assert found is not None and found.person == "alice"

    assert main(["users", "list", "--json", "--config", str(config)]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [(p["name"], p["tokens"]) for p in listing["people"]] == [("alice", 1), ("bob", 0)]
    assert token not in json.dumps(listing)

    assert main(["users", "token", "alice", "--revoke", "--config", str(config)]) == 0
    assert "Revoked 1 token of alice" in capsys.readouterr().out
    with Database.open(tmp_path / "data" / "flynn.db", SCHEMA) as db:
        assert SqlitePersonTokens(db).verify(token) is None


def test_names_and_codes_that_are_nobody_are_refused(
    config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["users", "token", "carol", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'carol' is not a person of users: (known: alice, bob)" in err
    assert main(["users", "approve", "ABCD2345", "--as", "carol", "--config", str(config)]) == 2
    assert "neither a person of users: nor the owner" in capsys.readouterr().err
    assert main(["users", "approve", "abcd-2345", "--as", "bob", "--config", str(config)]) == 2
    assert "no pairing code 'ABCD2345' is waiting" in capsys.readouterr().err
    assert main(["users", "pending", "--config", str(config)]) == 0
    assert capsys.readouterr().out == "No pairing codes are waiting.\n"
