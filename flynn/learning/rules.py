"""Rule-based fact extraction from each user message: precompiled patterns, no LLM, reply path.

It proposes; reconciliation decides. Patterns are deliberately conservative: a missed fact is
picked up by LLM extraction later, a wrong one would be believed until corrected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from flynn.dates import parse_timezone
from flynn.learning.proper_names import (
    NAME_STOPWORDS,
    looks_like_name,
    organisation_named,
    place_named,
    proper_name,
    strip_noise,
)
from flynn.memory.graph_names import relative_type
from flynn.memory.store import FactKind

EXPLICIT_CONFIDENCE = 0.9
INFERRED_NAME_CONFIDENCE = 0.7
MAX_VALUE_CHARS = 200
MAX_TRIGGER_CHARS = 100
MAX_SCANNED_CHARS = 8000
"""Long pastes (logs, documents) are not self-descriptions; only their start is scanned."""


@dataclass(frozen=True, slots=True)
class ProposedFact:
    """A fact a rule found; ``target`` names the document family it belongs to.

    ``retracts`` marks a statement that the fact is no longer true ("I no longer live in Lisbon"):
    reconciliation retires the matching active fact instead of storing this one.
    """

    kind: FactKind
    field: str | None
    value: str
    confidence: float
    target: Literal["profile", "patterns"]
    retracts: bool = False


_FLAGS = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
# A full stop ends a sentence only before whitespace, so "example.com" and "3.5" stay whole.
_SENTENCE_END = re.compile(r"[!?\n;]|\.(?=\s|$)")
_ABBREVIATION = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St)\.$")

# A new clause starts at a comma or conjunction followed by a fresh subject ("..., I live in X",
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
_BLOCKING_WORDS = _words(
    """
    not never if unless whether suppose supposing imagine pretend wish hope wonder wondering
    asked ask said says thinks whatever were maybe perhaps doubt let's lets assume assuming
    hypothetically
    """
)
# "would" makes what follows hypothetical ("I would say my name is Bob"), except in a request
# ("I'd like you to call me Bob", "would you call me Bob").
_CONDITIONAL_WORDS = _words("would i'd")
_REQUEST_WORDS = _words("like love prefer rather appreciate you please")

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
_CALL_ME = re.compile(r"\bcall\s+me\s+(?P<v>.+)", _FLAGS)
_I_AM = re.compile(r"\bi(?:'m|\s+am)\s+(?P<v>.+)", _FLAGS)
_ADVERBS = (
    r"(?:(?:really|also|much|just|generally|usually|do|definitely|absolutely|truly|still|now"
    r"|actually)\s+)*"
)
_LIKE = re.compile(rf"\bi\s+{_ADVERBS}(?:prefer|like|love|enjoy)\s+(?P<v>.+)", _FLAGS)
_DISLIKE = re.compile(
    rf"\bi\s+{_ADVERBS}(?:dislike|hate|detest|can't\s+stand|cannot\s+stand"
    rf"|(?:don't|do\s+not)\s+{_ADVERBS}(?:like|enjoy))\s+(?P<v>.+)",
    _FLAGS,
)
_LIVE_IN = re.compile(
    r"\bi\s+(?:(?:currently|now|still)\s+)?(?:live|am\s+based|'m\s+based)\s+in\s+(?P<v>.+)", _FLAGS
)
# "I moved to Berlin", "we've just relocated to Berlin", "I'm living in Berlin now": where the
# person lives now, as "I live in" says. The place must be a capitalised name (see ``_place``).
_MOVE_ADVERBS = r"(?:(?:just|recently|finally|now|already|actually|officially|currently|still)\s+)*"
_MOVED = re.compile(
    rf"\b(?:i|we)(?:'ve|\s+have)?\s+{_MOVE_ADVERBS}(?:moved|relocated)(?:\s+back)?\s+to\s+(?P<v>.+)",
    _FLAGS,
)
_LIVING_IN = re.compile(
    r"\b(?:(?:i(?:'m|\s+am|'ve\s+been|\s+have\s+been)|we(?:'re|\s+are|'ve\s+been|\s+have\s+been))"
    rf"\s+{_MOVE_ADVERBS}living|we\s+{_MOVE_ADVERBS}live)\s+in\s+(?P<v>.+)",
    _FLAGS,
)
# Employment, stated the ways people say it; "also" is left out ("I also work at X" is a second
# job, not a new one). The organisation must be a capitalised name (see ``_organisation``).
_JOB_ADVERBS = r"(?:(?:now|currently|still|actually|just|recently|finally|officially)\s+)*"
_WORK_AT = re.compile(
    rf"\bi\s+{_JOB_ADVERBS}work\s+(?:at|for)\s+(?P<v>.+)"
    rf"|\bi(?:'m|\s+am|'ve\s+been|\s+have\s+been)\s+{_JOB_ADVERBS}working\s+at\s+(?P<w>.+)",
    _FLAGS,
)
_NEW_JOB = re.compile(
    rf"\bi(?:'ve|\s+have)?\s+{_JOB_ADVERBS}(?:"
    r"started\s+(?:working\s+at|a\s+(?:new\s+)?job\s+at|(?P<start>at))"
    r"|(?:got|landed|took|accepted)\s+(?:a|the)\s+(?:new\s+)?(?:(?:full|part)[\s-]time\s+)?"
    r"(?:job|position|role)\s+(?:at|with)"
    r"|(?:got|been|was)\s+hired\s+at"
    r"|(?P<bare>joined))\s+(?P<v>.+)",
    _FLAGS,
)
_LEFT_JOB = re.compile(
    rf"\bi(?:'ve|\s+have)?\s+{_JOB_ADVERBS}(?:left|quit|resigned\s+from)\s+"
    r"(?:my\s+(?:old\s+)?(?:job|position|role)\s+(?:at|with)\s+)?(?P<v>.+)"
    r"|\bi\s+(?:no\s+longer|(?:don't|do\s+not)\s+(?:(?:actually|really)\s+)?)\s*work\s+(?:at|for)\s+"
    r"(?P<w>.+)"
    r"|\bi(?:(?:'m|\s+am)\s+(?P<neg>no\s+longer|not)|\s+stopped)\s+working\s+(?:at|for)\s+(?P<x>.+)",
    _FLAGS,
)
_MY_FIELD = re.compile(
    r"\bmy\s+(?P<f>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s+(?:is|are)\s+(?P<v>.+)", _FLAGS
)
_NO_LONGER_LIVE = re.compile(
    r"\bi\s+(?:no\s+longer|(?:don't|do\s+not)\s+(?:(?:actually|really)\s+)?)\s*live\s+in\s+(?P<v>.+)",
    _FLAGS,
)
# "I don't like X" is a dislike; only "no longer" or "any more" makes it a retraction.
_NO_LONGER_LIKE = re.compile(
    rf"\bi\s+(?:no\s+longer|(?:don't|do\s+not)(?=.*\bany\s*more\b))\s+{_ADVERBS}"
    r"(?P<verb>prefer|like|love|enjoy|dislike|hate|detest|mind)\s+(?P<v>.+)",
    _FLAGS,
)
_ANY_MORE_TAIL = re.compile(r"\s+any\s*more$", _FLAGS)
_ANY_MORE_IN = re.compile(r"\bany\s*more\b|\bno\s+longer\b")
# A path or URL: what "my blog is ..." or "I'm working on ..." points at.
_LOCATOR = (
    r"(?:https?://[^\s<>\"'`]+"
    r"|(?:~|\.{1,2})?/?(?:[\w@+.-]+/)+[\w@+.-]*"
    r"|[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,5})"
)
_LOCATOR_END = r"(?=$|[\s,;:!?)\]])"
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
_MY_LINK = re.compile(
    r"\bmy\s+(?P<f>[a-z][\w'-]*(?:\s+[a-z][\w'-]*){0,2}?)\s*(?::|\s+(?:is\s+|lives\s+)?at)\s+"
    rf"(?P<v>{_LOCATOR}){_LOCATOR_END}",
    _FLAGS,
)
_AT_LOCATOR = re.compile(rf"^at\s+(?P<v>{_LOCATOR})$", _FLAGS)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_ME_AT = re.compile(
    r"\b(?:reach|e-?mail|mail|contact|ping|write\s+to|find)\s+me\s+(?:at|on|via)\s+"
    r"(?P<v>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)",
    _FLAGS,
)
# "I'm in UTC+2", "I am on Europe/Berlin time", "I'm in CET": an offset, an IANA name or a
# capitalised abbreviation; anything else after "I'm in" is a place or a state, not a zone.
_IN_TIMEZONE = re.compile(
    r"\bi(?:'m|\s+am)\s+(?:(?:currently|now|usually)\s+)?(?:in|on)\s+(?:the\s+)?"
    r"(?P<v>(?:utc|gmt)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?|utc|gmt"
    r"|[A-Za-z]+(?:/[A-Za-z0-9_+\-]+){1,2}|[A-Z]{2,5})"
    r"(?:\s+time(?:\s*zone)?)?(?=$|[\s,;.!?)])",
    _FLAGS,
)
# "my dog's name is Rex", "my dog is called Rex" and "my dog is Rex" all say ``dog = Rex``.
_NAME_OF = re.compile(r"'s\s+name$")
_CALLED = re.compile(r"^(?:called|named)\s+(?!after\b)", _FLAGS)
_EMAIL_FIELDS = frozenset({"email", "email_address", "e_mail", "mail", "mail_address"})
# "I live in Porto now", "I hate sushi now": the time word says the statement replaces an older
# one (reconciliation does that), it is not part of the place or the thing.
# Lower case only: "Apocalypse Now" and "The Power of Now" are titles.
_TIME_TAIL = re.compile(r"\s+(?:now|currently|nowadays|these days|at the moment|right now)$")
_EMPLOYMENT_WORDS = "work join start job position role hired left quit resign".split()
_LIKING_WORDS = ("like", "prefer", "love", "enjoy", "hate", "detest", "stand")
_FIELD_CHARS = re.compile(r"[^a-z0-9]+")

_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame"})
_OBJECT_STOPWORDS = _words(
    """
    it that this these those them you him her what how when where why which who your yours
    not to
    """
)
_FIELD_STOPWORDS = _words(
    """
    point guess question problem issue concern understanding feeling thought thoughts
    thinking impression answer bad fault idea suggestion opinion take view sense experience reply
    response message request mistake assumption hunch worry excuse hope bet advice reason head
    heart mind day week life turn pleasure apologies apology main own whole only favorite
    favourite
    """
)
_VALUE_STOPWORDS = _words(
    """
    not so too very really kinda kind sort being getting going still also just always never
    currently now here there it that this what how why who which when where broken down dead
    slow fine ok okay good great bad done gone missing failing acting crashing working
    """
)
_FIELD_ALIASES = {"time_zone": "timezone", "tz": "timezone", "home_town": "hometown"}


class RuleExtractor:
    """Finds explicit self-descriptions and trigger -> action requests in a user message.

    Stateless and pure: ``extract`` never raises for any input text.
    """

    def extract(self, text: str) -> list[ProposedFact]:
        """Proposed facts in order of appearance, without duplicates."""
        text = text[:MAX_SCANNED_CHARS].replace("’", "'").replace("‘", "'")
        if "```" in text:
            text = _CODE_BLOCK.sub(" ", text)
        if ">" in text:
            text = _QUOTED_LINE.sub("", text)
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
    named = False
    if "name" in low and (match := _usable(clause, _NAME.search(clause))):
        named = True
        if name := _name(match["v"], need_caps=False, max_words=3):
            facts.append(_profile("name", name, EXPLICIT_CONFIDENCE))
    if (
        "call" in low
        and (match := _usable(clause, _CALL_ME.search(clause)))
        and (name := _name(match["v"], need_caps=not caps_free, max_words=3))
    ):
        facts.append(_profile("name", name, EXPLICIT_CONFIDENCE))
    if (
        ("i'm" in low or "i am" in low)
        and (match := _usable(clause, _I_AM.search(clause)))
        and (name := _name(match["v"], need_caps=True, max_words=2, strict=True))
    ):
        facts.append(_profile("name", name, INFERRED_NAME_CONFIDENCE))
    retracted_liking = False
    if (
        ("longer" in low or "more" in low)
        and (match := _usable(clause, _NO_LONGER_LIKE.search(clause)))
        and (obj := _object(_ANY_MORE_TAIL.sub("", strip_noise(match["v"]))))
    ):
        verb = match["verb"].lower()
        predicate = "prefers" if verb in ("prefer", "like", "love", "enjoy") else "dislikes"
        facts.append(_retraction(None, f"{predicate} {obj}"))
        retracted_liking = True
    if not retracted_liking and any(word in low for word in _LIKING_WORDS):
        if match := _usable(clause, _DISLIKE.search(clause)):
            if obj := _object(match["v"]):
                facts.append(_profile(None, f"dislikes {obj}", EXPLICIT_CONFIDENCE))
        elif (match := _usable(clause, _LIKE.search(clause))) and (obj := _object(match["v"])):
            facts.append(_profile(None, f"prefers {obj}", EXPLICIT_CONFIDENCE))
    if " in " in low and (match := _usable(clause, _LIVE_IN.search(clause))):
        place = _TIME_TAIL.sub("", strip_noise(match["v"]))
        # A capitalised place is its name alone ("I live in Berlin I think"); a lower-case
        # writer's is taken as written.
        if opening := proper_name(place, comma_ok=True):
            place = opening[0]
        if place and place.split()[0].lower() not in _VALUE_STOPWORDS:
            facts.append(_profile("location", place, EXPLICIT_CONFIDENCE))
    if (
        " in " in low
        and ("longer" in low or "live" in low)
        and (match := _usable(clause, _NO_LONGER_LIVE.search(clause)))
    ):
        place = _TIME_TAIL.sub("", _ANY_MORE_TAIL.sub("", strip_noise(match["v"])))
        if place and place.split()[0].lower() not in _VALUE_STOPWORDS:
            facts.append(_retraction("location", place))
    if any(word in low for word in ("moved", "relocated", "living", "live in")):
        facts.extend(_moves(clause))
    if any(word in low for word in _EMPLOYMENT_WORDS):
        facts.extend(_employment(clause, low))
    if not named and "my " in low:
        facts.extend(_my_field_facts(clause))
    if "working" in low:
        facts.extend(_working_on(clause, low))
    if "@" in clause and "me " in low and (match := _usable(clause, _ME_AT.search(clause))):
        facts.append(_profile("email", match["v"].rstrip("."), EXPLICIT_CONFIDENCE))
    if (
        ("i'm" in low or "i am" in low)
        and (" in " in low or " on " in low)
        and (match := _usable(clause, _IN_TIMEZONE.search(clause)))
        and (zone := _timezone(match["v"]))
    ):
        facts.append(_profile("timezone", zone, EXPLICIT_CONFIDENCE))
    return facts


def _my_field_facts(clause: str) -> list[ProposedFact]:
    """ "my X is Y" (Y may be a correction, a retraction, a link or an email address)."""
    if match := _usable(clause, _MY_FIELD.search(clause)):
        field = _field(match["f"])
        value = strip_noise(_TIME_TAIL.sub("", _CALLED.sub("", strip_noise(match["v"]), count=1)))
        if value and _names_a_relative(match["f"]):
            # "my sister Maya is a nurse": about Maya, not a field "sister_maya".
            return [_profile(None, f"{match['f']} is {value}", EXPLICIT_CONFIDENCE)]
        if field and value:
            retracts = value.lower().startswith("no longer ")
            if retracts:
                value = strip_noise(value[len("no longer ") :])
            if field in _EMAIL_FIELDS:
                field = "email"
                if email := _EMAIL.search(value):
                    value = email.group().rstrip(".")
            if at := _AT_LOCATOR.match(value):
                value = _strip_locator(at["v"])
            if value and relative_type(field):
                if not looks_like_name(value):
                    # "my cat is sick", "my wife is German": how they are, not who; the field
                    # keeps their name ("my cat is Luna").
                    said = f"{field.replace('_', ' ')} is {'no longer ' if retracts else ''}"
                    return [_profile(None, said + value, EXPLICIT_CONFIDENCE)]
                # "My sister is Maya, she lives in Paris": the name, not the rest.
                if opening := proper_name(value):
                    value = opening[0]
            if retracts:
                return [_retraction(field, value)] if value else []
            if value.split()[0].lower() not in _VALUE_STOPWORDS:
                return [_profile(field, value, EXPLICIT_CONFIDENCE)]
            return []
    if (match := _usable(clause, _MY_LINK.search(clause))) and (field := _field(match["f"])):
        return [_profile(field, _strip_locator(match["v"]), EXPLICIT_CONFIDENCE)]
    return []


def _names_a_relative(said: str) -> bool:
    """Whether ``said`` is a relative or a pet and their name ("sister Maya", "best friend
    Sarah")."""
    words = said.split()
    return any(
        relative_type(" ".join(words[:size])) is not None and words[size][:1].isupper()
        for size in (1, 2)
        if len(words) > size
    )


def _moves(clause: str) -> list[ProposedFact]:
    """ "I moved to Berlin", "we're living in Berlin now": the new location."""
    for pattern in (_MOVED, _LIVING_IN):
        if (match := _usable(clause, pattern.search(clause))) and (
            place := place_named(match["v"])
        ):
            return [_profile("location", place, EXPLICIT_CONFIDENCE)]
    return []


def _employment(clause: str, low: str) -> list[ProposedFact]:
    """ "I work at Globex", "I joined Globex": the employer; "I left Acme" retracts it."""
    if match := _usable(clause, _LEFT_JOB.search(clause)):
        if match["neg"] and match["neg"].lower() == "not" and not _ANY_MORE_IN.search(low):
            return []  # "I'm not working at Acme today" is about today, not a change
        rest = _ANY_MORE_TAIL.sub("", strip_noise(match["v"] or match["w"] or match["x"]))
        if left := organisation_named(rest, verb="leave"):
            return [_retraction("employer", left)]
    if (match := _usable(clause, _WORK_AT.search(clause))) and (
        employer := organisation_named(match["v"] or match["w"], verb="work")
    ):
        return [_profile("employer", employer, EXPLICIT_CONFIDENCE)]
    if match := _usable(clause, _NEW_JOB.search(clause)):
        said_job = not (match["bare"] or match["start"])  # "got a job at", not "joined"
        employer = organisation_named(match["v"], verb="start" if said_job else "join")
        if employer:
            return [_profile("employer", employer, EXPLICIT_CONFIDENCE)]
    return []


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
        if word in _BLOCKING_WORDS or word.endswith("n't"):
            return None
        if word in _CONDITIONAL_WORDS and (
            index + 1 == len(words) or words[index + 1] not in _REQUEST_WORDS
        ):
            return None
    return match


def _name(rest: str, *, need_caps: bool, max_words: int, strict: bool = False) -> str | None:
    """The leading name-like words of ``rest``, or ``None`` when it does not start with a name.

    ``strict`` (for "I'm X") also refuses all-caps words, possessives and gerunds, since the
    phrase far more often introduces a state than a name.
    """
    words: list[str] = []
    for raw in rest.split()[: max_words + 1]:
        word = strip_noise(raw)
        is_title = word.lower() in _TITLES
        if is_title and raw.endswith("."):
            word += "."
        if not word or not word[0].isalpha() or not all(c.isalpha() or c in "'-." for c in word):
            break
        if word.lower() in NAME_STOPWORDS:
            break
        if need_caps and not word[0].isupper():
            break
        if words and words[0][0].isupper() and not word[0].isupper():
            break
        if strict and (
            (len(word) > 1 and word.isupper())
            or word.lower().endswith("'s")
            or (len(word) > 4 and word.lower().endswith("ing"))
        ):
            return None
        if len(words) == max_words:
            # More name-like words than a name has: probably a title or a sentence in caps.
            return None if strict else " ".join(words)
        words.append(word)
        if not words[0][0].isupper():
            break  # a lowercase name is taken one word at a time; what follows is not vetted
        if raw != word and not is_title:
            break  # the name ended at punctuation
    if not words or (len(words) == 1 and words[0].rstrip(".").lower() in _TITLES):
        return None
    return " ".join(words)


def _object(rest: str) -> str | None:
    value = strip_noise(_TIME_TAIL.sub("", strip_noise(rest)))
    if not value:
        return None
    first = value.split()[0].lower()
    if first in _OBJECT_STOPWORDS or value.lower().startswith("the way"):
        return None
    return value


def _field(phrase: str) -> str | None:
    phrase = _NAME_OF.sub("", phrase.lower())
    words = phrase.replace("'s ", " ").split()
    if not words or words[-1] in _FIELD_STOPWORDS:
        return None
    field = _FIELD_CHARS.sub("_", " ".join(words)).strip("_")
    if field == "name":
        return None  # "my name is ..." has its own, stricter rule
    return _FIELD_ALIASES.get(field, field) or None


def _profile(field: str | None, value: str, confidence: float) -> ProposedFact:
    return ProposedFact("profile", field, _cap(value), confidence, "profile")


def _retraction(field: str | None, value: str, *, kind: FactKind = "profile") -> ProposedFact:
    return ProposedFact(kind, field, _cap(value), EXPLICIT_CONFIDENCE, "profile", retracts=True)


def _strip_locator(value: str) -> str:
    """A path or URL without the sentence's punctuation after it; its start is kept (``~/x``)."""
    return value.rstrip(".,;:!?…\"'`”’*")


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
