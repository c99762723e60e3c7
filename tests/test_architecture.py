"""The layers of ``flynn`` (README, Architecture): what each part may import from ``flynn``.

A part is a subpackage (``memory`` is every module under ``flynn/memory/``) or a top-level module.
``RULES`` is the one table: each part's layer and what it may import. An import its row does not
list fails, naming the module, the import and the rule; a module whose part has no row fails,
saying where to add one. The README's table of edges is compared with the code's: it cannot drift.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "flynn"
README = PACKAGE.parent / "README.md"
HERE = "tests/test_architecture.py"

LAYERS = (
    "foundation",  # values, words and settings every part shares: no storage, no model
    "stores",  # the stores (memory), persona files, who may talk, the language models
    "knowledge",  # what to bring back for a message (recall) and what to keep (learning)
    "schedule",  # durable jobs and pushes
    "tools",  # what the model may do
    "sessions",  # one conversation, and what reads across them: distillation, transcripts, the page
    "channels",  # chat services, parsed at the edge
    "router",  # messages to sessions and replies back, replay after a restart
    "app",  # the composition root: the only place concrete classes are built
    "daemon",  # lifecycle: start, signals, drain
    "cli",  # the `flynn` command
)
"""Bottom first. A part may import only parts in its own layer or below (and never round in a
circle), and of those only what its row in ``RULES`` lists."""


@dataclass(frozen=True, slots=True)
class Rule:
    layer: str
    may_import: frozenset[str]
    """Parts (``memory``: any module in it) or modules (``channels.base``: that one only)."""


def rule(layer: str, may_import: str = "") -> Rule:
    """``rule("stores", "errors messages")``: a row of ``RULES``; imports apart by spaces."""
    return Rule(layer, frozenset(may_import.split()))


# One row per part. A new module inside a package follows its package's row; a new top-level
# module or package needs a row here, in the lowest layer its imports allow.
RULES: dict[str, Rule] = {
    # foundation
    "flynn": rule("foundation"),  # the package itself: __version__
    "errors": rule("foundation"),
    "backoff": rule("foundation"),
    "messages": rule("foundation", "dates"),
    "commands": rule("foundation", "messages"),
    "tokens": rule("foundation"),
    "orders": rule("foundation", "language"),
    "plurals": rule("foundation"),
    "language": rule("foundation"),
    "dates": rule("foundation", "language"),
    "cron": rule("foundation", "dates"),
    "credential_words": rule("foundation"),
    "json_text": rule("foundation"),
    "credentials": rule("foundation", "credential_words json_text language"),
    "settings": rule("foundation", "cron errors"),
    "identity": rule("foundation", "messages settings"),
    "datadir": rule("foundation", "errors"),
    "logs": rule("foundation", "credentials"),
    "gateway_token": rule("foundation", "errors settings"),
    # how the workers on one database take turns (a local default; PostgreSQL's in postgres)
    "coordination": rule("foundation", "messages"),
    # stores and models, beside each other: no store reaches a model, no model a store
    "memory": rule("stores", "credentials datadir errors identity messages orders tokens"),
    "providers": rule("stores", "backoff credentials dates errors language settings tokens"),
    "persona": rule("stores", "language"),
    # the same stores on PostgreSQL (docs/postgresql.md): only the composition root may choose
    # them (test_only_the_composition_root_may_choose_the_postgresql_backend)
    "postgres": rule("stores", "coordination credentials errors memory messages"),
    "access": rule("stores", "identity memory messages"),
    "attachments": rule("stores", "credentials messages providers.base"),
    # a person's own files (their folder, their task list), beside the stores
    "people": rule("stores", "attachments credentials errors memory persona"),
    # knowledge: above the stores, only the Provider Protocol of the models
    "recall": rule("knowledge", "dates errors language memory settings tokens"),
    "learning": rule(
        "knowledge",
        "credentials dates errors identity language memory orders providers.base tokens",
    ),
    # ``postgres.database`` for ``flynn.schedule.postgres`` alone, which only ``app`` may import
    # (test_only_the_composition_root_may_choose_the_postgresql_backend)
    "schedule": rule(
        "schedule",
        "backoff credentials cron dates errors identity memory messages postgres.database settings",
    ),
    "tools": rule(
        "tools",
        "attachments backoff credentials dates errors learning memory messages people "
        "providers.base "
        "recall schedule settings",
    ),
    # sessions
    "sessions": rule(
        "sessions",
        "attachments commands dates errors identity language learning memory messages people "
        "persona "
        "plurals providers.base providers.lifecycle providers.offline recall schedule tokens tools",
    ),
    "distill": rule(
        "sessions",
        "errors learning memory messages people persona providers.base schedule settings tokens",
    ),
    "transcripts": rule("sessions", "memory sessions"),
    "memory_map": rule("sessions", "memory"),
    "memory_view": rule(
        "sessions", "errors identity memory memory_map messages people persona schedule"
    ),
    # channels: messages in, replies out; never a store, a model or a session
    "channels": rule(
        "channels", "access backoff commands coordination errors identity messages settings"
    ),
    # router: sessions and the Channel Protocol, never a concrete channel
    "router": rule(
        "router",
        "backoff channels.base commands coordination errors identity learning memory messages "
        "sessions",
    ),
    "app": rule(
        "app",
        "access attachments channels coordination datadir dates distill embedding_model errors "
        "gateway_token "
        "identity learning memory memory_view people people_place persona providers recall router "
        "schedule sessions settings storage_place switchboard tools",
    ),
    # which backend keeps everything (SQLite in data_dir, or storage.url's PostgreSQL): the
    # composition root's choice, the one place beside it that may import flynn.postgres
    "storage_place": rule(
        "app",
        "attachments coordination errors gateway_token learning memory people people_place "
        "postgres recall schedule settings",
    ),
    # stored rows redacted again with today's credential gate, in the background or on demand
    "redaction_behind": rule("app", "coordination memory people settings storage_place"),
    # where people's files are kept (a folder each, or the database the workers share)
    "people_place": rule("app", "memory people settings"),
    # moving house: reads SQLite, writes PostgreSQL, so beside the composition root
    # (test_only_the_composition_root_may_choose_the_postgresql_backend)
    "storage_copy": rule(
        "app",
        "app attachments datadir errors gateway_token memory people people_place postgres "
        "schedule.migrations settings",
    ),
    # the embedding model's life in a running flynn: named, loaded in a thread, the catch-up
    "embedding_model": rule("app", "errors learning memory recall settings"),
    # the daemon's parts answering each other through the channels (readiness, redelivery)
    "switchboard": rule("app", "channels.base channels.gateway memory messages router schedule"),
    # daemon: what app built, run and stopped; a channel is known only by its Protocol
    "daemon": rule(
        "daemon",
        "app backoff channels.base coordination embedding_model errors providers.base "
        "providers.health redaction_behind settings systemd",
    ),
    "systemd": rule("daemon"),
    # cli
    "__main__": rule("cli", "cli"),
    "cli": rule(
        "cli",
        "app cli_costs cli_distill cli_docs cli_gateway cli_memory cli_settings cli_storage "
        "cli_transcripts cli_users commands daemon datadir doctor errors flynn identity logs "
        "memory messages people persona recall scaffold schedule sessions settings storage_place "
        "systemd",
    ),
    "cli_settings": rule("cli", "datadir errors logs settings"),
    "cli_storage": rule("cli", "cli_settings errors storage_copy"),
    "cli_memory": rule(
        "cli",
        "cli_settings datadir dates errors identity learning memory messages people "
        "people_place persona plurals recall redaction_behind schedule.migrations settings "
        "storage_place",
    ),
    "cli_costs": rule("cli", "cli_memory cli_settings memory storage_place"),
    "cli_distill": rule("cli", "app cli_memory cli_settings distill settings"),
    "cli_docs": rule(
        "cli",
        "cli_memory cli_settings datadir learning memory plurals recall settings storage_place",
    ),
    "cli_transcripts": rule(
        "cli",
        "app cli_memory cli_settings dates errors identity sessions storage_place transcripts",
    ),
    "cli_users": rule(
        "cli", "cli_settings datadir identity memory messages settings storage_place"
    ),
    "doctor": rule(
        "cli",
        "app channels datadir distill errors gateway_token memory people persona providers recall "
        "schedule settings storage_place tools",
    ),
    "cli_gateway": rule("cli", "cli_settings datadir gateway_token settings storage_place"),
    "scaffold": rule("cli"),
}


def _modules(package: Path) -> Iterator[tuple[str, Path]]:
    """``(flynn.memory.facts, path)`` for every module; a package's ``__init__`` is the package."""
    for path in sorted(package.rglob("*.py")):
        dotted = ".".join(("flynn", *path.relative_to(package).with_suffix("").parts))
        yield dotted.removesuffix(".__init__"), path


