"""Neutralisation: rewrite a scenario's shared context into one sentence that gives nothing away.

SocialVeil (§2.3, appendix H.1) rewrites each public scenario description before simulation,
because the description as written often names who wants what, target prices or amounts, and
who is in charge; both agents read it, so each could infer the other's private goal. The
rewrite keeps the setting and hides the rest.

How Parley does it:

- The text rewritten is always the original (``Scenario.original_context``, with Sotopia's
  per-viewer markup removed), never an earlier rewrite, so re-running cannot drift.
- A model writes the sentence as JSON; :func:`check_neutral_sentence` refuses more than one
  sentence, an empty one, one longer than the original, and any figure taken from a side's
  goal, reasons, private knowledge or secret, and the gateway's repair request quotes the problem.
- Results are cached per (scenario, prompt version) in ``NeutralContext``. Applying one keeps the
  original in ``original_context`` and puts the sentence in ``context``.
- A researcher's text is never overwritten: an edited ``NeutralContext`` (``edited=True``) is
  never regenerated, and a scenario whose shared context was already rewritten by hand (it
  differs from its original and no ``NeutralContext`` exists, as in the demo) has that text
  recorded as an edited ``NeutralContext`` instead of being rewritten.
- The offline ``scripted`` model uses :func:`heuristic_neutral_sentence`, a deterministic cut of
  the first sentence, stored under model ``scripted`` and prompt version ``heuristic-1`` so it
  is never mistaken for (or served from the cache instead of) a model's rewrite.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.db import transaction

from ..agents import llm
from ..agents.batches import map_bounded
from ..agents.prompt import topic_of
from ..importing.sotopia import split_scenario
from ..models import NeutralContext, Scenario

NEUTRALISE_PROMPT_VERSION = "neutral-2025.1"
HEURISTIC_VERSION = "heuristic-1"
BY_HAND = "by hand"

GENERATED = "generated"
CACHED = "cached"
KEPT = "kept"
FAILED = "failed"

_PROMPT = """\
Rewrite the description of a social situation below as ONE short sentence that both people in it \
could read without learning anything private.

Keep the setting: where it happens, the occasion, and what kind of relationship the people have.
Leave out everything that belongs to only one side:
- who plays which part or holds which position (who buys and who sells, who is in charge, who asks whom);
- what anyone wants, hopes for or is trying to get;
- prices, sums, budgets, dates, quantities and every other figure;
- the names of the particular things each side is after.
The sentence should sound natural and be concrete enough to set the scene, while leaving open who \
will do what. Do not add anything that is not in the description.

Description:
<<<
{source}
>>>

Reply with JSON only, in this form: {{"context": "<the one sentence>"}}"""


class NeutraliseError(Exception):
    """A scenario could not be neutralised; the message says which and why."""


# --- checking a sentence -----------------------------------------------------------------------------

_ABBREVIATIONS = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|etc|e\.g|i\.e|approx)\.", re.IGNORECASE)
_SENTENCE_BREAK = re.compile(r"[.!?]+[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def sentence_count(text: str) -> int:
    """How many sentences ``text`` holds (a line break also ends one); titles like 'Dr.' do not count."""
    stripped = _ABBREVIATIONS.sub("Abbr", text.strip())
    if not stripped:
        return 0
    return len([part for part in _SENTENCE_BREAK.split(stripped) if part.strip()])


def figures_in(text: str) -> set[str]:
    """The numbers in a text, normalised ('1,500' and '1500' are the same figure)."""
    figures = set()
    for match in _NUMBER.findall(text):
        figure = match.replace(",", "")
        figure = re.sub(r"\.0+$", "", figure)
        figures.add(figure)
    return figures


def check_neutral_sentence(text: Any, *, original: str, private_texts: Sequence[str]) -> str:
    """The sentence, stripped, if it is fit to replace the shared context; else ``ValueError``.

    The message is written for the model that wrote the sentence (it reads it in the repair).
    """
    if not isinstance(text, str):
        raise ValueError(f"'context' must be a string, got {type(text).__name__}")
    sentence = " ".join(text.split())
    if not sentence:
        raise ValueError("the sentence is empty; write one sentence that sets the scene")
    count = sentence_count(text)
    if count > 1:
        raise ValueError(f"write exactly ONE sentence; the reply has {count}")
    limit = len(" ".join(original.split()))
    if len(sentence) > limit:
        raise ValueError(
            f"the sentence has {len(sentence)} characters, more than the original's {limit}; make it shorter"
        )
    leaked = figures_in(sentence) & figures_in("\n".join(private_texts))
    if leaked:
        raise ValueError(
            f"the sentence gives away {', '.join(sorted(leaked))}, a figure from one side's goal or private "
            "knowledge; leave every figure out"
        )
    return sentence


# --- what to rewrite ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioFacts:
    """What neutralising one scenario needs, read from the database in one go."""

    scenario_id: int
    label: str
    context: str
    source: str
    private_texts: tuple[str, ...]
    topic: str
    relationship: int | None
    roles: int
    cached: NeutralContext | None
    edited: NeutralContext | None
    has_rewrites: bool

    @property
    def rewritten_by_hand(self) -> bool:
        """The shared context already differs from its original, with no rewrite on record."""
        return not self.has_rewrites and _squash(self.context) != _squash(self.source)


def _squash(text: str) -> str:
    return " ".join(text.split())


def source_text(scenario: Scenario) -> str:
    """The text to neutralise: the original as written (minus per-viewer markup), else the context."""
    if scenario.original_context.strip():
        shared, _ = split_scenario(scenario.original_context)
        return shared or scenario.original_context.strip()
    return scenario.context.strip()


def private_texts(scenario: Scenario) -> list[str]:
    """Everything only one side knows: goals, reasons, private knowledge and the characters' secrets."""
    texts = []
    for role in scenario.roles.select_related("character").prefetch_related("goals"):
        texts.extend([role.goal_text, role.reason, role.private_knowledge])
        if role.character is not None:
            texts.append(role.character.secret)
    return [text for text in texts if text]


