"""``flynn memory file show|edit``: a person reads and edits their own files (USER.md, ...)
through Flynn rather than on disk, so the same command works where the files are kept in the
database the workers share (``tests/memory/test_person_files_store.py`` runs it on both places)."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

from test_cli import flynn

KEY = "sk-ant-api03-Zq8wX2vBn5mK1pL7rT4yU9iO3aS6dF0gH2jK"


def set_user_md(home: Path, text: str) -> None:
    """``flynn memory file edit USER.md --set-from -``: the owner's USER.md holds ``text``."""
    saved = flynn("memory", "file", "edit", "USER.md", "--set-from", "-", home=home, stdin=text)
    assert saved.returncode == 0, saved.stderr


def test_show_says_when_there_is_no_file_yet(tmp_path: Path) -> None:
    shown = flynn("memory", "file", "show", "USER.md", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == ""
    assert "has no USER.md yet" in shown.stderr


def test_set_from_writes_the_file_whole_and_show_prints_it(tmp_path: Path) -> None:
    source = tmp_path / "about-me.md"
    source.write_text(f"# About me\n- Name: Ana\n- staging key {KEY}\n", encoding="utf-8")
    saved = flynn("memory", "file", "edit", "USER.md", "--set-from", str(source), home=tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert "USER.md saved" in saved.stdout and "a credential in it was redacted" in saved.stdout
    assert KEY not in saved.stdout + saved.stderr
    kept = tmp_path / ".flynn" / "user" / "USER.md"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    shown = flynn("memory", "file", "show", "USER.md", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("# About me\n- Name: Ana\n- staging key ")
    assert KEY not in shown.stdout
    again = flynn(
        "memory", "file", "edit", "USER.md", "--set-from", "-", home=tmp_path, stdin=shown.stdout
    )
    assert again.returncode == 0, again.stderr
    assert "USER.md unchanged" in again.stdout


def test_edit_runs_the_editor_on_a_copy_and_writes_it_back(tmp_path: Path) -> None:
    set_user_md(tmp_path, "- Name: Ana\n")
    edited = flynn(
        "memory", "file", "edit", "USER.md", home=tmp_path, env={"EDITOR": "sed -i s/Ana/Ana_Lima/"}
    )
    assert edited.returncode == 0, edited.stderr
    assert "USER.md saved" in edited.stdout
    kept = tmp_path / ".flynn" / "user" / "USER.md"
    assert kept.read_text(encoding="utf-8") == "- Name: Ana_Lima\n"


def test_an_editor_that_fails_saves_nothing(tmp_path: Path) -> None:
    set_user_md(tmp_path, "- Name: Ana\n")
    failed = flynn(
        "memory",
        "file",
        "edit",
        "USER.md",
        home=tmp_path,
        env={"EDITOR": "sh -c 'echo half-edited > \"$0\"; exit 3'"},
    )
    assert failed.returncode == 1
    assert "the editor exited with 3; nothing saved" in failed.stderr
    assert (tmp_path / ".flynn" / "user" / "USER.md").read_text(encoding="utf-8") == "- Name: Ana\n"


def test_only_a_persons_own_file_names_are_taken(tmp_path: Path) -> None:
    refused = flynn("memory", "file", "show", "../flynn.db", home=tmp_path)
    assert refused.returncode == 2
    assert "invalid choice" in refused.stderr


def test_an_edit_is_not_saved_over_what_was_written_while_the_editor_was_open(
    tmp_path: Path,
) -> None:
    # The editor may stay open for minutes while the daemon keeps running: a task the person
    # adds in a chat meanwhile (task_add writes TASKS.json whole) must not be lost when the
    # editor's copy, read before it, is written back over it.
    tasks = '[\n  {"id": 1, "text": "buy milk", "done": false, "created_at": ""}\n]\n'
    saved = flynn(
        "memory", "file", "edit", "TASKS.json", "--set-from", "-", home=tmp_path, stdin=tasks
    )
    assert saved.returncode == 0, saved.stderr
    kept = tmp_path / ".flynn" / "user" / "TASKS.json"
    # While "editing": another process adds a task as the daemon's task_add does, then the
    # person changes their copy.
    editor = tmp_path / "editor.py"
    editor.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "from pathlib import Path\n"
        "from flynn.people.files import DirectoryPersonFiles\n"
        "from flynn.people.tasks import Task, load_tasks, save_tasks\n"
        f"files = DirectoryPersonFiles(Path({str(kept.parent.parent)!r}))\n"
        "tasks = load_tasks(files, 'user')\n"
        "save_tasks(files, 'user', [*tasks, Task(2, 'call the dentist', False, '')])\n"
        "copy = Path(sys.argv[1])\n"
        "copy.write_text(copy.read_text().replace('buy milk', 'buy oat milk'))\n",
        encoding="utf-8",
    )
    editor.chmod(0o700)
    edited = flynn(
        "memory", "file", "edit", "TASKS.json", home=tmp_path, env={"EDITOR": str(editor)}
    )
    text = kept.read_text(encoding="utf-8")
    # On main the copy was saved over it: the dentist was gone.
    assert "call the dentist" in text, edited.stdout + edited.stderr
    assert edited.returncode == 1
    assert "changed while" in edited.stderr
    assert "buy oat milk" in edited.stdout  # the person's edit is shown, not lost
