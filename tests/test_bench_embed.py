"""`flynn bench embed` on the tiny dataset of the recall bench: every turn stored before the
model loaded is embedded by the daemon's catch-up, and the costs are reported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog
from test_bench_recall import DATASET

from flynn.cli import main
from flynn.recall import minilm


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """The command configures logging for the process; later tests expect the default."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def test_every_stored_turn_is_embedded_and_the_costs_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if minilm.model_dir() is None:
        pytest.skip("the MiniLM weights are not installed")
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    assert main(["bench", "embed", "--dataset", str(path), "--embeddings-model", "minilm"]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert result["model"] == minilm.MINILM_MODEL
    # Six turns in two conversations (two people), none left without a vector.
    assert (result["people"], result["turns_embedded"], result["turns_left"]) == (2, 6, 0)
    assert result["cpu_ms_per_turn"] > 0 and result["turns_per_second"] > 0
    assert result["model_mib_on_disk"] > 80  # model.safetensors alone is 87 MiB
    # Resident memory as the process reports it. Not "after >= before": loading the model gives
    # freed heap back to the system (malloc_trim), so after a long test run in one process the
    # figure may fall; a bench run is a fresh process, where it rises by the model.
    assert min(result["rss_mib_before_load"], result["rss_mib_model_loaded"]) > 0
