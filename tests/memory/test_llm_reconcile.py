"""Parsing the reconciliation model's answer: whatever comes back, nothing raises."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flynn.learning.llm_reconcile import parse_decision
from flynn.memory.store import Fact


def stored_fact() -> Fact:
    at = datetime(2026, 11, 16, tzinfo=UTC)
    return Fact(
        id=1,
        namespace="user/facts",
        kind="profile",
        field="employer",
        value="Acme",
        confidence=0.9,
        source="llm",
        status="active",
        supersedes=None,
        session=None,
        channel=None,
        message_id=None,
        created_at=at,
        updated_at=at,
    )


@pytest.mark.parametrize("candidate", ['"²"', '"' + "1" * 5000 + '"', '"1.0"', "1.0", "NaN"])
def test_a_candidate_that_is_no_whole_number_makes_the_answer_unusable(candidate: str) -> None:
    answer = f'{{"action": "update", "candidate": {candidate}}}'
    assert parse_decision(answer, [stored_fact()]) is None


@pytest.mark.parametrize("candidate", ["1", '"1"', '" 1 "', '"\u0661"'])
def test_a_candidate_number_may_be_a_string(candidate: str) -> None:
    only = stored_fact()
    decision = parse_decision(f'{{"action": "update", "candidate": {candidate}}}', [only])
    assert decision is not None and decision.target == only
