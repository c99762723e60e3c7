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


def test_i_am_a_name_has_lower_confidence() -> None:
    assert extractor.extract("Hi, I'm Ana") == [_profile("name", "Ana", 0.7)]
    assert extractor.extract("I am Ana Silva") == [_profile("name", "Ana Silva", 0.7)]


@pytest.mark.parametrize("verb", ["prefer", "like", "love", "really like"])
def test_preferences(verb: str) -> None:
    assert extractor.extract(f"I {verb} short answers.") == [
        _profile(None, "prefers short answers")
    ]


@pytest.mark.parametrize("verb", ["dislike", "don't like", "hate", "do not like", "can't stand"])
def test_dislikes(verb: str) -> None:
    assert extractor.extract(f"I {verb} cilantro!") == [_profile(None, "dislikes cilantro")]


def test_a_time_word_after_a_preference_is_not_part_of_its_object() -> None:
    assert extractor.extract("I hate sushi now") == [_profile(None, "dislikes sushi")]
    assert extractor.extract("I love sushi these days.") == [_profile(None, "prefers sushi")]
    assert extractor.extract("I now prefer tea") == [_profile(None, "prefers tea")]
    assert extractor.extract("I like the Knowing now project") == [
        _profile(None, "prefers the Knowing now project")
    ]


def test_my_field_is() -> None:
    assert extractor.extract("my favorite color is blue") == [_profile("favorite_color", "blue")]
    assert extractor.extract("My dog's name is Rex.") == [_profile("dog", "Rex")]
    assert extractor.extract("my email is ana@example.com.") == [
        _profile("email", "ana@example.com")
    ]


@pytest.mark.parametrize(
    "text", ["my dog is called Pixel", "My dog is named Pixel.", "my dog's name is Pixel"]
)
def test_a_name_given_to_something_of_yours_is_its_value(text: str) -> None:
    assert extractor.extract(text) == [_profile("dog", "Pixel")]


def test_a_time_word_after_a_field_value_is_not_part_of_it() -> None:
    assert extractor.extract("my favorite color is green now") == [
        _profile("favorite_color", "green")
    ]
    assert extractor.extract("My dog is called Rex these days.") == [_profile("dog", "Rex")]


def test_a_title_ending_in_a_time_word_keeps_it() -> None:
    assert extractor.extract("My favorite film is Apocalypse Now") == [
        _profile("favorite_film", "Apocalypse Now")
    ]
    assert extractor.extract("I love Apocalypse Now") == [_profile(None, "prefers Apocalypse Now")]


def test_named_after_is_not_a_name() -> None:
    assert extractor.extract("my dog is named after my uncle") == [
        _profile(None, "dog is named after my uncle")
    ]


def test_how_a_relative_or_pet_is_is_an_observation_not_their_name() -> None:
    assert extractor.extract("my cat is sick") == [_profile(None, "cat is sick")]
    assert extractor.extract("my sister is a nurse") == [_profile(None, "sister is a nurse")]
    assert extractor.extract("my best friend is no longer angry") == [
        _profile(None, "best friend is no longer angry")
    ]
    assert extractor.extract("my sister is Maya") == [_profile("sister", "Maya")]


def test_timezone() -> None:
    assert extractor.extract("My timezone is Europe/Lisbon") == [
        _profile("timezone", "Europe/Lisbon")
    ]
    assert extractor.extract("my time zone is UTC+1") == [_profile("timezone", "UTC+1")]


def test_location() -> None:
    assert extractor.extract("I live in Lisbon.") == [_profile("location", "Lisbon")]
    assert extractor.extract("I live in St. Louis now") == [_profile("location", "St. Louis")]


@pytest.mark.parametrize(
    "text",
    [
        "I moved to Berlin",
        "I've moved to Berlin.",
        "we just moved to Berlin!",
        "I relocated to Berlin",
        "I'm living in Berlin now",
        "I live in Berlin these days",
        "I moved back to Berlin last month",
        "We live in Berlin",
        "I've been living in Berlin for five years",
        "Thanks, we recently moved to Berlin",
    ],
)
def test_a_move_is_the_new_location(text: str) -> None:
    assert extractor.extract(text) == [_profile("location", "Berlin")]


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("I moved to New York City last year", "New York City"),
        ("I moved to the Netherlands in 2021", "the Netherlands"),
        ("I just moved to St. Louis", "St. Louis"),
        ("I moved to Portland, Oregon", "Portland, Oregon"),
        ("I moved to Rio de Janeiro for work", "Rio de Janeiro"),
        ("I moved to Berlin, Maya stayed in Lisbon", "Berlin"),
    ],
)
def test_a_move_takes_the_place_name_only(text: str, place: str) -> None:
    assert extractor.extract(text) == [_profile("location", place)]


