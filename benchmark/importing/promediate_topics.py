"""A ProMediate case's topics, their options and each party's stated preferences, read deterministically.

The six cases write these in several shapes, and every parser here accepts only what it can place:

- Topic titles: the case's ``topics`` list (hmo only), else upstream's ``prompts/topics.json`` for the case
  (:data:`TOPIC_TITLES`, keyed by the file stem), else the titles of the ``issues`` text: numbered lines
  (``1. Budget allocations: ...``, title before the colon or dash) or headings (``## Issue 1: ...``, river).
- Options: the ``options`` text split into one section per topic the same way, then the markers of each
  section in sequence: ``(a)``, ``(A):``, ``(1).``, ``Option 1A:`` or ``Option #1:``. A marker that does not
  continue the sequence (``(b)`` before any ``(a)``) is read as text. Keys are kept in lower case (``a``,
  ``1``); river's ``Option 1A`` is option ``a`` of topic 1.
- Preferences: the party's Opinions section split per topic (by ``###`` sub-headings naming the topic by
  number or letter, else by numbered lines ``1)``, ``1.``, ``ISSUE I:`` in sequence); in each block, what the
  brief ranks: ``First choice: (b)`` (label first; the option named at the start, as ``(1D)``, or as ``Option
  A`` / ``Option #2`` early in the item, or by the option's own label, ``Package 3``) and ``A. $850 million is
  your first choice`` (option first; by letter, ``Option #n`` or the option's own words), ``Unacceptable:``,
  ``Block:`` and ``... is unacceptable``. Words
  such as "barely acceptable" or a ranking in prose only ("You favor mandatory consultation") rank nothing:
  the block's text is kept whole in ``Preference.text`` either way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .records import Origin, PreferenceDraft, TopicDraft

# thoughtful_agents/prompts/topics.json of microsoft/ProMediate-Eval: the cases without a ``topics`` list.
TOPIC_TITLES = {
    "williams": ["Consultation procedures", "Allocation of costs", "Policy evaluation"],
    "francis": [
        "EXPANSION OF THE MEDICAL MANAGEMENT MODEL?",
        "WHO SHOULD DECIDE ON PRACTICE NORMS?",
        "WHO SHOULD TAKE THE LEAD IN TRAINING?",
        "WHAT SHOULD BE THE PACKAGE OF BUDGET PRIORITIES?",
    ],
    "ias": ["Budget allocations", "Architecture", "Organizational structure", "Project time frame"],
    "flagship": [
        "New purchase amount",
        "Engines to Be Purchased",
        "Contents for Upgrade",
        "New value for fleet upgrade",
    ],
    "river": [
        "Water Prediction and Audit of Water Withdrawal and Use",
        "Unused Water Allocations",
        "Environmental Flows",
    ],
}
RANKS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}
ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10}

# A topic section of ``issues`` or ``options``: "## Issue 2: ..." or a line "2. ...".
_SECTION = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*issue[ \t]+(\d{1,2})\b[ \t]*:?|(\d{1,2})\.[ \t])[ \t]*(.*)$", re.M | re.I)
_OPTION = re.compile(
    r"(?:(?<=\s)|(?<=;)|^)(?:\((?P<paren>[A-Za-z]|\d{1,2})\)\.?|Option\s*#?\s*(?:\d{1,2}(?=[A-Za-z]\b))?"
    r"(?P<word>[A-Za-z]|\d{1,2})\b\s*:)",
)
# An Opinions block's start: a ### heading, or a numbered line.
_SUBHEADING = re.compile(r"^[ \t]*###[ \t]*(?:issue[ \t]+)?(\d{1,2}|[IVX]{1,4}|[A-Ja-j])\b[.):]?(.*)$", re.M | re.I)
_NUMBERED = re.compile(r"^[ \t]*(?:issue[ \t]+(\d{1,2}|[IVX]{1,4})[ \t]*:|(\d{1,2})[ \t]*[.)][ \t]*\S)", re.M | re.I)
# "First choice:", "- Second Choice (reluctantly):", "Unacceptable:", "Block:" at a line's start.
_LABEL = re.compile(
    r"^[ \t\-•*]*(?:(?P<rank>first|second|third|fourth|fifth)[ \t]+choice|(?P<refuse>unacceptable|block))\b"
    r"[ \t]*(?:\([^)\n]*\))?[ \t]*[:\-–]?",
    re.M | re.I,
)
# "A. $850 million is your first choice", "- Option #2 is not acceptable", "(a) ... is **unacceptable**".
_STATED = re.compile(
    r"^[ \t\-•*]*(?P<subject>\S[^\n]*?)\s+is\s+(?:also\s+)?(?:your\s+)?\**\s*"
    r"(?:(?P<rank>first|second|third|fourth|fifth)\s+choice|(?P<refuse>unacceptable|not acceptable))",
    re.M | re.I,
)
_LEADING_KEY = re.compile(r"^\s*(?:\(+(?P<paren>[A-Za-z])\)|(?P<bare>[a-z])(?=[\s,.;:]|$))")
_NAMED_KEY = re.compile(
    r"\((?P<topic>\d{1,2})(?P<coded>[A-Za-z])\)|\bOption\s*#?\s*(?P<option>\d{1,2}[A-Za-z]?|[A-Z])\b"
)
_SUBJECT_KEY = re.compile(r"^(?:\(?(?P<letter>[A-Ea-e])\)?[.)]|Option\s*#\s*(?P<number>\d{1,2}))(?:\s|$)")
LABEL_LENGTH = 20  # an option's own label before a colon ("Package 3"), not a sentence
EARLY = 250  # how far into a labelled item its option may be named ("Your first choice is Option A")


def topic_titles(stem: str, listed: list[str], issues: str) -> tuple[list[str], str]:
    """The topics' titles and where they came from (``topics``, ``table`` or ``issues``)."""
    if listed:
        return listed, "topics"
    if stem in TOPIC_TITLES:
        return list(TOPIC_TITLES[stem]), "table"
    return [_title(body) for body in sections(issues)], "issues"


