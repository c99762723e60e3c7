from __future__ import annotations

import time

import pytest

from flynn.learning.rules import MAX_VALUE_CHARS, ProposedFact, RuleExtractor
from flynn.memory.store import FactKind

extractor = RuleExtractor()


def _profile(field: str | None, value: str, confidence: float = 0.9) -> ProposedFact:
    return ProposedFact("profile", field, value, confidence, "profile")


def _action(trigger: str, value: str) -> ProposedFact:
    return ProposedFact("action", trigger, value, 0.9, "patterns")


def test_my_name_is() -> None:
    assert extractor.extract("My name is Ana.") == [_profile("name", "Ana")]


def test_my_name_is_keeps_full_name_and_case_as_written() -> None:
    assert extractor.extract("my name's Jean-Luc Picard!") == [_profile("name", "Jean-Luc Picard")]
    assert extractor.extract("my name is ana") == [_profile("name", "ana")]


def test_call_me() -> None:
    assert extractor.extract("Please call me Annie") == [_profile("name", "Annie")]
    assert extractor.extract("call me Dr. Smith") == [_profile("name", "Dr. Smith")]


def test_call_me_lowercase_when_the_whole_message_is() -> None:
    assert extractor.extract("call me ana") == [_profile("name", "ana")]


def test_my_field_is_only_when_the_value_says_what_it_is() -> None:
    assert extractor.extract("my email is ana@example.com.") == [
        _profile("email", "ana@example.com")
    ]


def test_timezone() -> None:
    assert extractor.extract("My timezone is Europe/Lisbon") == [
        _profile("timezone", "Europe/Lisbon")
    ]
    assert extractor.extract("my time zone is UTC+1") == [_profile("timezone", "UTC+1")]


def test_when_i_say() -> None:
    assert extractor.extract("When I say 'ship it', run the deploy script.") == [
        _action("ship it", "run the deploy script")
    ]


def test_when_i_say_do() -> None:
    assert extractor.extract("From now on, when I say GM, do a morning briefing") == [
        _action("gm", "do a morning briefing")
    ]


def test_if_i_say() -> None:
    assert extractor.extract('if I say "prod", I mean the EU cluster') == [
        _action("prod", "means the EU cluster")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "what is my name?",
        "What's my name",
        "is my name Ana?",
        "Do you remember that my name is Ana?",
        "When I say deploy, what do you do?",
        "how do I prefer my coffee",
    ],
)
def test_questions_extract_nothing(text: str) -> None:
    assert extractor.extract(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "my name is not Bob",
        "My name isn't Bob",
        "Don't call me Ana",
        "Never call me Bobby",
        "I don't think I like jazz",
        "If my name is Bob, then what?",
        "If my favorite color is blue",
        "I wish I lived in Paris",
        "call me later",
        "Call me crazy",
        "call me when you're done",
        "if my name were Bob",
        "is my name Carl?",
        "my name is not Dave",
        "maybe my name is Bob",
        "let's say my name is Bob",
        "I would say my name is Bob",
        "I'd say I live in Paris",
        "I doubt my name is Bob",
    ],
)
def test_negated_or_hypothetical_statements_extract_nothing(text: str) -> None:
    assert extractor.extract(text) == []


@pytest.mark.parametrize(
    "text",
    ["I'd like you to call me Bob", "would you call me Bob", "I would prefer you call me Bob"],
)
def test_a_request_with_would_is_not_hypothetical(text: str) -> None:
    assert extractor.extract(text) == [_profile("name", "Bob")]


@pytest.mark.parametrize(
    "text",
    [
        "I love you",
        "I like it",
        "I like the way you think",
        "I hate it when that happens",
        "I'd like a coffee",
        "I would like to book a flight",
        "I prefer not to say",
        "my point is that we should go",
        "my code is broken",
        "my bad",
    ],
)
def test_conversational_phrases_extract_nothing(text: str) -> None:
    assert extractor.extract(text) == []


def test_quoted_and_code_text_is_ignored() -> None:
    text = "> my name is Bob\n```\nmy name is Carl\n```\nAnyway, call me Ana"
    assert extractor.extract(text) == [_profile("name", "Ana")]


def test_several_facts_in_one_message() -> None:
    text = (
        "Hi, my name is Ana and I'm in CET. My blog is at https://ana.dev; "
        "When I say standup, summarise yesterday's notes. What's the weather?"
    )
    assert extractor.extract(text) == [
        _profile("name", "Ana"),
        _profile("timezone", "CET"),
        _profile("blog", "https://ana.dev"),
        _action("standup", "summarise yesterday's notes"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        # What only a phrasing says is the extraction model's to learn (tests/memory/
        # test_fact_relations.py: the facts and relations the model path keeps from these).
        "Hi, I'm Ana",
        "I live in Lisbon",
        "I moved to Berlin",
        "I joined Globex last month as a designer",
        "I left Acme",
        "I prefer short answers",
        "I hate cilantro",
        "my favorite color is blue",
        "my dog is called Pixel",
        "My sister is Maya, she lives in Paris.",
        "moin, ich heiße Ana und wohne in Berlin",
    ],
)
def test_what_only_a_phrasing_says_is_left_to_the_model(text: str) -> None:
    assert extractor.extract(text) == []


