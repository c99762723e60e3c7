"""``flynn docs add|list|remove``: team knowledge, documents every person Flynn
knows (the owner, everyone in ``users:``) may recall, labelled as team documents."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.cli_memory import open_memory
from flynn.cli_settings import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    command_logging,
    command_settings,
    utc_now,
)
from flynn.plurals import counted

if TYPE_CHECKING:  # the commands import them when they run (flynn.cli_settings says why)
    from flynn.learning.documents import DocumentIngestor
    from flynn.memory.team import TeamDocument
    from flynn.settings import Settings
    from flynn.storage_place import Storage


def add_docs_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    docs = commands.add_parser("docs", help="team knowledge: documents everyone may recall")
    docs_commands = docs.add_subparsers(title="docs commands", metavar="ACTION")

    def docs_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = docs_commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--config", type=Path, help="YAML config file (default: $FLYNN_CONFIG)")
        return sub

    add = docs_command(
        "add",
        "add a Markdown or text file, or every such file under a folder (a changed file is "
        "replaced, an unchanged one left as it is)",
    )
    add.add_argument("path", type=Path, metavar="FILE|DIR")
    add.add_argument(
        "--title",
        help="the document's title (one file only; default: its first heading, else its file name)",
    )
    add.set_defaults(handler=_cmd_docs_add)
    listing = docs_command("list", "the team's documents: id, title, chunks, path")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=_cmd_docs_list)
    remove = docs_command("remove", "delete a document, its chunks and what only it named")
    remove.add_argument("id", type=int, help="the document's id, as `flynn docs list` shows it")
    remove.set_defaults(handler=_cmd_docs_remove)


def _cmd_docs_add(args: argparse.Namespace) -> int:
    from flynn.datadir import prepare_data_dir
    from flynn.learning.documents import DocumentError, document_files
    from flynn.storage_place import opened_storage

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    path: Path = args.path.expanduser()
    try:
        files = document_files(path, private=settings.data_dir)
    except DocumentError as exc:
        raise UsageError("FILE|DIR", str(exc)) from None
    if args.title is not None and (len(files) != 1 or not path.is_file()):
        raise UsageError("--title", "names one document: give a file, not a folder")
    prepare_data_dir(settings.data_dir)
    failed = 0
    with opened_storage(settings) as storage:
        ingestor = _ingestor(settings, storage)
        for file in files:
            try:
                added = ingestor.add(file, title=args.title)
            except DocumentError as exc:
                if len(files) == 1:
                    raise UsageError("FILE", str(exc)) from None
                print(f"flynn: skipped {file}: {exc}", file=sys.stderr)
                failed += 1
                continue
            document = added.document
            what = counted(document.chunks, "chunks") + (
                f", {counted(added.entities, 'names')} in the team graph" if added.entities else ""
            )
            print(f"{added.outcome} {document.id}. {document.title} ({what}): {document.path}")
    if failed:
        print(f"flynn: {failed} of {len(files)} files were not added", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def _ingestor(settings: Settings, storage: Storage) -> DocumentIngestor:
    from flynn.learning.documents import DocumentIngestor
    from flynn.learning.graph_extraction import RuleGraphExtractor
    from flynn.learning.graph_ingest import GraphIngestor
    from flynn.recall.embeddings import load_embedder

    memory = storage.memory
    vectors = (
        storage.vectors(load_embedder(settings.memory.embeddings_model))
        if settings.memory.embeddings
        else None
    )
    return DocumentIngestor(
        memory.team,
        GraphIngestor(memory.graph, RuleGraphExtractor()),
        vectors=vectors,
        clock=utc_now,
    )


def _cmd_docs_list(args: argparse.Namespace) -> int:
    from flynn.datadir import prepare_data_dir

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    prepare_data_dir(settings.data_dir)
    with open_memory(settings) as memory:
        documents = memory.team.documents()
    if args.json:
        print(json.dumps([_json(document) for document in documents], indent=2))
        return EXIT_OK
    if not documents:
        print("No team documents yet. Add one with: flynn docs add FILE|DIR")
        return EXIT_OK
    for document in documents:
        print(
            f"{document.id}. {document.title} ({counted(document.chunks, 'chunks')}, "
            f"{document.chars:,} characters, updated {document.updated_at:%Y-%m-%d %H:%M} UTC): "
            f"{document.path}"
        )
    return EXIT_OK


def _json(document: TeamDocument) -> dict[str, object]:
    return {
        "id": document.id,
        "title": document.title,
        "path": document.path,
        "chunks": document.chunks,
        "chars": document.chars,
        "created_at": document.created_at.isoformat(),
        "updated_at": document.updated_at.isoformat(),
    }


def _cmd_docs_remove(args: argparse.Namespace) -> int:
    from flynn.datadir import prepare_data_dir

    settings = command_settings(args)
    command_logging(settings, quiet=True)
    prepare_data_dir(settings.data_dir)
    with open_memory(settings) as memory:
        removed = memory.team.remove(args.id)
    if removed is None:
        print(f"flynn: no team document {args.id} (flynn docs list shows them)", file=sys.stderr)
        return EXIT_FAILED
    print(
        f"removed {removed.id}. {removed.title} ({counted(removed.chunks, 'chunks')}): "
        f"{removed.path}"
    )
    return EXIT_OK
