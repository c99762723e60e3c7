"""What a light ``flynn`` command loads: ``--help``, ``--version``, a wrong argument, and the
commands that only read a row or two (``users list``, ``gateway token``) never import the
composition root, the model SDKs or the embedding runtime; each command imports those when it
runs (``flynn.cli_settings`` says how). A guarantee on ``sys.modules``, not a timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flynn.cli_distill import TIERS
from flynn.cli_memory import PERSON_FILE_NAMES
from flynn.distill import distiller
from flynn.people import store

HEAVY = frozenset({"flynn.app", "openai", "anthropic", "numpy", "onnxruntime"})
"""The composition root and what it brings: the providers' SDKs, the embedding model's runtime."""

PARSER_ONLY = HEAVY | {
    "flynn.daemon",
    "flynn.storage_place",
    "flynn.settings",
    "flynn.credentials",
    "pydantic",
    "psycopg",
    "structlog",
}
"""What printing help or refusing an argument needs none of: no settings, no store, no logging."""

_LOADED = """\
import json, sys
from flynn.cli import main
try:
    code = main(sys.argv[2:])
except SystemExit as exc:  # argparse's --help, --version and usage errors
    code = exc.code
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def _loaded(home: Path, *args: str) -> tuple[int, set[str]]:
    """Runs ``flynn ARGS`` in a fresh interpreter (in ``home``, so the checkout on the path is
    the installed one) and returns its exit code and every module it had imported by then."""
    report = home / "loaded.json"
    environment = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("FLYNN_", "ANTHROPIC_", "OPENAI_"))
    }
    environment["HOME"] = str(home)
    subprocess.run(
        [sys.executable, "-c", _LOADED, str(report), *args],
        cwd=home,
        env=environment,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    loaded = json.loads(report.read_text(encoding="utf-8"))
    return int(loaded["code"]), set(loaded["modules"])


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("--help",), 0),
        (("--version",), 0),
        (("memory", "file", "show", "--help"), 0),
        (("users", "approve", "ABCD"), 2),  # --as is missing
        (("distill", "weekly"), 2),  # not a tier
        ((), 2),  # no command: the help, and 2
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else str(value),
)
def test_help_and_wrong_arguments_load_no_settings_store_or_model(
    tmp_path: Path, args: tuple[str, ...], code: int
) -> None:
    returned, modules = _loaded(tmp_path, *args)
    assert returned == code
    assert "flynn.cli" in modules  # it ran
    assert modules & PARSER_ONLY == set()


@pytest.mark.parametrize("args", [("users", "list"), ("gateway", "token")])
def test_commands_that_read_a_row_load_no_model(tmp_path: Path, args: tuple[str, ...]) -> None:
    returned, modules = _loaded(tmp_path, *args)
    assert returned in (0, 1)  # gateway token: 1, none generated yet
    assert "flynn.storage_place" in modules  # it opened the database
    assert modules & HEAVY == set()


def test_the_check_sees_a_command_that_loads_the_composition_root(tmp_path: Path) -> None:
    # `flynn chat` (offline, stdin empty) builds the App: what the checks above look for is
    # really there to be seen.
    returned, modules = _loaded(tmp_path, "chat")
    assert returned == 0
    assert HEAVY & modules >= {"flynn.app"}
    assert PARSER_ONLY & modules >= {"pydantic", "flynn.settings", "flynn.storage_place"}


def test_the_parser_spells_the_tiers_and_file_names_as_their_modules_do() -> None:
    assert TIERS == distiller.TIERS
    assert PERSON_FILE_NAMES == store.PERSON_FILE_NAMES
