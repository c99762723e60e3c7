"""The one reader of the dataset sources (``src/*.txt``): labelled chat logs, and the older
handwritten format, each turned into the dataset shape ``flynn bench recall`` reads.

Labelled chat logs: ``== 2023-05-08T13:56:00`` starts a session; a turn is ``X| text`` or
``X#label| text`` (X: a one-letter speaker code, label: a name questions can cite). Turn ids are
s<session>t<turn>, counted in order.

Handwritten: ``= ID`` starts a conversation, ``@ SESSION TIME`` a session, ``Speaker: text`` a
turn, ``? CATEGORY | question | SESSION:N ...`` a question citing the N-th turn (1-based) of a
session; ``#`` starts a comment.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

SOURCES = Path(__file__).resolve().parent / "src"

SESSION_RE = re.compile(r"^==\s*(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?)\s*$")
TURN_RE = re.compile(r"^([A-Z])(?:#([\w-]+))?\|\s*(.+)$")

Json = dict[str, object]
ConversationSpec = tuple[str, str, Mapping[str, str]]
"""(conversation id, source file in ``src/``, speaker names by code)."""
QuestionSpec = tuple[str, str, str, Sequence[str]]
"""(conversation id, category, question, labels of its evidence turns)."""


class SourceError(ValueError):
    """A source file or a question table is malformed; the message names where."""


def parse_labelled(path: Path, speakers: Mapping[str, str]) -> tuple[list[Json], dict[str, str]]:
    """The sessions of one labelled chat log, and its turn ids by label."""
    sessions: list[Json] = []
    turns: list[Json] = []
    labels: dict[str, str] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if m := SESSION_RE.match(line):
            turns = []
            sessions.append({"id": f"s{len(sessions) + 1}", "time": m.group(1), "turns": turns})
            continue
        m = TURN_RE.match(line)
        if not m or not sessions:
            raise SourceError(f"{path.name}:{n}: cannot parse: {line!r}")
        code, label, text = m.groups()
        if code not in speakers:
            raise SourceError(f"{path.name}:{n}: unknown speaker {code!r}")
        tid = f"{sessions[-1]['id']}t{len(turns) + 1}"
        turns.append({"id": tid, "speaker": speakers[code], "text": text})
        if label:
            if label in labels:
                raise SourceError(f"{path.name}:{n}: duplicate label {label!r}")
            labels[label] = tid
    return sessions, labels


def labelled_dataset(
    conversations_spec: Sequence[ConversationSpec], questions_spec: Sequence[QuestionSpec]
) -> Json:
    """The dataset of labelled chat logs and questions citing their labels."""
    conversations: list[Json] = []
    labels: dict[str, dict[str, str]] = {}
    for cid, fname, speakers in conversations_spec:
        sessions, labels[cid] = parse_labelled(SOURCES / fname, speakers)
        conversations.append({"id": cid, "sessions": sessions})
    questions: list[Json] = []
    seen: set[tuple[str, str]] = set()
    for cid, category, question, evidence in questions_spec:
        if (cid, question) in seen:
            raise SourceError(f"duplicate question: {question}")
        seen.add((cid, question))
        missing = [e for e in evidence if e not in labels[cid]]
        if missing:
            raise SourceError(f"{cid}: unknown labels {missing} in {question!r}")
        questions.append(
            {
                "conversation": cid,
                "question": question,
                "evidence": [labels[cid][e] for e in evidence],
                "category": category,
            }
        )
    return {"conversations": conversations, "questions": questions}


def handwritten_dataset(path: Path) -> Json:
    """The dataset of one source in the handwritten format."""
    conversations: list[Json] = []
    questions: list[Json] = []
    sessions: list[Json] = []
    turns: list[Json] = []
    counts: dict[str, int] = {}
    conversation = ""
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
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
                    raise SourceError(f"{path.name}:{number}: no turn {ref} in {conversation}")
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
