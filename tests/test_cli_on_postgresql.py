"""The ``flynn`` commands with ``FLYNN_STORAGE__URL``: each opens the PostgreSQL database the
workers share (through ``flynn.storage_place``), never ``<data_dir>/flynn.db``; what one command
writes, the next reads; what PostgreSQL cannot do yet is said in one line, nothing forgotten."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import yaml
from e2e_daemon import run_flynn


async def test_the_commands_read_and_write_the_shared_database(
    tmp_path: Path, postgres_url: str
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": {"provider": "offline"},
                "memory": {"user_namespace": "user", "embeddings": False},
                "users": {"ana": {"cli": ["ana"], "gateway": ["ana-laptop"]}},
            }
        )
    )
    env = {"FLYNN_STORAGE__URL": postgres_url, "USER": "ana", "LOGNAME": "ana"}
    here = ("--user", "ana")  # the terminal's account is hers (users.ana.cli)

    async def flynn(*args: str, stdin: str | None = None, code: int = 0) -> str:
        done = await run_flynn(*args, "--config", str(config), home=tmp_path, env=env, stdin=stdin)
        assert done.code == code, (args, done.stdout, done.stderr)
        assert postgres_url.split(":")[2].split("@")[0] not in done.stdout + done.stderr
        return done.stdout + done.stderr

    said = await flynn("chat", stdin="My name is Ana.\n")
    assert "Noted" in said
    assert "Ana" in json.dumps(json.loads(await flynn("memory", "show", "--json", *here)))

    saved = await flynn(
        "memory", "file", "edit", "USER.md", "--set-from", "-", *here, stdin="I row.\n"
    )
    assert "USER.md saved" in saved
    assert (await flynn("memory", "file", "show", "USER.md", *here)).strip() == "I row."
    assert "I row." in await flynn("memory", "export", *here)

    token = (await flynn("users", "token", "ana")).splitlines()[0]
    listed = json.loads(await flynn("users", "list", "--json"))
    assert "ana" in json.dumps(listed) and token not in json.dumps(listed)

    handbook = tmp_path / "handbook.md"
    handbook.write_text("# Expenses\n\nReceipts go to finance within a week.\n")
    assert "Expenses" in await flynn("docs", "add", str(handbook))
    assert json.loads(await flynn("docs", "list", "--json"))[0]["title"] == "Expenses"

    assert json.loads(await flynn("costs", "--json"))["total"]["calls"] >= 0
    assert "My name is Ana." in await flynn("sessions", "export", "--stdout", *here)
    assert "Ana" in await flynn("sessions", "search", "Ana", *here)

    checked = await flynn("doctor", "--no-network")
    assert "[ok  ] database: PostgreSQL postgresql://flynn:***@" in checked
    assert "no data-dir lock" in checked

    refused = await flynn("memory", "forget", "--field", "name", *here, code=1)
    assert "not available on PostgreSQL yet" in refused
    forgot = await flynn("memory", "forget", "--all", "--yes", *here)
    assert "forgot everything under users/ana" in forgot
    assert "Ana" not in await flynn("memory", "show", *here)

    kept = await flynn("gateway", "token", code=1)
    assert "digest only" in kept and "--rotate" in kept

    assert not (tmp_path / "data" / "flynn.db").exists()
    with psycopg.connect(postgres_url) as connection:
        row = connection.execute("SELECT count(*) FROM team_documents").fetchone()
    assert row == (1,)
