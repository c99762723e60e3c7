"""Markdown to Telegram HTML: what is rendered, and that everything else is escaped."""

from __future__ import annotations

import pytest

from flynn.channels.telegram_html import render_html, visible_length


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**bold** and **more bold**", "<b>bold</b> and <b>more bold</b>"),
        ("*it* and _it_", "<i>it</i> and <i>it</i>"),
        ("~~gone~~", "<s>gone</s>"),
        ("`a < b`", "<code>a &lt; b</code>"),
        ("``a ` b``", "<code>a ` b</code>"),
        ("# Title", "<b>Title</b>"),
        ("### Step **two** ###", "<b>Step <b>two</b></b>"),
        ("[docs](https://x.dev/?a=1&b=2)", '<a href="https://x.dev/?a=1&amp;b=2">docs</a>'),
        ("[**bold** `code`](https://x.dev)", '<a href="https://x.dev"><b>bold</b> `code`</a>'),
        ("[no](javascript:alert(1))", "[no](javascript:alert(1))"),
        ("- one\n* two", "• one\n• two"),
        ("---", "———"),
    ],
)
def test_markdown_is_rendered(markdown: str, expected: str) -> None:
    assert render_html(markdown) == expected


@pytest.mark.parametrize(
    "literal",
    [
        "snake_case_name and __init__ stay",
        "2*3*4 = 24",
        "**unclosed bold",
        "a * b * c",
        "price: $5 * 3",
    ],
)
def test_stray_markers_stay_literal(literal: str) -> None:
    assert render_html(literal) == literal


def test_html_special_characters_are_escaped() -> None:
    assert render_html("<script>alert('x') & \"y\"</script>") == (
        "&lt;script&gt;alert('x') &amp; \"y\"&lt;/script&gt;"
    )


def test_fenced_code_keeps_its_language_and_is_not_formatted() -> None:
    markdown = "Run:\n\n```python\nif a < b and **kw:\n    pass\n```\n\nDone."
    assert render_html(markdown) == (
        "Run:\n\n"
        '<pre><code class="language-python">if a &lt; b and **kw:\n    pass</code></pre>\n\n'
        "Done."
    )


def test_an_unclosed_fence_is_code_to_the_end() -> None:
    assert render_html("```\n<tag>") == "<pre>&lt;tag&gt;</pre>"


def test_visible_length_counts_utf16_without_tags() -> None:
    assert visible_length("<b>🎉</b> &amp;") == 4
