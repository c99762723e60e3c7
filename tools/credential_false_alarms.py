"""How much ordinary chat the credential rules take, and how many credentials they leave, over
hand-written corpora (t-review7): ordinary chat lines that mention passwords, codes, keys,
tokens, orders, flights, products and config snippets (``credential_corpora/ordinary_chat.txt``,
each line alone and all as one text), probes of version 3's rules and credentials in ordinary
phrasing (``credential_corpora/probes.json``). Run from the repository root:

    .venv/bin/python tools/credential_false_alarms.py [--show]

To count another checkout's rules: ``PYTHONPATH=/path/to/checkout .venv/bin/python
tools/credential_false_alarms.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: another checkout's rules come first

import flynn.credentials as credentials  # noqa: E402

CORPORA = Path(__file__).resolve().parent / "credential_corpora"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", action="store_true", help="print each change")
    show = parser.parse_args().show
    lines = [line for line in (CORPORA / "ordinary_chat.txt").read_text().split("\n") if line]
    probes = json.loads((CORPORA / "probes.json").read_text())
    alone = [line for line in lines if credentials.redact(line)[0] != line]
    whole = credentials.redact("\n".join(lines))[0].split("\n")
    changed = [(line, after) for line, after in zip(lines, whole, strict=True) if line != after]
    touched = [p for p in probes["probes"] if credentials.redact(p)[0] != p]
    missed = [c for c, secret in probes["credentials"] if secret in credentials.redact(c)[0]]
    print(f"{credentials.__file__}, REDACTION_VERSION {credentials.REDACTION_VERSION}")
    print(f"ordinary lines changed: {len(alone)} of {len(lines)} alone, {len(changed)} as one text")
    print(f"probes changed: {len(touched)} of {len(probes['probes'])}")
    print(f"credentials missed: {len(missed)} of {len(probes['credentials'])}")
    if show:
        for line, after in changed:
            print(f"  ordinary: {line!r} -> {after!r}")
        for probe in touched:
            print(f"  probe: {probe!r} -> {credentials.redact(probe)[0]!r}")
        for line in missed:
            print(f"  missed: {line!r}")


if __name__ == "__main__":
    main()
