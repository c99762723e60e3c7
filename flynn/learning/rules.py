"""Rule-based fact extraction from each user message: precompiled patterns, no LLM, reply path.

Rules catch only what is unambiguous whatever the phrasing around it: a name given as "my name is"
or "call me", an e-mail address, a link or path the person calls theirs or is working on, a
timezone, and "when I say X, do Y". Everything said in other ways (where someone lives or works,
who their relatives and pets are, what they like) is the extraction model's to learn: a rule per
English phrasing fails silently for anyone who says it another way or in another language.

It proposes; reconciliation decides. A missed fact is picked up by the model later, a wrong one
would be believed until corrected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from flynn.dates import parse_timezone
from flynn.language import EMAIL, SUPPOSING, call_me, negates, without_code_or_quotes
from flynn.memory.store import FactKind

EXPLICIT_CONFIDENCE = 0.9
MAX_VALUE_CHARS = 200
MAX_TRIGGER_CHARS = 100
MAX_SCANNED_CHARS = 8000
"""Long pastes (logs, documents) are not self-descriptions; only their start is scanned."""


@dataclass(frozen=True, slots=True)
class ProposedFact:
    """A fact a rule (or the model) found; ``target`` names the document family it belongs to.

    ``retracts`` marks a statement that the fact is no longer true ("I no longer live in Lisbon"):
    reconciliation retires the matching active fact instead of storing this one.
    """

    kind: FactKind
    field: str | None
    value: str
    confidence: float
    target: Literal["profile", "patterns"]
    retracts: bool = False
    inferred: bool = False
    """A guess (the model's answer said the person never stated it): stored with source
    ``inferred``, and never replacing what they said."""


_FLAGS = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# A full stop ends a sentence only before whitespace, so "example.com" and "3.5" stay whole.
_SENTENCE_END = re.compile(r"[!?\n;]|\.(?=\s|$)")
_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St)\.$")

# A new clause starts at a comma or conjunction followed by a fresh subject ("..., I'm in CET",
# "... and my name is Y"), or at a subordinating conjunction; a comma inside a list is not split.
_SUBJECT = r"(?:i|i'm|im|i am|my|call me)\b"
_CLAUSE_SPLIT = re.compile(
    rf",\s*(?=(?:(?:and|but|so|also)\s+)?{_SUBJECT}"
    r"|(?:it|it's|that|that's|this|you|thanks|thank|please|which)\b)"
    rf"|\s+(?:(?:and|but|so|also)\s+(?={_SUBJECT})|(?:because|although|though|whereas)\s+)",
    _FLAGS,
)
_QUESTION_START = re.compile(r"^\W*(?:what|who|whom|whose|where|why|how|which)\b", _FLAGS)
_WORD = re.compile(r"[\w']+")
# Words before a match that make it negated, hypothetical or someone else's claim.
_BLOCKING_WORDS = SUPPOSING
# "would" makes what follows hypothetical ("I would say my name is Bob"), except in a request
# ("I'd like you to call me Bob", "would you call me Bob").
_CONDITIONAL_WORDS = _words("would i'd")
_REQUEST_WORDS = _words("like love prefer rather appreciate you please")
# Words a name never is: what follows "call me" in "call me back", "call me when you land".
_NOT_NAMES = _words(
    """
    a an the this that these those my your his her their our its it me you him them us not no
    never so very really just also still too maybe now today tomorrow tonight later soon back
    here there home away out off up down over in on at from with for to into about of by as
    if when whenever once after before and or but then please asap again anytime sometime
    anything whatever what who how why where
    """
)

_ACTION = re.compile(
    r"^\W*(?:(?:from now on|also|and|so|btw|by the way|ok|okay|oh)\W+)*"
    r"(?:when|whenever|if)\s+i\s+say\s+(?P<trigger>[^,]{1,100}?)\s*,\s*"
    r"(?:(?:then|please|just)\s+)*(?P<action>.+)$",
    _FLAGS,
)
_I_MEAN = re.compile(r"^(?:i|you)\s+mean\s+", _FLAGS)

_NAME = re.compile(
    r"\bmy\s+name(?:\s+is|'s)\s+(?:(?:actually|really|just|now)\s+)?(?P<v>.+)", _FLAGS
)
_CALL_ME = re.compile(call_me() + r"(?P<v>.+)", _FLAGS)
# A path or URL: what "my blog is ..." or "I'm working on ..." points at.
_LOCATOR = (
    r"(?:https?://[^\s<>\"'`]+"
    r"|(?:~|\.{1,2})?/?(?:[\w@+.-]+/)+[\w@+.-]*"
    r"|[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5})"
)
_LOCATOR_END = r"(?=$|[\s,;:!?)\]])"
_EMAIL = re.compile(EMAIL)
_WORKING_ON = re.compile(
    r"\bi(?:'m|\s+am)\s+(?:(?:currently|now|still|mostly|also)\s+)?working\s+on\s+"
    rf"(?:the\s+file\s+)?(?P<v>{_LOCATOR}){_LOCATOR_END}",
    _FLAGS,
)
_STOPPED_WORKING_ON = re.compile(
    r"\bi(?:(?:'m|\s+am)\s+(?P<neg>no\s+longer|not)|\s+(?:stopped|finished|quit))\s+"
    rf"working\s+on\s+(?P<v>{_LOCATOR}){_LOCATOR_END}",
    _FLAGS,
)
_ANY_MORE_IN = re.compile(r"\bany\s*more\b|\bno\s+longer\b")
# "my blog is https://...", "my notes live at ~/notes", "my email: ana@example.com",
# "my timezone is Europe/Berlin": the value's shape, not the words, says what it is.
_MY_FIELD = re.compile(
    r"\bmy\s+(?P<f>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s*(?::\s*|\s+(?:is|'s)\s+"
    r"(?P<no>no\s+longer\s+)?(?:at\s+)?|\s+(?:lives\s+)?at\s+)(?P<v>\S+)",
    _FLAGS,
)
_LOCATOR_VALUE = re.compile(rf"(?P<v>{_LOCATOR}){_LOCATOR_END}")
_ME_AT = re.compile(
    r"\b(?:reach|e-?mail|mail|contact|ping|write\s+to|find)\s+me\s+(?:at|on|via)\s+"
    rf"(?P<v>{EMAIL})",
    _FLAGS,
)
# "I'm in UTC+2", "I am on Europe/Berlin time", "I'm in CET": an offset, an IANA name or a
# capitalised abbreviation; anything else after "I'm in" is a place or a state, not a zone.
_ZONE = (
    r"(?:utc|gmt)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?|utc|gmt"
    r"|[A-Za-z]+(?:/[A-Za-z0-9_+\-]+){1,2}|[A-Z]{2,5}"
)
_IN_TIMEZONE = re.compile(
    r"\bi(?:'m|\s+am)\s+(?:(?:currently|now|usually)\s+)?(?:in|on)\s+(?:the\s+)?"
    rf"(?P<v>{_ZONE})(?:\s+time(?:\s*zone)?)?(?=$|[\s,;.!?)])",
    _FLAGS,
)
_ZONE_VALUE = re.compile(rf"(?P<v>{_ZONE})(?=$|[\s,;.!?)])", _FLAGS)
_NAME_OF = re.compile(r"'s\s+name$")
_EMAIL_FIELDS = frozenset({"email", "email_address", "e_mail", "mail", "mail_address"})
_ZONE_FIELDS = frozenset({"timezone", "time_zone", "tz"})
_FIELD_CHARS = re.compile(r"[^a-z0-9]+")
_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame"})
# Plain str.strip sets, not regexes: a regex anchored at the end backtracks quadratically
# over a long run of these characters.
_LEADING_NOISE = " \t\r\n\"'`“”‘’([*_~-"
_TRAILING_NOISE = " \t\r\n.,;:!?…)]\"'`“”‘’*_~-"


class RuleExtractor:
    """Finds the unambiguous self-descriptions (name, e-mail, links and paths, timezone) and
    trigger -> action requests in a user message.

    Stateless and pure: ``extract`` never raises for any input text.
    """

    def extract(self, text: str) -> list[ProposedFact]:
        """Proposed facts in order of appearance, without duplicates."""
        text = text[:MAX_SCANNED_CHARS].replace("’", "'").replace("‘", "'")
        text = without_code_or_quotes(text)
        caps_free = not any(char.isupper() for char in text)
        found: list[ProposedFact] = []
        for sentence in _sentences(text):
            if sentence.endswith("?") or _QUESTION_START.match(sentence):
                continue
            action = _action(sentence)
            if action is not None:
                found.append(action)
                continue
            for clause in _CLAUSE_SPLIT.split(sentence):
                found.extend(_clause_facts(clause, caps_free=caps_free))
        return _unique(found)


def _sentences(text: str) -> list[str]:
    """Sentences with their closing punctuation, so a question is still recognisable."""
    sentences = []
    start = 0
    for end in _SENTENCE_END.finditer(text):
        stop = end.end()
        # Only the last few characters can hold an abbreviation; searching the whole growing
        # piece would be quadratic in a run of them.
        if end.group() == "." and _ABBREVIATION.search(text, max(start, stop - 6), stop):
            continue
        sentences.append(text[start:stop].strip())
        start = stop
    sentences.append(text[start:].strip())
    return [sentence for sentence in sentences if len(sentence) > 1]


def _action(sentence: str) -> ProposedFact | None:
    match = _ACTION.match(sentence)
    if match is None:
        return None
    trigger = " ".join(strip_noise(match["trigger"]).lower().split())
    action = _I_MEAN.sub("means ", strip_noise(match["action"]), count=1)
    if not trigger or not action or len(trigger) > MAX_TRIGGER_CHARS:
        return None
    return ProposedFact("action", trigger, _cap(action), EXPLICIT_CONFIDENCE, "patterns")


def _clause_facts(clause: str, *, caps_free: bool) -> list[ProposedFact]:
    # Substring checks gate each regex: most clauses match none, and ``in`` is far cheaper.
    low = clause.lower()
    facts: list[ProposedFact] = []
    if "name" in low and (match := _usable(clause, _NAME.search(clause))):
        if name := _name(match["v"], need_caps=False):
            facts.append(_profile("name", name))
    elif (
        "call" in low
        and (match := _usable(clause, _CALL_ME.search(clause)))
        and (name := _name(match["v"], need_caps=not caps_free))
    ):
        facts.append(_profile("name", name))
    if "my " in low and (fact := _my_field(clause)):
        facts.append(fact)
    if "working" in low:
        facts.extend(_working_on(clause, low))
    if "@" in clause and "me " in low and (match := _usable(clause, _ME_AT.search(clause))):
        facts.append(_profile("email", match["v"].rstrip(".")))
    if (
        ("i'm" in low or "i am" in low)
        and (" in " in low or " on " in low)
        and (match := _usable(clause, _IN_TIMEZONE.search(clause)))
        and (zone := _timezone(match["v"]))
    ):
        facts.append(_profile("timezone", zone))
    return facts


def _my_field(clause: str) -> ProposedFact | None:
    """ "my X is Y" where Y's shape says what it is: an e-mail address, a link or a path, or
    (for a timezone field) a zone. Any other Y ("my sister is Maya") is the model's to read."""
    match = _usable(clause, _MY_FIELD.search(clause))
    if match is None or (field := _field(match["f"])) is None:
        return None
    rest = clause[match.start("v") :]
    found = _profile if match["no"] is None else _retraction  # "my email is no longer ..."
    if field in _EMAIL_FIELDS:
        email = _EMAIL.match(rest)
        return found("email", email.group().rstrip(".")) if email else None
    if field in _ZONE_FIELDS:
        zone = _ZONE_VALUE.match(rest)
        value = _timezone(zone["v"]) if zone else None
        return found("timezone", value) if value else None
    if _EMAIL.match(rest):
        return None  # "my boss is bob@example.com": someone else's address
    locator = _LOCATOR_VALUE.match(rest)
    if locator is None or not any(char in locator["v"] for char in "/."):
        return None
    value = _strip_locator(locator["v"])
    return found(field, value) if value.strip("./~") else None


def _working_on(clause: str, low: str) -> list[ProposedFact]:
    if match := _usable(clause, _STOPPED_WORKING_ON.search(clause)):
        if match["neg"] and match["neg"].lower() == "not" and not _ANY_MORE_IN.search(low):
            return []  # "I'm not working on x today" is about today, not a change
        value = f"working on {_strip_locator(match['v'])}"
        return [_retraction(None, value, kind="observation")]
    if match := _usable(clause, _WORKING_ON.search(clause)):
        value = f"working on {_strip_locator(match['v'])}"
        return [ProposedFact("observation", None, _cap(value), EXPLICIT_CONFIDENCE, "profile")]
    return []


def _timezone(raw: str) -> str | None:
    """The zone as stored: offsets as ``UTC+2``, IANA names in their canonical case."""
    value = "".join(raw.split()).replace("−", "-")
    if value[:3].lower() in ("utc", "gmt"):
        value = value[:3].upper() + value[3:]
        return value if parse_timezone(value) is not None else None
    if "/" not in value and not value.isupper():
        return None  # "I'm in town": only capitalised abbreviations (CET, EST) are zones
    for candidate in (value, "/".join(part.title() for part in value.split("/"))):
        if parse_timezone(candidate) is not None:
            return candidate
    return None


def _usable(clause: str, match: re.Match[str] | None) -> re.Match[str] | None:
    """``match`` unless the words before it negate it or make it hypothetical."""
    if match is None:
        return None
    words = [word.lower() for word in _WORD.findall(clause, 0, match.start())]
    for index, word in enumerate(words):
        if word in _BLOCKING_WORDS or negates(word):
            return None
        if word in _CONDITIONAL_WORDS and (
            index + 1 == len(words) or words[index + 1] not in _REQUEST_WORDS
        ):
            return None
    return match


def _name(rest: str, *, need_caps: bool, max_words: int = 3) -> str | None:
    """The leading name-like words of ``rest``, or ``None`` when it does not start with a name."""
    words: list[str] = []
    for raw in rest.split()[: max_words + 1]:
        word = strip_noise(raw)
        is_title = word.lower() in _TITLES
        if is_title and raw.endswith("."):
            word += "."
        if not word or not word[0].isalpha() or not all(c.isalpha() or c in "'-." for c in word):
            break
        if word.lower() in _NOT_NAMES:
            break
        if need_caps and not word[0].isupper():
            break
        if words and words[0][0].isupper() and not word[0].isupper():
            break
        if len(words) == max_words:
            break  # more name-like words than a name has: keep the first ones
        words.append(word)
        if not words[0][0].isupper():
            break  # a lowercase name is taken one word at a time; what follows is not vetted
        if raw != word and not is_title:
            break  # the name ended at punctuation
    if not words or (len(words) == 1 and words[0].rstrip(".").lower() in _TITLES):
        return None
    return " ".join(words)


def _field(phrase: str) -> str | None:
    phrase = _NAME_OF.sub("", phrase.lower())
    words = phrase.replace("'s ", " ").split()
    field = _FIELD_CHARS.sub("_", " ".join(words)).strip("_")
    return None if field in ("", "name") else field


def _profile(field: str | None, value: str) -> ProposedFact:
    return ProposedFact("profile", field, _cap(value), EXPLICIT_CONFIDENCE, "profile")


def _retraction(field: str | None, value: str, *, kind: FactKind = "profile") -> ProposedFact:
    return ProposedFact(kind, field, _cap(value), EXPLICIT_CONFIDENCE, "profile", retracts=True)


def _strip_locator(value: str) -> str:
    """A path or URL without the sentence's punctuation after it; its start is kept (``~/x``)."""
    return value.rstrip(".,;:!?…\"'`”’*")


def strip_noise(value: str) -> str:
    """``value`` without the quotes, brackets and punctuation around it."""
    return value.lstrip(_LEADING_NOISE).rstrip(_TRAILING_NOISE).strip()


def _cap(value: str) -> str:
    value = " ".join(value.split())
    if len(value) <= MAX_VALUE_CHARS:
        return value
    cut = value[:MAX_VALUE_CHARS]
    space = cut.rfind(" ")
    return strip_noise(cut[:space] if space > MAX_VALUE_CHARS // 2 else cut)


def _unique(facts: list[ProposedFact]) -> list[ProposedFact]:
    seen: set[tuple[str, str | None, str, bool]] = set()
    unique = []
    for fact in facts:
        key = (fact.kind, fact.field, fact.value.lower(), fact.retracts)
        if key not in seen:
            seen.add(key)
            unique.append(fact)
    return unique