def sections(text: str) -> list[str]:
    """The topic sections of an ``issues`` or ``options`` text, numbered 1, 2, ... in order (a number out of
    sequence is part of the section before it); each starts with its heading line."""
    starts = []
    for match in _SECTION.finditer(text):
        number = int(match.group(1) or match.group(2))
        if number == len(starts) + 1:
            starts.append(match.start())
    return [text[start : starts[n + 1] if n + 1 < len(starts) else len(text)].strip() for n, start in enumerate(starts)]


def _title(section: str) -> str:
    heading = _SECTION.match(section)
    line = (heading.group(3) if heading else section.splitlines()[0]).strip()
    return re.split(r":\s|\s[–-]\s", line, maxsplit=1)[0].strip().rstrip(":") or line


def _question(section: str) -> str:
    """A section without its number: the issue as the case states it."""
    heading = _SECTION.match(section)
    return " ".join((section[heading.start(3) :] if heading else section).split())


def read_topics(titles: list[str], issues: str, options: str, origin: Origin) -> list[TopicDraft]:
    """Each topic with its question (from ``issues``) and its options (from ``options``); a topic without
    options is refused, naming it."""
    questions, option_sections = sections(issues), sections(options)
    topics = []
    for number, title in enumerate(titles):
        found = read_options(option_sections[number]) if number < len(option_sections) else []
        if not found:
            raise origin.at("options").problem(
                f"topic {number + 1} ({title!r}) has no options: the options text needs a section "
                f"'{number + 1}. ...' listing them as (a) ..., (1). ... or Option 1A: ..."
            )
        question = _question(questions[number]) if number < len(questions) else ""
        topics.append(TopicDraft(title=title, question=question, options=found))
    return topics


def read_options(section: str) -> list[dict[str, str]]:
    """The options of one section, markers in sequence (a, b, c... or 1, 2, 3...)."""
    body = section.split("\n", 1)[1] if _SECTION.match(section) and "\n" in section else section
    if _SECTION.match(section) and "\n" not in section:
        body = section[_SECTION.match(section).start(3) :]
    marks = []
    for match in _OPTION.finditer(body):
        key = (match.group("paren") or match.group("word")).lower()
        if key == _successor(marks[-1][0] if marks else None, key):
            marks.append((key, match.start(), match.end()))
    return [
        {
            "key": key,
            "text": " ".join(body[end : marks[n + 1][1] if n + 1 < len(marks) else len(body)].split())
            .lstrip(":")
            .rstrip(";-•* ")
            .strip(),
        }
        for n, (key, _start, end) in enumerate(marks)
    ]


def _successor(previous: str | None, key: str) -> str:
    """The key expected after ``previous`` in the sequence ``key`` belongs to."""
    if previous is None:
        return "1" if key.isdigit() else "a"
    return str(int(previous) + 1) if previous.isdigit() else chr(ord(previous) + 1)


@dataclass
class Stated:
    rank: int  # 1 first choice ...; 0 unacceptable
    key: str
    at: int


