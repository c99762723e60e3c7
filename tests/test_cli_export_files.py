"""``flynn memory export`` carries the person's own files too: what they wrote (USER.md) and what
was distilled (MEMORY_*.md), as the prompt reads them; guidance-only templates are left out."""

from __future__ import annotations

from pathlib import Path

from test_cli import flynn

from flynn.people.files import write_person_templates


def test_export_holds_the_persons_files(tmp_path: Path) -> None:
    owner = tmp_path / ".flynn" / "user"
    write_person_templates(owner)
    (owner / "USER.md").write_text("<!-- guidance -->\nAna, backend engineer\n", encoding="utf-8")
    (owner / "MEMORY_SHORT.md").write_text("- was fixing the deploy\n", encoding="utf-8")
    result = flynn("memory", "export", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "## USER.md\n\nAna, backend engineer" in result.stdout
    assert "## MEMORY_SHORT.md\n\n- was fixing the deploy" in result.stdout
    assert "MEMORY_LONG.md" not in result.stdout  # the template alone says nothing
    assert "guidance" not in result.stdout
