"""The ``flynn`` command as a person runs it: real subprocesses, a temporary HOME, no network."""

from __future__ import annotations

import json
import os
import pstats
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.datadir import DataDirLock
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.working import write_working_memory
from flynn.recall import minilm
from flynn.schedule.migrations import SCHEMA


def flynn(
    *args: str, home: Path, stdin: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "flynn", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=_environment(home, env),
        timeout=60,
        check=False,
    )


def _environment(home: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_", "NOTIFY_SOCKET"))
    }
    clean.update({"HOME": str(home), "USER": "ana", **(env or {})})
    return clean


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def test_offline_chat_remembers_a_name_across_processes(home: Path) -> None:
    # The owner's memory (DESIGN 4): each new process starts a session with who they are.
    env = {"FLYNN_MEMORY__USER_NAMESPACE": "user"}
    first = flynn("chat", home=home, env=env, stdin="my name is Ana\n")
    assert first.returncode == 0, first.stderr
    assert "no language model is configured" in first.stdout.lower()
    second = flynn("chat", home=home, env=env, stdin="hi\n")
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

    acted = flynn(
        "chat",
        home=home,
        env=env,
        stdin="add buy milk to my tasks\nremind me in 20 seconds to stretch\n",
    )
    assert "Added task 1: buy milk" in acted.stdout
    # A terminal session cannot be written to later: the reminder says where it could go.
    assert "cannot receive messages later" in acted.stdout
    tasks = home / ".flynn" / "user" / "TASKS.json"
    assert "buy milk" in tasks.read_text()

    flynn("memory", "forget", "--all", "--yes", home=home, env=env)
    data = json.loads(flynn("memory", "show", "--json", home=home, env=env).stdout)
    assert data["profile"] == [] and data["facts"] == []
    assert not tasks.exists()


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
    assert report["recall_depth"] == "adaptive"
    assert 0 < report["p50_ms"] <= report["p99_ms"]
    # The harness's own imports (psycopg, the MCP SDK, every benchmark's modules) are told
    # apart from what a daemon would hold.
    assert report["rss_mib_harness_imports"] > 0
    assert report["rss_mib_at_rest_less_harness"] == round(
        report["rss_mib_at_rest"] - report["rss_mib_harness_imports"], 1
    )


