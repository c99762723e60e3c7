"""Rule-based fact extraction from each user message: precompiled patterns, no LLM, reply path.

It proposes; reconciliation decides. Patterns are deliberately conservative: a missed fact is
picked up by LLM extraction later, a wrong one would be believed until corrected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from flynn.memory.dates import parse_timezone
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
# A move the rest of the sentence puts in the past ("when I was ten", "and then to Porto").
_PAST_MOVE = re.compile(
    r"\b(?:when\s+i\s+was|as\s+an?\s+(?:kid|child|baby|teen|teenager|student)|growing\s+up"
    r"|then|until)\b",
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
# Plain str.strip sets, not regexes: a regex anchored at the end backtracks quadratically
# over a long run of these characters.
_LEADING_NOISE = " \t\r\n\"'`“”‘’([*_~-"
_TRAILING_NOISE = " \t\r\n.,;:!?…)]\"'`“”‘’*_~-"
# "I live in Porto now", "I hate sushi now": the time word says the statement replaces an older
# one (reconciliation does that), it is not part of the place or the thing.
# Lower case only: "Apocalypse Now" and "The Power of Now" are titles.
_TIME_TAIL = re.compile(r"\s+(?:now|currently|nowadays|these days|at the moment|right now)$")
_EMPLOYMENT_WORDS = "work join start job position role hired left quit resign".split()
_LIKING_WORDS = ("like", "prefer", "love", "enjoy", "hate", "detest", "stand")
_FIELD_CHARS = re.compile(r"[^a-z0-9]+")

_NAME_STOPWORDS = _words(
    """
    a an the this that these those my your his her their our its it me you him them us
    not no never so very really just also still too quite pretty only even actually honestly
    literally definitely probably maybe always currently now today tomorrow tonight later soon
    here there back home away out off up down over in on at from with for to into about of by as
    like kind sort all both one some any called named what who how why when where if and or but
    then than please thanks sure fine ok okay good great well glad happy sad tired sorry busy
    ready done hungry thirsty sick ill bored excited afraid scared aware able late early free
    available right wrong confused curious interested worried stressed exhausted alive almost
    lost stuck awake asleep new old alone serious kidding joking certain positive convinced
    grateful thankful surprised impressed annoyed angry upset frustrated disappointed nervous
    anxious calm cool hot cold warm crazy fan big huge total bit little vegan vegetarian married
    single pregnant retired unemployed human male female gay straight trans guy girl man woman
    american british english french german italian spanish portuguese brazilian canadian
    australian indian chinese japanese korean russian dutch irish scottish welsh mexican polish
    swedish norwegian danish finnish greek turkish jewish muslim christian catholic buddhist
    hindu atheist european african asian
    """
)
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
# Words a capitalised run may hold without being a name ("I work at Home", "I joined the Choir").
_COMMON_NAME_WORDS = _NAME_STOPWORDS | _words(
    """
    night nights weekend weekends noon midnight work school uni college university church gym
    choir club team band class office level chapter page step stage lesson christmas easter
    lunch dinner breakfast two three four five six seven eight nine ten eleven twelve
    """
)
_ARTICLES = _words("the")
_NOT_NAME_STARTS = _words("a an my our your his her their its this that these those some any")
_NAME_CONNECTORS = _words("of de del der den di da du la le van von am upon y &")
_NAME_ABBREVIATIONS = _words("st mt ft")
# Capitalised words that end a name rather than go on with it: "When I moved to Berlin I was 25",
# "I moved to Berlin January 2020", "I work at Google Monday to Friday".
_NAME_ENDERS = _words(
    """
    i i'm i've i'd i'll monday tuesday wednesday thursday friday saturday sunday mondays tuesdays
    wednesdays thursdays fridays saturdays sundays january february march april june july august
    september october november december christmas easter
    """
)
_MAX_NAME_WORDS = 5
# What people "move to" in a technical chat that is not a place ("we moved to Postgres").
_NOT_PLACES = _words(
    """
    linux mac macos windows ubuntu debian fedora arch postgres postgresql mysql sqlite mongo
    mongodb redis python rust go golang java kotlin swift ruby rails django flask react vue
    angular svelte vim neovim emacs vscode vs docker kubernetes k8s aws azure gcp heroku vercel
    slack teams zoom discord signal telegram whatsapp android iphone ios chrome firefox safari
    notion obsidian jira linear trello github gitlab bitbucket typescript javascript node deno
    bun terraform nix
    """
)
# Joining these is signing up or taking part, not being employed ("I joined Twitter", "I joined
# Rotary Club"); starting at a school is studying there.
_NOT_EMPLOYERS = _words(
    """
    twitter x facebook instagram tiktok reddit linkedin discord slack mastodon bluesky threads
    strava duolingo github netflix spotify patreon substack whatsapp telegram signal zoom meetup
    tinder hinge bumble
    """
)
_MEMBERSHIP_WORDS = _words(
    """
    club choir gym team band league society class course school college university academy
    """
)
# What may follow the organisation in "I joined X ...", "I started at X ...", "I left X ...":
# when it is a time or a role, X is an employer; "I joined Maya for lunch" is not about work.
_TIME_UNITS = r"(?:days?|weeks?|months?|years?)"
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
_JOB_TIME = (
    r"(?:today|yesterday|recently|now|full[\s-]time|part[\s-]time"
    rf"|(?:earlier\s+)?this\s+(?:week|month|year|spring|summer|autumn|fall|winter)"
    rf"|last\s+(?:week|month|year|spring|summer|autumn|fall|winter|{_MONTHS}|\w+day)"
    rf"|(?:back\s+)?in\s+(?:\d{{4}}|{_MONTHS})(?:\s+\d{{4}})?"
    r"|on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    rf"|(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a\s+few|a\s+couple\s+of"
    rf"|several)\s+{_TIME_UNITS}\s+ago)"
)
_JOB_ROLE = r"as\s+(?:a|an|the|their|its|our|(?-i:[A-Z]{2,5}\b))"
_JOB_TAIL = re.compile(rf"(?:{_JOB_TIME}(?:\s+{_JOB_ROLE}.*)?|{_JOB_ROLE}.*)?", _FLAGS)
_ROLE_TAIL = re.compile(rf"(?:{_JOB_TIME}\s+)?{_JOB_ROLE}.*", _FLAGS)
_LEAVING_TAIL = re.compile(rf"(?:{_JOB_TIME})?(?:\s*(?:for|to|after)\s.*)?", _FLAGS)
# "I work at Globex and Initech", "I'm working at Starbucks today": a second job, or a seat.
_NOT_A_JOB_TAIL = re.compile(
    r"(?:and|or|&|too|today|tonight|this\s+(?:morning|afternoon|evening))\b", _FLAGS
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
    trigger = " ".join(_strip(match["trigger"]).lower().split())
    action = _I_MEAN.sub("means ", _strip(match["action"]), count=1)
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
        and (obj := _object(_ANY_MORE_TAIL.sub("", _strip(match["v"]))))
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
        place = _TIME_TAIL.sub("", _strip(match["v"]))
        # A capitalised place is its name alone ("I live in Berlin I think"); a lower-case
        # writer's is taken as written.
        if opening := _proper_name(place, comma_ok=True):
            place = opening[0]
        if place and place.split()[0].lower() not in _VALUE_STOPWORDS:
            facts.append(_profile("location", place, EXPLICIT_CONFIDENCE))
    if (
        " in " in low
        and ("longer" in low or "live" in low)
        and (match := _usable(clause, _NO_LONGER_LIVE.search(clause)))
    ):
        place = _TIME_TAIL.sub("", _ANY_MORE_TAIL.sub("", _strip(match["v"])))
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
        value = _strip(_TIME_TAIL.sub("", _CALLED.sub("", _strip(match["v"]), count=1)))
        if value and _names_a_relative(match["f"]):
            # "my sister Maya is a nurse": about Maya, not a field "sister_maya".
            return [_profile(None, f"{match['f']} is {value}", EXPLICIT_CONFIDENCE)]
        if field and value:
            retracts = value.lower().startswith("no longer ")
            if retracts:
                value = _strip(value[len("no longer ") :])
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
                if opening := _proper_name(value):
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


def looks_like_name(value: str) -> bool:
    """Whether ``value`` opens as a person's or a pet's name does ("Maya", "Dr Okafor"), not
    as a description ("sick", "a nurse", "German", "The Worst", "ADHD")."""
    first = value.split()[0] if value.split() else ""
    word = _strip(first).lower()
    return (
        first[:1].isupper()
        and word not in _NAME_STOPWORDS
        and word not in _NOT_NAME_STARTS
        and word not in _ARTICLES
        and not (len(first) > 1 and first.isupper())
    )


def _moves(clause: str) -> list[ProposedFact]:
    """ "I moved to Berlin", "we're living in Berlin now": the new location."""
    for pattern in (_MOVED, _LIVING_IN):
        if (match := _usable(clause, pattern.search(clause))) and (place := _place(match["v"])):
            return [_profile("location", place, EXPLICIT_CONFIDENCE)]
    return []


def _employment(clause: str, low: str) -> list[ProposedFact]:
    """ "I work at Globex", "I joined Globex": the employer; "I left Acme" retracts it."""
    if match := _usable(clause, _LEFT_JOB.search(clause)):
        if match["neg"] and match["neg"].lower() == "not" and not _ANY_MORE_IN.search(low):
            return []  # "I'm not working at Acme today" is about today, not a change
        rest = _ANY_MORE_TAIL.sub("", _strip(match["v"] or match["w"] or match["x"]))
        if left := _organisation(rest, verb="leave"):
            return [_retraction("employer", left)]
    if (match := _usable(clause, _WORK_AT.search(clause))) and (
        employer := _organisation(match["v"] or match["w"], verb="work")
    ):
        return [_profile("employer", employer, EXPLICIT_CONFIDENCE)]
    if match := _usable(clause, _NEW_JOB.search(clause)):
        said_job = not (match["bare"] or match["start"])  # "got a job at", not "joined"
        employer = _organisation(match["v"], verb="start" if said_job else "join")
        if employer:
            return [_profile("employer", employer, EXPLICIT_CONFIDENCE)]
    return []


def _place(rest: str) -> str | None:
    """The place a move names: a capitalised name that is not a tool ("we moved to Postgres"),
    in a sentence that does not put the move in the past ("when I was ten")."""
    found = _proper_name(rest, comma_ok=True)
    if found is None:
        return None
    place, tail = found
    if not is_place_name(place) or place.endswith("'s") or is_past_move(tail):
        return None
    return place


def is_past_move(following: str) -> bool:
    """Whether what follows a move's place puts the move in the past ("when I was ten", "and
    then to Porto"), so it says nothing of where the person lives now."""
    return _PAST_MOVE.search(following) is not None


