"""The recall evaluation sets, built from their sources when a benchmark asks for one (nothing
generated is committed): ``flynn bench recall --dataset blind``, or ``python -m evals.datasets
blind`` for the JSON. One module per set; ``labelled.py`` is the one reader of ``src/``."""

from __future__ import annotations

import importlib

NAMES = (
    "handwritten",
    "generated",
    "heldout",
    "final",
    "fresh",
    "sealed",
    "blind",
    "assistant",
    "assistant_small",
    "assistant_sealed",
    "assistant_blind",
    "assistant_unseen",
    "assistant_next",
)


def build(name: str) -> dict[str, object]:
    """The set called ``name`` (one of ``NAMES``) as parsed JSON; raises ``SourceError`` when a
    source is malformed."""
    if name not in NAMES:
        raise KeyError(name)
    built: dict[str, object] = importlib.import_module(f"evals.datasets.{name}").build()
    return built
