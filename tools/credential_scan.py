"""How many texts each credential rule of ``flynn.credentials`` changes, over every turn and
question of the evals' development sets (read through ``evals.recall.load_dataset``) and every
paragraph of this repository's own prose and config (docs/, README.md, config.example.yaml,
evals/README.md, dense with the words 'password', 'token' and 'secret'): a look for false
positives at scale. Never the test sets. Run from the repository root:

    .venv/bin/python tools/credential_scan.py [--show]

``--show`` prints each changed line before and after. To scan another checkout's rules with the
same texts, put it first on the path: ``PYTHONPATH=/path/to/checkout .venv/bin/python
tools/credential_scan.py``.
"""

from __future__ import annotations

import argparse
import collections
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: another checkout's rules come first

import flynn.credentials as credentials  # noqa: E402
from evals.recall import load_dataset  # noqa: E402

DEVELOPMENT_SETS = ("handwritten", "generated", "heldout", "assistant")
PROSE = ("docs/*.md", "README.md", "config.example.yaml", "evals/README.md")
# What finds a credential besides the module's patterns (each counted when it took one).
FUNCTIONS = ("_redact_assigned", "_redact_below", "_redact_under", "_redact_block_line")


class _Watched:
    """A compiled pattern that notes the text being redacted when its ``sub`` changed it."""

    def __init__(self, name: str, pattern: re.Pattern[str], hits: set[str], current: list[str]):
        self._name, self._pattern, self._hits, self._current = name, pattern, hits, current

    def sub(self, replace: Any, text: str, *rest: Any) -> str:
        out = self._pattern.sub(replace, text, *rest)
        if out != text:
            self._hits.add(self._current[0])
        return out

    def subn(self, replace: Any, text: str, *rest: Any) -> tuple[str, int]:
        out, count = self._pattern.subn(replace, text, *rest)
        if out != text:
            self._hits.add(self._current[0])
        return out, count

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pattern, name)


def _watch_function(name: str, hits: set[str], current: list[str]) -> None:
    original: Callable[..., Any] = getattr(credentials, name)

    def watched(*args: Any, **kwargs: Any) -> Any:
        out = original(*args, **kwargs)
        found = out[1] if isinstance(out, tuple) else out
        if found:
            hits.add(current[0])
        return out

    setattr(credentials, name, watched)


def texts() -> list[tuple[str, str]]:
    """(where, text) for every text scanned."""
    found: list[tuple[str, str]] = []
    for name in DEVELOPMENT_SETS:
        dataset = load_dataset(name)
        for conversation in dataset.conversations:
            for session in conversation.sessions:
                found += [(name, turn.text) for turn in session.turns]
        found += [(name, question.question) for question in dataset.questions]
    for pattern in PROSE:
        for path in sorted(ROOT.glob(pattern)):
            found += [("prose", block) for block in path.read_text().split("\n\n") if block]
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print each changed line")
    args = parser.parse_args()
    scanned = texts()
    current = [""]
    hits: dict[str, set[str]] = collections.defaultdict(set)
    for name, value in list(vars(credentials).items()):
        if isinstance(value, re.Pattern) and name.startswith("_") and name.upper() == name:
            setattr(credentials, name, _Watched(name, value, hits[name], current))
    for name in FUNCTIONS:
        if hasattr(credentials, name):
            _watch_function(name, hits[name], current)
    changed: dict[str, tuple[str, str, str]] = {}
    for index, (where, text) in enumerate(scanned):
        current[0] = f"{where}:{index}"
        credentials._redact_remembered.cache_clear()
        credentials._redact_below_remembered.cache_clear()
        out = credentials.redact(text)[0]
        if out != text:
            changed[current[0]] = (where, text, out)
    sizes = collections.Counter(where for where, _ in scanned)
    print(f"{credentials.__file__}, REDACTION_VERSION {credentials.REDACTION_VERSION}")
    print("texts: " + ", ".join(f"{where} {count}" for where, count in sizes.items()))
    by_where = collections.Counter(where for where, _, _ in changed.values())
    print(f"changed: {len(changed)} ({', '.join(f'{w} {n}' for w, n in by_where.items())})")
    for name in sorted(name for name in hits if hits[name]):
        places = collections.Counter(key.split(":")[0] for key in hits[name])
        print(f"  {name}: {len(hits[name])} ({', '.join(f'{w} {n}' for w, n in places.items())})")
    if args.show:
        for key, (_, text, out) in changed.items():
            for before, after in zip(text.split("\n"), out.split("\n"), strict=False):
                if before != after:
                    print(f"{key}\n  - {before[:200]}\n  + {after[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
