"""The layers of ``flynn`` (README, Architecture): which package may import which. A forbidden
import fails here, naming the module and what it imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "flynn"

# Each part, and the parts it must never import (at module level or inside a function).
ENTRY = {
    "cli",
    "cli_memory",
    "cli_settings",
    "cli_costs",
    "cli_distill",
    "cli_docs",
    "cli_users",
    "cli_transcripts",
    "app",
    "daemon",
}
FORBIDDEN: dict[str, set[str]] = {
    "memory": {
        "recall",
        "learning",
        "providers",
        "sessions",
        "channels",
        "tools",
        "schedule",
        "router",
        "persona",
        *ENTRY,
    },
    "recall": {
        "learning",
        "providers",
        "sessions",
        "channels",
        "tools",
        "schedule",
        "router",
        *ENTRY,
    },
    "learning": {"recall", "sessions", "channels", "tools", "schedule", "router", *ENTRY},
    "providers": {
        "memory",
        "recall",
        "learning",
        "sessions",
        "channels",
        "tools",
        "schedule",
        "router",
        *ENTRY,
    },
    "channels": {
        "memory",
        "recall",
        "learning",
        "providers",
        "sessions",
        "tools",
        "schedule",
        "router",
        *ENTRY,
    },
    "schedule": {"recall", "learning", "sessions", "channels", "tools", "router", *ENTRY},
    "tools": {"sessions", "channels", "router", "distill", *ENTRY},
    "distill": {"recall", "sessions", "channels", "router", *ENTRY},
    "sessions": {"channels", "router", *ENTRY},
    "router": {"channels.telegram", "channels.discord", "channels.gateway", *ENTRY},
    # The memory page's reads: over the stores, beside the sessions, never through a model.
    "memory_view": {
        "recall",
        "learning",
        "providers",
        "sessions",
        "channels",
        "router",
        "distill",
        *ENTRY,
    },
    # Transcripts read the stores (and the stored tool steps), never through a model.
    "transcripts": {
        "recall",
        "learning",
        "providers",
        "channels",
        "router",
        "distill",
        "tools",
        "schedule",
        *ENTRY,
    },
    # The person's kept files: below the sessions and tools that use them, over no store.
    "attachments": {
        "memory",
        "recall",
        "learning",
        "sessions",
        "channels",
        "tools",
        "schedule",
        "router",
        "distill",
        *ENTRY,
    },
    "memory_map": {
        "memory_view",
        "recall",
        "learning",
        "providers",
        "sessions",
        "channels",
        "router",
        "tools",
        "schedule",
        *ENTRY,
    },
}


def _part(module: str) -> str:
    """``flynn.memory.facts`` -> ``memory``; ``flynn.channels.telegram`` -> ``channels``."""
    return module.split(".")[1] if module.count(".") >= 1 else module


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "flynn":  # from flynn import memory
                found.update(f"flynn.{alias.name}" for alias in node.names)
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("flynn.")}


def _modules() -> list[tuple[str, Path]]:
    modules = []
    for path in sorted(PACKAGE.rglob("*.py")):
        dotted = ".".join(("flynn", *path.relative_to(PACKAGE).with_suffix("").parts))
        modules.append((dotted.removesuffix(".__init__"), path))
    return modules


def _violations() -> list[str]:
    problems = []
    for module, path in _modules():
        forbidden = FORBIDDEN.get(_part(module), set())
        for name in sorted(_imports(path)):
            target = name.removeprefix("flynn.")
            if _part(name) == _part(module):
                continue
            if any(target == rule or target.startswith(rule + ".") for rule in forbidden):
                problems.append(f"{module} imports {name}")
    return problems


def test_no_import_crosses_a_forbidden_line() -> None:
    assert _violations() == []


def test_only_flynn_bench_reaches_the_evals() -> None:
    """``evals/`` (the benchmarks, not installed) may import ``flynn``; ``flynn`` imports it
    nowhere, except ``flynn bench``'s one import in ``flynn.cli``, made when the command runs."""
    reaching = []
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                names = [node.value] if node.value.startswith("evals.") else []
            if any(name == "evals" or name.startswith("evals.") for name in names):
                reaching.append(f"{module}: {names[0]}")
    assert reaching == ["flynn.cli: evals.cli"]


def test_the_check_catches_a_crossing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "flynn"
    (fake / "memory").mkdir(parents=True)
    (fake / "memory" / "facts.py").write_text("from flynn.providers.base import Provider\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    assert _violations() == ["flynn.memory.facts imports flynn.providers.base"]


MAX_LINES = 800
"""A module is one concept; one concept may take up to 800 lines (the gateway's connections,
frames and acknowledgements are one). Past that it is more than one, and splits by concept,
never by count."""


def test_no_module_is_over_800_lines() -> None:
    long = {
        module: lines
        for module, path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
