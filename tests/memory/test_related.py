"""The related-word table recall expands questions with: the shipped file, lookups, stems."""

from __future__ import annotations

import gzip
import importlib.util
import sqlite3
from datetime import UTC, datetime
from importlib.resources import files
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from flynn.recall import related_words as related_module
from flynn.recall.query import analyse
from flynn.recall.related_words import TABLE, Related, RelatedWords

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def _porter(words: list[str]) -> list[str]:
    """Each word as SQLite's full-text index stems it."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(w, tokenize='porter unicode61')")
    db.executemany("INSERT INTO t(rowid, w) VALUES (?, ?)", enumerate(words, start=1))
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    stems = dict(db.execute("SELECT doc, term FROM v"))
    return [stems[row] for row in range(1, len(words) + 1)]


def test_the_shipped_table_is_well_formed_and_agrees_with_the_index_stemmer() -> None:
    text = gzip.decompress(files("flynn.recall").joinpath(TABLE).read_bytes()).decode()
    lines = [line.split(" ") for line in text.splitlines() if not line.startswith("#")]
    assert len(lines) > 20_000
    words = {fields[0]: fields for fields in lines}
    sample = sorted(words)[::97]
    for word, stem in zip(sample, _porter(sample), strict=True):
        assert words[word][1] == stem, word
    for word, stem, *rest in lines:
        assert word.isalpha() and word.islower() and len(rest) % 2 == 0 and len(rest) <= 10
        near, similarity = rest[::2], [int(value) for value in rest[1::2]]
        assert similarity == sorted(similarity, reverse=True)
        assert all(60 <= value <= 100 for value in similarity)
        # Every neighbour has a line of its own (its stem is known), and none shares a stem.
        stems = [words[each][1] for each in near]
        assert len({stem, *stems}) == len(stems) + 1, word


def test_related_words_of_a_question_word() -> None:
    table = RelatedWords.shipped()
    assert {"dogs", "cats"} <= {each.word for each in table.expand(["pets"])}
    assert {"wife", "husband"} <= {each.word for each in table.expand(["married"])}
    assert all(
        each.source == "pets" and 0.6 <= each.similarity <= 1 for each in table.expand(["pets"])
    )
    assert table.expand(["zzxq"]) == ()
    assert table.stem("married") == "marri" and table.stem("zzxq") == "zzxq"


def test_expansion_skips_words_sharing_a_stem_with_one_asked_or_given() -> None:
    table = RelatedWords.parse(
        "# comment\n"
        "pets pet dogs 82 animals 80 dog 70\n"
        "dog dog dogs 90 puppy 80\n"
        "dogs dog\n"
        "animals anim\n"
        "puppy puppi\n"
        "bark bark\n"
    )
    assert table.expand(["pets"]) == (
        Related("dogs", "pets", 0.82),
        Related("animals", "pets", 0.80),
    )
    # "dogs" is the stem of an asked word ("dog"), and "puppy" not yet taken.
    assert table.expand(["pets", "dog"]) == (
        Related("animals", "pets", 0.80),
        Related("puppy", "dog", 0.80),
    )
    # Forms searched anyway (irregular verb forms) are not given again.
    assert [each.word for each in table.expand(["pets"], also=["animals"])] == ["dogs"]


def test_a_word_the_table_lacks_still_keeps_its_own_forms_out() -> None:
    table = RelatedWords.parse("canoe cano paddle 80 kayak 75\npaddle paddl\nkayak kayak\n")
    # "paddling" is not in the table; the index finds "paddle" for it anyway.
    assert [each.word for each in table.expand(["paddling", "canoe"])] == ["kayak"]


def test_related_question_and_time_words_are_not_searched() -> None:
    words = {each.word for each in analyse("What has Ana told me about summer?", now=NOW).related}
    assert words and not words & {"said", "june", "july", "yesterday"}


def test_a_malformed_line_gives_no_related_words_and_breaks_nothing() -> None:
    table = RelatedWords.parse("pets pet dogs eighty\ncats cat kittens\nfish fish\n")
    assert table.expand(["pets", "cats", "fish"]) == ()
    assert table.stem("pets") == "pet"


@pytest.mark.parametrize("content", [None, b"\x1f\x8b\x08\x00garbage", b"\xff\xfe"])
def test_a_missing_or_damaged_table_turns_expansion_off_with_a_logged_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, content: bytes | None
) -> None:
    if content is not None:
        (tmp_path / TABLE).write_bytes(content)
    monkeypatch.setattr(related_module, "files", lambda package: tmp_path)
    RelatedWords.shipped.cache_clear()
    try:
        with capture_logs() as logs:
            assert len(RelatedWords.shipped()) == 0
            assert RelatedWords.shipped().expand(["pets"]) == ()
    finally:
        monkeypatch.undo()
        RelatedWords.shipped.cache_clear()
    assert [entry["event"] for entry in logs] == ["recall.related_words_unavailable"]
    assert len(RelatedWords.shipped()) > 20_000


def test_analyse_expands_topic_words_but_never_names() -> None:
    analysis = analyse("What pets does Ingrid have?", now=NOW)
    words = {each.word for each in analysis.related}
    assert "dogs" in words
    assert {each.source for each in analysis.related} == {"pets"}
    assert analyse("Who is Ingrid?", now=NOW).related == ()


def test_the_table_builder_stems_as_the_index_does() -> None:
    path = Path(__file__).resolve().parents[2] / "tools" / "make_related_words.py"
    if importlib.util.find_spec("numpy") is None:
        pytest.skip("the builder needs the embeddings extra")
    spec = importlib.util.spec_from_file_location("make_related_words", path)
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    words = ["married", "marriage", "running", "pets"]
    assert builder.porter_stems(words) == _porter(words) == ["marri", "marriag", "run", "pet"]
