"""`flynn bench recall` reports episodic synthesis on and off: what its call adds per turn in
time and tokens, and with what model it was measured (the in-process stand-in by default, the
configured synthesis model on request, here a fake OpenAI server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from fakes import FakeOpenAI, RecordedRequest, Reply, Step
from test_bench_recall import DATASET

from evals.synthesis import STAND_IN_LABEL, MergingModel, Turn, bench_synthesis, merged_block
from flynn.cli import main
from flynn.errors import ConfigError
from flynn.providers.base import ChatMessage, ChatRequest
from flynn.recall.recall import RecallBlock, RecalledMemory
from flynn.recall.synthesis import synthesis_input
from flynn.settings import LlmSettings

NOW = datetime(2024, 11, 2, tzinfo=UTC)
RAW = RecalledMemory(
    (
        RecallBlock("Facts they told you", "high", ("- city: Lisbon",), "stated"),
        RecallBlock(
            "Past conversations, verbatim",
            "high for what was said and when; your own past replies may have been mistaken",
            (
                "- 2024-05-14 Tue, they said: I live in Lisbon now, in Alfama. It is lovely.",
                "- 2024-05-20 Mon, they said: I live in Lisbon now, in Alfama, it is lovely!",
                "- 2024-10-02 Wed, they said: We moved to Porto last week. The flat is in Foz.",
            ),
            "verbatim",
        ),
    )
)


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(DATASET), encoding="utf-8")
    assert main(["bench", "recall", "--dataset", str(path), *args]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    return result


def test_the_stand_in_merges_near_duplicates_and_keeps_the_newest() -> None:
    block = merged_block(synthesis_input(RAW, "Where do I live?", now=NOW))

    assert block.splitlines() == [
        "- 2024-10-02 they: We moved to Porto last week.",
        "- 2024-05-20 they: I live in Lisbon now, in Alfama, it is lovely!",
        "- city: Lisbon",
    ]


async def test_the_stand_in_answers_only_synthesis() -> None:
    request = ChatRequest("s", (ChatMessage("user", "<memory>\n- a b\n</memory>"),))
    assert (await MergingModel().chat(request)).text == ""


async def test_on_and_off_per_turn() -> None:
    turns = [Turn(RAW, "Where do I live?", NOW), Turn(RecalledMemory(), "Hi", NOW)]

    result = await bench_synthesis(turns, timeout_seconds=3)

    assert result["model"] == STAND_IN_LABEL
    off, on = result["off"], result["on"]
    assert isinstance(off, dict) and isinstance(on, dict)
    assert off["added_ms"] == {"p50": 0.0, "p99": 0.0} and off["calls"] == 0
    assert on["calls"] == 1 and on["skipped"] == 1 and on["merged"] == 1
    assert on["fallbacks"] == {}
    assert on["tokens_in_per_turn"]["mean"] > on["tokens_out_per_turn"]["mean"] > 0
    assert on["tokens_in_per_turn"]["p50"] == 0.0  # the turn with nothing recalled asks nothing
    assert on["tokens_injected_mean"] < off["tokens_injected_mean"]
    assert "does not change" in str(result["note"])


def test_the_bench_reports_synthesis_with_the_stand_in(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = _run(tmp_path, capsys)

    synthesis = result["synthesis"]
    assert isinstance(synthesis, dict)
    assert synthesis["model"] == STAND_IN_LABEL and synthesis["turns"] == 4
    on = synthesis["on"]
    assert set(on) >= {"added_ms", "tokens_in_per_turn", "tokens_out_per_turn", "calls"}
    assert set(on["added_ms"]) == {"p50", "p99", "max"}
    assert on["calls"] + on["skipped"] == 4


async def test_the_configured_model_is_asked_over_its_sdk(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    def respond(request: RecordedRequest) -> Step:
        text = request.json["messages"][-1]["content"]
        return Reply(merged_block(text), input_tokens=700, output_tokens=90)

    fake_openai.responder = respond
    llm = LlmSettings.model_validate(
        {"provider": "openai", "base_url": fake_openai.base_url, "model": "local", "max_retries": 0}
    )

    result = await bench_synthesis([Turn(RAW, "Where?", NOW)], timeout_seconds=3, llm=llm, env={})

    assert result["model"] == "openai:local (the configured synthesis task model)"
    on = result["on"]
    assert isinstance(on, dict) and on["merged"] == 1
    assert on["tokens_in_per_turn"]["mean"] == 700 and on["tokens_out_per_turn"]["mean"] == 90
    assert fake_openai.requests[0].json["model"] == "local"


async def test_a_configured_model_that_is_offline_is_refused() -> None:
    llm = LlmSettings.model_validate({"provider": "offline"})

    with pytest.raises(ConfigError, match="resolves to offline"):
        await bench_synthesis([Turn(RAW, "Where?", NOW)], timeout_seconds=3, llm=llm, env={})
