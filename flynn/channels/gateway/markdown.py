"""The model's Markdown as HTML for the web page: CommonMark by markdown-it-py with raw HTML off,
links only to http(s) and mailto, and no images, so nothing in a reply becomes live markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

_LINK_SCHEMES = ("http:", "https:", "mailto:")


class SafeMarkdown:
    """Renders Markdown for the web page, whose CSP is the second line of defence.

    The text is escaped (``html`` off: ``<script>`` stays text), a link whose target is not
    http(s) or mailto stays literal text (``[x](javascript:alert(1))``), and images stay text
    too: the page may load nothing from a host a reply names. Single newlines are line breaks,
    as people write chat. Links open in a new tab, without a referrer or a handle on the page.
    """

    def __init__(self) -> None:
        md = MarkdownIt("commonmark", {"html": False, "breaks": True})
        md.enable(["table", "strikethrough"])
        md.disable("image")
        md.validateLink = _is_safe_link  # type: ignore[method-assign]
        md.add_render_rule("link_open", _link_open)
        self._md = md

    def render(self, text: str) -> str:
        """``text`` as an HTML fragment (block elements: ``<p>``, ``<pre>``, lists, tables)."""
        html: str = self._md.render(text)
        return html


def _is_safe_link(url: str) -> bool:
    """markdown-it asks with the normalised URL; anything without one of our schemes is
    refused, relative links too (they would point into the gateway)."""
    return url.strip().lower().startswith(_LINK_SCHEMES)


def _link_open(
    self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType
) -> str:
    token = tokens[idx]
    token.attrSet("target", "_blank")
    token.attrSet("rel", "noopener noreferrer nofollow")
    rendered: str = self.renderToken(tokens, idx, options, env)
    return rendered
