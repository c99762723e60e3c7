"""What in a message the person says about themselves, and what they only pass along.

Text someone quotes, forwards, or asks to have translated, summarised or rewritten states nothing
about them ("Translate to French: my name is Pierre" does not make them Pierre), and a message
that tries to give the assistant new orders ("ignore previous instructions") teaches nothing at
all. ``own_words`` keeps only the person's own words for learning; ``is_injection`` (from
``flynn.orders``) flags the orders. Chat itself is unchanged: the model still sees the whole
message.
"""

from __future__ import annotations

import re

from flynn.language import folded, holds_any, without_code, without_quoted_lines
from flynn.orders import is_injection

__all__ = ["FORWARDED_MARK", "is_injection", "mark_forwarded", "own_words"]

FORWARDED_MARK = "[Forwarded message, not written by the person]"
"""What a forwarded message's stored text starts with, so the model and learning know."""

# A request to work on a text: everything after it is the material, not a statement.
_MATERIAL_REQUEST = re.compile(
    r"(?:^|[.!?\n]\s*)(?:(?:please|pls|can you|could you|would you|kindly)\s+)?"
    r"(?:translate|summari[sz]e|rewrite|rephrase|paraphrase|proofread|correct|fix|polish|edit"
    r"|shorten|simplify|explain|reply to|respond to|answer|draft a reply to|check the grammar of"
    r"|turn|convert|format)\b[^:\n]{0,80}(?::|\n)",
    re.IGNORECASE,
)
# A request that only ever asks for work on a text, opening a sentence, in the seven languages:
# the rest is the material, colon or not ("Translate to French my name is Pierre", "Übersetze
# ins Englische: Ich heiße ...", "can you summarize I moved to ...").
_TEXT_WORK = re.compile(
    r"(?:^|[.!?\n]\s*)(?:(?:please|pls|can you|could you|would you|kindly|bitte|por favor"
    r"|per favore|s'il te pla[iî]t|alsjeblieft)\s+)?"
    r"(?:translate|summari[sz]e|rewrite|rephrase|paraphrase|proofread"
    r"|[üu]bersetze?n?|fasse\s+\S+\s+zusammen"
    r"|tradui[st]|traduire|traduisez|résumez?|reformulez?"
    r"|trad[uú]ce(?:me|lo)?|traduzca|traducir|resúme(?:me|lo)?|resumir"
    r"|traduci|tradurre|traducimi|riassumi|riscrivi"
    r"|traduza|traduzir|traduz|resuma|reescreva"
    r"|vertaal|vertalen|vat\s+\S+\s+samen)\b",
    re.IGNORECASE,
)
# A pasted forward or a quoted author: "Forwarded from Bob:", "---------- Forwarded message",
# "Bob wrote:", "On Mon, Bob <b@x> wrote:", "Bob texted me:", a pasted e-mail's headers ("From:"
# with "Subject:", "To:" or "Date:" below it); what follows is theirs.
_FORWARD_HEADER = re.compile(
    r"(?:^|\n)\s*(?:-{2,}\s*)?(?:forwarded\s+(?:from|message|by)\b|fwd?:|begin forwarded"
    r"|[^\n]{1,80}\bwrote:|quote:|[^\n]{1,40}\bsaid:"
    r"|[^\n]{1,40}\b(?:says|texted|messaged|emailed|e-mailed|replied|tweeted)"
    r"(?:\s+(?:me|us|to me|to us))?\s*:"
    r"|(?:from|von|de|da|van)\s*:[^\n]*\n(?:[^\n]*\n){0,3}?\s*"
    r"(?:subject|to|date|sent|betreff|an|objet|asunto|para|oggetto|assunto|onderwerp|aan)\s*:)",
    re.IGNORECASE,
)
# A quotation of a few words or more: "..." “...” «...» „...“ and '...' spanning spaces (a
# single quote only between non-letters, so "I'm at Bob's" is no quotation); a forum's or a
# page's quote markup, to its end or the text's.
_QUOTATION = re.compile(
    r"\"[^\"\n]*\s[^\"\n]*\"|“[^”\n]*\s[^”\n]*”|«[^»\n]*\s[^»\n]*»|„[^“\n]*\s[^“\n]*“"
    r"|(?<![\w'])'[^'\n]*\s[^'\n]*'(?![\w'])"
    r"|\[quote\b[^\]]*\].*?(?:\[/quote\]|\Z)|<blockquote\b[^>]*>.*?(?:</blockquote>|\Z)",
    re.IGNORECASE | re.DOTALL,
)


def mark_forwarded(text: str) -> str:
    return f"{FORWARDED_MARK}\n{text}"


def own_words(text: str) -> str:
    """The part of ``text`` that is the person's own: without forwarded or quoted material,
    code, quotations, or the text they ask to have worked on. '' when nothing is left."""
    if text.startswith(FORWARDED_MARK):
        return ""
    text = without_code(text)
    # Both end in a colon or a line break, or name a forward: a line without is not searched.
    request = _MATERIAL_REQUEST.search(text) if ":" in text or "\n" in text else None
    if request is not None:
        text = text[: request.start()]
    work = _TEXT_WORK.search(text)
    if work is not None:
        text = text[: work.start()]
    if ":" in text or holds_any(folded(text), ("forwarded",)):
        header = _FORWARD_HEADER.search(text)
        if header is not None:
            text = text[: header.start()]
    text = without_quoted_lines(text)
    text = _QUOTATION.sub(" ", text)
    return text.strip()
