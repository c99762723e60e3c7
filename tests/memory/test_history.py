from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from memory.conftest import HistoryBackend

from flynn.errors import StoreError
from flynn.memory.history import SqliteHistory
from flynn.memory.store import History, MessageRole, NewMessage, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)


def _say(
    history: History,
    content: str,
    *,
    session: str = "telegram:1",
    namespace: str = "user",
    role: MessageRole = "user",
    minutes: int = 0,
) -> StoredMessage:
    return history.append(
        session,
        namespace,
        role,
        content,
        tokens=len(content) // 4,
        now=T0 + timedelta(minutes=minutes),
    )


def _count(memory: SqliteMemory, sql: str) -> int:
    row = memory.db.fetchone(sql)
    assert row is not None
    return int(row[0])


def test_append_and_recent(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    first = _say(history, "hello there", minutes=1)
    second = _say(history, "hi!", role="assistant", minutes=2)
    _say(history, "elsewhere", session="discord:9")
    assert first == StoredMessage(
        id=first.id,
        session="telegram:1",
        namespace="user",
        role="user",
        content="hello there",
        tokens=2,
        created_at=T0 + timedelta(minutes=1),
        summarized=False,
    )
    assert history.recent("telegram:1") == [first, second]
    assert history.summary("telegram:1") is None
    assert history.recent("nobody") == []


def test_append_is_one_transaction(memory: SqliteMemory) -> None:
    memory.db.execute(
        "CREATE TRIGGER fail_insert BEFORE INSERT ON messages BEGIN SELECT RAISE(ABORT, 'x'); END"
    )
    with pytest.raises(StoreError):
        _say(memory.history, "lost")
    assert _count(memory, "SELECT count(*) FROM sessions") == 0


def test_save_summary_marks_through_id(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    messages = [_say(history, f"turn {i}", minutes=i) for i in range(5)]
    marked = history.save_summary(
        "telegram:1", "- early turns", through_id=messages[2].id, now=T0 + timedelta(hours=1)
    )
    assert marked == 3
    assert [m.content for m in history.recent("telegram:1")] == ["turn 3", "turn 4"]
    assert history.summary("telegram:1") == "- early turns"
    again = history.save_summary(
        "telegram:1", "- all turns", through_id=messages[4].id, now=T0 + timedelta(hours=2)
    )
    assert again == 2
    assert history.recent("telegram:1") == []
    assert history.summary("telegram:1") == "- all turns"
    # Summarised rows stay, and stay searchable.
    assert history_backend.count("SELECT * FROM messages") == 5
    assert len(history.search("user", "turn", limit=10)) == 5


def test_save_summary_leaves_other_sessions_alone(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    mine = _say(history, "mine")
    other = _say(history, "theirs", session="discord:9")
    history.save_summary("telegram:1", "s", through_id=other.id, now=T0)
    assert history.recent("telegram:1") == []
    assert history.recent("discord:9") == [other]
    assert mine.id < other.id


def test_save_summary_failure_changes_nothing(memory: SqliteMemory) -> None:
    messages = [_say(memory.history, f"turn {i}") for i in range(3)]
    # Fails after the messages were already marked inside the transaction.
    memory.db.execute(
        "CREATE TRIGGER fail_summary BEFORE UPDATE OF summary ON sessions "
        "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
    )
    with pytest.raises(StoreError, match="disk on fire"):
        memory.history.save_summary("telegram:1", "s", through_id=messages[-1].id, now=T0)
    assert memory.history.recent("telegram:1") == messages
    assert memory.history.summary("telegram:1") is None
    assert not memory.db.in_transaction


def test_save_summary_for_unknown_session_fails(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    with pytest.raises(StoreError, match="no session"):
        history.save_summary("ghost", "s", through_id=10, now=T0)


def test_search_highlights_and_ranks(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    _say(history, "We talked about the garden and the weather for a long while today")
    best = _say(history, "Tomatoes in the garden, garden tomatoes", minutes=1)
    _say(history, "Nothing relevant here", minutes=2)
    hits = history.search("user", "how are the tomatoes in my garden?", limit=5)
    assert len(hits) == 2
    assert hits[0].message.id == best.id
    assert hits[0].excerpt == "[Tomatoes] in the [garden], [garden] [tomatoes]"
    assert "[garden]" in hits[1].excerpt
    assert hits[0].score > hits[1].score > 0


def test_search_excerpt_is_short_for_long_messages(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    filler = " ".join(f"filler{i}" for i in range(200))
    _say(history, f"{filler} the passport is in the drawer {filler}")
    (hit,) = history.search("user", "passport", limit=3)
    assert "[passport]" in hit.excerpt
    assert hit.excerpt.startswith("…") and hit.excerpt.endswith("…")
    assert len(hit.excerpt.split()) <= 20


def test_search_excludes_session_and_respects_limit(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    for i in range(5):
        _say(history, f"kayak trip {i}", minutes=i)
    _say(history, "kayak now", session="current")
    assert len(history.search("user", "kayak", limit=3)) == 3
    hits = history.search("user", "kayak", limit=10, exclude_session="current")
    assert len(hits) == 5
    assert all(hit.message.session != "current" for hit in hits)


def test_search_never_crosses_users(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    _say(history, "alice kayak", namespace="users/alice", session="a")
    _say(history, "bob kayak", namespace="users/bob", session="b")
    _say(history, "alicia kayak", namespace="users/alice2", session="c")
    hits = history.search("users/alice", "kayak", limit=10)
    assert [hit.message.content for hit in hits] == ["alice kayak"]


@pytest.mark.parametrize(
    "query", ['"', "NOT", "kayak NOT", "NEAR(kayak", "content:kayak", "kayak*", "(", "^", "' OR 1"]
)
def test_search_never_raises_on_hostile_text(history_backend: HistoryBackend, query: str) -> None:
    history = history_backend.history
    _say(history, "kayak content")
    hits = history.search("user", query, limit=5)
    assert all(hit.message.content == "kayak content" for hit in hits)


def test_forget_removes_messages_sessions_and_index_rows(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    mine = _say(history, "secret walrus plan", namespace="user")
    _say(history, "walrus summary", namespace="user/x", session="telegram:2")
    _say(history, "walrus too", namespace="username", session="other")
    history.save_summary("telegram:1", "walrus", through_id=mine.id, now=T0)
    assert history.forget("user") == 2
    assert history.search("user", "walrus", limit=5) == []
    assert history.recent("telegram:1") == []
    assert history.summary("telegram:1") is None
    assert [h.message.content for h in history.search("username", "walrus", limit=5)] == [
        "walrus too"
    ]
    assert history_backend.indexed("walrus") == 1


def test_forget_removes_sessions_that_moved_namespace(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    _say(history, "first under the session scope", namespace="sessions/telegram:1")
    _say(history, "then under the user", namespace="user")
    history.save_summary("telegram:1", "summary", through_id=1, now=T0)
    assert history.forget("user") == 1
    assert history.summary("telegram:1") is None


def test_forget_session_removes_only_that_session(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    mine = _say(history, "my secret narwhal")
    _say(history, "narwhal elsewhere", session="discord:9")
    history.save_summary("telegram:1", "narwhal talk", through_id=mine.id, now=T0)
    assert history.forget_session("telegram:1") == 1
    assert history.summary("telegram:1") is None
    hits = history.search("user", "narwhal", limit=5)
    assert [hit.message.session for hit in hits] == ["discord:9"]
    assert history.forget_session("telegram:1") == 0
    assert history_backend.indexed("narwhal") == 1


def test_ids_are_not_reused_after_forget(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    old = _say(history, "first")
    history.forget("user")
    assert _say(history, "second").id > old.id


def test_around_finds_each_anchors_neighbours_in_its_own_session(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    # Two sessions interleaved, and another namespace's turn in between.
    a = [_say(history, f"a{n}", session="s:a", minutes=2 * n) for n in range(3)]
    _say(history, "elsewhere", session="s:x", namespace="other", minutes=5)
    b = [_say(history, f"b{n}", session="s:b", minutes=2 * n + 1) for n in range(3)]
    a += [_say(history, f"a{n}", session="s:a", minutes=10 + n) for n in range(3, 5)]

    near = history.around("user", [a[2].id, b[0].id], radius=2)

    found = {(n.anchor, n.offset, n.message.content) for n in near}
    assert found == {
        (a[2].id, -2, "a0"),
        (a[2].id, -1, "a1"),
        (a[2].id, 1, "a3"),
        (a[2].id, 2, "a4"),
        (b[0].id, 1, "b1"),
        (b[0].id, 2, "b2"),
    }
    assert history.around("other", [a[2].id], radius=2) == []
    assert history.around("user", [], radius=2) == []
    assert history.around("user", [a[2].id], radius=0) == []


def test_postings_list_the_matching_rows_of_each_searched_word(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    painted = _say(history, "I painted the garage door")
    paints = _say(history, "She paints lakes", namespace="other")
    _say(history, "nothing to see")

    postings = history.postings("painting garage zebra")

    assert postings is not None
    # Stemmed like the index matches them, across namespaces; absent words are not searched.
    assert dict(postings.terms) == {"painting": (painted.id, paints.id), "garage": (painted.id,)}
    assert postings.documents == 3
    assert history.postings("zebra") is None


def test_postings_follow_what_is_stored_and_deleted_since_the_last_search(
    memory: SqliteMemory,
) -> None:
    """A word's list is kept between searches and grows with what is stored after; a
    deletion, or another connection's commit, starts it afresh."""
    history = memory.history

    def listed(word: str) -> tuple[int, ...]:
        postings = history.postings(word)
        return () if postings is None else postings.terms[word]

    first = _say(history, "a kayak on the river", session="telegram:1")
    assert listed("kayak") == (first.id,)
    _say(history, "nothing to see")
    second = _say(history, "the kayak again", session="telegram:2")
    assert listed("kayak") == (first.id, second.id)
    history.forget_session("telegram:1")
    assert listed("kayak") == (second.id,)
    with SqliteMemory.open(memory.db.path, SCHEMA) as other:
        third = _say(other.history, "kayaks for sale", session="telegram:3")
        other.history.forget_session("telegram:2")
    assert listed("kayak") == (third.id,)


def test_one_questions_searches_share_what_they_counted_and_read(
    history_backend: HistoryBackend,
) -> None:
    """The searches of one question (``search``: its whole and its parts) reuse the lists the
    first read, even a word found nowhere; the next question reads afresh."""
    history = history_backend.history
    painted = _say(history, "I painted the garage door")
    question = object()

    def searched(search: object) -> dict[str, tuple[int, ...]]:
        found = history.postings("garage zebra", wide=True, namespace_prefix="user", search=search)
        return dict(found.terms) if found is not None else {}

    assert searched(question) == {"garage": (painted.id,)}
    zebra = _say(history, "A zebra parked in the garage")
    assert searched(question) == {"garage": (painted.id,)}
    assert searched(object()) == {"garage": (painted.id, zebra.id), "zebra": (zebra.id,)}
    assert searched(None) == {"garage": (painted.id, zebra.id), "zebra": (zebra.id,)}


def test_messages_under_keeps_the_namespace_and_leaves_out_a_session(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    mine = _say(history, "mine", session="s:1")
    other = _say(history, "other session", session="s:2")
    below = _say(history, "below", namespace="user/sub", session="s:3")
    foreign = _say(history, "foreign", namespace="users", session="s:4")
    ids = [mine.id, other.id, below.id, foreign.id, 999]

    assert {m.id for m in history.messages_under("user", ids)} == {
        mine.id,
        other.id,
        below.id,
    }
    kept = history.messages_under("user", ids, exclude_session="s:2")
    assert {m.id for m in kept} == {mine.id, below.id}
    assert history.messages_under("user", []) == []


def test_append_many_stores_a_session_in_one_go(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    batch = [NewMessage("user", f"imported {n}", 2, T0 + timedelta(minutes=n)) for n in range(3)]
    assert history.append_many("import:1", "user", batch) == 3
    assert history.append_many("import:1", "user", []) == 0

    stored = history.recent("import:1")
    assert [m.content for m in stored] == ["imported 0", "imported 1", "imported 2"]
    assert stored[2].created_at == T0 + timedelta(minutes=2)
    assert [h.message.id for h in history.search("user", "imported", limit=5)]


def test_between_reads_the_root_and_namespaces_under_it_newest_first(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    for n in range(4):
        _say(history, f"root {n}", minutes=2 * n)
    _say(history, "below", namespace="user/sub", minutes=3, session="s:sub")
    _say(history, "sideways", namespace="user2", minutes=3, session="s:side")

    found = history.between("user", T0 + timedelta(minutes=1), T0 + timedelta(minutes=5), limit=10)
    assert [m.content for m in found] == ["root 2", "below", "root 1"]
    limited = history.between("user", T0, T0 + timedelta(minutes=9), limit=2)
    assert [m.content for m in limited] == ["root 3", "root 2"]
    excluded = history.between(
        "user", T0, T0 + timedelta(minutes=9), limit=10, exclude_session="s:sub"
    )
    assert [m.content for m in excluded] == ["root 3", "root 2", "root 1", "root 0"]


def test_kept_rows_never_outlive_a_change(memory: SqliteMemory, db_path: Path) -> None:
    said = _say(memory.history, "the old address is 12 Elm Street")
    kept = _say(memory.history, "unchanged")
    assert memory.history.messages_under("user", [said.id, kept.id])  # now kept decoded

    # Redacted by other SQL on this connection, as forgetting does.
    memory.db.execute("UPDATE messages SET content = 'REDACTED' WHERE id = ?", (said.id,))
    assert [m.content for m in memory.history.messages([said.id])] == ["REDACTED"]

    # Changed by another process.
    with closing(sqlite3.connect(db_path)) as other:
        other.execute("UPDATE messages SET content = 'from the cli' WHERE id = ?", (said.id,))
        other.commit()
    assert [m.content for m in memory.history.messages([said.id])] == ["from the cli"]

    memory.history.forget_session("telegram:1")
    assert memory.history.messages_under("user", [said.id, kept.id]) == []
    assert memory.history.around("user", [kept.id], radius=1) == []


def test_a_small_row_cache_still_reads_every_row(db_path: Path) -> None:
    with SqliteMemory.open(db_path, SCHEMA) as memory:
        history = SqliteHistory(memory.db, cached_rows=2)
        ids = [_say(memory.history, f"turn {n}", minutes=n).id for n in range(5)]
        for _ in range(2):
            assert sorted(m.id for m in history.messages_under("user", ids)) == ids
        assert [m.id for m in history.messages(ids[::-1])] == ids


def test_around_looks_past_other_sessions_and_gaps(history_backend: HistoryBackend) -> None:
    history = history_backend.history
    # s:a is consecutive around a[3], interleaved with s:b before a[1], and has a gap after
    # a[5] (a forgotten turn); a turn of s:a written under another namespace never counts.
    a = [_say(history, "a0", session="s:a")]
    for n in range(1, 3):
        _say(history, f"b{n}", session="s:b")
        a.append(_say(history, f"a{n}", session="s:a"))
    a += [_say(history, f"a{n}", session="s:a") for n in range(3, 6)]
    gone = _say(history, "gone", session="s:a")
    _say(history, "foreign", session="s:a", namespace="other")
    a.append(_say(history, "a6", session="s:a"))
    history_backend.execute("DELETE FROM messages WHERE id = ?", (gone.id,))

    def near(anchor: StoredMessage) -> list[tuple[int, str]]:
        found = history.around("user", [anchor.id], radius=2)
        return sorted((n.offset, n.message.content) for n in found)

    assert near(a[3]) == [(-2, "a1"), (-1, "a2"), (1, "a4"), (2, "a5")]
    assert near(a[1]) == [(-1, "a0"), (1, "a2"), (2, "a3")]
    assert near(a[5]) == [(-2, "a3"), (-1, "a4"), (1, "a6")]


def test_a_small_namespace_keeps_its_best_rows_beside_a_crowded_one(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    # Alice mentioned the harbour long ago; bob mentions it thousands of times since, so every
    # namespace's newest matches would fill the ranking window without one of hers.
    mine = history.append(
        "a", "users/alice", "user", "the harbour ferry leaves at noon", tokens=1, now=T0
    )
    later = [
        NewMessage("user", f"harbour ferry note {n}", 1, T0 + timedelta(minutes=n))
        for n in range(4000)
    ]
    history.append_many("b", "users/bob", later)

    hits = history.search("users/alice", "harbour ferry", limit=5)
    assert [hit.message.id for hit in hits] == [mine.id]
    matches = history.match("users/alice", "harbour ferry", limit=5, wide=True)
    assert [match.message.id for match in matches] == [mine.id]
    postings = history.postings("harbour ferry", namespace_prefix="users/alice")
    assert postings is not None
    assert set(postings.terms.values()) == {(mine.id,)}
    # Bob's own search still ranks only his newest matches, as before.
    assert len(history.search("users/bob", "harbour ferry", limit=5)) == 5


def test_in_order_reads_a_persons_messages_in_time_order_a_page_at_a_time(
    history_backend: HistoryBackend,
) -> None:
    """Every session and namespace under the person, compacted turns too, oldest first with
    ties by id, across page boundaries; a neighbour's namespace (``user2``) never."""
    history = history_backend.history
    late = _say(history, "late", session="discord:9", minutes=9)
    early = _say(history, "early", minutes=1)
    tied = _say(history, "tied", session="gateway:laptop", namespace="user/facts", minutes=1)
    same = _say(history, "same minute", session="discord:9", minutes=1)
    middle = _say(history, "middle", role="assistant", minutes=5)
    _say(history, "someone else", namespace="user2", minutes=3)
    history.save_summary("telegram:1", "summary", through_id=middle.id, now=T0)
    read = list(history.in_order("user", page=1))
    assert [m.content for m in read] == ["early", "tied", "same minute", "middle", "late"]
    assert [m.summarized for m in read] == [True, False, False, True, False]
    window = history.in_order(
        "user", start=T0 + timedelta(minutes=1), end=T0 + timedelta(minutes=9), page=2
    )
    assert [m.id for m in window] == [early.id, tied.id, same.id, middle.id]  # end left out
    after = history.in_order("user", start=T0 + timedelta(minutes=2))
    assert [m.id for m in after] == [middle.id, late.id]
    with pytest.raises(ValueError, match="page"):
        list(history.in_order("user", page=0))


def test_in_order_streams_rather_than_reading_everything_first(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    for minute in range(5):
        _say(history, f"turn {minute}", minutes=minute)
    stream = history.in_order("user", page=2)
    assert next(stream).content == "turn 0"
    # Stored after the read began: only a stream that reads page by page still sees it.
    _say(history, "said while exporting", minutes=60)
    assert [m.content for m in stream][-1] == "said while exporting"


def test_tool_steps_are_kept_with_their_message_and_never_keep_a_key(
    history_backend: HistoryBackend,
) -> None:
    history = history_backend.history
    key = "sk-live-4f9d8a7b6c5e4d3c2b1a0f9e"
    steps = json.dumps([{"name": "fetch", "arguments": {"token": key}, "result": "ok"}])
    with_steps = history.append(
        "s", "user", "assistant", f"done, and my key is {key}", tokens=1, now=T0, tool_steps=steps
    )
    plain = _say(history, "no tools here", session="s")
    kept = history.tool_steps([with_steps.id, plain.id, 999])
    assert list(kept) == [with_steps.id]
    assert "fetch" in kept[with_steps.id] and key not in kept[with_steps.id]
    assert key not in with_steps.content
    history.save_tool_steps(plain.id, json.dumps([{"name": "later", "arguments": {}}]))
    history.save_tool_steps(with_steps.id, json.dumps([{"name": "again", "arguments": {}}]))
    kept = history.tool_steps([with_steps.id, plain.id])
    assert "later" in kept[plain.id] and "again" in kept[with_steps.id]
    assert history.tool_steps([]) == {}
    history.forget_session("s")
    assert history.tool_steps([with_steps.id, plain.id]) == {}
