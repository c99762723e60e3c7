"""``MemoryView`` (the memory page's reads) directly over SQLite: the map from embeddings when
they are on (each fact embedded once, words when the model fails), caps said on the page, a
person's files as Flynn reads them, expired working memory shown as such."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from person_files_between import WriterBetween

from flynn import memory_view as view_module
from flynn.errors import FileChanged
from flynn.identity import Identity
from flynn.learning.fact_relations import FactRelations
from flynn.memory.browse import SqliteMemoryBrowser
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.working import WorkingMemory, render_working_memory
from flynn.memory_view import Embeddings, MemoryView
from flynn.people.files import DirectoryPersonFiles
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule

NOW = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
TOPICS = ("tea", "postgres", "porto")


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[SqliteMemory]:
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA, FactRelations) as opened:
        yield opened


def owner_view(memory: SqliteMemory, data_dir: Path, **options: Any) -> MemoryView:
    return MemoryView(
        memory,
        SqliteMemoryBrowser(memory.db),
        Identity(user_namespace="user", users={}),
        files=DirectoryPersonFiles(data_dir),
        clock=lambda: NOW,
        **options,
    )


def observe(memory: SqliteMemory, *texts: str) -> None:
    for text in texts:
        memory.facts.add(NewFact("user/facts", "observation", text), now=NOW)


class TopicEmbedder:
    """Embeds a text as the topics it names (one axis each), and counts what it was asked."""

    model = "topic-test"
    ready = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        np = pytest.importorskip("numpy")
        self.asked.extend(texts)
        return np.array(
            [[1.0 if topic in text else 0.0 for topic in TOPICS] for text in texts],
            dtype=np.float32,
        )


async def test_the_map_uses_embeddings_and_embeds_each_fact_once(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    pytest.importorskip("numpy")
    embedder = TopicEmbedder()
    view = owner_view(memory, tmp_path, embeddings=Embeddings(embedder.model, embedder.embed))
    observe(memory, "likes tea", "drinks tea daily", "moving to postgres", "visits porto")
    drawn = await view.map("laptop")
    assert drawn["method"] == "embeddings" and drawn["model"] == "topic-test"
    points = {point["text"]: (point["x"], point["y"]) for point in drawn["points"]}
    assert points["likes tea"] == points["drinks tea daily"]  # the same meaning, one place
    assert points["likes tea"] != points["visits porto"]
    assert len(embedder.asked) == 4

    observe(memory, "postgres cut-over")
    again = await view.map("laptop")
    assert len(again["points"]) == 5
    assert embedder.asked[4:] == ["postgres cut-over"]


async def test_a_failing_model_leaves_the_map_to_words(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    def broken(texts: Sequence[str]) -> Any:
        raise RuntimeError("the model file is damaged")

    view = owner_view(memory, tmp_path, embeddings=Embeddings("broken", broken))
    observe(memory, "likes tea", "moving to postgres")
    drawn = await view.map("laptop")
    assert drawn["method"] == "tfidf" and drawn["model"] is None
    assert len(drawn["points"]) == 2


async def test_lists_are_capped_and_say_so(
    memory: SqliteMemory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(view_module, "FACTS_SHOWN", 3)
    for number in range(5):
        memory.facts.add(
            NewFact("user/facts", "observation", f"fact number {number}"),
            now=NOW + timedelta(minutes=number),
        )
    view = owner_view(memory, tmp_path)
    shown = await view.overview("laptop")
    assert [fact["value"] for fact in shown["facts"]] == [
        "fact number 4",
        "fact number 3",
        "fact number 2",
    ]
    assert shown["facts_total"] == 5 and shown["facts_limit"] == 3
    drawn = await view.map("laptop")
    assert drawn["total"] == 5 and len(drawn["points"]) == 3


async def test_files_as_flynn_reads_them_and_expired_working_memory(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / "USER.md").write_text("<!-- guidance -->\n# About me\n- Lisbon\n")
    (folder / "MEMORY_MID.md").write_text("<!-- only guidance -->\n")
    (folder / "TASKS.json").write_text("not json")
    working = WorkingMemory("- moving billing", NOW - timedelta(days=20), NOW - timedelta(days=6))
    memory.documents.replace("user/working", render_working_memory(working), now=NOW)
    shown = await owner_view(memory, tmp_path).overview("laptop")
    files = {file["name"]: file for file in shown["files"]}
    assert files["USER.md"]["text"] == "# About me\n- Lisbon"
    assert files["MEMORY_MID.md"] == {
        "name": "MEMORY_MID.md",
        "exists": True,
        "text": "",
        "cut": False,
        "guidance_only": True,
    }
    assert files["MEMORY_LONG.md"]["exists"] is False
    assert shown["tasks"]["error"].startswith("TASKS.json is not valid JSON")
    assert shown["working"] == {
        "content": "- moving billing",
        "updated_at": "2026-10-31T09:00:00Z",
        "expires_at": "2026-11-14T09:00:00Z",
        "expired": True,
    }


async def test_reminders_show_the_persons_own_numbers(memory: SqliteMemory, tmp_path: Path) -> None:
    """The page lists reminders by the number ``/reminders cancel N`` takes, not the schedule's
    job id (another person's job comes first here)."""
    schedule = SqliteSchedule(memory.db)
    for namespace, text in (("users/bob", "water plants"), ("user", "call the dentist")):
        schedule.add(
            namespace=namespace,
            kind="reminder",
            text=text,
            at=NOW + timedelta(hours=2),
            repeat=None,
            timezone="UTC",
            target=None,
            now=NOW,
        )
    shown = await owner_view(memory, tmp_path, schedule=schedule).overview("laptop")
    reminders = shown["reminders"]
    assert isinstance(reminders, dict)
    (job,) = reminders["items"]
    assert job["text"] == "call the dentist"
    assert job["number"] == 1 and job["id"] == 2


async def opened_user_md(
    memory: SqliteMemory, tmp_path: Path
) -> tuple[DirectoryPersonFiles, MemoryView, dict[str, object]]:
    """The owner's USER.md holding ``- Name: Ana``, its view, and the page's ``file`` of it."""
    files = DirectoryPersonFiles(tmp_path / "data")
    files.write("user", "USER.md", "- Name: Ana\n")
    view = owner_view(memory, tmp_path / "data")
    return files, view, await view.file("page", "USER.md")


async def test_a_save_from_a_file_that_changed_since_writes_nothing(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    files, view, opened = await opened_user_md(memory, tmp_path)
    # While the page's editor is open, a chat's turn writes the file (the model noted a fact).
    files.write("user", "USER.md", "- Name: Ana\n- Allergic to penicillin\n")

    with pytest.raises(FileChanged) as refused:
        await view.save_file("page", "USER.md", "- Name: Ana Lima\n", str(opened["base"]))

    assert files.read("user", "USER.md") == "- Name: Ana\n- Allergic to penicillin\n"
    assert refused.value.text == "- Name: Ana\n- Allergic to penicillin\n"
    assert refused.value.base == (await view.file("page", "USER.md"))["base"] != opened["base"]


async def test_a_save_with_another_writer_between_its_check_and_its_write_writes_nothing(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    other = DirectoryPersonFiles(tmp_path / "data")  # another process on the same folder
    other.write("user", "USER.md", "- Name: Ana\n")
    files = WriterBetween(DirectoryPersonFiles(tmp_path / "data"), "USER.md")
    view = MemoryView(
        memory,
        SqliteMemoryBrowser(memory.db),
        Identity(user_namespace="user", users={}),
        files=files,
        clock=lambda: NOW,
    )
    opened = await view.file("page", "USER.md")
    # The save reads the file and finds the text the edit started from; before it writes,
    # the other process writes the file.
    files.arm(lambda: other.write("user", "USER.md", "- Name: Ana\n- Allergic to penicillin\n"))

    with pytest.raises(FileChanged) as refused:
        await view.save_file("page", "USER.md", "- Name: Ana Lima\n", str(opened["base"]))

    assert files.ran
    assert other.read("user", "USER.md") == "- Name: Ana\n- Allergic to penicillin\n"
    assert refused.value.text == "- Name: Ana\n- Allergic to penicillin\n"


async def test_a_save_from_the_current_text_or_without_a_base_is_written(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    files, view, opened = await opened_user_md(memory, tmp_path)

    saved = await view.save_file("page", "USER.md", "- Name: Ana Lima\n", str(opened["base"]))
    assert files.read("user", "USER.md") == "- Name: Ana Lima\n"
    # The answer's base is the saved text's: a second save from it is written too.
    await view.save_file("page", "USER.md", "- Name: Ana L.\n", str(saved["base"]))
    assert files.read("user", "USER.md") == "- Name: Ana L.\n"
    # Without a base (an old page, a script), a save replaces whatever the file holds.
    files.write("user", "USER.md", "- Name: Ana\n- Allergic to penicillin\n")
    await view.save_file("page", "USER.md", "- Name: Ana Lima\n")
    assert files.read("user", "USER.md") == "- Name: Ana Lima\n"


async def test_a_save_sent_again_after_it_landed_is_answered_as_saved(
    memory: SqliteMemory, tmp_path: Path
) -> None:
    files, view, opened = await opened_user_md(memory, tmp_path)
    key = "sk-ant-api03-Zq8wX2vBn5mK1pL7rT4yU9iO3aS6dF0gH2jK"
    typed = f"- Name: Ana Lima\n- key {key}\n"
    first = await view.save_file("page", "USER.md", typed, str(opened["base"]))
    # The connection dropped before the answer came: the page, told to try again, sends the
    # same save from the same base. The file holds it already (its credential redacted).
    again = await view.save_file("page", "USER.md", typed, str(opened["base"]))

    assert again == first and again["redacted"] is True
    assert files.read("user", "USER.md") == first["text"]
    # Another text from that base is still refused.
    with pytest.raises(FileChanged):
        await view.save_file("page", "USER.md", "- Name: Ana L.\n", str(opened["base"]))
