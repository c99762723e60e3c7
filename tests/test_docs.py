"""The README and ``docs/`` against the code: every configuration example validates, the key
reference names every key there is, and every link between the pages lands on a file and a heading
that exist. The examples and the reference cannot drift from ``flynn.settings``."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from flynn.errors import ConfigError
from flynn.settings import (
    McpServerSettings,
    ModelPrice,
    ProviderSettings,
    Settings,
    TaskSettings,
    UserAccounts,
    load_settings,
    parse_yaml,
)

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONFIGURATION = ROOT / "docs" / "configuration.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def _blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in _FENCE.findall(page.read_text("utf-8")) if lang == language]


def _examples() -> Iterator[tuple[str, str]]:
    for page in (README, CONFIGURATION):
        for number, body in enumerate(_blocks(page, "yaml"), 1):
            yield f"{page.relative_to(ROOT)} yaml #{number}", body


EXAMPLES = dict(_examples())


def test_the_pages_hold_configuration_examples() -> None:
    # A rewrite that dropped the examples (or their fences) would leave nothing below to check.
    assert sum(name.startswith("README.md") for name in EXAMPLES) >= 3
    assert sum(name.startswith("docs/configuration.md") for name in EXAMPLES) >= 3


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_every_yaml_example_is_a_valid_configuration(name: str) -> None:
    data = parse_yaml(EXAMPLES[name], name)
    assert data, f"{name} is empty"
    load_settings(data, name, env={})  # raises ConfigError naming each problem


def _variables(page: Path) -> dict[str, str]:
    """``FLYNN_X=value`` lines of the page's ``sh`` blocks (``export`` and shell quoting undone)."""
    found = {}
    for body in _blocks(page, "sh"):
        for line in body.splitlines():
            if not re.match(r"(export )?FLYNN_", line):
                continue
            words = shlex.split(line, comments=True)
            words = words[1:] if words[:1] == ["export"] else words
            if words and re.match(r"FLYNN_\w+=", words[0]):
                name, _, value = words[0].partition("=")
                found[name] = value
    return found


@pytest.mark.parametrize("page", [README, CONFIGURATION], ids=lambda page: page.name)
def test_every_environment_example_is_a_valid_setting(
    page: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    variables = _variables(page)
    assert variables, f"{page.name} shows no FLYNN_ variable"
    defaults = load_settings({}, env={})
    for name, value in variables.items():
        monkeypatch.setenv(name, value)  # pydantic-settings reads the process's environment
    settings = load_settings({}, "the environment", env=variables)
    # Each variable took effect: it is not merely tolerated.
    for name in variables:
        path = name.removeprefix("FLYNN_").lower().split("__")
        value, default = settings, defaults
        for part in path:
            value, default = getattr(value, part), getattr(default, part)
        assert value != default, name


def test_a_broken_example_would_be_caught() -> None:
    with pytest.raises(ConfigError, match=r"llm\.modle: unknown key"):
        load_settings(parse_yaml("llm:\n  modle: x\n"), env={})


def _keys(model: type[BaseModel], prefix: str) -> Iterator[str]:
    """Every key path of ``model`` that holds a value (not a section); a section keyed by names
    people choose is shown as ``<name>`` (``users.<name>.notify``)."""
    named: dict[str, tuple[type[BaseModel], str]] = {
        "llm.fallbacks": (ProviderSettings, "llm.fallbacks"),
        "llm.tasks": (TaskSettings, "llm.tasks.<task>"),
        "llm.prices": (ModelPrice, "llm.prices.<model>"),
        "users": (UserAccounts, "users.<name>"),
        "tools.mcp_servers": (McpServerSettings, "tools.mcp_servers.<server>"),
    }
    for name, field in model.model_fields.items():
        path = prefix + name
        if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
            yield from _keys(field.annotation, path + ".")  # a section: its keys, not itself
            continue
        yield path
        if path in named and path != "llm.fallbacks":  # a fallback's keys are in its own row
            inner, shown = named[path]
            yield from (f"{shown}.{key}" for key in inner.model_fields)


def _documented(text: str) -> set[str]:
    """Keys named in the first column of the reference's tables: ``a.b``, and ``a.b`` with
    ``.c`` after it (``llm.prices.<model>.input``, ``.output``)."""
    reference = text.split("\n## Every key\n", 1)[1]
    found: set[str] = set()
    for row in re.findall(r"^\| (`[^|]+) \|", reference, re.M):
        names = re.findall(r"`([^`]+)`", row)
        full = names[0]
        found.add(full)
        stem = full.rsplit(".", 1)[0]
        found.update(stem + name for name in names[1:] if name.startswith("."))
    return found


def test_the_reference_names_every_key_and_no_other() -> None:
    keys = set(_keys(Settings, ""))
    documented = _documented(CONFIGURATION.read_text("utf-8"))
    assert {"data_dir", "channels.gateway.port", "users.<name>.notify"} <= keys
    assert keys - documented == set(), "keys docs/configuration.md does not list"
    assert documented - keys == set(), "keys docs/configuration.md lists that do not exist"


def test_the_reference_check_would_see_a_missing_key() -> None:
    text = CONFIGURATION.read_text("utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `llm.stream` |"))
    assert "llm.stream" not in _documented(text.replace(row + "\n", ""))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text("utf-8"))
    anchors: set[str] = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug, number = _slug(heading), 1
        while slug in anchors:  # a repeated heading's anchor is numbered
            slug, number = f"{_slug(heading)}-{number}", number + 1
        anchors.add(slug)
    return anchors


def _links(page: Path) -> Iterator[str]:
    text = _FENCE.sub("", page.read_text("utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if not re.match(r"[a-z]+:", target):
            yield target


def test_every_link_between_the_pages_lands() -> None:
    broken = []
    for page in PAGES:
        for target in _links(page):
            path, _, anchor = target.partition("#")
            landing = (page.parent / path).resolve() if path else page
            if not landing.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and landing.suffix == ".md" and anchor not in _anchors(landing):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert broken == []


def test_the_link_check_would_see_a_wrong_anchor(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A page\n\n## Web chat (the gateway)\n\nSee [x](#web-chat).\n")
    assert _anchors(page) == {"a-page", "web-chat-the-gateway"}
    assert list(_links(page)) == ["#web-chat"]
