"""Shared by the dataset builders written as labelled chat logs (``make_final.py``,
``make_fresh.py``): parse the sources and write the dataset JSON, with its checks.

Source format: `== 2023-05-08T13:56:00` starts a session; a turn is `X| text` or
`X#label| text` (X: one-letter speaker code, label: a name questions can cite).
Turn ids are s<session>t<turn>, counted in order. Stdlib only.
"""

import json
import re

SESSION_RE = re.compile(r"^==\s*(\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?)\s*$")
TURN_RE = re.compile(r"^([A-Z])(?:#([\w-]+))?\|\s*(.+)$")


def parse(path, speakers):
    sessions, labels = [], {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        m = SESSION_RE.match(line)
        if m:
            sessions.append({"id": f"s{len(sessions) + 1}", "time": m.group(1), "turns": []})
            continue
        m = TURN_RE.match(line)
        if not m or not sessions:
            raise SystemExit(f"{path.name}:{n}: cannot parse: {line!r}")
        code, label, text = m.groups()
        if code not in speakers:
            raise SystemExit(f"{path.name}:{n}: unknown speaker {code!r}")
        s = sessions[-1]
        tid = f"{s['id']}t{len(s['turns']) + 1}"
        s["turns"].append({"id": tid, "speaker": speakers[code], "text": text})
        if label:
            if label in labels:
                raise SystemExit(f"{path.name}:{n}: duplicate label {label!r}")
            labels[label] = tid
    return sessions, labels


def build(conversations_spec, questions_spec, src, out):
    """Writes ``out`` from the sources in ``src``: ``conversations_spec`` is (id, file,
    speakers by code) and ``questions_spec`` (conversation, category, question, labels)."""
    conversations, labels = [], {}
    for cid, fname, speakers in conversations_spec:
        sessions, labels[cid] = parse(src / fname, speakers)
        conversations.append({"id": cid, "sessions": sessions})
    questions, seen = [], set()
    for cid, category, question, evidence in questions_spec:
        if (cid, question) in seen:
            raise SystemExit(f"duplicate question: {question}")
        seen.add((cid, question))
        missing = [e for e in evidence if e not in labels[cid]]
        if missing:
            raise SystemExit(f"{cid}: unknown labels {missing} in {question!r}")
        questions.append(
            {
                "conversation": cid,
                "question": question,
                "evidence": [labels[cid][e] for e in evidence],
                "category": category,
            }
        )
    out.write_text(
        json.dumps(
            {"conversations": conversations, "questions": questions}, indent=1, ensure_ascii=False
        )
        + "\n",
        encoding="utf-8",
    )
    n_sessions = sum(len(c["sessions"]) for c in conversations)
    n_turns = sum(len(s["turns"]) for c in conversations for s in c["sessions"])
    print(f"wrote {out}: {n_sessions} sessions, {n_turns} turns, {len(questions)} questions")
