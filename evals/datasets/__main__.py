"""``python -m evals.datasets NAME [--out FILE]``: a recall set as JSON, for other tools (the
benchmark builds its sets itself)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evals.datasets import NAMES, build


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.datasets")
    parser.add_argument("name", choices=NAMES)
    parser.add_argument("--out", type=Path, help="write here instead of stdout")
    args = parser.parse_args()
    text = json.dumps(build(args.name), indent=1, ensure_ascii=False) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
