from __future__ import annotations

import re
import textwrap
import typing
from pathlib import Path

import yaml
from pydantic import BaseModel

from flynn.scaffold import CONFIG_TEMPLATE, write_config
from flynn.settings import Settings, load_settings, parse_yaml

REPO_ROOT = Path(__file__).resolve().parent.parent


def _models_in(annotation: object) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_models_in(arg))
    return found


def _all_fields(model: type[BaseModel], seen: set[type[BaseModel]]) -> list[tuple[str, str]]:
    """(model name, field name) for ``model`` and every model reachable from its fields."""
    if model in seen:
        return []
    seen.add(model)
    fields = []
    for name, info in model.model_fields.items():
        fields.append((model.__name__, name))
        for nested in _models_in(info.annotation):
            fields.extend(_all_fields(nested, seen))
    return fields


def _section_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Key paths reachable through plain nested sections (not list items or dict values)."""
    paths = []
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        paths.append(path)
        annotation = info.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            paths.extend(_section_paths(annotation, path))
    return paths


def test_example_file_is_the_template() -> None:
    example = (REPO_ROOT / "config.example.yaml").read_text(encoding="utf-8")
    assert example == CONFIG_TEMPLATE


def test_template_loads_to_the_defaults() -> None:
    loaded = load_settings(parse_yaml(CONFIG_TEMPLATE))
    assert loaded.model_dump() == load_settings({}).model_dump()


def test_template_sets_every_section_key_explicitly() -> None:
    data = yaml.safe_load(CONFIG_TEMPLATE)
    missing = []
    for path in _section_paths(Settings):
        node = data
        for key in path:
            if not isinstance(node, dict) or key not in node:
                missing.append(".".join(path))
                break
            node = node[key]
    assert missing == []


def test_template_documents_every_field_of_every_model() -> None:
    fields = _all_fields(Settings, set())
    assert ("ProviderSettings", "provider") in fields  # the walk reaches list items
    assert ("UserAccounts", "telegram") in fields  # and dict values
    missing = [
        f"{model}.{name}"
        for model, name in fields
        if not re.search(rf"^\s*(?:#\s*)?(?:-\s+)?{name}:", CONFIG_TEMPLATE, re.MULTILINE)
    ]
    assert missing == []


def test_template_names_the_secret_environment_variables() -> None:
    for variable in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "FLYNN_LLM__API_KEY",
        "FLYNN_CHANNELS__TELEGRAM__TOKEN",
        "FLYNN_CHANNELS__DISCORD__TOKEN",
        "FLYNN_CHANNELS__GATEWAY__TOKEN",
    ):
        assert variable in CONFIG_TEMPLATE


def _commented_examples() -> list[str]:
    """The commented-out example blocks (lines starting ``#   ``), dedented."""
    blocks: list[str] = []
    current: list[str] = []
    for line in CONFIG_TEMPLATE.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("#   "):
            current.append(stripped[1:])
        elif current:
            blocks.append(textwrap.dedent("\n".join(current)))
            current = []
    return blocks


def test_commented_examples_are_valid_settings() -> None:
    # The examples cannot drift from the models either: uncommented, they must load.
    fallbacks, tasks, prices, users, mcp_servers = _commented_examples()
    settings = load_settings(
        {
            "llm": {
                "fallbacks": yaml.safe_load(fallbacks),
                "tasks": yaml.safe_load(tasks),
                "prices": yaml.safe_load(prices),
            },
            "tools": {"mcp_servers": yaml.safe_load(mcp_servers)},
            "users": yaml.safe_load(users),
        }
    )
    assert settings.tools.mcp_servers["calendar"].people == ["ana"]
    assert settings.llm.fallbacks[0].provider == "openai"
    assert settings.llm.tasks["extraction"].max_output_tokens == 1024
    assert settings.llm.prices["gpt-5.5"].output == 30.0
    assert settings.users["ana"].telegram == ["123456789"]


def test_write_config_creates_the_file_privately(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "config.yaml"
    assert write_config(path) is True
    assert path.read_text(encoding="utf-8") == CONFIG_TEMPLATE
    assert path.stat().st_mode & 0o777 == 0o600


def test_write_config_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("llm: {model: mine}\n", encoding="utf-8")
    assert write_config(path) is False
    assert path.read_text(encoding="utf-8") == "llm: {model: mine}\n"


def test_the_retrieval_threshold_is_explained_as_recall_applies_it() -> None:
    # Recall.relevant keeps items scoring at least threshold x the best item's score
    # (tests/memory/test_recall_topk.py): a fraction, not an absolute score.
    lines = CONFIG_TEMPLATE.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("retrieval_threshold:"))
    comment = []
    for line in reversed(lines[:at]):
        if not line.strip().startswith("#"):
            break
        comment.insert(0, line.strip().lstrip("# "))
    said = " ".join(comment)
    assert "fraction of the best item's score" in said
    assert "left out" in said
