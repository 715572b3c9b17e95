"""The judge's rubrics as data: two preset instruments, "Sotopia-EVAL judge" and "SocialVeil judge".

The nine evaluation dimensions Parley's judge scores are instrument questions, not code: each is
a bounded-numeric question with its range (``low``/``high``, ends included), asked once per seat
(Sotopia-EVAL's seven goal-oriented dimensions, §3 and appendix D of the Sotopia paper) or once
per episode (SocialVeil's two barrier-aware dimensions, its appendix G). Its ``dimension`` is its
key, so the agreement report can set an annotator's answer beside the judge's for the same
construct. The ``rubric`` is what the judge is told a score means (the question's help text); the
``prompt`` is the short question a person reads.

:func:`install` creates the presets (team NULL, shared and read-only) from these definitions; a
data migration runs it, and the judge calls it again so a database emptied by hand still has
them. It never changes an instrument that exists: a changed rubric is a new ``version``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils import timezone

SEAT = "seat"
EPISODE = "episode"
SLIDER = "slider"


@dataclass(frozen=True)
class RubricQuestion:
    key: str
    label: str
    low: int
    high: int
    scope: str
    prompt: str
    rubric: str

    @property
    def per_seat(self) -> bool:
        return self.scope == SEAT


@dataclass(frozen=True)
class Rubric:
    preset: str
    name: str
    version: int
    description: str
    questions: tuple[RubricQuestion, ...]


SOTOPIA_EVAL = Rubric(
    preset="sotopia-eval-judge",
    name="Sotopia-EVAL judge",
    version=1,
    description=(
        "Sotopia's seven goal-oriented dimensions, scored for each seat by an automated judge, each on "
        "its own range, with the reasoning first."
    ),
    questions=(
        RubricQuestion(
            "goal", "Goal completion", 0, 10, SEAT,
            "How far did the character get toward their own social goal?",
            "First restate the character's social goal in your own words. Then judge how far the character "
            "got toward it by the end of the conversation. 0 means almost nothing of the goal was achieved, "
            "10 means it was achieved completely; partial progress earns a score in between.",
        ),
        RubricQuestion(
            "believability", "Believability", 0, 10, SEAT,
            "Did the character act naturally and in keeping with their profile?",
            "Judge whether the character behaves like a plausible person. Naturalness: do they confuse their "
            "own identity, echo the other side's words or actions for no reason, or stay more polite than "
            "the situation calls for? Consistency: do their words and actions fit their profile "
            "(personality, values, way of deciding)? Higher means more believable; a single slip should "
            "lower the score a little, not sink it.",
        ),
        RubricQuestion(
            "relationship", "Relationship", -5, 5, SEAT,
            "Did the relationship with the other side improve (+) or suffer (-)?",
            "Describe the relationship between the characters before the conversation and how it stands "
            "after it. Did the exchange keep or strengthen the tie (family, friendship, romance, "
            "acquaintance), and did it help or hurt the character's standing or reputation? Positive "
            "means the relationship improved, negative that it was damaged, 0 that it is unchanged.",
        ),
        RubricQuestion(
            "knowledge", "Knowledge", 0, 10, SEAT,
            "How much new, important information did the character gain?",
            "List what the character learned during the conversation, then judge whether it was new to "
            "them and whether it matters to them. 0 means nothing new or nothing of use, 10 means a lot "
            "of new and important information.",
        ),
        RubricQuestion(
            "secret", "Secret", -10, 0, SEAT,
            "How much of what the character wanted hidden leaked out (0 = nothing)?",
            "Name the secret, private information or hidden intention the character wanted to keep, and "
            "judge whether they kept it. 0 means nothing was given away (also when there was nothing to "
            "hide); -10 means a critical secret or intention came out. Weigh how much leaked and how much "
            "it mattered to the character.",
        ),
        RubricQuestion(
            "social_rules", "Social rules", -10, 0, SEAT,
            "Did the character break moral rules or laws (0 = none broken)?",
            "Judge whether the character broke social norms (rudeness, insults, manipulation, deceit "
            "that harms) or laws (threats, fraud, theft). 0 means no rule was broken; scores toward -10 "
            "mean ever more serious violations.",
        ),
        RubricQuestion(
            "financial", "Financial and material benefits", -5, 5, SEAT,
            "Did the character gain (+) or lose (-) money or material goods?",
            "Judge what the character gained or lost in money or material goods, counting both the "
            "short term (payments, refunds, food, objects) and the long term (a job, a contract, an "
            "investment). Positive means a gain, negative a loss, 0 neither.",
        ),
    ),
)

SOCIALVEIL_JUDGE = Rubric(
    preset="socialveil-judge",
    name="SocialVeil judge",
    version=1,
    description=(
        "SocialVeil's two barrier-aware dimensions, scored once for the whole conversation by an "
        "automated judge: the confusion left at the end and how well the sides understood each other."
    ),
    questions=(
        RubricQuestion(
            "unresolved_confusion", "Unresolved confusion", 1, 5, EPISODE,
            "How much confusion was left at the end (5 = none left, 1 = incoherent)?",
            "How much about the situation and the characters' goals is still unclear when the "
            "conversation ends? Higher is better:\n"
            "  1 = the talk is incoherent: the situation or the goals are ignored or distorted, key "
            "questions go unanswered, the two talk past each other;\n"
            "  2 = serious misunderstandings remain: however smoothly it went, what at least one side "
            "wanted is still not settled;\n"
            "  3 = part of the situation and goals is understood, but at least one key point stays "
            "ambiguous, mismatched or untouched;\n"
            "  4 = the situation and the main goals are understood; only secondary details (timing, "
            "particular constraints, small preferences) are left open;\n"
            "  5 = nothing is left unclear: the situation and each side's goal are fully resolved.",
        ),
        RubricQuestion(
            "mutual_understanding", "Mutual understanding", 1, 5, EPISODE,
            "How well did the two sides understand each other's goals (5 = fully)?",
            "When the conversation ends, does each side clearly grasp the other's point of view, "
            "intentions and goals in this situation?\n"
            "  1 = no shared understanding: they talk past each other or drift off topic and never engage "
            "with what the situation is about;\n"
            "  2 = one or both consistently misread what the other wants here, even if they trade "
            "pleasantries;\n"
            "  3 = each partly grasps the other's goals, but key intentions are still misread or left "
            "aside;\n"
            "  4 = both show they understand each other's goals here, though nuances (emotional tone, "
            "secondary motives) may be missed;\n"
            "  5 = full alignment: both clearly understand each other's goals, intentions and approach in "
            "this situation and stay on it.",
        ),
    ),
)

JUDGE_RUBRICS: tuple[Rubric, ...] = (SOTOPIA_EVAL, SOCIALVEIL_JUDGE)
# The nine dimensions, each with the preset that asks it: what older files and Sotopia's rewards name.
JUDGE_DIMENSIONS: dict[str, tuple[Rubric, RubricQuestion]] = {
    question.key: (rubric, question) for rubric in JUDGE_RUBRICS for question in rubric.questions
}


def question_fields(question: RubricQuestion, position: int) -> dict[str, Any]:
    """The ``Question`` row of a rubric question (bounded numeric, its key also its dimension)."""
    return {
        "key": question.key,
        "position": position,
        "kind": SLIDER,
        "label": question.label,
        "prompt": question.prompt,
        "help_text": question.rubric,
        "required": True,
        "scope": question.scope,
        "rationale": "required",
        "options": {"min": question.low, "max": question.high, "step": 1},
        "low": float(question.low),
        "high": float(question.high),
        "dimension": question.key,
    }


def install(instrument_model: Any, question_model: Any, rubrics: tuple[Rubric, ...] = JUDGE_RUBRICS) -> list[Any]:
    """The preset instruments of ``rubrics``, created with their questions where missing, in order.

    Takes the model classes so a migration can pass its historical ones. An existing preset (found
    by its slug and version, team NULL) is returned as it is.
    """
    found = []
    for rubric in rubrics:
        instrument, created = instrument_model.objects.get_or_create(
            team=None, preset=rubric.preset, version=rubric.version,
            defaults={"name": rubric.name, "description": rubric.description, "frozen_at": timezone.now()},
        )
        if created:
            question_model.objects.bulk_create(
                question_model(instrument=instrument, **question_fields(question, position))
                for position, question in enumerate(rubric.questions)
            )
        found.append(instrument)
    return found