def is_place_name(name: str) -> bool:
    """Whether ``name``, said as where someone moved, can be a place: not a tool or platform
    ("we moved to Postgres", "I moved to VS Code")."""
    keys = [word.lower() for word in name.split() if word.lower() not in _ARTICLES]
    return bool(keys) and keys[0] not in _NOT_PLACES


def _organisation(rest: str, *, verb: Literal["work", "start", "join", "leave"]) -> str | None:
    """The organisation ``rest`` opens with, as the employer ``verb`` is about ("I work at X",
    "I started working at X", "I joined X as a designer", "I left X"): a capitalised name, not
    a common word ("I work at Home")."""
    found = _proper_name(rest)
    if found is None:
        return None
    name, tail = found
    if verb == "join":
        return name if is_job_start(name, tail) else None
    if verb == "start":
        return name if is_job_start(name, tail, role_needed=False) else None
    tail = _strip(tail)
    if verb == "leave":
        return name if _is_employable(name) and _LEAVING_TAIL.fullmatch(tail) else None
    if _NOT_A_JOB_TAIL.match(tail) or (name.endswith("'s") and not _JOB_TAIL.fullmatch(tail)):
        return None  # "I work at Globex and Initech", "I work at Maya's café"
    return name


def is_job_start(name: str, following: str, *, role_needed: bool = True) -> bool:
    """Whether joining or starting at the organisation ``name``, with ``following`` after it in
    its sentence, is taking a job there: ``name`` is no platform, club or school ("I joined
    Twitter", "the Chess Club"), and what follows is a role ("I joined Globex last week as a
    designer"), or with ``role_needed`` false (the words said it was a job: "I got a job at"),
    at most a time; never more ("I joined Maya for lunch"). People join gyms, clubs, schools and
    services by name ("I joined Planet Fitness", "I started at Harvard"), so a bare join is
    no job."""
    clause = _strip(_CLAUSE_SPLIT.split(following, maxsplit=1)[0])
    tail = _ROLE_TAIL if role_needed else _JOB_TAIL
    return _is_employable(name) and tail.fullmatch(clause) is not None


