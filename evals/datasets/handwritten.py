"""The ``handwritten`` recall set, from ``src/handwritten.txt`` (the handwritten format,
``labelled.py``)."""

from evals.datasets.labelled import SOURCES, Json, handwritten_dataset


def build() -> Json:
    return handwritten_dataset(SOURCES / "handwritten.txt")
