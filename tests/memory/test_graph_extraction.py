from __future__ import annotations

import random
import time

import pytest

from evals.scripted_provider import ScriptedProvider
from flynn.learning.graph_extraction import (
    GRAPH_EXTRACTION_PROMPT,
    MAX_LLM_ENTITIES,
    MAX_LLM_RELATIONS,
    MAX_RULE_ENTITIES,
    GraphProposal,
    LlmGraphExtractor,
    ProposedEntity,
    ProposedRelation,
    RuleGraphExtractor,
    parse_graph_extraction,
)
from flynn.providers.base import ChatMessage

RULES = RuleGraphExtractor()


def _entities(text: str) -> set[tuple[str, str]]:
    return {(e.name, e.type) for e in RULES.extract(text).entities}


def _relations(text: str) -> set[tuple[str, str, str]]:
    return {(r.source, r.type, r.target) for r in RULES.extract(text).relations}


# --- patterns ------------------------------------------------------------------------------------


def test_emails_urls_and_paths_are_found_exactly() -> None:
    text = (
        "Mail maya.l+work@example.co.uk, see https://example.com/docs?page=2. "
        "Then edit ~/notes/todo.md, ./run.sh, /etc/hosts and report.pdf."
    )
    assert _entities(text) == {
        ("maya.l+work@example.co.uk", "email"),
        ("https://example.com/docs?page=2", "url"),
        ("~/notes/todo.md", "file_path"),
        ("./run.sh", "file_path"),
        ("/etc/hosts", "file_path"),
        ("report.pdf", "file_path"),
    }


@pytest.mark.parametrize(
    "text",
    [
        "use /reset or /compact",
        "24/7 and/or 3.14",
        "visit example.com or e.g. this",
        "an @mention and a lone @ sign",
    ],
)
def test_things_that_only_look_like_paths_are_not(text: str) -> None:
    assert _entities(text) == set()


def test_parts_of_urls_and_addresses_are_not_names() -> None:
    assert _entities("see https://GitHub.com/Anthropic/Flynn now") == {
        ("https://GitHub.com/Anthropic/Flynn", "url")
    }
    assert _entities("write to Maya.Lopez@Example.com") == {("Maya.Lopez@Example.com", "email")}
    assert _entities("clone https://git@host.example/x.git") == {
        ("https://git@host.example/x.git", "url")
    }


# --- cues ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("My sister Maya and my best friend, Tom Reed, came over.", {"Maya", "Tom Reed"}),
        ("my dog is called Pixel", {"Pixel"}),
        # A lone capitalised word opening a sentence is no name to the rules (Maya, Bob, Flynn).
        ("Maya works at Google. Bob worked at IBM", {"Google", "IBM"}),
        ("I joined Globex as a designer", {"Globex"}),
        ("we just moved to Berlin", {"Berlin"}),
        ("I'm originally from Porto", {"Porto"}),
        ("The project Apollo is late", {"Apollo"}),
        ("Flynn uses Go. I use Neovim", {"Go", "Neovim"}),
    ],
)
def test_rules_find_names_and_leave_their_kind_and_relations_to_the_model(
    text: str, names: set[str]
) -> None:
    # Who is whose sister, who works or lives where: the model's graph extraction says it
    # (test_llm_answer_is_parsed; tests/memory/test_fact_relations.py keeps it in the graph).
    assert _entities(text) == {(name, "thing") for name in names}
    assert _relations(text) == set()


@pytest.mark.parametrize(
    "text",
    [
        "if my name were Bob",
        "is my name Bob?",
        "is my name Bob",
        "my name is not Bob",
        "my name isn't Bob",
        "my name's not Bob",
        "my name would be Bob",
        "were my name Bob, I'd be happy",
        "don't call me Bob",
        "if you called me Bob",
        "I am not Bob",
        "if I were Bob",
    ],
)
def test_a_name_only_asked_about_supposed_or_denied_is_no_entity(text: str) -> None:
    assert _entities(text) == set()


def test_a_name_said_plainly_is_still_an_entity() -> None:
    assert _entities("Hello, my name is Ana") == {("Ana", "thing")}
    assert _entities("Is Ana coming? I met Bob") == {("Ana", "thing"), ("Bob", "thing")}


def test_a_conditional_states_no_relation() -> None:
    assert _relations("I'd live in Paris if I could") == set()


# --- capitalised names ---------------------------------------------------------------------------


def test_capitalised_names_mid_sentence_are_things() -> None:
    text = "Yesterday I met Bob Smith and Ana in Paris, near the Bank of America."
    assert _entities(text) == {
        ("Bob Smith", "thing"),
        ("Ana", "thing"),
        ("Paris", "thing"),
        ("Bank of America", "thing"),
    }


@pytest.mark.parametrize(
    "text",
    [
        "The weather is nice. Today is Monday.",
        "I think so. In January we rest.",
        "Thanks! Okay, Sure. Hi there",
        "Sounds good. Maybe later.",
        "Q3 numbers are in",
        "THIS IS A VERY LOUD MESSAGE ABOUT NOTHING",
        "The Quick Brown Fox Jumps Over The Lazy Dog",
        "Great",
    ],
)
def test_capitalised_common_words_are_not_names(text: str) -> None:
    assert _entities(text) == set()