def _is_employable(name: str) -> bool:
    keys = [word.lower() for word in name.split() if word.lower() not in _ARTICLES]
    return (
        bool(keys)
        and keys[0] not in _NOT_EMPLOYERS
        and keys[-1] not in _MEMBERSHIP_WORDS
        and not all(key in _COMMON_NAME_WORDS for key in keys)
    )


def _proper_name(rest: str, *, comma_ok: bool = False) -> tuple[str, str] | None:
    """The capitalised name ``rest`` opens with ("Berlin", "the Netherlands", "Bank of America",
    "St. Louis", "McDonald's") and the text after it; ``None`` when it opens with none, or with
    common words only ("the Choir"). ``comma_ok`` takes "Portland, Oregon" whole when nothing
    follows it (otherwise the comma ends the name: "Berlin, Maya stayed")."""
    tokens = rest.split()
    words: list[str] = []
    index = 0
    if tokens and tokens[0].lower() in _ARTICLES:
        words.append(tokens[0])
        index = 1
    names = 0
    at_comma = False
    while index < len(tokens):
        raw = tokens[index]
        word = _strip(raw)
        connects = (
            names > 0
            and raw == word
            and word.lower() in _NAME_CONNECTORS
            and index + 1 < len(tokens)
            and tokens[index + 1][:1].isupper()
        )
        if not connects and not (word[:1].isupper() and word[0].isalpha()):
            break
        if not all(char.isalnum() or char in "'&.-" for char in word):
            break
        index += 1
        if connects:
            words.append(word)
            continue
        if names == 0 and word.lower() in _NOT_NAME_STARTS:
            return None
        if names > 0 and word.lower() in _NAME_ENDERS:
            index -= 1
            break
        names += 1
        if names > _MAX_NAME_WORDS:
            return None  # more capitalised words than a name has: a title, or shouting
        if word.lower() in _NAME_ABBREVIATIONS and raw == word + ".":
            words.append(raw)  # "St. Louis": the full stop does not end the name
            continue
        words.append(word)
        if word.lower().endswith("'s"):
            break  # "McDonald's", "Maya's": nothing of the name follows a possessive
        if raw != word:
            at_comma = raw.rstrip().endswith(",")
            break
    while words and words[-1].lower() in _NAME_CONNECTORS:
        words.pop()
    keys = [word.lower().removesuffix("'s") for word in words if word.lower() not in _ARTICLES]
    if not keys or all(key in _COMMON_NAME_WORDS for key in keys):
        return None
    name, tail = " ".join(words), " ".join(tokens[index:])
    if comma_ok and at_comma and not tail.lower().startswith("the "):
        more = _proper_name(tail)
        if more is not None and not _strip(more[1]):
            return f"{name}, {more[0]}", ""
    return name, tail


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
        word = _strip(raw)
        is_title = word.lower() in _TITLES
        if is_title and raw.endswith("."):
            word += "."
        if not word or not word[0].isalpha() or not all(c.isalpha() or c in "'-." for c in word):
            break
        if word.lower() in _NAME_STOPWORDS:
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
    value = _strip(_TIME_TAIL.sub("", _strip(rest)))
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


def _strip(value: str) -> str:
    return value.lstrip(_LEADING_NOISE).rstrip(_TRAILING_NOISE).strip()


def _strip_locator(value: str) -> str:
    """A path or URL without the sentence's punctuation after it; its start is kept (``~/x``)."""
    return value.rstrip(".,;:!?…\"'`”’*")


def _cap(value: str) -> str:
    value = " ".join(value.split())
    if len(value) <= MAX_VALUE_CHARS:
        return value
    cut = value[:MAX_VALUE_CHARS]
    space = cut.rfind(" ")
    return _strip(cut[:space] if space > MAX_VALUE_CHARS // 2 else cut)


def _unique(facts: list[ProposedFact]) -> list[ProposedFact]:
    seen: set[tuple[str, str | None, str, bool]] = set()
    unique = []
    for fact in facts:
        key = (fact.kind, fact.field, fact.value.lower(), fact.retracts)
        if key not in seen:
            seen.add(key)
            unique.append(fact)
    return unique
