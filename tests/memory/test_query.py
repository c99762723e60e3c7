"""Query analysis beyond words and time: verb forms the stemmer cannot reach, the kind of answer a
question wants, and words outside ASCII."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flynn.recall.query import AnswerKind, analyse, mentions

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def test_irregular_verbs_are_searched_in_their_other_forms() -> None:
    assert analyse("When did Sam run the race?", now=NOW).variants == ("ran",)
    assert analyse("Where did Ana fly to?", now=NOW).variants == ("flew", "flown")
    # The stemmer finds "swim" from "swimming"; only the forms it cannot reach are added.
    assert analyse("How is the swimming going?", now=NOW).variants == ("swam", "swum")
    assert analyse("Who taught her to swim?", now=NOW).variants == ("swam", "swum", "teach")
    assert analyse("What did the kids paint?", now=NOW).variants == ()


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("How many cups of coffee may Ana drink?", "number"),
        ("What percentage raise did she get?", "number"),
        ("Where does Lucia live?", "place"),
        ("Which city did they visit?", "place"),
        ("Who is Ana's boss?", "person"),
        ("What is the name of the dog?", "person"),
        ("What did Ana cook?", None),
    ],
)
def test_questions_say_what_kind_of_answer_they_want(question: str, kind: str | None) -> None:
    assert analyse(question, now=NOW).expects == kind


@pytest.mark.parametrize(
    ("kind", "yes", "no"),
    [
        ("time", "She lands on March 14th.", "She lands soon."),
        ("time", "We met two weeks ago.", "We met at the cafe."),
        ("number", "Max two cups a day.", "Not too many cups."),
        ("number", "It costs 1,200 euros.", "It costs a lot."),
        ("place", "We found a place in Alfama.", "We found a place nearby."),
        ("person", "My manager Priscila is counting on me.", "My manager is counting on me."),
    ],
)
def test_mentions_recognise_an_answer_of_that_kind(kind: AnswerKind, yes: str, no: str) -> None:
    assert mentions(kind, yes)
    assert not mentions(kind, no)


def test_words_outside_ascii_are_kept_whole() -> None:
    query = analyse("What is the café called, Zoë?", now=NOW)
    assert query.terms == ("café", "called", "zoë")
    assert query.names == ("zoë",)


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("What did we decide about the server?", "full"),
        ("did Sam ever call back", "full"),  # an inverted auxiliary, no question mark
        ("ok so where is it", "full"),
        ("I finished the report. how did the demo go", "full"),  # a later sentence asks
        ("I talked to Maria about it.", "full"),  # a name
        ("The deploy broke yesterday.", "full"),  # a time it points at
        ("Remember the blue kettle.", "full"),
        ("We decided to go with postgres.", "full"),
        ("The build failed again.", "full"),
        ("The deploy went fine.", "light"),
        ("I know what you mean.", "light"),  # a question word that opens no sentence
        ("Thanks, that helps a lot.", "light"),
    ],
)
def test_depth_is_full_for_what_asks_or_points_at_memory(text: str, depth: str) -> None:
    assert analyse(text, now=NOW).depth == depth


@pytest.mark.parametrize(
    ("question", "topic"),
    [
        ("What did Caroline research?", "What did research?"),
        ("Where did Caroline's sister and Caroline go?", "Where did sister and go?"),
        ("When did O’Brien move to İzmir?", "When did move to?"),
        ("What did James' brother buy?", "What did brother buy?"),
        ("What did I research?", ""),  # names nobody
        ("How is Caroline?", ""),  # says nothing else
    ],
)
def test_the_topic_is_the_question_without_its_names(question: str, topic: str) -> None:
    assert analyse(question, now=NOW).topic_text == topic


@pytest.mark.parametrize(
    ("question", "across"),
    [
        ("How many races have I run this year?", True),
        ("Which countries have I been to on trips?", True),
        ("What have we made at pottery class so far?", True),
        ("How much have I paid the garage in total?", True),
        ("Which different doctors did I see?", True),
        ("Who have we had to stay this year?", True),
        # A yes-or-no question, or a word that only starts like one of the cues.
        ("Have we met?", False),
        ("Have I mentioned my allergy before?", False),
        ("How do I fold it differently?", False),
        ("What car do I drive?", False),
        ("Where did Ana fly to?", False),
        # Asking when is about one occasion, even in these words.
        ("How long have I been learning Dutch?", False),
    ],
)
def test_questions_over_many_occasions_are_recognised(question: str, across: bool) -> None:
    assert analyse(question, now=NOW).asks_across is across


@pytest.mark.parametrize(
    ("question", "about"),
    [
        ("How many countries have I been to?", "person"),
        ("Which restaurants have we tried lately?", "person"),
        ("What's my sister's new job?", "person"),
        # What the assistant said, even when the person is in the question too.
        ("How deep did you say the soil should be before I water my fern?", "assistant"),
        ("What did you suggest for the party?", "assistant"),
        ("How long does the lid stay on, according to your recipe?", "assistant"),
        # A request to the assistant is not a question about what it said.
        ("Which seat would you recommend for me on the flight?", "person"),
        ("How many books have I told you I finished?", "person"),
        # Something the assistant did, in words the list does not know: no lean either way.
        ("What was that recipe you sent me?", None),
        ("Which hotel were you suggesting for us?", None),
        ("In your itinerary for my Lisbon trip, where do we stay?", None),
        # "US" is the country.
        ("What's the US policy on visas?", None),
        # Someone else, or nobody.
        ("What did Caroline research?", None),
        ("Where is the nearest station?", None),
    ],
)
def test_a_question_says_whose_turns_answer_it(question: str, about: str | None) -> None:
    assert analyse(question, now=NOW).about == about


@pytest.mark.parametrize(
    ("question", "terms"),
    [
        ("How long ago was my step up at work?", ("step", "work")),
        ("How far did I cycle on the long ride?", ("cycle", "long", "ride")),
        ("How often do I water the fern?", ("water", "fern")),
        ("Which long walk did we do?", ("long", "walk")),
        ("How old is my dog now?", ("old", "dog")),
        ("I don't know how. Long story?", ("don't", "long", "story")),
    ],
)
def test_a_measure_asked_with_how_is_not_searched_for(
    question: str, terms: tuple[str, ...]
) -> None:
    """A question asking how long ago wants a time, not turns that say "long"."""
    assert analyse(question, now=NOW).terms == terms