def load_scenario_facts(scenario_id: int, prompt_version: str) -> ScenarioFacts:
    scenario = Scenario.objects.get(pk=scenario_id)
    rows = list(scenario.neutral_contexts.order_by("-updated_at", "-pk"))
    return ScenarioFacts(
        scenario_id=scenario.pk,
        label=str(scenario),
        context=scenario.context,
        source=source_text(scenario),
        private_texts=tuple(private_texts(scenario)),
        topic=topic_of(scenario.codename),
        relationship=scenario.relationship,
        roles=scenario.roles.count(),
        cached=next((row for row in rows if row.prompt_version == prompt_version), None),
        edited=next((row for row in rows if row.edited), None),
        has_rewrites=bool(rows),
    )


def apply_neutral_context(neutral: NeutralContext) -> bool:
    """Put a neutral sentence in its scenario's ``context``, keeping the original; True if it changed.

    ``original_context`` is filled only when empty, so the text as first written is never lost.
    """
    scenario = Scenario.objects.get(pk=neutral.scenario_id)
    if scenario.context == neutral.text:
        return False
    fields = ["context"]
    if not scenario.original_context.strip():
        scenario.original_context = scenario.context
        fields.append("original_context")
    scenario.context = neutral.text
    scenario.save(update_fields=fields)
    return True


# --- the offline heuristic ----------------------------------------------------------------------------

_GOAL_WORDS = re.compile(
    r"\b(?:wants?|wanted|wanting|hopes?|hoping|hoped|tries|trying|tried|needs?|needed|needing|plans?|planning|"
    r"aims?|aiming|intends?|wish(?:es)?|would like|willing|budget|target|at least|at most|insists?|refuses?|"
    r"must|has to|have to|had to|so that|in order to|asks?|asking|demands?|secret(?:ly)?|private(?:ly)?|"
    r"goal|convince|persuade|get (?:him|her|them)|prefers?|expects?|afford|looking for|seeks?|seeking)\b",
    re.IGNORECASE,
)
_FIGURE = re.compile(
    r"[$€£¥]|\d|\b(?:dollars?|euros?|pounds?|percent|per cent|cents?|bucks|hundred|thousand|million)\b",
    re.IGNORECASE,
)
_DANGLING = frozenset(
    "a an the and or but while whereas who whom whose which that because since although though as at for of to "
    "with by from in on about around than his her their its my your our some listed priced costing worth is are "
    "was were has have had".split()
)
_GROUP = {2: "Two", 3: "Three", 4: "Four", 5: "Five"}
_PEOPLE = {0: "strangers", 1: "people who know each other by name", 2: "acquaintances", 3: "friends",
           4: "partners", 5: "family members"}


def heuristic_neutral_sentence(source: str, *, topic: str = "", relationship: int | None = 0, roles: int = 2) -> str:
    """A deterministic stand-in for the neutraliser: the first sentence, cut before any goal or figure.

    The first sentence (or its part before a semicolon) is cut at the first word that states what
    someone wants (wants, needs, hopes, must, budget...) or at any figure or currency, and dangling
    words are trimmed. When fewer than four words survive, a generic sentence from the relationship
    and the scenario's topic is used if it is no longer than the original. Scripted, not a model:
    the result is stored as model 'scripted', prompt version 'heuristic-1'.
    """
    text = _squash(source)
    first = re.split(r"(?<=[.!?])\s+|;", text, maxsplit=1)[0] if text else ""
    cut = len(first)
    for pattern in (_GOAL_WORDS, _FIGURE):
        match = pattern.search(first)
        if match:
            cut = min(cut, match.start())
    candidate = _trim(first[:cut])
    if len(candidate.split()) >= 4:
        return candidate + "."
    generic = (
        f"{_GROUP.get(roles, 'Several')} {_PEOPLE.get(relationship, 'people')} meet to talk about "
        f"{'the ' + topic if topic else 'something'}."
    )
    if len(generic) <= len(text):
        return generic
    return (candidate + ".") if candidate else generic[: max(1, len(text) - 1)].rstrip() + "."


