from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flynn.memory.fts import MAX_TERMS, FtsQueryPlanner, GrowingLists, search_terms
from flynn.memory.namespaces import namespace_root, namespace_token
from flynn.memory.store import NewMessage
from flynn.memory.stores import SqliteMemory

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


def test_planner_tells_a_word_in_no_row_from_one_too_common_to_search(
    memory: SqliteMemory,
) -> None:
    for i in range(10):
        _say(memory, f"common chatter {i}", i)
    zebra = _say(memory, "common zebra")
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=3)
    plan = planner.plan("zebra common kitty")
    assert plan is not None and plan.terms == ("zebra",)
    # "common" is left out for the budget (it is in 11 rows); "kitty" is in none.
    assert plan.absent == ("kitty",)
    postings = planner.postings(plan)
    assert dict(postings.terms) == {"zebra": (zebra,)} and postings.absent == {"kitty"}
    kept = planner.plan("zebra common kitty", generation=1)
    assert kept is not None
    assert planner.postings(kept, generation=1).absent == {"kitty"}
    windowed = planner.plan("common kitty")
    assert windowed is not None and windowed.is_windowed and windowed.absent == ("kitty",)


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


def test_planner_searches_at_most_the_rarest_words_asked_for(memory: SqliteMemory) -> None:
    for i in range(3):
        _say(memory, f"common chatter {i}", i)
    _say(memory, "common chatter zebra okapi", 3)
    _say(memory, "okapi again", 4)
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=100)
    everything = planner.plan("zebra okapi chatter")
    assert everything is not None and everything.terms == ("zebra", "okapi", "chatter")
    rarest = planner.plan("zebra okapi chatter", max_terms=2)
    assert rarest is not None and rarest.terms == ("zebra", "okapi")


def test_planner_keeps_what_it_learnt_while_the_generation_stays(memory: SqliteMemory) -> None:
    first = _say(memory, "a platypus appeared")
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=3)
    plan = planner.plan("platypus wombat", generation=1)
    assert plan is not None
    assert dict(planner.postings(plan, generation=1).terms) == {"platypus": (first,)}

    second = _say(memory, "a wombat and a platypus")
    # Same generation: what was counted and listed is reused (the caller vouches nothing
    # changed); a new one sees the new row.
    stale = planner.plan("platypus wombat", generation=1)
    assert stale is not None and stale.terms == ("platypus",)
    assert dict(planner.postings(stale, generation=1).terms) == {"platypus": (first,)}
    fresh = planner.plan("platypus wombat", generation=2)
    assert fresh is not None and set(fresh.terms) == {"platypus", "wombat"}
    postings = planner.postings(fresh, generation=2)
    assert dict(postings.terms) == {"wombat": (second,), "platypus": (first, second)}
    assert postings.documents == second


def test_namespace_root_scopes_counts_and_postings_when_the_window_is_crowded(
    memory: SqliteMemory,
) -> None:
    # Both namespaces say "hiking"; bob says it far more often, and more recently.
    alice = [
        memory.history.append("a", "users/alice", "user", f"hiking trip {n}", tokens=1, now=T0).id
        for n in range(2)
    ]
    batch = [NewMessage("user", f"hiking again {n}", 1, T0) for n in range(10)]
    memory.history.append_many("b", "users/bob", batch)
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=3)

    everywhere = planner.plan("hiking")
    assert everywhere is not None and everywhere.is_windowed
    scoped = planner.plan("hiking", namespace_prefix="users/alice")
    assert scoped is not None and not scoped.is_windowed
    assert planner.postings(scoped).terms == {"hiking": tuple(alice)}
    # A prefix spanning several roots plans for every namespace.
    assert planner.plan("hiking", namespace_prefix="users") == everywhere


