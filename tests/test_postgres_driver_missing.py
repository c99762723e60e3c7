"""``make run`` installs Flynn without the PostgreSQL driver (the ``postgresql`` extra): a
``storage.url`` then says in one line what to install, instead of a traceback that a service
manager would restart forever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

URL = "postgresql://flynn:hunter2-secret@127.0.0.1:1/flynn"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    # The driver made unimportable in the child, as in a virtualenv installed without the extra.
    blocker = tmp_path / "without-psycopg"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['psycopg'] = None\n")
    return tmp_path


def _flynn(home: Path, *args: str, url: str | None = URL) -> subprocess.CompletedProcess[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_"))
    }
    env.update(
        {
            "HOME": str(home),
            "FLYNN_DATA_DIR": str(home / "data"),
            "PYTHONPATH": os.pathsep.join([str(home / "without-psycopg"), *sys.path]),
        }
    )
    if url is not None:
        env["FLYNN_STORAGE__URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "flynn", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=60,
        check=False,
    )


def _says_what_to_install(result: subprocess.CompletedProcess[str], code: int, key: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == code, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"flynn: {key}: PostgreSQL needs its driver")
    assert "flynn[postgresql]" in lines[0]
    assert "hunter2" not in result.stderr + result.stdout


def test_the_blocker_works(home: Path) -> None:
    result = _flynn(home, "--version", url=None)
    assert result.returncode == 0, result.stderr
    probe = subprocess.run(
        [sys.executable, "-c", "import psycopg"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(home / "without-psycopg")},
        check=False,
    )
    assert probe.returncode != 0 and "ModuleNotFoundError" in probe.stderr


def test_run_with_storage_url_says_what_to_install_and_exits_4(home: Path) -> None:
    _says_what_to_install(_flynn(home, "run"), 4, "storage.url")


def test_a_memory_command_with_storage_url_says_what_to_install(home: Path) -> None:
    _says_what_to_install(_flynn(home, "memory", "show"), 4, "storage.url")


def test_storage_copy_to_postgresql_says_what_to_install(home: Path) -> None:
    _says_what_to_install(_flynn(home, "storage", "copy", "--to", URL, url=None), 4, "--to")


def test_doctor_names_the_driver_as_the_database_s_problem(home: Path) -> None:
    result = _flynn(home, "doctor")
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode != 0
    database = [line for line in result.stdout.splitlines() if "database" in line]
    assert database and "PostgreSQL needs its driver" in database[0], result.stdout
    assert "hunter2" not in result.stderr + result.stdout


def test_bench_without_the_dev_extras_says_what_to_install(home: Path) -> None:
    result = _flynn(home, "bench", "--help", url=None)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "flynn: `flynn bench` needs the dev extras (psycopg is not installed): "
        "make .venv/.installed-dev, or pip install -e '.[dev]'"
    ]