def test_a_lone_capitalised_word_opening_a_sentence_is_not_a_name() -> None:
    assert _entities("Maya called. Later, Bob texted") == {("Bob", "thing")}
    assert _entities("Tell Maya I'm late") == {("Maya", "thing")}
    assert _entities("Maya Lopez called") == {("Maya Lopez", "thing")}


def test_code_and_quotes_are_ignored() -> None:
    text = "> Quoted Person said\n```\nclass FooBar: Baz Qux\n```\nok"
    assert RULES.extract(text) == GraphProposal()


def test_possessives_and_duplicates() -> None:
    proposal = RULES.extract("I met Ana Lopez's brother. Ana Lopez is nice, ana lopez agrees")
    assert [(e.name, e.type) for e in proposal.entities] == [("Ana Lopez", "thing")]


def test_entities_are_capped() -> None:
    text = " ".join(f"and Name{chr(65 + i % 26)}{chr(65 + i // 26)}x" for i in range(60))
    assert len(RULES.extract(text).entities) == MAX_RULE_ENTITIES


def test_rules_never_raise_or_hang_on_hostile_text() -> None:
    generator = random.Random(3)
    alphabet = "aA b/.:@-_'’ \n?!,My sister works at I live in project uses ~Zé"
    for _ in range(300):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randrange(200)))
        RULES.extract(text)
    for hostile in (
        "a/" * 2000,
        "a." * 2000,
        "A " * 2000,
        "x@" * 2000,
        "/" * 4000,
        "my sister " * 400,
    ):
        # A guard against catastrophic backtracking (minutes), not a speed test; the speed is
        # reported by tests/memory/bench_graph.py. The bound is far above any healthy run.
        started = time.perf_counter()
        RULES.extract(hostile)
        assert time.perf_counter() - started < 10, hostile[:10]


# --- LLM -----------------------------------------------------------------------------------------


def test_llm_answer_is_parsed() -> None:
    answer = """Here you go:
```json
{"entities": [{"name": "Flynn", "type": "Project", "description": "Local-first  AI assistant"},
              {"name": "Go", "type": "programming language"}],
 "relations": [{"source": "Flynn", "target": "Go", "type": "uses", "confidence": 0.9}]}
```"""
    assert parse_graph_extraction(answer) == GraphProposal(
        entities=(
            ProposedEntity("Flynn", "project", "Local-first AI assistant"),
            ProposedEntity("Go", "programming_language"),
        ),
        relations=(ProposedRelation("Flynn", "uses", "Go", 0.9),),
    )


def test_llm_truncated_answer_keeps_the_complete_objects() -> None:
    answer = (
        '{"entities": [{"name": "Maya", "type": "person"}, {"name": "Acme", "ty'
        ' "relations": [{"source": "Maya", "target": "Acme", "type": "works_at"}, {"source": "M'
    )
    proposal = parse_graph_extraction(answer)
    assert proposal.entities == (ProposedEntity("Maya", "person"),)
    assert proposal.relations == (ProposedRelation("Maya", "works_at", "Acme"),)


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "I could not find anything.",
        "{not json at all",
        "[1, 2, 3]",
        '{"entities": "none", "relations": null}',
        '{"entities": [{"name": 5}, {"name": ""}, {"name": null}, {"name": ["x"]}]}',
        '{"relations": [{"source": "A", "target": "A", "type": "is"}]}',
        '{"relations": [{"source": "A", "target": "B"}, {"source": "A", "target": "B", "type": 3}'
        "]}",
        '{"relations": [{"source": "A", "target": " ", "type": "x"}]}',
        "\x00\ufffd{{{{}}}}",
    ],
)
def test_llm_garbage_yields_nothing(answer: str) -> None:
    assert parse_graph_extraction(answer) == GraphProposal()


def test_llm_odd_fields_are_tolerated() -> None:
    answer = """{"entities": [
        {"name": "Maya", "type": null, "description": 42, "confidence": 7},
        {"name": "maya", "type": "person", "confidence": true},
        {"name": "Bob", "type": "!!!", "confidence": -1}
    ]}"""
    assert parse_graph_extraction(answer).entities == (
        ProposedEntity("Maya", "person", None, 1.0),
        ProposedEntity("Bob", "thing", None, 0.0),
    )


def test_llm_limits_are_applied() -> None:
    entities = ", ".join(f'{{"name": "E{i}", "type": "thing"}}' for i in range(30))
    relations = ", ".join(f'{{"source": "E{i}", "target": "F{i}", "type": "r"}}' for i in range(30))
    proposal = parse_graph_extraction(f'{{"entities": [{entities}], "relations": [{relations}]}}')
    assert len(proposal.entities) == MAX_LLM_ENTITIES
    assert len(proposal.relations) == MAX_LLM_RELATIONS
    assert proposal.entities[0].name == "E0"


async def test_llm_extractor_sends_the_prompt_and_parses_the_reply() -> None:
    provider = ScriptedProvider(['{"entities": [{"name": "Flynn", "type": "project"}]}'])
    extractor = LlmGraphExtractor(provider, max_tokens=256)
    assert await extractor.extract([]) == GraphProposal()
    proposal = await extractor.extract(
        [ChatMessage("user", "I build Flynn"), ChatMessage("assistant", "Nice")]
    )
    assert proposal.entities == (ProposedEntity("Flynn", "project"),)
    (request,) = provider.requests
    assert request.system == GRAPH_EXTRACTION_PROMPT and request.task == "extraction"
    assert request.max_tokens == 256
    assert request.messages[0].content == "User: I build Flynn\n\nAssistant: Nice"