def test_a_person_among_many_is_planned_on_their_own_rows(memory: SqliteMemory) -> None:
    # Alice's rare word "kayak" is everyone else's common one; her "glacier" is rarer overall.
    alice = [
        memory.history.append("a", "users/alice", "user", text, tokens=1, now=T0).id
        for text in ("kayak glacier", "kayak lunch", "tea")
    ]
    alone = FtsQueryPlanner(memory.db, "messages_fts", budget=5)
    # Alone in the store, her root is the table: planned as the table.
    assert alone.plan("kayak", namespace_prefix="users/alice", own_root=True) == alone.plan("kayak")
    for person in range(6):
        batch = [NewMessage("user", f"kayak day {n}", 1, T0) for n in range(4)]
        memory.history.append_many(f"s{person}", f"users/p{person}", batch)
    planner = FtsQueryPlanner(memory.db, "messages_fts", budget=5)

    everywhere = planner.plan("kayak glacier", namespace_prefix="users/alice")
    assert everywhere is not None and everywhere.terms == ("glacier",)  # kayak: 26 rows
    own = planner.plan("kayak glacier", namespace_prefix="users/alice", own_root=True)
    assert own is not None and set(own.terms) == {"kayak", "glacier"} and own.documents == 3
    postings = planner.postings(own)
    assert postings.documents == 3
    assert dict(postings.terms) == {"glacier": (alice[0],), "kayak": (alice[0], alice[1])}
    # A prefix spanning several roots plans for every namespace.
    big = FtsQueryPlanner(memory.db, "messages_fts", budget=100)
    assert big.plan("kayak", namespace_prefix="users", own_root=True) == big.plan("kayak")


def test_namespace_root_groups_person_and_session_scopes() -> None:
    assert namespace_root("users/alice/work") == "users/alice"
    assert namespace_root("sessions/gateway:abc") == "sessions/gateway:abc"
    assert namespace_root("user/facts") == "user"
    assert namespace_token("users") is None
    assert namespace_token("sessions/") is None
    assert namespace_token("users/alice/") == namespace_token("users/alice/work")
    assert namespace_token("users/alice") != namespace_token("users/bob")


class _ListedIndex:
    """A ``TermIndex`` of one word's rows, recording from which row id each read began."""

    def __init__(self, rows: list[int]) -> None:
        self.rows_held = rows
        self.read_from: list[int] = []

    def count(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        return min(limit, len(self.rows_held))

    def window(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        return 0

    def count_each(self, terms: tuple[str, ...], root: str, limit: int) -> dict[str, int]:
        return {term: self.count((term,), root, limit) for term in terms}

    def rows(self, term: str, root: str, min_rowid: int) -> tuple[int, ...]:
        self.read_from.append(min_rowid)
        return tuple(row for row in self.rows_held if row >= min_rowid)

    def rows_each(
        self, terms: tuple[str, ...], root: str, min_rowid: int
    ) -> dict[str, tuple[int, ...]]:
        return {term: self.rows(term, root, min_rowid) for term in terms}

    def documents(self) -> int:
        return max(self.rows_held, default=0)


def test_growing_lists_read_only_the_rows_stored_since() -> None:
    index = _ListedIndex([3, 8])
    stamp = [0]
    lists = GrowingLists(index, lambda: stamp[0])
    assert lists.rows("kayak", "", 0) == (3, 8)
    index.rows_held += [12, 20]
    assert lists.rows("kayak", "", 0) == (3, 8, 12, 20)
    assert index.read_from == [0, 9]
    # A window that moved on keeps only its rows; one reaching further back reads again.
    assert lists.rows("kayak", "", 10) == (12, 20)
    assert lists.rows("kayak", "", 5) == (8, 12, 20)
    assert index.read_from == [0, 9, 21, 5]
    # Another stamp (a row deleted or rewritten) reads the whole list again.
    index.rows_held.remove(12)
    stamp[0] += 1
    assert lists.rows("kayak", "", 0) == (3, 8, 20)
    assert index.read_from[-1] == 0
