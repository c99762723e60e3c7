"""The ``assistant_small`` recall set: the first 12 people of ``assistant`` (the same histories
and questions), for quick runs."""

from __future__ import annotations

from evals.datasets import assistant
from evals.datasets.histories import Json

PEOPLE = 12


def build() -> Json:
    return assistant.build(people=PEOPLE)
