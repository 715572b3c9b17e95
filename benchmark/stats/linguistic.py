"""Linguistic signatures of a text: vague reference, hedging, self-focus and sentiment, offline.

SocialVeil (§5.1, Figure 4) extracts four features from each conversation and correlates them
with the evaluation dimensions: reference pronouns (Ariel 1990), hedges (Lakoff 1973),
self-focus pronouns (Pennebaker 2011) and sentiment polarity. Parley measures them with word
lists and a sentiment lexicon, so they run on any machine, need no model, and are the same every
time. The lists are written here, not copied from any tool; each is a *proxy*:

- **Vague reference** counts reference pronouns and placeholder nouns (``it``, ``that``,
  ``thing``, ``stuff``, ``they``...). Whether a pronoun has a clear antecedent would need
  coreference resolution; the proxy counts every use, so plain speech scores above zero too and
  only differences between conditions carry meaning.
- **Hedges** counts hedging words and phrases (``maybe``, ``perhaps``, ``sort of``, ``I guess``...);
  a phrase counts once. ``kind of`` in "what kind of car" is counted as well: a proxy.
- **Self-focus** counts first-person singular pronouns (``I``, ``me``, ``my``, ``mine``,
  ``myself``, and ``I'm``, ``I've``, ``I'll``, ``I'd``).
- **Sentiment** is VADER's compound score in [-1, 1] (Hutto & Gilbert 2014, the
  ``vaderSentiment`` package, which ships its lexicon and rules), computed per utterance and
  averaged over the utterances that have words, since VADER is built for sentence-sized text.

Rates are counts per word (tokens of letters, with an inner apostrophe kept: ``don't`` is one
word). A text with no words has no rates and no sentiment: those are None, never NaN.
This module needs no Django; it imports ``vaderSentiment`` on first use. ``definitions_key`` names
the lists, rules and VADER release the features come from, so features stored elsewhere can tell
when they were computed under other definitions.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib.metadata import version
from typing import Any

VAGUE_REFERENCES = frozenset(
    "it this that these those they them thing things stuff something someone somebody somewhere whatever "
    "whoever whenever wherever".split()
)
SELF_FOCUS = frozenset("i me my mine myself i'm i've i'll i'd".split())
HEDGE_WORDS = frozenset(
    "maybe perhaps possibly probably might could somewhat apparently presumably seemingly arguably roughly "
    "approximately likely guess suppose".split()
)
HEDGE_PHRASES: tuple[tuple[str, ...], ...] = tuple(
    tuple(phrase.split())
    for phrase in (
        "sort of",
        "kind of",
        "i think",
        "i believe",
        "more or less",
        "a bit",
        "a little",
        "in a way",
        "to some extent",
        "it seems",
    )
)
# 'guess' and 'suppose' count as hedges alone ('I guess' is counted once, through the word).

FEATURES = ("vague_pronouns", "hedges", "self_focus", "sentiment")
FEATURE_LABELS = {
    "vague_pronouns": "Vague reference pronouns (per word)",
    "hedges": "Hedges (per word)",
    "self_focus": "Self-focus pronouns (per word)",
    "sentiment": "Sentiment polarity (VADER compound, -1 to 1)",
}
METHOD = (
    "Per word rates of vague reference pronouns and placeholder nouns, hedging words and phrases, and "
    "first-person singular pronouns, from fixed word lists (proxies: antecedents are not resolved); "
    "sentiment = VADER compound score (Hutto & Gilbert 2014) per utterance, averaged over utterances."
)

_WORD = re.compile(r"[a-z]+(?:['\u2019][a-z]+)*")


def words(text: str) -> list[str]:
    """The words of a text, lower-cased, curly apostrophes made straight."""
    return [word.replace("\u2019", "'") for word in _WORD.findall(text.lower())]


_HEDGE_PHRASE_RE = re.compile(
    r"(?<![\w'])(?:" + "|".join(re.escape(" ".join(phrase)) for phrase in HEDGE_PHRASES) + r")(?![\w'])"
)


def _hedge_count(tokens: Sequence[str]) -> int:
    return sum(1 for token in tokens if token in HEDGE_WORDS) + len(_HEDGE_PHRASE_RE.findall(" ".join(tokens)))


@dataclass(frozen=True)
class Counts:
    """What one text holds: its words and the counts behind the rates."""

    words: int
    vague_pronouns: int
    hedges: int
    self_focus: int


def counts(text: str) -> Counts:
    """The word count and the vague-reference, hedge and self-focus counts of one text."""
    tokens = words(text)
    return Counts(
        words=len(tokens),
        vague_pronouns=sum(1 for token in tokens if token in VAGUE_REFERENCES),
        hedges=_hedge_count(tokens),
        self_focus=sum(1 for token in tokens if token in SELF_FOCUS),
    )


@lru_cache(maxsize=1)
def _analyzer() -> Any:
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def sentiment(text: str) -> float | None:
    """VADER's compound polarity of one text, in [-1, 1]; None when it has no words."""
    return utterance(text).sentiment


@dataclass(frozen=True)
class Utterance:
    """The counts and the sentiment of one utterance: what a signature adds up."""

    counts: Counts
    sentiment: float | None


@lru_cache(maxsize=32768)
def utterance(text: str) -> Utterance:
    """Counts and sentiment of one utterance (cached: transcripts repeat lines, and each line is read for
    the whole transcript and again for its speaker)."""
    found = counts(text)
    polarity = float(_analyzer().polarity_scores(text)["compound"]) if found.words else None
    return Utterance(found, polarity)


@lru_cache(maxsize=1)
def definitions_key() -> str:
    """A digest of everything an utterance's features depend on besides its text: the word lists, the
    tokeniser, the hedge phrases and the ``vaderSentiment`` release (its lexicon and rules)."""
    parts = (
        sorted(VAGUE_REFERENCES), sorted(SELF_FOCUS), sorted(HEDGE_WORDS), HEDGE_PHRASES, _WORD.pattern,
        version("vaderSentiment"),
    )
    return hashlib.blake2b(repr(parts).encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class Signature:
    """The four features of a stretch of speech, plus the words and utterances they rest on."""

    words: int
    utterances: int
    vague_pronouns: float | None
    hedges: float | None
    self_focus: float | None
    sentiment: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def combine(utterances: Iterable[Utterance]) -> Signature:
    """Rates per word over the utterances pooled, and their mean sentiment (utterances without words skipped).

    Pooling words (rather than averaging per-utterance rates) keeps a two-word reply from
    weighing as much as a long turn.
    """
    n_words = vague = hedges = self_focus = spoken = 0
    polarity = 0.0
    for item in utterances:
        if not item.counts.words:
            continue
        spoken += 1
        n_words += item.counts.words
        vague += item.counts.vague_pronouns
        hedges += item.counts.hedges
        self_focus += item.counts.self_focus
        polarity += item.sentiment or 0.0
    if not n_words:
        return Signature(0, 0, None, None, None, None)
    return Signature(n_words, spoken, vague / n_words, hedges / n_words, self_focus / n_words, polarity / spoken)


def signature(texts: Iterable[str]) -> Signature:
    """The features of a stretch of speech given as its utterances."""
    return combine(utterance(text) for text in texts)
