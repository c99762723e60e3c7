"""The ``flynn`` command as a person runs it: real subprocesses, a temporary HOME, no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def flynn(
    *args: str, home: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET"))
    }
    clean.update({"HOME": str(home), "USER": "ana", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "flynn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=clean,
        timeout=60,
        check=False,
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def test_offline_chat_remembers_a_name_across_processes(home: Path) -> None:
    first = flynn("chat", home=home, stdin="my name is Ana\n")
    assert first.returncode == 0, first.stderr
    assert "no language model is configured" in first.stdout.lower()
    second = flynn("chat", home=home, stdin="hi\n")
    assert second.returncode == 0, second.stderr
    assert "Ana" in second.stdout
    assert len(second.stdout.strip().splitlines()) == 1  # one reply per line


def test_invalid_config_names_the_key_and_exits_2(home: Path) -> None:
    config = home / "bad.yaml"
    config.write_text("memory:\n  working_memory_ttl_days: 0\nllm:\n  modle: x\n")
    result = flynn("chat", "--config", str(config), home=home)
    assert result.returncode == 2
    assert "memory.working_memory_ttl_days" in result.stderr
    assert "llm.modle: unknown key" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_environment_value_names_the_key(home: Path) -> None:
    result = flynn(
        "memory", "show", home=home, env={"FLYNN_MEMORY__WORKING_MEMORY_MAX_TOKENS": "99999"}
    )
    assert result.returncode == 2
    assert "memory.working_memory_max_tokens" in result.stderr


def test_missing_config_file_is_a_config_error(home: Path) -> None:
    result = flynn("chat", "--config", str(home / "nope.yaml"), home=home)
    assert result.returncode == 2
    assert "--config" in result.stderr


def test_init_writes_config_and_persona_that_load(home: Path) -> None:
    target = home / "assistant"
    result = flynn("init", str(target), home=home)
    assert result.returncode == 0, result.stderr
    assert (target / "config.yaml").exists()
    assert (target / "persona" / "flynn" / "IDENTITY.md").exists()
    again = flynn("init", str(target), home=home)
    assert "kept existing" in again.stdout
    chat = flynn("chat", "--config", str(target / "config.yaml"), home=home, stdin="hello\n")
    assert chat.returncode == 0, chat.stderr
    assert (target / "flynn.db").exists()


def test_memory_show_export_and_forget(home: Path) -> None:
    env = {"FLYNN_MEMORY__USER_NAMESPACE": "user"}
    flynn("chat", home=home, env=env, stdin="My name is Ana. I prefer green tea.\n")
    shown = flynn("memory", "show", "--json", home=home, env=env)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["namespace"] == "user"
    assert {"field": "name", "value": "Ana"}.items() <= data["profile"][-1].items() or any(
        fact["field"] == "name" and fact["value"] == "Ana" for fact in data["profile"]
    )
    exported = flynn("memory", "export", home=home, env=env)
    assert "# Memory: user" in exported.stdout and "Ana" in exported.stdout

    forgot = flynn("memory", "forget", "--field", "name", home=home, env=env)
    assert forgot.returncode == 0, forgot.stderr
    data = json.loads(flynn("memory", "show", "--json", home=home, env=env).stdout)
    assert all(fact["field"] != "name" for fact in data["profile"])

    flynn("memory", "forget", "--all", home=home, env=env)
    data = json.loads(flynn("memory", "show", "--json", home=home, env=env).stdout)
    assert data["profile"] == [] and data["facts"] == []


def test_unknown_user_is_a_clear_error(home: Path) -> None:
    result = flynn("memory", "show", "--user", "zed", home=home)
    assert result.returncode == 2
    assert "no user 'zed'" in result.stderr


def test_bench_turn_prints_one_json_object_last(home: Path) -> None:
    result = flynn(
        "bench", "turn", "--messages", "200", "--facts", "50", "--turns", "20", home=home
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["turns"] == 20
    assert 0 < report["p50_ms"] <= report["p99_ms"]