def _trim(text: str) -> str:
    words = re.sub(r"[,;:\s]+$", "", text.strip()).split()
    while words and words[-1].lower().strip(",;:()") in _DANGLING:
        words.pop()
    return re.sub(r"[,;:(\s]+$", "", " ".join(words)).rstrip(".!?")


# --- running it ---------------------------------------------------------------------------------------


@dataclass
class NeutralisationResult:
    """What happened to one scenario: a new sentence, a cached or kept one, or a failure."""

    scenario_id: int
    label: str
    outcome: str
    before: str
    after: str = ""
    model: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome != FAILED


def build_neutralise_messages(source: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": _PROMPT.format(source=source)}]


def prompt_version_for(model: str) -> str:
    return HEURISTIC_VERSION if llm.is_scripted(model) else NEUTRALISE_PROMPT_VERSION


async def neutral_sentence(facts: ScenarioFacts, *, model: str) -> str:
    """A new neutral sentence for a scenario from ``model`` (or the offline heuristic), checked."""
    if llm.is_scripted(model):
        sentence = heuristic_neutral_sentence(
            facts.source, topic=facts.topic, relationship=facts.relationship, roles=facts.roles
        )
        try:
            return check_neutral_sentence(sentence, original=facts.source, private_texts=facts.private_texts)
        except ValueError as error:
            raise NeutraliseError(f"the heuristic rewrite of {facts.label} is unusable: {error}") from error

    def validate(data: dict[str, Any]) -> str:
        return check_neutral_sentence(data.get("context"), original=facts.source, private_texts=facts.private_texts)

    data, _ = await llm.complete_json(
        build_neutralise_messages(facts.source), model=model, temperature=0, validate=validate
    )
    return validate(data)


def _record_hand_rewrite(facts: ScenarioFacts, prompt_version: str) -> NeutralContext:
    return NeutralContext.objects.create(
        scenario_id=facts.scenario_id, prompt_version=prompt_version, model=BY_HAND, text=facts.context, edited=True
    )


@transaction.atomic
def _save_and_apply(facts: ScenarioFacts, prompt_version: str, model: str, text: str) -> NeutralContext:
    neutral, _ = NeutralContext.objects.update_or_create(
        scenario_id=facts.scenario_id,
        prompt_version=prompt_version,
        defaults={"model": model, "text": text, "edited": False},
    )
    apply_neutral_context(neutral)
    return neutral


@transaction.atomic
def _keep(facts: ScenarioFacts, prompt_version: str) -> NeutralContext:
    neutral = facts.edited or facts.cached or _record_hand_rewrite(facts, prompt_version)
    apply_neutral_context(neutral)
    return neutral


async def neutralise_scenario(
    scenario: Scenario | int, *, model: str, force: bool = False, dry_run: bool = False
) -> NeutralisationResult:
    """Neutralise one scenario's shared context with ``model`` and apply it; see the module docstring.

    ``force`` writes a new sentence even when one is cached for this prompt version (never over a
    researcher's edit). ``dry_run`` computes the outcome and the sentence but writes nothing.
    """
    scenario_id = scenario if isinstance(scenario, int) else scenario.pk
    version = prompt_version_for(model)
    try:
        facts = await sync_to_async(load_scenario_facts)(scenario_id, version)
    except Scenario.DoesNotExist:
        return NeutralisationResult(scenario_id, f"scenario {scenario_id}", FAILED, "", error="no such scenario")
    result = NeutralisationResult(scenario_id, facts.label, FAILED, before=facts.context)

    kept = facts.edited or (None if force else facts.cached)
    if kept is not None or facts.rewritten_by_hand:
        result.outcome = KEPT if (facts.edited or facts.rewritten_by_hand) else CACHED
        result.after = kept.text if kept is not None else facts.context
        result.model = kept.model if kept is not None else BY_HAND
        if not dry_run:
            await sync_to_async(_keep)(facts, version)
        return result

    try:
        text = await neutral_sentence(facts, model=model)
    except (llm.LLMError, NeutraliseError) as error:
        result.error = str(error)
        return result
    if not dry_run:
        await sync_to_async(_save_and_apply)(facts, version, model, text)
    result.outcome, result.after, result.model = GENERATED, text, model
    return result


async def neutralise_scenarios(
    scenarios: Iterable[Scenario | int],
    *,
    model: str,
    concurrency: int = 4,
    force: bool = False,
    dry_run: bool = False,
    on_result: Callable[[NeutralisationResult], None] | None = None,
) -> list[NeutralisationResult]:
    """Neutralise many scenarios, at most ``concurrency`` model calls at a time, in the given order."""
    return await map_bounded(
        scenarios,
        partial(neutralise_scenario, model=model, force=force, dry_run=dry_run),
        concurrency=concurrency,
        on_result=on_result,
    )
