"""The model's everyday Markdown rendered as Telegram HTML, with everything else escaped.

Every tag this module writes is opened and closed within one match, so the output is always
well-formed; Markdown it does not understand stays as literal (escaped) text.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"^\s*```\s*([\w+#.-]*)\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(?=\S)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")

# Alternatives are tried in order at each position; the first that matches wins. ``__bold__`` is
# left out on purpose: models write it rarely, and Python's ``__init__`` far more often.
_INLINE = re.compile(
    r"(?P<tick>`+)(?P<code>.+?)(?P=tick)"
    r"|\[(?P<label>[^\]\n]+)\]\((?P<url>(?:https?://|mailto:|tg://)[^\s)]+)\)"
    r"|\*\*(?P<bold>\S(?:.*?\S)?)\*\*"
    r"|~~(?P<strike>\S(?:.*?\S)?)~~"
    r"|(?<![\w*])\*(?P<italic>[^\s*](?:[^*\n]*?[^\s*])?)\*(?![\w*])"
    r"|(?<!\w)_(?P<italic2>[^\s_](?:[^_\n]*?[^\s_])?)_(?!\w)"
)


def render_html(markdown: str) -> str:
    """``markdown`` as Telegram HTML (``parse_mode="HTML"``): bold, italic, strikethrough, inline
    code, fenced code blocks with their language, links, and headings shown bold."""
    out: list[str] = []
    code: list[str] | None = None
    language = ""
    for line in markdown.split("\n"):
        fence = _FENCE.match(line)
        if code is None:
            if fence:
                code, language = [], fence.group(1)
            else:
                out.append(_render_line(line))
        elif fence and not fence.group(1):
            out.append(_render_code(code, language))
            code = None
        else:
            code.append(line)
    if code is not None:
        # An unclosed fence: the rest is still code, as a Markdown viewer would show it.
        out.append(_render_code(code, language))
    return "\n".join(out)


def visible_length(rendered: str) -> int:
    """What Telegram counts against its limit: UTF-16 units of the text without tags."""
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    return len(text.encode("utf-16-le")) // 2


def _render_code(lines: list[str], language: str) -> str:
    body = html.escape("\n".join(lines), quote=False)
    if language:
        return f'<pre><code class="language-{html.escape(language)}">{body}</code></pre>'
    return f"<pre>{body}</pre>"


def _render_line(line: str) -> str:
    heading = _HEADING.match(line)
    if heading:
        return f"<b>{_render_inline(heading.group(1))}</b>"
    if _RULE.match(line):
        return "———"
    return _render_inline(_BULLET.sub(r"\1• ", line))


def _render_inline(text: str, *, in_link: bool = False) -> str:
    out: list[str] = []
    position = 0
    for match in _INLINE.finditer(text):
        kind = match.lastgroup
        # Telegram refuses code and links inside a link's text; keep those literal there.
        if in_link and kind in ("code", "url"):
            continue
        out.append(html.escape(text[position : match.start()], quote=False))
        position = match.end()
        out.append(_render_match(match, in_link=in_link))
    out.append(html.escape(text[position:], quote=False))
    return "".join(out)


def _render_match(match: re.Match[str], *, in_link: bool) -> str:
    groups = match.groupdict()
    if groups["code"] is not None:
        return f"<code>{html.escape(groups['code'], quote=False)}</code>"
    if groups["url"] is not None:
        label = _render_inline(groups["label"], in_link=True)
        return f'<a href="{html.escape(groups["url"], quote=True)}">{label}</a>'
    for name, tag in (("bold", "b"), ("strike", "s"), ("italic", "i")):
        if groups[name] is not None:
            return f"<{tag}>{_render_inline(groups[name], in_link=in_link)}</{tag}>"
    return f"<i>{_render_inline(groups['italic2'], in_link=in_link)}</i>"
