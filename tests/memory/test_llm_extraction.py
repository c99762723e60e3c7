"""Parsing the extraction model's answers: whatever comes back, nothing raises."""

from __future__ import annotations

import contextlib
import json

import pytest

from flynn.learning.graph_extraction import (
    GraphProposal,
    ProposedEntity,
    ProposedRelation,
    parse_graph_extraction,
)
from flynn.learning.llm_extraction import EXTRACTION_PROMPT, json_objects, parse_extraction
from flynn.learning.llm_reconcile import parse_decision
from flynn.learning.rules import ProposedFact

TOO_DEEP = '{"a":' * 1500 + "1" + "}" * 1500  # past the default recursion limit (1000)


def test_objects_nested_too_deeply_to_decode_are_skipped() -> None:
    found = json_objects(TOO_DEEP + ' {"field": "employer", "value": "Acme"}')
    assert found[-1] == {"field": "employer", "value": "Acme"}
    assert parse_extraction(TOO_DEEP, threshold=0.7) == []
    assert parse_graph_extraction(TOO_DEEP) == GraphProposal()
    assert parse_decision(TOO_DEEP, []) is None


def test_pathological_answers_are_parsed_in_one_pass() -> None:
    # Each of these took the former scan (a decoding from every "{" to wherever it failed)
    # quadratic time; they are sized so that only a linear scan gets through them.
    fact = '{"field": "employer", "value": "Acme"}'
    deep = '{"a":' * 20_000 + "1" + "}" * 20_000
    found = json_objects(deep + fact)
    assert len(found) == 256 + 1  # the innermost objects a decoder can take, then the fact
    assert found[-2] == {"a": 1} and found[-1] == {"field": "employer", "value": "Acme"}
    assert json_objects('{"a": ' * 100_000 + fact) == [{"field": "employer", "value": "Acme"}]
    assert json_objects("{" * 100_000 + fact) == [{"field": "employer", "value": "Acme"}]
    prose = 'She said "hi" {not json} [x] ' * 35_000  # a megabyte
    assert json_objects(prose + fact + prose) == [{"field": "employer", "value": "Acme"}]


def test_objects_are_found_from_every_brace_as_a_decoder_would() -> None:
    # Nested ones, ones inside strings, overwritten duplicate keys, and one a string's quote
    # turns into a key: the same objects, in the same order, as decoding from each "{".
    answers = [
        '{"a": {"b": {"c": 1}}, "d": [{"e": 2}]}',
        '{"a": {"x": 1}, "a": {"y": 2}}',
        '{"text": "use {} or {\\"k\\": 1} here"}',
        '["{", ": 1}"]',
        '{"a": {"b": 1}, oops} {"c": 2}',
        'prose "with a quote {"field": "x"} and {"field": "y"}',
    ]
    decoder = json.JSONDecoder()
    for answer in answers:
        expected = []
        for start in (i for i, char in enumerate(answer) if char == "{"):
            with contextlib.suppress(ValueError):
                expected.append(decoder.raw_decode(answer, start)[0])
        assert json_objects(answer) == expected, answer
        assert expected, answer


def test_a_usable_fact_next_to_a_too_deep_object_is_kept() -> None:
    answer = f'{TOO_DEEP}\n{{"field": "employer", "value": "Acme", "confidence": 0.9}}'
    assert parse_extraction(answer, threshold=0.7) == [
        ProposedFact("profile", "employer", "Acme", 0.9, "profile")
    ]


@pytest.mark.parametrize("confidence", ["NaN", "Infinity", "-Infinity", '"high"', "true", "null"])
def test_a_confidence_that_is_no_finite_number_drops_the_fact(confidence: str) -> None:
    answer = f'{{"field": "employer", "value": "Acme", "confidence": {confidence}}}'
    assert parse_extraction(answer, threshold=0.7) == []


def test_confidences_are_clamped_and_a_missing_one_is_likely() -> None:
    answer = """[{"field": "a", "value": "x", "confidence": 7},
        {"field": "b", "value": "y", "confidence": -1},
        {"field": "c", "value": "z"}]"""
    assert [(f.field, f.confidence) for f in parse_extraction(answer, threshold=0.0)] == [
        ("a", 1.0),
        ("b", 0.0),
        ("c", 0.8),
    ]


def test_a_value_that_is_no_finite_number_drops_the_fact() -> None:
    answer = '{"field": "age", "value": NaN} {"field": "height", "value": Infinity}'
    assert parse_extraction(answer, threshold=0.7) == []


def test_numbers_too_big_for_a_float_are_harmless() -> None:
    big = "1" + "0" * 400  # past a float's range; JSON allows any length
    answer = f'{{"field": "a", "value": "x", "confidence": {big}}}'
    assert [(f.field, f.confidence) for f in parse_extraction(answer, threshold=0.5)] == [
        ("a", 1.0)
    ]
    graph = f'{{"entities": [{{"name": "Maya", "type": "person", "confidence": {big}}}]}}'
    assert parse_graph_extraction(graph).entities == (ProposedEntity("Maya", "person", None, 1.0),)
    # Past the 4,300 digits Python converts, the object is no JSON it reads: skipped.
    huge = "1" + "0" * 5000
    answer = f'{{"field": "a", "value": {huge}}} {{"field": "b", "value": "y"}}'
    assert [f.field for f in parse_extraction(answer, threshold=0.5)] == ["b"]


def test_graph_confidences_that_are_no_finite_number_are_left_out() -> None:
    answer = """{"entities": [{"name": "Maya", "type": "person", "confidence": NaN}],
        "relations": [{"source": "Maya", "target": "Acme", "type": "works_at",
                       "confidence": Infinity}]}"""
    proposal = parse_graph_extraction(answer)
    assert proposal.entities == (ProposedEntity("Maya", "person", None, None),)
    assert proposal.relations == (ProposedRelation("Maya", "works_at", "Acme", None),)


def test_the_prompt_asks_only_for_what_the_parser_reads() -> None:
    assert "overwrite" not in EXTRACTION_PROMPT
