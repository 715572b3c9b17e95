"""SHREC's eight tasks built from segments: one plain ``ItemRecord`` per question (spec SH-6).

- ``detection``: the balanced set of agreed segments and None segments (``segments.py``); options
  Social Competence / Social Error / None.
- ``error``: every agreed segment; options Social Error / No Social Error.
- ``attributes``: agreed segments with at least one attribute (under the attribute policy); the
  options are the seven attributes in Parley's order, every gold attribute a correct option.
- ``multiple``: the same segments; True when more than one attribute is marked.
- ``pre`` / ``post``: competency segments whose ``pair`` excerpt is exactly a user turn then the
  agent's turn (whatever the excerpt mode). Pre-condition: the agent's utterance is shown, the
  user's is the answer; post-condition the other way round. Distractors are the other pool
  members' answers.
- ``rationale`` / ``correction``: error segments with a non-empty rationale (correction); the
  distractors are other error segments' texts.

**Distractors and order** are seeded and independent of Python's version: among the eligible
candidates the 4 with the smallest ``sha256("<seed>|<item_key>|distractor|<text>")`` hex digest are
chosen, and the five options are shown in ascending ``sha256("<seed>|<item_key>|order|<text>")``.
A candidate is eligible when it is another segment, its text differs from the correct one and from
every candidate taken before it (first in pool order wins), and

- rationale/correction: it has the same label and its attribute set is ``disjoint`` from the item's
  (SHREC's original pipeline) or ``not_identical`` to it (its clean pipeline);
- pre/post: with ``same_context_exclusion`` (default), what it shows (its context) differs from
  what the item shows, so a "Yes." answered two ways cannot make two right options.

An item with fewer than ``min_eligible`` candidates (4, the paper; 5, the released pipeline) is not
built, and counted. Which segments the multiple-choice tasks draw from: ``mcq_from="groups"`` (every
group's first span, agreed or not: the released pipeline) or ``"agreed"``.

Item keys: the segment's key (``"<video>:<n>"``, ``"<video>:none<n>"``), with ``":pre"``/``":post"``
for the pre- and post-conditions.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .excerpts import pair_excerpt
from .records import ATTRIBUTE_KEYS, ATTRIBUTES, EpisodeRecord, TurnRecord
from .segments import EpisodeSegments, Segment, SegmentOptions, check_options, episode_segments

TASKS = ("detection", "error", "attributes", "multiple", "pre", "post", "rationale", "correction")
DETECTION_OPTIONS = ["Social Competence", "Social Error", "None"]
DETECTION_GOLD = ["competency", "error", "none"]
ERROR_OPTIONS = ["Social Error", "No Social Error"]
ERROR_GOLD = ["error", "no_error"]
ATTRIBUTE_OPTIONS = [name for _, name in ATTRIBUTES]
MULTIPLE_OPTIONS = ["True", "False"]
DISTRACTOR_RULES = ("disjoint", "not_identical")
MCQ_SOURCES = ("groups", "agreed")
N_DISTRACTORS = 4
Progress = Callable[[str, int, int], None] | None  # (task, done, total)


@dataclass(frozen=True)
class BuildOptions(SegmentOptions):
    """Every option of a build (the segments' and the multiple-choice tasks'), stored with the task set."""

    distractors: str = "disjoint"
    min_eligible: int = 4
    same_context_exclusion: bool = True
    mcq_from: str = "groups"

    def problems(self) -> list[str]:
        found = check_options(self)
        if self.distractors not in DISTRACTOR_RULES:
            found.append(f"unknown distractor rule {self.distractors!r}: choose disjoint or not_identical")
        if self.min_eligible < N_DISTRACTORS:
            found.append(f"min_eligible must be at least {N_DISTRACTORS} (four distractors are shown)")
        if self.mcq_from not in MCQ_SOURCES:
            found.append(f"unknown segment source {self.mcq_from!r}: choose groups or agreed")
        return found


@dataclass
class ItemRecord:
    """One task item as plain data; ``benchmark.shrec.saving`` stores it as a ``TaskItem``."""

    task: str
    item_key: str
    episode_key: str
    episode_id: int | None
    first_turn: int | None
    last_turn: int | None
    start_s: float | None
    end_s: float | None
    label: str
    context: str
    options: list[str]
    correct: list[int]
    gold: Any
    source: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    subsets: list[int] = field(default_factory=list)


@dataclass
class BuildResult:
    """The items built, how many of each task, and what was left out and why."""

    items: list[ItemRecord]
    counts: Counter
    skipped: Counter  # "<task>: <reason>" -> how many
    segments: dict[str, EpisodeSegments]


def digest(seed: int, item_key: str, purpose: str, text: str) -> str:
    """``sha256("<seed>|<item_key>|<purpose>|<text>")`` as hex: the order seeded choices follow."""
    return hashlib.sha256(f"{seed}|{item_key}|{purpose}|{text}".encode()).hexdigest()


def _item(task: str, key: str, segment: Segment, context: str, options, correct, gold, **provenance) -> ItemRecord:
    return ItemRecord(
        task=task,
        item_key=key,
        episode_key=segment.episode.key,
        episode_id=segment.episode.episode_id,
        first_turn=segment.excerpt.first_turn,
        last_turn=segment.excerpt.last_turn,
        start_s=segment.start_s,
        end_s=segment.end_s,
        label=segment.label,
        context=context,
        options=list(options),
        correct=list(correct),
        gold=gold,
        source=segment.episode.source,
        provenance={
            "spans": list(segment.span_ids), "annotators": list(segment.annotators),
            "attributes": list(segment.attributes), **provenance,
        },
    )


def _gap(segment: Segment) -> dict[str, Any]:
    if segment.label != "none":
        return {}
    if segment.start_s is not None:
        return {"gap_s": [segment.start_s, segment.end_s]}
    return {"gap_turns": [segment.start_turn, segment.end_turn]}


def detection_items(segments: Iterable[Segment]) -> list[ItemRecord]:
    items = []
    for s in segments:
        correct = [DETECTION_GOLD.index(s.label)]
        items.append(_item("detection", s.key, s, s.excerpt.text, DETECTION_OPTIONS, correct, s.label, **_gap(s)))
    return items


def error_items(segments: Iterable[Segment]) -> list[ItemRecord]:
    items = []
    for s in segments:
        gold = "error" if s.label == "error" else "no_error"
        items.append(_item("error", s.key, s, s.excerpt.text, ERROR_OPTIONS, [ERROR_GOLD.index(gold)], gold))
    return items


def attribute_items(segments: Iterable[Segment]) -> tuple[list[ItemRecord], list[ItemRecord]]:
    """Task 3 and task 4 items from the agreed segments that have an attribute."""
    attributes, multiple = [], []
    for s in segments:
        if not s.attributes:
            continue
        gold = sorted(set(s.attributes))
        correct = [ATTRIBUTE_KEYS.index(key) for key in ATTRIBUTE_KEYS if key in gold]
        attributes.append(_item("attributes", s.key, s, s.excerpt.text, ATTRIBUTE_OPTIONS, correct, gold))
        many = len(gold) > 1
        multiple.append(_item("multiple", s.key, s, s.excerpt.text, MULTIPLE_OPTIONS, [0 if many else 1], many))
    return attributes, multiple


@dataclass(frozen=True)
class Candidate:
    """A pool member as a distractor source: its text for this task, what it shows, its attributes."""

    segment: Segment
    text: str
    context: str

    @cached_property
    def encoded(self) -> bytes:
        return self.text.encode()

    @cached_property
    def attribute_set(self) -> frozenset[str]:
        return frozenset(self.segment.attributes)


def choose_options(
    seed: int, item_key: str, answer: str, eligible: Sequence[Candidate]
) -> tuple[list[str], int, list[Candidate]]:
    """The four distractors with the smallest seeded digests, and the five options in seeded order.

    A raw digest sorts as its hex form does, and hashing a copy of the shared prefix gives the same
    digest as hashing the whole text: ``digest`` states the rule, this computes it fast.
    """
    prefix = hashlib.sha256(f"{seed}|{item_key}|distractor|".encode())

    def order(candidate: Candidate) -> bytes:
        hashed = prefix.copy()
        hashed.update(candidate.encoded)
        return hashed.digest()

    chosen = heapq.nsmallest(N_DISTRACTORS, eligible, key=order)
    options = sorted([answer, *(c.text for c in chosen)], key=lambda text: digest(seed, item_key, "order", text))
    by_text = {c.text: c for c in chosen}
    return options, options.index(answer), [by_text[text] for text in options if text != answer]


def eligible_candidates(item: Candidate, pool: Iterable[Candidate]) -> list[Candidate]:
    """Other segments whose text differs from the answer and from every earlier candidate in ``pool``.

    ``pool`` holds only the candidates the task's own rule accepts, in pool order, so the first
    segment with a text is the one offered.
    """
    seen = {item.text}
    eligible = []
    for other in pool:
        if other.text in seen or other.segment is item.segment:
            continue
        seen.add(other.text)
        eligible.append(other)
    return eligible


def _mcq_item(task, key, item: Candidate, eligible, options: BuildOptions, skipped: Counter) -> ItemRecord | None:
    if len(eligible) < options.min_eligible:
        skipped[f"{task}: fewer than {options.min_eligible} eligible distractors"] += 1
        return None
    texts, correct, distractors = choose_options(options.seed, key, item.text, eligible)
    sources = [{"segment": c.segment.key, "span": c.segment.span_ids[0]} for c in distractors]
    return _item(task, key, item.segment, item.context, texts, [correct], correct + 1, distractors=sources)


def explanation_items(
    task: str, segments: Iterable[Segment], options: BuildOptions, skipped: Counter, progress: Progress = None
) -> list[ItemRecord]:
    """Rationale or correction items of the error segments (``task`` names the text field)."""
    pool = [
        Candidate(s, getattr(s, task), s.excerpt.text)
        for s in segments
        if s.label == "error" and getattr(s, task) and s.excerpt.lines
    ]
    items = []
    disjoint = options.distractors == "disjoint"
    for done, member in enumerate(pool, start=1):
        own, label = member.attribute_set, member.segment.label
        accepted = (
            other for other in pool
            if other.segment.label == label
            and (own.isdisjoint(other.attribute_set) if disjoint else other.attribute_set != own)
        )
        item = _mcq_item(task, member.segment.key, member, eligible_candidates(member, accepted), options, skipped)
        if item:
            items.append(item)
        if progress:
            progress(task, done, len(pool))
    return items


def turn_pair(segment: Segment) -> tuple[TurnRecord, TurnRecord] | None:
    """The user's turn and the agent's reply, for a segment whose pair excerpt is exactly user then agent."""
    cut = pair_excerpt(segment.episode, start_s=segment.start_s, start_turn=segment.start_turn, agent_seat=segment.seat)
    if len(cut.turns) != 2:
        return None
    turns = {turn.index: turn for turn in segment.episode.turns}
    user, agent = (turns[index] for index in cut.turns)
    if user.seat == segment.agent_seat or agent.seat != segment.agent_seat:
        return None
    return user, agent


def condition_items(
    segments: Iterable[Segment], options: BuildOptions, skipped: Counter, progress: Progress = None
) -> dict[str, list[ItemRecord]]:
    """Pre- and post-condition items from the competency segments that are one user–agent pair.

    The item's turns are the one turn it shows (the agent's for a pre-condition, the user's for a
    post-condition), so whatever shows an item's turns never shows its answer.
    """
    pairs = [(s, pair) for s in segments if s.label == "competency" and (pair := turn_pair(s))]
    built: dict[str, list[ItemRecord]] = {"pre": [], "post": []}
    for task, shown, answer in (("pre", 1, 0), ("post", 0, 1)):
        pool = [Candidate(s, pair[answer].text.strip(), pair[shown].text.strip()) for s, pair in pairs]
        for done, (member, (_, pair)) in enumerate(zip(pool, pairs, strict=True), start=1):

            excluded = member.context if options.same_context_exclusion else None
            accepted = (other for other in pool if other.context != excluded)
            key = f"{member.segment.key}:{task}"
            item = _mcq_item(task, key, member, eligible_candidates(member, accepted), options, skipped)
            if item:
                item.first_turn = item.last_turn = pair[shown].index
                built[task].append(item)
            if progress:
                progress(task, done, len(pool))
    return built


def build_tasks(
    episodes: Sequence[EpisodeRecord],
    tasks: Sequence[str] = TASKS,
    options: BuildOptions | None = None,
    progress: Progress = None,
) -> BuildResult:
    """Build the chosen tasks' items from the episodes' spans (raises ValueError on bad options).

    ``progress(task, done, total)`` is called as each multiple-choice candidate is done: the part
    whose time grows with the square of the pool (every eligible text is hashed for every item).
    """
    options = options or BuildOptions()
    problems = options.problems() + [f"unknown task {task!r}" for task in tasks if task not in TASKS]
    if problems:
        raise ValueError("; ".join(problems))
    per_episode = {episode.key: episode_segments(episode, options) for episode in episodes}
    groups = [s for result in per_episode.values() for s in result.groups]
    agreed = [s for result in per_episode.values() for s in result.agreed]
    mcq = groups if options.mcq_from == "groups" else agreed
    skipped: Counter = Counter()
    built: dict[str, list[ItemRecord]] = {}
    if "detection" in tasks:
        built["detection"] = detection_items(s for result in per_episode.values() for s in result.detection)
    if "error" in tasks:
        built["error"] = error_items(agreed)
    if "attributes" in tasks or "multiple" in tasks:
        built["attributes"], built["multiple"] = attribute_items(agreed)
    if "pre" in tasks or "post" in tasks:
        built.update(condition_items(mcq, options, skipped, progress))
    for task in ("rationale", "correction"):
        if task in tasks:
            built[task] = explanation_items(task, mcq, options, skipped, progress)
    items = [item for task in TASKS if task in tasks for item in built.get(task, [])]
    return BuildResult(items, Counter(item.task for item in items), skipped, per_episode)
