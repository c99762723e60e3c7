"""Long past turns are recalled at the passage that answers (issue 15 item 3): an assistant's
answer of many lines, asked about one of them, is cut to that line and what is around it, not to
its first lines, so the budget goes to what answers."""

from __future__ import annotations

from datetime import UTC, datetime

from flynn.memory.stores import SqliteMemory
from flynn.recall.passages import passage
from flynn.recall.recall import ITEM_MAX_TOKENS, Recall

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
ANSWER = "\n".join(
    [
        "Here is a packing list for the Lisbon trip:",
        *(
            f"{n}. Pack item number {n}, folded neatly into the blue suitcase."
            for n in range(1, 25)
        ),
        "25. For the tram, buy a Navegante card at Cais do Sodré: it covers the 28 line.",
        *(f"{n}. More ordinary packing advice, line {n}." for n in range(26, 40)),
    ]
)


def test_a_long_answer_is_cut_to_the_line_the_question_is_about(memory: SqliteMemory) -> None:
    memory.history.append(
        "gateway:laptop", "user", "user", "what should I pack?", tokens=5, now=NOW
    )
    memory.history.append("gateway:laptop", "user", "assistant", ANSWER, tokens=600, now=NOW)
    recall = Recall(memory.facts, memory.history, threshold=0.3)
    question = "which card did you say to buy for the tram?"
    recalled = recall.recall("user", question, now=NOW, budget_tokens=1500)
    said = [line for line in recalled.lines if "you said" in line]
    assert said, recalled.lines
    assert "Navegante card" in said[0]
    assert said[0].startswith("- 2026-11-25 Wed, you said: … ")
    assert len(said[0]) <= ITEM_MAX_TOKENS * 4 + 40
    items = recall.rank("user", question, now=NOW)
    head = recall.pack(items, budget_tokens=1500)  # no message to cut for: the beginning
    assert not any("Navegante" in line for line in head.lines if "you said" in line)


def test_the_passage_is_the_earliest_run_holding_the_most_words() -> None:
    text = "Alpha line about tea.\nBeta line about coffee and tea.\n" + "Filler line.\n" * 60
    cut = passage(text, {"coffee", "tea"}, max_tokens=20)
    assert cut.startswith("Alpha line about tea. Beta line about coffee and tea.")
    assert cut.endswith(" …")
    assert passage("short text", {"x"}, max_tokens=20) == "short text"
