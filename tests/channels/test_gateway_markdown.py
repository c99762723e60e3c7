"""Markdown for the web page: what a model writes is rendered, and no markup of its own (raw HTML,
event handlers, script URLs, images from elsewhere) ever comes out live."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from flynn.channels.gateway.markdown import SafeMarkdown

ALLOWED_TAGS = {
    "p", "br", "strong", "em", "s", "code", "pre", "a", "ul", "ol", "li", "blockquote", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


class Tags(HTMLParser):
    """Every start tag and its attributes, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    parser.close()
    return parser.found


@pytest.fixture(scope="module")
def markdown() -> SafeMarkdown:
    return SafeMarkdown()


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "before <b onmouseover=alert(1)>bold</b> after",
        "[x](javascript:alert(1))",
        "[x](JavaScript:alert(1))",
        "[x](&#106;avascript:alert(1))",
        "[x](java\tscript:alert(1))",
        "<javascript:alert(1)>",
        "[x](vbscript:msgbox(1))",
        "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        "![pixel](https://tracker.example/p.gif)",
        "![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
        '[ok](https://example.com "t" onclick="alert(1)")',
        "<iframe src=https://example.com></iframe>",
        "```html\n<script>alert(1)</script>\n```",
        "`<img src=x onerror=alert(1)>`",
        "| a | <b>b</b> |\n|---|---|\n| <script>x</script> | [y](javascript:z) |",
    ],
)
def test_unsafe_markup_never_becomes_live(markdown: SafeMarkdown, text: str) -> None:
    html = markdown.render(text)
    for tag, attrs in tags(html):
        assert tag in ALLOWED_TAGS, html
        for name, value in attrs.items():
            assert not name.startswith("on"), html
            if name == "href":
                assert value is not None and value.startswith(("https:", "http:", "mailto:"))
    assert "<script" not in html and "<img" not in html and "<iframe" not in html


def test_script_tags_stay_visible_as_text(markdown: SafeMarkdown) -> None:
    assert markdown.render("<script>alert(1)</script>") == (
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )
    assert markdown.render("[x](javascript:alert(1))") == "<p>[x](javascript:alert(1))</p>\n"


def test_everyday_markdown_is_rendered(markdown: SafeMarkdown) -> None:
    html = markdown.render(
        "## Plan\n**Three** things,\n*quickly*:\n\n1. `flynn run`\n2. ~~nothing~~\n\n"
        "```sh\nmake test\n```\n\n| day | what |\n|---|---|\n| Fri | cut over |"
    )
    assert [tag for tag, _ in tags(html)] == [
        "h2", "p", "strong", "br", "em", "ol", "li", "code", "li", "s", "pre", "code",
        "table", "thead", "tr", "th", "th", "tbody", "tr", "td", "td",
    ]  # fmt: skip
    assert '<code class="language-sh">make test\n</code>' in html


def test_links_open_apart_from_the_page(markdown: SafeMarkdown) -> None:
    assert markdown.render("[docs](https://example.com/a?b=1&c=2)") == (
        '<p><a href="https://example.com/a?b=1&amp;c=2" target="_blank" '
        'rel="noopener noreferrer nofollow">docs</a></p>\n'
    )
    assert 'href="mailto:ana@example.com"' in markdown.render("<mailto:ana@example.com>")
    # A relative link would point into the gateway itself.
    assert "<a" not in markdown.render("[home](/)")
