"""Converts bench/datasets/src/handwritten.txt into bench/datasets/handwritten.json.

    python bench/make_handwritten.py

Source format: "= ID" starts a conversation, "@ SESSION TIME" a session, "Speaker: text" a turn,
"? CATEGORY | question | SESSION:N ..." a question citing the N-th turn (1-based) of a session.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent / "datasets"
SOURCE = HERE / "src" / "handwritten.txt"
OUT = HERE / "handwritten.json"


def convert(text: str) -> dict[str, list[dict[str, object]]]:
    conversations: list[dict[str, object]] = []
    questions: list[dict[str, object]] = []
    sessions: list[dict[str, object]] = []
    turns: list[dict[str, str]] = []
    counts: dict[str, int] = {}
    conversation = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("= "):
            conversation = line[2:].strip()
            sessions = []
            counts = {}
            conversations.append({"id": conversation, "sessions": sessions})
        elif line.startswith("@ "):
            session, time = line[2:].split()
            turns = []
            sessions.append({"id": session, "time": time, "turns": turns})
            counts[session] = 0
        elif line.startswith("? "):
            category, question, refs = (part.strip() for part in line[2:].split("|"))
            evidence = []
            for ref in refs.split():
                session, index = ref.split(":")
                if not 1 <= int(index) <= counts.get(session, 0):
                    raise SystemExit(f"line {number}: no turn {ref} in {conversation}")
                evidence.append(f"{session}t{index}")
            questions.append(
                {
                    "conversation": conversation,
                    "question": question,
                    "evidence": evidence,
                    "category": category,
                }
            )
        else:
            speaker, _, said = line.partition(": ")
            session = str(sessions[-1]["id"])
            counts[session] += 1
            turns.append({"id": f"{session}t{counts[session]}", "speaker": speaker, "text": said})
    return {"conversations": conversations, "questions": questions}


def main() -> None:
    data = convert(SOURCE.read_text(encoding="utf-8"))
    OUT.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])  # type: ignore[attr-defined]
    print(f"wrote {OUT}: {turns} turns, {len(data['questions'])} questions")


if __name__ == "__main__":
    main()