def test_bench_turn_profiles_the_timed_turns_only(home: Path, tmp_path: Path) -> None:
    profile = tmp_path / "turns.prof"
    result = flynn(
        "bench", "turn", "--messages", "200", "--facts", "50", "--turns", "7",
        "--profile", str(profile), home=home,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    calls = {
        function: counts[1]
        for (path, _, function), counts in pstats.Stats(str(profile)).stats.items()  # type: ignore[attr-defined]
        if path.endswith(("orchestrator.py", "turn.py"))
    }
    # A coroutine counts once more each time it resumes (a turn waits for its recall thread):
    # a whole number of entries a turn, and fewer than the 20 warm-up turns would add.
    assert calls["handle"] % 7 == 0 and calls["handle"] < 27
    assert "_fill" not in calls  # nor the set-up


def _seed_memory(home: Path) -> None:
    """Three days of one person's turns, another session's memory, and a timezone chain."""
    day = datetime(2026, 11, 17, 9, 0, tzinfo=UTC)
    with SqliteMemory.open(home / ".flynn" / "flynn.db", SCHEMA) as memory:
        for offset, session, text in [
            (0, "telegram:1", "the dentist moved my appointment"),
            (1, "gateway:laptop", "remind me about the dentist tomorrow"),
            (2, "gateway:laptop", "the dentist said all is well"),
        ]:
            memory.history.append(
                session, "user", "user", text, tokens=5, now=day + offset * timedelta(1)
            )
        memory.history.append(
            "gateway:other",
            "sessions/gateway:other",
            "user",
            "my dentist is far",
            tokens=5,
            now=day,
        )
        write_working_memory(
            memory.documents, "user/working", "dentist", ttl_days=14, max_tokens=100, now=day
        )
        rules = RuleReconciler(memory.facts)
        for offset, zone in [(0, "Europe/Lisbon"), (1, "Europe/Berlin")]:
            fact = ProposedFact("profile", "timezone", zone, 0.9, "profile")
            rules.apply("user/profile", fact, source="rule", now=day + offset * timedelta(1))


ONE_PERSON = {"FLYNN_MEMORY__USER_NAMESPACE": "user", "FLYNN_PERSONA__TIMEZONE": "UTC"}


def test_sessions_search_and_fact_history(home: Path) -> None:
    _seed_memory(home)
    found = flynn("sessions", "search", "dentist", "--json", home=home, env=ONE_PERSON)
    assert found.returncode == 0, found.stderr
    report = json.loads(found.stdout)
    assert [day["date"] for day in report["days"]] == ["2026-11-19", "2026-11-18", "2026-11-17"]
    assert report["days"][0]["results"][0]["excerpt"] == "the [dentist] said all is well"
    assert "far" not in found.stdout  # another namespace's turn

    text = flynn("sessions", "search", "dentist", "--limit", "1", home=home, env=ONE_PERSON)
    lines = text.stdout.splitlines()
    assert lines[0] == "1 past message matching “dentist”:" and lines[2].startswith("2026-11-1")
    assert "- 09:00 telegram:1, user: the **dentist** moved my appointment" in lines

    shown = flynn("memory", "show", "--history", "timezone", "--json", home=home, env=ONE_PERSON)
    assert shown.returncode == 0, shown.stderr
    chain = json.loads(shown.stdout)["history"]
    assert [(row["value"], row["status"]) for row in chain] == [
        ("Europe/Lisbon", "superseded"),
        ("Europe/Berlin", "active"),
    ]
    assert chain[0]["believed_until"] == chain[1]["believed_from"] == "2026-11-18T09:00:00Z"
    assert chain[1]["supersedes"] == chain[0]["id"] and chain[1]["believed_until"] is None


def test_memory_forget_a_time_range(home: Path) -> None:
    _seed_memory(home)
    wrong = flynn("memory", "forget", "--field", "x", "--until", "2026-11-18", home=home)
    assert wrong.returncode == 2 and "--until" in wrong.stderr
    result = flynn(
        "memory",
        "forget",
        "--since",
        "2026-11-18",
        "--until",
        "2026-11-18",
        home=home,
        env=ONE_PERSON,
    )
    assert result.returncode == 0, result.stderr
    assert "1 message," in result.stdout and "working memory" in result.stdout
    with SqliteMemory.open(home / ".flynn" / "flynn.db", SCHEMA) as memory:
        left = [hit.message.content for hit in memory.history.search("user", "dentist", limit=9)]
        assert sorted(left) == ["the dentist moved my appointment", "the dentist said all is well"]
        assert memory.documents.read("user/working") is None
        assert [f.value for f in memory.facts.active("user/profile")] == []  # Berlin, and its chain


def test_memory_embed_fills_in_what_was_stored_without_embeddings(home: Path) -> None:
    pytest.importorskip("wordllama")
    off = {"FLYNN_MEMORY__EMBEDDINGS": "off"}
    chat = flynn("chat", home=home, stdin="my name is Anabel\nI adopted a dog\n", env=off)
    assert chat.returncode == 0
    refused = flynn("memory", "embed", home=home, env=off)
    assert refused.returncode == 2 and "memory.embeddings" in refused.stderr
    on = {"FLYNN_MEMORY__EMBEDDINGS_MODEL": "wordllama"}  # embeddings are on by default
    # The person's two messages: Flynn's own offline replies are kept out of vectors.
    doctor = flynn("doctor", "--no-network", home=home, env=on)
    assert "[warn] embeddings:" in doctor.stdout and "2 stored message(s)" in doctor.stdout
    first = flynn("memory", "embed", home=home, env=on)
    assert first.returncode == 0, first.stderr
    assert "wordllama-l2-supercat-256: 0/2 stored message(s) have a vector (0%)" in first.stdout
    assert "  user  0/2  2 to go" in first.stdout
    assert "embedded 2 message(s) under every namespace" in first.stdout
    again = flynn("memory", "embed", home=home, env=on)
    assert "  user  2/2  done" in again.stdout and "embedded 0 message(s)" in again.stdout
    assert "[ok  ] embeddings:" in flynn("doctor", "--no-network", home=home, env=on).stdout
    # Forgetting redacts the name where it was said: those turns are embedded anew.
    forgot = flynn("memory", "forget", "--field", "name", home=home, env=on)
    assert forgot.returncode == 0, forgot.stderr
    assert "message(s) anew from what is left" in forgot.stdout
    assert "embedded 0 message(s)" in flynn("memory", "embed", home=home, env=on).stdout


def test_memory_embed_only_reads_progress_while_the_daemon_holds_the_data_dir(
    home: Path,
) -> None:
    off = {"FLYNN_MEMORY__EMBEDDINGS": "off"}
    assert flynn("chat", home=home, stdin="I adopted a dog\n", env=off).returncode == 0
    with DataDirLock(home / ".flynn"):  # as a running daemon does
        shown = flynn("memory", "embed", home=home)
        assert shown.returncode == 0, shown.stderr
        assert "all-MiniLM-L6-v2-int8: 0/1 stored message(s) have a vector (0%)" in shown.stdout
        assert f"the daemon (pid {os.getpid()}) embeds the other 1 in the background" in (
            shown.stdout
        )
    with SqliteMemory.open(home / ".flynn" / "flynn.db", SCHEMA) as memory:
        count = memory.db.fetchone("SELECT count(*) FROM embeddings")
        assert count is not None and count[0] == 0  # read only: the daemon's work


_HOLDER = """
import sys
from pathlib import Path
from flynn.datadir import DataDirLock
DataDirLock(Path(sys.argv[1])).acquire()
print("held", flush=True)
sys.stdin.read()
"""


def test_memory_embed_follow_ends_when_the_daemon_stops(home: Path) -> None:
    off = {"FLYNN_MEMORY__EMBEDDINGS": "off"}
    assert flynn("chat", home=home, stdin="I adopted a dog\n", env=off).returncode == 0
    command = [sys.executable, "-c", _HOLDER, str(home / ".flynn")]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as daemon:
        assert daemon.stdout is not None and daemon.stdout.readline() == "held\n"
        follow = [
            sys.executable,
            "-m",
            "flynn",
            "memory",
            "embed",
            "--follow",
            "--interval",
            "0.05",
        ]
        with subprocess.Popen(
            follow, stdout=subprocess.PIPE, text=True, env=_environment(home)
        ) as watching:
            assert watching.stdout is not None
            for line in watching.stdout:
                if "in the background" in line:
                    break  # following now
            else:
                pytest.fail("flynn memory embed --follow ended before following")
            assert daemon.stdin is not None
            daemon.stdin.close()  # the daemon stops, its work not done
            daemon.wait(timeout=60)
            told = watching.communicate(timeout=60)[0]
    assert f"the daemon (pid {daemon.pid}) has stopped" in told
    assert watching.returncode == 1


def test_memory_embed_under_a_new_model_deletes_the_old_models_vectors(home: Path) -> None:
    pytest.importorskip("wordllama")
    if minilm.model_dir() is None:
        pytest.skip("the MiniLM weights are not installed")
    old = {"FLYNN_MEMORY__EMBEDDINGS": "true", "FLYNN_MEMORY__EMBEDDINGS_MODEL": "wordllama"}
    new = {"FLYNN_MEMORY__EMBEDDINGS": "true", "FLYNN_MEMORY__EMBEDDINGS_MODEL": "minilm"}
    assert flynn("chat", home=home, stdin="I adopted a dog\n", env=old).returncode == 0
    switched = flynn("memory", "embed", "--keep-other-models", home=home, env=new)
    assert switched.returncode == 0, switched.stderr
    # The person's message (Flynn's offline reply is kept out of vectors).
    assert "embedded 1 message(s)" in switched.stdout
    assert "kept 1 vector(s) of other models (wordllama" in switched.stdout
    doctor = flynn("doctor", "--no-network", home=home, env=new)
    assert "[warn] embeddings:" in doctor.stdout and "1 vector(s) of other models" in doctor.stdout

    pruned = flynn("memory", "embed", home=home, env=new)
    assert pruned.returncode == 0, pruned.stderr
    assert "deleted 1 vector(s) of other models (wordllama" in pruned.stdout
    with SqliteMemory.open(home / ".flynn" / "flynn.db", SCHEMA) as memory:
        models = memory.db.fetchall("SELECT DISTINCT model FROM embeddings")
        assert [row[0] for row in models] == [minilm.MINILM_MODEL]
    assert "[ok  ] embeddings:" in flynn("doctor", "--no-network", home=home, env=new).stdout


def test_with_no_config_memory_follows_the_owner_from_one_chat_to_another(home: Path) -> None:
    # The embedded defaults have an owner (DESIGN 4): the web page, the terminal and Telegram
    # share one memory from the first message, with nothing configured.
    flynn("chat", home=home, stdin="my name is Ana\n")
    shown = json.loads(flynn("memory", "show", "--json", home=home).stdout)
    assert shown["namespace"] == "user"
    assert any(fact["field"] == "name" and fact["value"] == "Ana" for fact in shown["profile"])
    assert "Ana" in flynn("chat", home=home, stdin="hi\n").stdout


def test_a_config_file_from_the_environment_is_named_by_its_variable(home: Path) -> None:
    result = flynn("memory", "show", home=home, env={"FLYNN_CONFIG": str(home / "nope.yaml")})
    assert result.returncode == 2
    assert "FLYNN_CONFIG" in result.stderr and "--config" not in result.stderr


def test_an_unknown_key_set_in_the_environment_names_the_variable(home: Path) -> None:
    result = flynn("memory", "show", home=home, env={"FLYNN_LLM__MODLE": "x"})
    assert result.returncode == 2
    assert "FLYNN_LLM__MODLE (llm.modle): unknown key" in result.stderr


def test_quit_and_exit_end_a_chat(home: Path) -> None:
    for word in ("/quit", "/exit"):
        result = flynn("chat", home=home, stdin=f"{word}\nmy name is Ana\n")
        assert result.returncode == 0, result.stderr
        assert result.stdout == ""  # left before the next line was read


def test_forgetting_a_field_nothing_has_fails_and_says_so(home: Path) -> None:
    env = {"FLYNN_MEMORY__USER_NAMESPACE": "user"}
    flynn("chat", home=home, env=env, stdin="My name is Ana.\n")
    result = flynn("memory", "forget", "--field", "nosuchfield", home=home, env=env)
    assert result.returncode == 1
    assert "no fact field 'nosuchfield' under user" in result.stderr
    forgot = flynn("memory", "forget", "--field", "name", home=home, env=env)
    assert forgot.returncode == 0, forgot.stderr
    assert "1 fact," in forgot.stdout and "1 facts" not in forgot.stdout
