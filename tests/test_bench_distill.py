"""``flynn bench distill``: the tokens each tier reads and writes, reported as one JSON object."""

from __future__ import annotations

import json
import subprocess
import sys

from evals.distill import bench_distill
from flynn.settings import load_settings


async def test_each_tier_reports_what_it_read_and_wrote_within_budget() -> None:
    settings = load_settings({"distill": {"short_max_tokens": 600, "mid_max_tokens": 300}})
    result = await bench_distill(messages=200, days=30, settings=settings, configured=False)
    tiers = result["tiers"]
    assert isinstance(tiers, dict)
    assert result["messages"] == 200
    assert tiers["short"]["model_call"] is False
    assert tiers["short"]["input_tokens"] == 0
    assert 0 < tiers["short"]["file_tokens"] <= 600 + 60
    assert tiers["mid"]["model_call"] is True
    assert tiers["mid"]["input_tokens"] > 300  # the short digest, handed over whole
    assert 0 < tiers["mid"]["file_tokens"] <= 300 + 60
    assert tiers["long"]["input_tokens"] > 0


def test_the_command_validates_its_counts() -> None:
    bad = subprocess.run(
        [sys.executable, "-m", "flynn", "bench", "distill", "--messages", "0"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert bad.returncode == 2
    assert "--messages" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    ok = subprocess.run(
        [sys.executable, "-m", "flynn", "bench", "distill", "--messages", "50"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["bench"] == "distill"
