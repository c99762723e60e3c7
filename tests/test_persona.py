from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.people.files import write_person_templates
from flynn.persona import (
    DEFAULT_IDENTITY,
    OFF_THE_RECORD_LINE,
    PERSON_FILES,
    Persona,
    files_for_tier,
    persona_directory,
    system_block,
    write_persona_templates,
)

ALL_FILES = [
    "IDENTITY.md",
    "SOUL.md",
    "PROTOCOLS.md",
    "USER.md",
    "MEMORY_SHORT.md",
    "MEMORY_MID.md",
    "REMINDERS.md",
    "MEMORY_LONG.md",
    "CONTEXT_TIERS.md",
    "SCRATCH.md",
    "TASKS.json",
]


def _write_all(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name in ALL_FILES:
        body = '[{"task": "x"}]' if name.endswith(".json") else f"content of {name}"
        (directory / name).write_text(body, encoding="utf-8")


def _headings(text: str) -> list[str]:
    return [line[4:-4] for line in text.splitlines() if line.startswith("--- ")]


def _own() -> dict[str, str]:
    """A person's files, as ``PersonalFiles`` hands them to the persona."""
    return {name: f"own {name}" for name in PERSON_FILES}


@pytest.mark.parametrize(("tier", "count"), [(1, 1), (2, 7), (3, 9), (4, 11)])
def test_each_tier_loads_its_files_in_order(tmp_path: Path, tier: int, count: int) -> None:
    _write_all(tmp_path)
    assert _headings(Persona(tmp_path, tier).render(_own())) == ALL_FILES[:count]
    assert list(files_for_tier(tier)) == ALL_FILES[:count]


def test_person_files_in_the_shared_persona_folder_are_never_read(tmp_path: Path) -> None:
    """USER.md or MEMORY_*.md left in the persona folder (an older Flynn kept them there)
    would reach every person's prompt: only the person's own copies are used (DESIGN 15)."""
    _write_all(tmp_path)
    persona = Persona(tmp_path, 4)
    alone = persona.render()
    assert _headings(alone) == ["IDENTITY.md", "SOUL.md", "PROTOCOLS.md", "CONTEXT_TIERS.md"]
    with_own = persona.render(_own())
    assert "own USER.md" in with_own
    assert "content of USER.md" not in with_own
    assert "content of MEMORY_SHORT.md" not in with_own


def test_sections_carry_their_content(tmp_path: Path) -> None:
    _write_all(tmp_path)
    text = Persona(tmp_path, 2).render()
    assert text.startswith("--- IDENTITY.md ---\ncontent of IDENTITY.md\n\n--- SOUL.md ---\n")


def test_tier_out_of_range_is_refused(tmp_path: Path) -> None:
    for tier in (0, 5):
        with pytest.raises(ValueError, match="tier"):
            Persona(tmp_path, tier)


def test_missing_directory_falls_back_to_the_default_identity(tmp_path: Path) -> None:
    text = Persona(tmp_path / "absent", 4).render()
    assert text == f"--- Identity ---\n{DEFAULT_IDENTITY}"
    assert "Flynn" in text
    assert "trust the current message" in text


def test_missing_identity_keeps_the_other_files(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("Be kind.", encoding="utf-8")
    text = Persona(tmp_path, 2).render()
    assert _headings(text) == ["Identity", "SOUL.md"]
    assert DEFAULT_IDENTITY in text


def test_absent_empty_and_comment_only_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text("I am Inara.", encoding="utf-8")
    (tmp_path / "SOUL.md").write_text("  \n\n", encoding="utf-8")
    (tmp_path / "USER.md").write_text("<!-- fill me in -->\n", encoding="utf-8")
    (tmp_path / "TASKS.json").write_text("[ ]\n", encoding="utf-8")
    assert _headings(Persona(tmp_path, 4).render()) == ["IDENTITY.md"]


def test_comments_are_stripped_but_text_kept(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text(
        "<!--\nguidance\n-->\n# Identity\n\nI am Inara. <!-- inline --> Hello.\n", encoding="utf-8"
    )
    text = Persona(tmp_path, 1).render()
    assert "guidance" not in text
    assert "inline" not in text
    assert "# Identity\n\nI am Inara.  Hello." in text


def test_edits_are_picked_up_without_a_restart(tmp_path: Path) -> None:
    identity = tmp_path / "IDENTITY.md"
    identity.write_text("first", encoding="utf-8")
    persona = Persona(tmp_path, 2)
    assert "first" in persona.render()

    identity.write_text("second version", encoding="utf-8")
    assert "second version" in persona.render()

    # Same size, so only the modification time tells the edit apart.
    stat = identity.stat()
    identity.write_text("third  version", encoding="utf-8")
    os.utime(identity, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert "third  version" in persona.render()

    (tmp_path / "SOUL.md").write_text("new file", encoding="utf-8")
    assert "new file" in persona.render()

    identity.unlink()
    assert DEFAULT_IDENTITY in persona.render()


def test_with_a_recheck_interval_files_are_looked_at_once_per_interval(tmp_path: Path) -> None:
    identity = tmp_path / "IDENTITY.md"
    identity.write_text("first", encoding="utf-8")
    now = [100.0]
    persona = Persona(tmp_path, 2, recheck_seconds=1.0, clock=lambda: now[0])
    assert "first" in persona.render()

    identity.write_text("second version", encoding="utf-8")
    now[0] += 0.5
    assert "first" in persona.render()  # not looked at yet
    now[0] += 0.5
    assert "second version" in persona.render()
    identity.unlink()
    now[0] += 1.0
    assert DEFAULT_IDENTITY in persona.render()


def test_unchanged_files_are_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_all(tmp_path)
    persona = Persona(tmp_path, 4)
    first = persona.render()
    reads: list[Path] = []
    original = Path.read_text

    def counting_read(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting_read)
    assert persona.render() == first
    assert reads == []


def test_undecodable_file_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "IDENTITY.md").write_text("I am Inara.", encoding="utf-8")
    (tmp_path / "SOUL.md").write_bytes(b"\xff\xfe\xfa broken")
    assert _headings(Persona(tmp_path, 2).render()) == ["IDENTITY.md"]


def test_persona_directory_is_under_the_data_dir(tmp_path: Path) -> None:
    assert persona_directory(tmp_path, "inara") == tmp_path / "persona" / "inara"


def test_templates_are_written_once(tmp_path: Path) -> None:
    directory = tmp_path / "persona" / "flynn"
    written = write_persona_templates(directory)
    # HELP.md is no tier's: /help shows it.
    assert sorted(path.name for path in written) == sorted({*ALL_FILES, "HELP.md"} - PERSON_FILES)

    (directory / "SOUL.md").write_text("mine", encoding="utf-8")
    (directory / "CONTEXT_TIERS.md").unlink()
    assert write_persona_templates(directory) == [directory / "CONTEXT_TIERS.md"]
    assert (directory / "SOUL.md").read_text(encoding="utf-8") == "mine"


def test_person_templates_are_the_persons_own_files(tmp_path: Path) -> None:
    folder = tmp_path / "users" / "alice"
    written = write_person_templates(folder)
    assert sorted(path.name for path in written) == sorted(
        PERSON_FILES - {"TASKS.json", "SCRATCH.md"}  # made by the tools that write them
    )
    assert folder.stat().st_mode & 0o777 == 0o700
    (folder / "USER.md").write_text("I am Alice", encoding="utf-8")
    assert write_person_templates(folder) == []
    assert (folder / "USER.md").read_text(encoding="utf-8") == "I am Alice"


def test_the_folders_above_the_templates_are_private_whatever_the_umask(tmp_path: Path) -> None:
    # mkdir(parents=True) makes the folders above with the umask's mode: users/ was 0755.
    old = os.umask(0o022)
    try:
        write_person_templates(tmp_path / "data" / "users" / "alice")
        write_persona_templates(tmp_path / "data" / "persona" / "flynn")
    finally:
        os.umask(old)
    for folder in ("users", "users/alice", "persona", "persona/flynn"):
        assert (tmp_path / "data" / folder).stat().st_mode & 0o777 == 0o700, folder


def test_templates_render_without_their_guidance(tmp_path: Path) -> None:
    write_persona_templates(tmp_path)
    text = Persona(tmp_path, 4).render()
    assert _headings(text) == ["IDENTITY.md", "SOUL.md", "PROTOCOLS.md", "CONTEXT_TIERS.md"]
    assert DEFAULT_IDENTITY in text
    assert "<!--" not in text


FRIDAY = datetime(2026, 5, 8, 18, 34, tzinfo=UTC)


def test_system_block_matches_the_seed_shape() -> None:
    block = system_block(
        FRIDAY, timezone="America/New_York", inject_datetime=True, off_the_record=True
    )
    assert block == (
        "--- System ---\n"
        "Current date and time: Friday, 2026-05-08 at 02:34 PM EDT\n"
        "Current mode: Off The Record — this conversation is private and will not be logged or "
        "included in memory distillation"
    )


def test_system_block_date_line_only() -> None:
    block = system_block(FRIDAY, timezone="Asia/Tokyo", inject_datetime=True, off_the_record=False)
    assert block.splitlines() == [
        "--- System ---",
        "Current date and time: Saturday, 2026-05-09 at 03:34 AM JST",
    ]


def test_system_block_midnight_and_noon_use_twelve() -> None:
    midnight = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
    noon = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    assert "at 12:05 AM UTC" in system_block(
        midnight, timezone="UTC", inject_datetime=True, off_the_record=False
    )
    assert "at 12:00 PM UTC" in system_block(
        noon, timezone="UTC", inject_datetime=True, off_the_record=False
    )


def test_system_block_mode_line_only() -> None:
    block = system_block(FRIDAY, timezone=None, inject_datetime=False, off_the_record=True)
    assert block == f"--- System ---\n{OFF_THE_RECORD_LINE}"


def test_system_block_is_empty_when_nothing_to_say() -> None:
    assert system_block(FRIDAY, timezone=None, inject_datetime=False, off_the_record=False) == ""


def test_system_block_uses_local_time_without_a_timezone() -> None:
    block = system_block(FRIDAY, timezone=None, inject_datetime=True, off_the_record=False)
    local = FRIDAY.astimezone()
    assert f"{local:%Y-%m-%d}" in block
    assert f"{local:%M} " in block


def test_system_block_refuses_naive_time() -> None:
    with pytest.raises(ValueError, match="aware"):
        system_block(
            datetime(2026, 5, 9, 14, 34), timezone=None, inject_datetime=True, off_the_record=False
        )
