from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flynn.memory.fts import MAX_TERMS, FtsQueryPlanner, search_terms
from flynn.memory.sqlite import SqliteMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def test_search_terms_drop_stopwords_short_words_and_repeats() -> None:
    assert search_terms("What is the name of my Dog? a dog, I said") == ["name", "dog", "said"]


def test_search_terms_turn_fts_syntax_into_words() -> None:
    assert search_terms('content:"secret" NEAR(a b) x* AND NOT (y OR z) ^start') == [
        "content",
        "secret",
        "near",
        "start",
    ]


def test_search_terms_split_underscores_like_the_tokenizer() -> None:
    assert search_terms("favorite_color") == ["favorite", "color"]


def test_search_terms_are_capped() -> None:
    words = " ".join(f"word{i}" for i in range(MAX_TERMS + 10))
    assert len(search_terms(words)) == MAX_TERMS


def test_search_terms_of_nothing_useful_is_empty() -> None:
    assert search_terms("") == []
    assert search_terms('the a of ? ! * "" ()') == []


def _say(memory: SqliteMemory, text: str, n: int = 0) -> int:
    return memory.history.append(
        "s", "user", "user", text, tokens=1, now=T0 + timedelta(seconds=n)
    ).id


def test_planner_keeps_rare_words_and_drops_common_ones(memory: SqliteMemory) -> None:
    for i in range(10):
        _say(memory, f"common chatter {i}", i)
    _say(memory, "common zebra")
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=3)
    plan = planner.plan("zebra common")
    assert plan is not None
    assert plan.expression == '"zebra"'
    assert plan.min_rowid == 0


def test_planner_ranks_recent_matches_when_every_word_is_common(memory: SqliteMemory) -> None:
    ids = [_say(memory, f"common chatter {i}", i) for i in range(10)]
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=3)
    plan = planner.plan("common")
    assert plan is not None
    assert plan.min_rowid == ids[-3]


def test_planner_sees_a_word_as_soon_as_it_is_stored(memory: SqliteMemory) -> None:
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=3)
    assert planner.plan("platypus") is None
    _say(memory, "a platypus appeared")
    plan = planner.plan("platypus")
    assert plan is not None and plan.expression == '"platypus"'