def opinion_blocks(opinions: str, count: int) -> dict[int, str]:
    """Topic index -> the Opinions text on that topic: ``###`` sub-sections naming a topic, else numbered
    lines in sequence."""
    headed = list(_SUBHEADING.finditer(opinions))
    starts: list[tuple[int, int]] = []  # (topic index, start)
    if headed:
        for match in headed:
            number = _number(match.group(1))
            if number is not None and number == len(starts) + 1 and number <= count:
                starts.append((number - 1, match.start()))
        ends = [match.start() for match in headed]
    else:
        for match in _NUMBERED.finditer(opinions):
            number = _number(match.group(1) or match.group(2))
            if number == len(starts) + 1 and number <= count:
                starts.append((number - 1, match.start()))
        ends = [start for _topic, start in starts]
    blocks = {}
    for topic, start in starts:
        end = min((point for point in ends if point > start), default=len(opinions))
        blocks[topic] = opinions[start:end].strip()
    return blocks


def _number(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    if token.lower() in ROMAN and token.isupper():
        return ROMAN[token.lower()]
    if len(token) == 1 and token.isalpha():
        return ord(token.lower()) - ord("a") + 1
    return None


def read_preferences(opinions: str, topics: list[TopicDraft], origin: Origin) -> list[PreferenceDraft]:
    """One preference per topic the Opinions section speaks to; an option it names that the topic does not
    have is refused, naming the party and topic."""
    preferences = []
    for index, block in sorted(opinion_blocks(opinions, len(topics)).items()):
        topic = topics[index]
        where = origin.at(f"Opinions, topic {index + 1} ({topic.title})")
        stated = _labelled(block, index + 1, topic) + _by_option(block, topic)
        keys = {option["key"] for option in topic.options}
        for item in stated:
            if item.key not in keys:
                raise where.problem(
                    f"names option {item.key!r}, which topic {index + 1} does not have (options: {', '.join(keys)})"
                )
        ranked = sorted((item for item in stated if item.rank), key=lambda item: (item.rank, item.at))
        preferences.append(
            PreferenceDraft(
                topic=index,
                ranking=list(dict.fromkeys(item.key for item in ranked)),
                unacceptable=list(
                    dict.fromkeys(item.key for item in sorted(stated, key=lambda i: i.at) if not item.rank)
                ),
                text=block,
            )
        )
    return preferences


def _labelled(block: str, number: int, topic: TopicDraft) -> list[Stated]:
    """``First choice: c`` and the like: the option named at the item's start or early in it."""
    labels = list(_LABEL.finditer(block))
    found = []
    for n, label in enumerate(labels):
        item = block[label.end() : labels[n + 1].start() if n + 1 < len(labels) else len(block)]
        key = _key_in(item, number)
        if key is None:
            key = _option_label_in(item[:EARLY], topic) or _option_named(item.strip().split("\n", 1)[0], topic)
        if key is not None:
            rank = RANKS[label.group("rank").lower()] if label.group("rank") else 0
            found.append(Stated(rank, key, label.start()))
    return found


def _key_in(item: str, number: int) -> str | None:
    leading = _LEADING_KEY.match(item)
    if leading:
        return (leading.group("paren") or leading.group("bare")).lower()
    for match in _NAMED_KEY.finditer(item[:EARLY]):
        if match.group("coded"):
            if int(match.group("topic")) == number:
                return match.group("coded").lower()
            continue  # another topic's option, named as a condition ("only if 2b")
        option = match.group("option")
        if len(option) > 1 and option[-1].isalpha():  # "Option 1A"
            if int(option[:-1]) == number:
                return option[-1].lower()
            continue
        return option.lower()
    return None


def _option_label_in(text: str, topic: TopicDraft) -> str | None:
    """The option whose own short label (``Package 3`` of ``Package 3: - ...``) the text names first."""
    found = []
    for option in topic.options:
        head, colon, _rest = option["text"].partition(":")
        if colon and 0 < len(head.strip()) <= LABEL_LENGTH:
            match = re.search(rf"\b{re.escape(head.strip())}\b", text, re.I)
            if match:
                found.append((match.start(), option["key"]))
    return min(found)[1] if found else None


def _by_option(block: str, topic: TopicDraft) -> list[Stated]:
    """``A. $850 million is your first choice``: the subject names the option by key or in its own words."""
    found = []
    for match in _STATED.finditer(block):
        subject = match.group("subject").strip()
        if _LABEL.match(subject):
            continue
        keyed = _SUBJECT_KEY.match(subject)
        if keyed:
            key = (keyed.group("letter") or keyed.group("number")).lower()
        else:
            key = _option_named(subject, topic)
        if key is not None:
            rank = RANKS[match.group("rank").lower()] if match.group("rank") else 0
            found.append(Stated(rank, key, match.start()))
    return found


def _option_named(subject: str, topic: TopicDraft) -> str | None:
    """The one option whose text is ``subject`` (case and spacing aside), or None."""
    wanted = " ".join(subject.lower().split()).rstrip(".:")
    matches = [option["key"] for option in topic.options if " ".join(option["text"].lower().split()) == wanted]
    return matches[0] if len(matches) == 1 else None
