"""Telling names from words in what people write: the capitalised name a phrase opens with,
and whether it can be a place someone lives, an organisation someone works for, or a person's or
a pet's name. Shared by the fact rules (``flynn.learning.rules``) and the graph rules
(``flynn.learning.graph_extraction``), so both read "I moved to Berlin" and "I joined Globex as a
designer" alike.
"""

from __future__ import annotations

import re
from typing import Literal

_FLAGS = re.IGNORECASE


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Plain str.strip sets, not regexes: a regex anchored at the end backtracks quadratically
# over a long run of these characters.
_LEADING_NOISE = " \t\r\n\"'`“”‘’([*_~-"
_TRAILING_NOISE = " \t\r\n.,;:!?…)]\"'`“”‘’*_~-"

NAME_STOPWORDS = _words(
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
"""Words that describe someone rather than name them ("tired", "German"), and other words no
name starts with."""
# Words a capitalised run may hold without being a name ("I work at Home", "I joined the Choir").
_COMMON_NAME_WORDS = NAME_STOPWORDS | _words(
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
# Where the words about an organisation end: "I joined Globex as a designer, I love it".
_CLAUSE_END = re.compile(r"[,;]|\s+(?:and|but|so|because|although|though|whereas)\s+", _FLAGS)
_NOT_A_JOB_TAIL = re.compile(
    r"(?:and|or|&|too|today|tonight|this\s+(?:morning|afternoon|evening))\b", _FLAGS
)
# A move the rest of the sentence puts in the past ("when I was ten", "and then to Porto").
_PAST_MOVE = re.compile(
    r"\b(?:when\s+i\s+was|as\s+an?\s+(?:kid|child|baby|teen|teenager|student)|growing\s+up"
    r"|then|until)\b",
    _FLAGS,
)


def looks_like_name(value: str) -> bool:
    """Whether ``value`` opens as a person's or a pet's name does ("Maya", "Dr Okafor"), not
    as a description ("sick", "a nurse", "German", "The Worst", "ADHD")."""
    first = value.split()[0] if value.split() else ""
    word = strip_noise(first).lower()
    return (
        first[:1].isupper()
        and word not in NAME_STOPWORDS
        and word not in _NOT_NAME_STARTS
        and word not in _ARTICLES
        and not (len(first) > 1 and first.isupper())
    )


def place_named(rest: str) -> str | None:
    """The place a move names: a capitalised name that is not a tool ("we moved to Postgres"),
    in a sentence that does not put the move in the past ("when I was ten")."""
    found = proper_name(rest, comma_ok=True)
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


def organisation_named(rest: str, *, verb: Literal["work", "start", "join", "leave"]) -> str | None:
    """The organisation ``rest`` opens with, as the employer ``verb`` is about ("I work at X",
    "I started working at X", "I joined X as a designer", "I left X"): a capitalised name, not
    a common word ("I work at Home")."""
    found = proper_name(rest)
    if found is None:
        return None
    name, tail = found
    if verb == "join":
        return name if is_job_start(name, tail) else None
    if verb == "start":
        return name if is_job_start(name, tail, role_needed=False) else None
    tail = strip_noise(tail)
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
    clause = strip_noise(_CLAUSE_END.split(following, maxsplit=1)[0])
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


def proper_name(rest: str, *, comma_ok: bool = False) -> tuple[str, str] | None:
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
        word = strip_noise(raw)
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
        more = proper_name(tail)
        if more is not None and not strip_noise(more[1]):
            return f"{name}, {more[0]}", ""
    return name, tail


def strip_noise(value: str) -> str:
    """``value`` without the quotes, brackets and punctuation around it."""
    return value.lstrip(_LEADING_NOISE).rstrip(_TRAILING_NOISE).strip()