def _part(module: str) -> str:
    """``flynn.memory.facts`` -> ``memory``; ``flynn.errors`` -> ``errors``; ``flynn`` is itself."""
    return module.split(".")[1] if "." in module else module


def _is_module(package: Path, dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    return (package / relative).with_suffix(".py").is_file() or (
        package / relative / "__init__.py"
    ).is_file()


def _imports(package: Path, module: str, path: Path) -> set[str]:
    """The ``flynn`` modules ``module`` imports anywhere in it (in functions, under
    ``TYPE_CHECKING``, relatively, or by ``importlib.import_module("flynn...")``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                anchor = here[: len(here) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:  # from flynn.providers import base: the module base
                submodule = f"{base}.{alias.name}"
                found.add(submodule if _is_module(package, submodule) else base)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.args[0].value)
    return {name for name in found if name == "flynn" or name.startswith("flynn.")}


def _dotted(entry: str) -> str:
    """A ``RULES`` entry as a module name: ``memory`` -> ``flynn.memory``; ``flynn`` is itself."""
    return entry if entry == "flynn" else f"flynn.{entry}"


def _allows(allowed: frozenset[str], target: str) -> bool:
    name = target.removeprefix("flynn.")
    return any(name == entry or name.startswith(entry + ".") for entry in allowed)


def _layer(part: str) -> str:
    return f"{LAYERS.index(RULES[part].layer)} {RULES[part].layer}"


def violations(package: Path) -> list[str]:
    """Every import ``RULES`` does not allow, and every module whose part has no row."""
    problems = []
    for module, path in _modules(package):
        part = _part(module)
        if part not in RULES:
            problems.append(
                f"{module}: its part {part!r} has no row in RULES ({HERE}); add "
                f'{part!r}: rule("<layer>", "<what it may import>") in the lowest layer its '
                "imports allow"
            )
            continue
        allowed = RULES[part].may_import
        for target in sorted(_imports(package, module, path)):
            if _part(target) == part or _allows(allowed, target):
                continue
            target_part = _part(target)
            where = f"layer {_layer(target_part)}" if target_part in RULES else "no row in RULES"
            problems.append(
                f"{module} imports {target}: the rule for {part!r} (layer {_layer(part)}, "
                f"RULES in {HERE}) allows only {', '.join(sorted(allowed)) or 'nothing'}; "
                f"{target_part!r} is {where}"
            )
    return problems


def edges(package: Path) -> dict[str, set[str]]:
    """Part -> the other parts it imports, from the code."""
    found: dict[str, set[str]] = {}
    for module, path in _modules(package):
        part = _part(module)
        targets = {_part(target) for target in _imports(package, module, path)} - {part}
        found.setdefault(part, set()).update(targets)
    return found


def edge_table(package: Path) -> str:
    """The README's table of edges, as the code has them (printed when the README differs)."""
    rows = ["| layer | part | imports from flynn |", "|---|---|---|"]
    found = edges(package)
    for part in sorted(found, key=lambda part: (LAYERS.index(RULES[part].layer), part)):
        imports = ", ".join(f"`{target}`" for target in sorted(found[part]))
        rows.append(f"| {RULES[part].layer} | `{part}` | {imports} |")
    return "\n".join(rows)


def test_every_module_imports_only_what_its_rule_allows() -> None:
    assert violations(PACKAGE) == []


def test_the_rules_name_what_exists_and_point_down_never_round() -> None:
    parts = {_part(module) for module, _ in _modules(PACKAGE)}
    problems = [
        f"RULES has a row for {part!r}, which is not in flynn/" for part in RULES.keys() - parts
    ]
    for part, row in RULES.items():
        if row.layer not in LAYERS:
            problems.append(f"{part}: layer {row.layer!r} is not in LAYERS")
            continue
        for entry in sorted(row.may_import):
            target = _part(_dotted(entry))
            if not _is_module(PACKAGE, _dotted(entry)) or target not in RULES:
                problems.append(f"{part} may import {entry!r}, which is not a part or module")
            elif LAYERS.index(RULES[target].layer) > LAYERS.index(row.layer):
                problems.append(f"{part} (layer {row.layer}) may import {entry}, which is above it")
    assert problems == []
    # The allowed imports, part to part, form no circle (so the actual ones cannot either).
    allowed = {
        part: {_part(_dotted(entry)) for entry in row.may_import} for part, row in RULES.items()
    }
    done: set[str] = set()

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, f"the rules allow a circle: {' -> '.join((*path, part))}"
        if part not in done:
            for target in sorted(allowed[part] - {part}):
                visit(target, (*path, part))
            done.add(part)

    for part in sorted(allowed):
        visit(part, ())


def _plant(package: Path, relative: str, line: str) -> None:
    path = package / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text(encoding="utf-8") if path.exists() else '"""Planted."""\n'
    path.write_text(text + "\n" + line + "\n", encoding="utf-8")


def test_the_check_catches_a_forbidden_import_planted_at_any_layer(tmp_path: Path) -> None:
    copy = tmp_path / "flynn"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.gz", "__pycache__", "web"))
    assert violations(copy) == []
    planted = {
        "settings.py": "def f():\n    from flynn.schedule.jobs import Job",  # in a function
        "memory/facts.py": "from flynn.recall.ranking import rank",
        "learning/reconcile.py": "from flynn.providers.build import build_provider",  # past a seam
        "tools/base.py": "if TYPE_CHECKING:\n    from flynn.sessions.orchestrator import O",
        "channels/telegram.py": "from ..memory import store",  # relative
        "router.py": "from flynn.channels import telegram",  # a concrete channel
        "distill/runs.py": "importlib.import_module('flynn.router')",
        "app.py": "import flynn.daemon",  # upward from the composition root
    }
    for relative, line in planted.items():
        _plant(copy, relative, line)
    _plant(copy, "mcp/client.py", "from flynn.errors import FlynnError")  # a part with no row
    _plant(copy, "tools/mcp_tools.py", "from flynn.tools.base import Tool")  # follows tools' row

    found = violations(copy)

    caught = {
        "flynn.settings imports flynn.schedule.jobs",
        "flynn.memory.facts imports flynn.recall.ranking",
        "flynn.learning.reconcile imports flynn.providers.build",
        "flynn.tools.base imports flynn.sessions.orchestrator",
        "flynn.channels.telegram imports flynn.memory.store",
        "flynn.router imports flynn.channels.telegram",
        "flynn.distill.runs imports flynn.router",
        "flynn.app imports flynn.daemon",
    }
    assert {problem.split(":")[0] for problem in found} == caught | {"flynn.mcp.client"}
    assert len(found) == len(caught) + 1
    memory = next(problem for problem in found if problem.startswith("flynn.memory.facts"))
    assert memory == (
        "flynn.memory.facts imports flynn.recall.ranking: the rule for 'memory' (layer 1 stores, "
        f"RULES in {HERE}) allows only credentials, datadir, errors, identity, messages, "
        "orders, tokens; 'recall' is layer 2 knowledge"
    )
    new_part = next(problem for problem in found if problem.startswith("flynn.mcp.client"))
    assert f"its part 'mcp' has no row in RULES ({HERE}); add 'mcp': rule(" in new_part


def _readme_edges() -> dict[str, set[str]]:
    section = README.read_text(encoding="utf-8").split("\n## Architecture\n", 1)[1]
    section = section.split("\n## ", 1)[0]
    found: dict[str, set[str]] = {}
    for layer, part, imports in re.findall(r"^\| ([\w ]+) \| `(\w+)` \| (.*?) ?\|$", section, re.M):
        assert RULES[part].layer == layer, f"README puts {part} in layer {layer!r}"
        found[part] = set(re.findall(r"`(\w+)`", imports))
    return found


def test_the_readme_shows_every_edge_that_exists_and_no_other() -> None:
    assert _readme_edges() == edges(PACKAGE), (
        "README.md (Architecture) differs from the code; its table should read:\n"
        + edge_table(PACKAGE)
    )


def test_only_flynn_bench_reaches_the_evals() -> None:
    """``evals/`` (the benchmarks, not installed) may import ``flynn``; ``flynn`` imports it
    nowhere, except ``flynn bench``'s one import in ``flynn.cli``, made when the command runs."""
    reaching = []
    for module, path in _modules(PACKAGE):
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


MAX_LINES = 800
"""A module is one concept; one concept may take up to 800 lines (the gateway's connections,
frames and acknowledgements are one). Past that it is more than one, and splits by concept,
never by count."""


def test_no_module_is_over_800_lines() -> None:
    long = {
        module: lines
        for module, path in _modules(PACKAGE)
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


COMPOSITION_ROOT = ("app", "storage_place")
"""Where concrete classes are built: ``app``, and ``storage_place``, which chooses the backend."""
POSTGRES_BACKENDS = {"flynn.schedule": "flynn.schedule.postgres"}
CHOOSERS = (*COMPOSITION_ROOT, "storage_copy")
"""The composition root, and moving house (``flynn storage copy``), which reads one backend and
writes the other: the only parts that build the PostgreSQL stores."""
"""Parts above the stores with tables of their own: the one module of each that is their
PostgreSQL backend, the only one of the part that may import ``flynn.postgres``."""


def test_only_the_composition_root_may_choose_the_postgresql_backend() -> None:
    """Nothing above the stores knows which backend it has: of every part, only the composition
    root (``app`` and ``storage_place``, where it chooses) and ``storage_copy`` (which copies
    one backend into the other) may import ``flynn.postgres`` (and ``memory``, beside it, never
    does: no circle), or a part's own PostgreSQL backend module (``flynn.schedule.postgres``),
    which again only the composition root imports."""
    choosers = {
        part
        for part, row in RULES.items()
        if any(_part(_dotted(entry)) == "postgres" for entry in row.may_import)
    }
    assert choosers <= {*CHOOSERS, *(_part(part) for part in POSTGRES_BACKENDS)}
    backends = set(POSTGRES_BACKENDS.values())
    reaching = set()
    for module, path in _modules(PACKAGE):
        for target in _imports(PACKAGE, module, path):
            chooses = _part(target) == "postgres" or target in backends
            if chooses and _part(module) not in (*CHOOSERS, "postgres") and module not in backends:
                reaching.add(f"{module} imports {target}")
    assert reaching == set()
