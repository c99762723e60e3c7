"""``docs/layout.md`` against ``flynn/``: every package and module has its line, and every line
names one that exists. A module added, moved or removed without the page fails here, named."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "flynn"
PAGE = PACKAGE.parent / "docs" / "layout.md"


def modules(package: Path) -> set[str]:
    """``memory/facts.py`` for a module, ``memory/`` for a package (its ``__init__``)."""
    found = set()
    for path in package.rglob("*.py"):
        relative = path.relative_to(package)
        if relative.name == "__init__.py" and len(relative.parts) > 1:
            found.add(relative.parent.as_posix() + "/")
        else:
            found.add(relative.as_posix())
    return found


def listed(text: str) -> set[str]:
    """The first column of the page's tables: `memory/facts.py`."""
    return set(re.findall(r"^\| `([^`]+)` \|", text, re.M))


def test_the_page_lists_every_module_and_only_those() -> None:
    on_page = listed(PAGE.read_text(encoding="utf-8"))
    assert modules(PACKAGE) - on_page == set(), "modules docs/layout.md does not list"
    assert {name for name in on_page if not (PACKAGE / name).exists()} == set(), (
        "docs/layout.md lists what is not in flynn/"
    )


def test_the_check_sees_a_module_added_without_its_line(tmp_path: Path) -> None:
    package = tmp_path / "flynn"
    (package / "memory").mkdir(parents=True)
    for name in ("__init__.py", "cli.py", "memory/__init__.py", "memory/facts.py"):
        (package / name).write_text('"""A module."""\n', encoding="utf-8")
    page = "| `__init__.py` | x |\n| `cli.py` | x |\n| `memory/` | x |\n"
    assert modules(package) - listed(page) == {"memory/facts.py"}
    assert {"memory/vector_lists.py", "postgres/postings.py", "cli_storage.py"} <= listed(
        PAGE.read_text(encoding="utf-8")
    )