@pytest.mark.parametrize(
    "text",
    [
        "should I move to Berlin?",
        "Should I move to Berlin",
        "if I moved to Berlin",
        "I didn't move to Berlin",
        "I'd move to Berlin",
        "I'd moved to Berlin by then",
        "I haven't moved to Berlin yet",
        "I never moved to Berlin",
        "maybe we moved to Berlin",
        "I wish we lived in Berlin",
        "I'm moving to Berlin next month",
        "my sister moved to Berlin",
        "I moved to Berlin when I was ten",
        "I moved to Berlin and then to Lisbon",
        "we moved to Postgres",
        "I moved to VS Code",
        "I moved to a new apartment",
        "I moved to the next step",
        "I'm living in fear",
        "I'm living in the moment",
        "we live in interesting times",
        "I'm in Berlin",
    ],
)
def test_what_is_not_a_move_to_a_place(text: str) -> None:
    assert extractor.extract(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I now work at Globex",
        "I work at Globex",
        "I work for Globex.",
        "I got a job at Globex",
        "I'm working at Globex now",
        "I've just started working at Globex",
        "I got a new job with Globex",
        "I was hired at Globex",
        "I joined Globex last month as a designer",
        "I joined Globex as CTO",
        "I started at Globex on Monday as a tester",
        "I joined Globex two weeks ago as an intern",
    ],
)
def test_a_job_is_the_employer(text: str) -> None:
    assert extractor.extract(text) == [_profile("employer", "Globex")]


@pytest.mark.parametrize(
    ("text", "employer"),
    [
        ("I work at Bank of America", "Bank of America"),
        ("I work for the BBC", "the BBC"),
        ("I work at McDonald's", "McDonald's"),
        ("I joined Ernst & Young in 2020 as an auditor", "Ernst & Young"),
        ("I work at Home Depot", "Home Depot"),
    ],
)
def test_an_employer_is_its_whole_name(text: str, employer: str) -> None:
    assert extractor.extract(text) == [_profile("employer", employer)]


@pytest.mark.parametrize(
    "text",
    [
        "I work at home",
        "I work at Home",
        "I work at night",
        "I work at night at Globex",
        "I joined a gym",
        "I joined the choir",
        "I joined the Choir",
        "I joined the Chess Club",
        "I joined Twitter",
        "I joined Maya for lunch",
        "I joined Maya and Tom",
        # People join gyms, clubs, schools and services by name: without a role, no job.
        "I joined Globex",
        "I joined Globex, I love it",
        "I started at Globex",
        "I joined Planet Fitness",
        "I joined Rotary",
        "I joined Greenpeace last year",
        "I joined Maya today.",
        "I started at Harvard in September",
        "I joined Ana's team",
        "I started at 9",
        "I started at Nine",
        "I started at Level 3",
        "I started at the bottom",
        "I started at Harvard University",
        "I work at Globex and Initech",
        "I also work at Initech",
        "I'm working at Starbucks today",
        "I work at Maya's café",
        "I used to work at Acme",
        "I worked at Acme",
        "I'd love to work at Globex",
        "if I worked at Globex",
        "if I joined Globex",
        "should I join Globex?",
        "I didn't get a job at Globex",
        "I wouldn't join Globex",
        "I might have joined Globex",
        "Maya works at Globex",
        "I got a job offer from Globex",
        "I left Maya a message",
        "I left early",
        "I quit smoking",
        "I want to quit Acme",
        "I never left Acme",
        "I quit Twitter",
    ],
)
def test_what_is_not_a_job(text: str) -> None:
    assert extractor.extract(text) == []


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
        "I'm tired",
        "I'm Tired.",
        "I am going home",
        "I am not sure",
        "I'm a teacher",
        "I'm Italian",
        "I'm Ana's sister",
        "I'M LEAVING",
        "i am ana",
    ],
)
def test_i_am_without_a_name_extracts_nothing(text: str) -> None:
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
        "Hi, I'm Ana and I live in Lisbon. I prefer short answers; my favorite color is green. "
        "When I say standup, summarise yesterday's notes. What's the weather?"
    )
    assert extractor.extract(text) == [
        _profile("name", "Ana", 0.7),
        _profile("location", "Lisbon"),
        _profile(None, "prefers short answers"),
        _profile("favorite_color", "green"),
        _action("standup", "summarise yesterday's notes"),
    ]