def test_mixed_case() -> None:
    assert extractor.extract("MY NAME IS ANA") == [_profile("name", "ANA")]
    assert extractor.extract("My Blog Is https://ana.dev") == [_profile("blog", "https://ana.dev")]


def test_repeated_facts_are_proposed_once() -> None:
    assert extractor.extract("My name is Ana. Call me Ana.") == [_profile("name", "Ana")]


def test_values_are_capped() -> None:
    [fact] = extractor.extract("when I say go, " + "very long words " * 40)
    assert len(fact.value) <= MAX_VALUE_CHARS
    assert not fact.value.endswith(" ")


def test_nothing_in_ordinary_messages() -> None:
    for text in ["", "ok", "sounds good, lets do that tomorrow", "Thanks!", "???", "...", "my"]:
        assert extractor.extract(text) == []


def test_long_adversarial_input_does_not_hang() -> None:
    texts = [
        "my " * 3000 + "a" * 3000 + " is",
        "when I say " + "a " * 3000,
        "I'm " * 5000,
        "Dr. " * 2000,
        "my x is " + " -" * 4000 + "y",
        "```" * 3000,
    ]
    # A guard against catastrophic regex backtracking (which takes minutes), not a speed test:
    # speed is measured by `flynn bench turn`. The bound is far above any healthy run.
    start = time.perf_counter()
    for text in texts:
        extractor.extract(text)
    assert time.perf_counter() - start < 10


def _retraction(field: str | None, value: str, kind: FactKind = "profile") -> ProposedFact:
    return ProposedFact(kind, field, value, 0.9, "profile", retracts=True)


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("I'm in UTC+2", "UTC+2"),
        ("I am in utc - 5:30 these days", "UTC-5:30"),
        ("I'm on Europe/Berlin time", "Europe/Berlin"),
        ("i'm in europe/berlin", "Europe/Berlin"),
        ("I'm currently in America/New_York", "America/New_York"),
        ("I'm in CET", "CET"),
        ("I'm in GMT", "GMT"),
    ],
)
def test_timezone_statements(text: str, zone: str) -> None:
    assert extractor.extract(text) == [_profile("timezone", zone)]


@pytest.mark.parametrize(
    "text",
    ["I'm in town", "I'm in Japan", "I'm in a meeting", "I'm in Europe/Atlantis", "I'm in HR"],
)
def test_being_somewhere_is_not_a_timezone(text: str) -> None:
    assert all(fact.field != "timezone" for fact in extractor.extract(text))


def test_emails_only_when_they_are_the_persons() -> None:
    assert extractor.extract("my email address is ana@example.com, thanks") == [
        _profile("email", "ana@example.com")
    ]
    assert extractor.extract("You can reach me at ana@example.com.") == [
        _profile("email", "ana@example.com")
    ]
    assert extractor.extract("email me at ana.silva+work@mail.example.org") == [
        _profile("email", "ana.silva+work@mail.example.org")
    ]
    for text in ["bob@example.com wrote back", "send it to bob@example.com", "cc ops@x.io"]:
        assert extractor.extract(text) == []


def test_links_and_paths_the_person_calls_theirs() -> None:
    assert extractor.extract("my blog is https://ana.dev/posts") == [
        _profile("blog", "https://ana.dev/posts")
    ]
    assert extractor.extract("My blog is at https://ana.dev.") == [
        _profile("blog", "https://ana.dev")
    ]
    assert extractor.extract("my repo: github.com/ana/flynn, thanks") == [
        _profile("repo", "github.com/ana/flynn")
    ]
    assert extractor.extract("my project lives at ~/code/flynn") == [
        _profile("project", "~/code/flynn")
    ]


def test_what_the_person_is_working_on() -> None:
    working = ProposedFact("observation", None, "working on src/app.py", 0.9, "profile")
    assert extractor.extract("I'm working on src/app.py.") == [working]
    assert extractor.extract("I am currently working on https://github.com/ana/flynn today") == [
        ProposedFact("observation", None, "working on https://github.com/ana/flynn", 0.9, "profile")
    ]
    for text in ["I'm working on it", "I'm working on the weekend", "if I'm working on x.py"]:
        assert extractor.extract(text) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my email is no longer ana@old.example", _retraction("email", "ana@old.example")),
        ("I'm no longer working on src/app.py", _retraction(None, "working on src/app.py")),
        ("I stopped working on src/app.py", _retraction(None, "working on src/app.py")),
        (
            "I'm not working on src/app.py anymore",
            _retraction(None, "working on src/app.py", "observation"),
        ),
    ],
)
def test_retractions(text: str, expected: ProposedFact) -> None:
    [fact] = extractor.extract(text)
    assert (fact.field, fact.value, fact.retracts) == (expected.field, expected.value, True)


def test_new_patterns_in_one_message() -> None:
    message = (
        "Thanks! I'm in UTC+2 this month, you can reach me at ana@example.com, my blog is at "
        "https://ana.dev and I'm working on src/app.py."
    )
    assert len(extractor.extract(message)) == 4
