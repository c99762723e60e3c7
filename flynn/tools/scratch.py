"""The person's scratchpad, their file ``SCRATCH.md``: notes for work in progress that the
model reads and rewrites (``scratch_read``, ``scratch_write``)."""

from __future__ import annotations

from pydantic import Field

from flynn.errors import FileBusy, UnreadableFile
from flynn.people.store import SCRATCH_FILE, update_file
from flynn.tools.base import Arguments, ToolContext, ToolError, TypedTool

MAX_SCRATCH_CHARS = 20_000


class ScratchReadArguments(Arguments):
    pass


class ScratchRead(TypedTool[ScratchReadArguments]):
    name = "scratch_read"
    description = "Read the person's scratchpad (notes for work in progress)."
    arguments = ScratchReadArguments

    async def run(self, args: ScratchReadArguments, context: ToolContext) -> str:
        text = _read(context).strip()
        return text or "The scratchpad is empty."


class ScratchWriteArguments(Arguments):
    text: str = Field(max_length=MAX_SCRATCH_CHARS, description="What to write.")
    append: bool = Field(
        default=False, description="Add to the end instead of replacing the whole pad."
    )


class ScratchWrite(TypedTool[ScratchWriteArguments]):
    name = "scratch_write"
    description = (
        "Write the person's scratchpad: replace it, or append to it. Use it for notes that "
        "should survive this conversation, such as a plan or a draft."
    )
    arguments = ScratchWriteArguments
    writes = True

    async def run(self, args: ScratchWriteArguments, context: ToolContext) -> str:
        def written(old: str) -> tuple[str, str]:
            text = args.text
            if args.append:
                old = old.rstrip("\n")
                text = f"{old}\n{text}" if old else text
            if len(text) > MAX_SCRATCH_CHARS:
                raise ToolError(
                    f"the scratchpad would hold {len(text)} characters; the limit is "
                    f"{MAX_SCRATCH_CHARS}: replace it with a shorter version"
                )
            return text.rstrip("\n") + "\n", f"Scratchpad saved ({len(text)} characters)."

        if not args.append:
            text, answer = written("")
            context.person_files().write(context.namespace, SCRATCH_FILE, text)
            return answer
        # Appended over the pad as read, again over a fresh read when another worker wrote it
        # meanwhile: its note is kept.
        try:
            return update_file(context.person_files(), context.namespace, SCRATCH_FILE, written)
        except (UnreadableFile, FileBusy) as exc:
            raise ToolError(str(exc)) from None


def _read(context: ToolContext) -> str:
    try:
        return context.person_files().read(context.namespace, SCRATCH_FILE)
    except UnreadableFile as exc:
        raise ToolError(str(exc)) from None
