"""Parsing the extraction model's answers: whatever comes back, nothing raises."""

from __future__ import annotations

from flynn.memory.extraction import ProposedFact
from flynn.memory.graph_extraction import GraphProposal, parse_graph_extraction
from flynn.memory.llm_extraction import json_objects, parse_extraction
from flynn.memory.llm_reconcile import parse_decision

TOO_DEEP = '{"a":' * 1500 + "1" + "}" * 1500  # past the default recursion limit (1000)


def test_objects_nested_too_deeply_to_decode_are_skipped() -> None:
    found = json_objects(TOO_DEEP + ' {"field": "employer", "value": "Acme"}')
    assert found[-1] == {"field": "employer", "value": "Acme"}
    assert parse_extraction(TOO_DEEP, threshold=0.7) == []
    assert parse_graph_extraction(TOO_DEEP) == GraphProposal()
    assert parse_decision(TOO_DEEP, []) is None


def test_a_usable_fact_next_to_a_too_deep_object_is_kept() -> None:
    answer = f'{TOO_DEEP}\n{{"field": "employer", "value": "Acme", "confidence": 0.9}}'
    assert parse_extraction(answer, threshold=0.7) == [
        ProposedFact("profile", "employer", "Acme", 0.9, "profile")
    ]
