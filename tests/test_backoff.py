"""The one backoff policy: doubling from ``first``, capped at ``most``, jitter within its bounds,
and any number of failures without an overflow."""

from __future__ import annotations

import pytest

from flynn.backoff import Backoff


def test_doubles_from_first_until_the_cap() -> None:
    backoff = Backoff(first=0.5, most=5.0)
    assert [backoff.delay(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]


def test_factor_sets_the_growth() -> None:
    backoff = Backoff(first=1.0, factor=3.0, most=100.0)
    assert [backoff.delay(n) for n in range(1, 5)] == [1.0, 3.0, 9.0, 27.0]


@pytest.mark.parametrize("failures", [1025, 10**6, 10**30])
def test_huge_failure_counts_wait_the_most_without_overflow(failures: int) -> None:
    assert Backoff(first=30.0, most=3600.0).delay(failures) == 3600.0


def test_no_failures_yet_waits_the_first() -> None:
    assert Backoff(first=2.0, most=10.0).delay(0) == 2.0


@pytest.mark.parametrize(("draw", "expected"), [(0.0, 2.0), (0.5, 3.0), (0.999999, 4.0)])
def test_jitter_draws_between_its_bounds(draw: float, expected: float) -> None:
    backoff = Backoff(first=4.0, most=30.0, jitter=(0.5, 1.0), random=lambda: draw)
    assert backoff.delay(1) == pytest.approx(expected, abs=1e-5)


def test_jitter_above_one_never_passes_the_most() -> None:
    backoff = Backoff(first=1.0, most=8.0, jitter=(0.5, 1.5), random=lambda: 0.99)
    assert backoff.delay(3) == pytest.approx(5.96)
    assert backoff.delay(4) == 8.0
    assert backoff.delay(40) == 8.0


def test_real_jitter_stays_in_bounds() -> None:
    backoff = Backoff(first=1.0, most=30.0, jitter=(0.75, 1.25))
    delays = [backoff.delay(3) for _ in range(200)]
    assert all(3.0 <= d <= 5.0 for d in delays)
    assert len(set(delays)) > 1


@pytest.mark.parametrize(
    "bad",
    [
        {"first": -1.0},
        {"first": 10.0, "most": 5.0},
        {"factor": 0.5},
        {"jitter": (1.5, 0.5)},
        {"jitter": (-0.1, 1.0)},
    ],
)
def test_refuses_a_policy_that_is_not_one(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="not a backoff"):
        Backoff(**bad)  # type: ignore[arg-type]