def test_clauses_split_at_a_new_subject_only() -> None:
    assert extractor.extract("I like cats, dogs and birds") == [
        _profile(None, "prefers cats, dogs and birds")
    ]
    assert extractor.extract("My name is Ana, and I hate Mondays because they are long") == [
        _profile("name", "Ana"),
        _profile(None, "dislikes Mondays"),
    ]


def test_mixed_case() -> None:
    assert extractor.extract("MY NAME IS ANA") == [_profile("name", "ANA")]
    assert extractor.extract("i PREFER Tea") == [_profile(None, "prefers Tea")]
    assert extractor.extract("My Favorite Color Is Blue") == [_profile("favorite_color", "Blue")]


def test_repeated_facts_are_proposed_once() -> None:
    assert extractor.extract("My name is Ana. Call me Ana.") == [_profile("name", "Ana")]


def test_values_are_capped() -> None:
    [fact] = extractor.extract("I prefer " + "very long words " * 40)
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
        ("I no longer live in Lisbon", _retraction("location", "Lisbon")),
        ("I don't live in Lisbon anymore", _retraction("location", "Lisbon")),
        ("I left Acme", _retraction("employer", "Acme")),
        ("I quit Acme", _retraction("employer", "Acme")),
        ("I've just left Acme Corp.", _retraction("employer", "Acme Corp")),
        ("I left Acme last month to join Globex", _retraction("employer", "Acme")),
        ("I quit my job at Acme", _retraction("employer", "Acme")),
        ("I no longer work at Acme", _retraction("employer", "Acme")),
        ("I don't work for Acme anymore", _retraction("employer", "Acme")),
        ("I'm not working at Acme any more", _retraction("employer", "Acme")),
        ("I stopped working for Acme", _retraction("employer", "Acme")),
        ("I no longer like tea", _retraction(None, "prefers tea")),
        ("I don't like tea any more", _retraction(None, "prefers tea")),
        ("I no longer hate Mondays", _retraction(None, "dislikes Mondays")),
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


def test_negations_that_are_not_retractions() -> None:
    assert extractor.extract("I don't like tea") == [_profile(None, "dislikes tea")]
    assert extractor.extract("I'm not working on src/app.py today") == []
    assert extractor.extract("I'm not working at Acme today") == []
    assert extractor.extract("If I no longer live in Lisbon, then what?") == []


def test_new_patterns_in_one_message() -> None:
    message = (
        "Thanks! I'm in UTC+2 this month, you can reach me at ana@example.com, my blog is at "
        "https://ana.dev and I'm working on src/app.py. I no longer like tea."
    )
    assert len(extractor.extract(message)) == 5


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("When I moved to Berlin I was 25.", ("location", "Berlin")),
        ("Since I moved to London I've been happier.", ("location", "London")),
        ("I moved to Berlin January 2020.", ("location", "Berlin")),
        ("I live in Berlin I think.", ("location", "Berlin")),
        ("I work at Google I guess.", ("employer", "Google")),
        ("I work at Google Monday to Friday.", ("employer", "Google")),
        ("I work at Starbucks Saturdays.", ("employer", "Starbucks")),
    ],
)
def test_a_name_ends_before_i_a_day_or_a_month(text: str, fact: tuple[str, str]) -> None:
    assert extractor.extract(text) == [_profile(*fact)]


@pytest.mark.parametrize(
    ("text", "observation"),
    [
        ("My wife is German.", "wife is German"),
        ("My mom is Catholic", "mom is Catholic"),
        ("My son is ADHD", "son is ADHD"),
        ("My boss is The Worst", "boss is The Worst"),
        ("My sister Maya is a nurse.", "sister Maya is a nurse"),
        ("My best friend Sarah is pregnant.", "best friend Sarah is pregnant"),
    ],
)
def test_what_describes_a_relative_is_no_name(text: str, observation: str) -> None:
    assert extractor.extract(text) == [_profile(None, observation)]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("My sister is Maya, she lives in Paris.", ("sister", "Maya")),
        ("My dog is Max, he's a lab.", ("dog", "Max")),
        ("My cat is Luna and she's 3.", ("cat", "Luna")),
        ("My boss is Tom Smith, he's great.", ("boss", "Tom Smith")),
        ("My doctor is Dr Okafor", ("doctor", "Dr Okafor")),
    ],
)
def test_a_relatives_name_is_the_name_alone(text: str, fact: tuple[str, str]) -> None:
    assert extractor.extract(text) == [_profile(*fact)]
