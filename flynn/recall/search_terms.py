"""The words recall searches a question for (``flynn.recall.ranking``): its own words, other
forms of its irregular verbs, and related words (``flynn.recall.related_words``), each with the
turns that contain it, read from the full-text index's posting lists."""

from __future__ import annotations

import re
from collections.abc import Collection, Hashable, Mapping
from dataclasses import dataclass, field

from flynn.memory.bm25 import TermMatches, idf
from flynn.memory.fts import search_terms
from flynn.memory.store import History, Postings
from flynn.recall.query import QueryAnalysis, verb_forms
from flynn.recall.weights import Tuning


@dataclass(frozen=True, slots=True)
class QueryWords:
    """The words a question was searched for: ``matches`` says which turns contain which
    (``None`` when none occurs), ``asked`` how many there were, ``names`` the names among them;
    ``unsearched_names`` finds in a text the names the search left out as too common;
    ``variants`` are other forms of asked words searched too ("bought" for "buy")."""

    matches: TermMatches | None
    asked: int
    names: frozenset[str]
    unsearched_names: re.Pattern[str] | None
    variants: frozenset[str] = frozenset()
    related: Mapping[str, str] = field(default_factory=dict)
    """Related words searched (``flynn.recall.related_words``), each with the word it is for."""
    scale: Mapping[str, float] = field(default_factory=dict)
    """What each related word's weight was multiplied by."""
    absent: Mapping[str, float] = field(default_factory=dict)
    """Asked words found in no turn searched (``Postings.absent``; not those left out as too
    common for the search's budget), each with what it weighs in ``ideal``."""

    def ideal(self, leave_out: Collection[str]) -> float:
        """What a turn holding every asked word (but ``leave_out``) once weighs. Other forms
        and related words are alternatives, not more words; an asked word found only through
        related words counts as much as the heaviest of them would unscaled, so a turn that
        holds only a related word is as strong as its share. An asked word found in no turn
        at all counts its ``absent`` weight: a turn that holds only the question's common
        words ("much", "going", "away" without "kitty") is not as strong as one holding all."""
        if self.matches is None:
            return 0.0
        weights = self.matches.weights
        skip = set(leave_out) | self.variants
        total = sum(
            w for term, w in weights.items() if term not in skip and term not in self.related
        )
        through_related: dict[str, float] = {}
        for word, source in self.related.items():
            if word in weights and source not in weights and source not in skip:
                through_related[source] = max(
                    through_related.get(source, 0.0), weights[word] / self.scale[word]
                )
        total += sum(through_related.values())
        for word, weight in self.absent.items():
            if word not in skip and word not in through_related:
                total += weight
        return total

    def weight_of(self, found: Collection[str]) -> float:
        """What the searched words ``found`` weigh together, a word and its related words
        counting once, the heaviest."""
        if self.matches is None:
            return 0.0
        weights = self.matches.weights
        best: dict[str, float] = {}
        for word in found:
            key = self.related.get(word, word)
            best[key] = max(best.get(key, 0.0), weights[word])
        return sum(best.values())

    def asked_found(self, found: Collection[str]) -> int:
        """How many asked words ``found`` (a turn's searched words) holds, a related word
        counting for the word it stands for."""
        if not self.related:
            return len(found)
        return len({self.related.get(word, word) for word in found})


def searched_words(
    history: History,
    root: str,
    query: QueryAnalysis,
    tuning: Tuning,
    *,
    search: Hashable = None,
) -> QueryWords:
    """What ``query`` is searched for under ``root``: its words, their other forms and related
    words, with the turns containing each. ``search`` stands for the question's searches
    (``History.postings``): a part of a comparing question reuses what the whole read."""
    asked = search_terms(" ".join(query.terms))
    names = frozenset(search_terms(" ".join(query.names)))
    searched = " ".join((*asked, *query.variants))
    postings = (
        history.postings(
            searched, wide=True, max_terms=tuning.words, namespace_prefix=root, search=search
        )
        if asked
        else None
    )
    found_asked = postings
    # Related words are searched apart, so that rare ones cannot crowd the asked words out
    # of the search's budget; each weighs its similarity times ``Tuning.related``.
    related = {each.word: each for each in query.related} if tuning.related > 0 else {}
    # Most similar first: a long question's related words are cut at the search's word limit.
    by_similarity = sorted(related.values(), key=lambda each: -each.similarity)
    found_related = (
        history.postings(
            " ".join(each.word for each in by_similarity),
            wide=True,
            namespace_prefix=root,
            search=search,
        )
        if asked and related
        else None
    )
    scale: dict[str, float] = {}
    if found_related is not None:
        lists = dict(postings.terms) if postings is not None else {}
        documents = max(found_related.documents, postings.documents if postings else 0)
        for word, ids in found_related.terms.items():
            if word in related and word not in lists:
                lists[word] = ids
                scale[word] = tuning.related * related[word].similarity
                # A rare related word weighs no more than the common word it stands for.
                source = lists.get(related[word].source)
                if source is not None and len(source) > len(ids):
                    scale[word] *= idf(documents, len(source)) / idf(documents, len(ids))
        postings = Postings(documents=documents, terms=lists)
    sources = {word: related[word].source for word in scale}
    matches = None if postings is None else TermMatches(postings, scale, sources)
    absent = _absent_weights(asked, found_asked, postings, tuning)
    # A name the search left out (it matches too many rows) is looked for in the text.
    unsearched = sorted(names - set(matches.weights if matches else ()))
    pattern = (
        re.compile(r"\b(?:" + "|".join(map(re.escape, unsearched)) + r")\b", re.IGNORECASE)
        if unsearched
        else None
    )
    # Forms searched besides the asked words (a word the question also asks is no variant).
    variants = frozenset(search_terms(" ".join(query.variants))) - set(asked)
    return QueryWords(matches, len(asked), names, pattern, variants, sources, scale, absent)


def _absent_weights(
    asked: list[str], found: Postings | None, postings: Postings | None, tuning: Tuning
) -> dict[str, float]:
    """The asked words found in no turn, each weighing ``Tuning.absent`` times the idf of a
    word in no turn; not one whose other form was found ("taken" when "took" was). ``found`` is
    the asked words' search (``None``: none of them occurs), ``postings`` the lists ranked
    (with related words)."""
    if tuning.absent <= 0 or postings is None:
        return {}
    missing = set(asked) if found is None else found.absent
    weight = tuning.absent * idf(postings.documents, 0)
    return {
        word: weight
        for word in asked
        if word in missing and not any(form in postings.terms for form in verb_forms(word))
    }
