"""Sotopia's judge scores for episodes already in Parley: ``{episode pk: {env_pk, agent1, agent2}}``.

Sotopia's human-evaluation study keeps the GPT-4 judge's scores of the episodes it showed people in
one JSON object (``human_eval/complete_gpt_score.json``), keyed by episode pk. Each value names the
episode's environment (``env_pk``) and gives, for ``agent1`` and ``agent2``, the seven Sotopia-EVAL
dimensions and their mean (``overall_score``). The file holds no transcript, so it only adds to
episodes already imported (a human-eval export, a log): matched by external id, ``agent1`` is seat
0 and ``agent2`` seat 1, and ``env_pk`` must be the stored episode's scenario. Episodes the team does
not have are listed in a note and left out: nothing is invented for them.

The study's script took these scores from the logs' ``rewards`` (``rewards[i][-1]``), which the
judge model ``models[0]`` (``gpt-4``) wrote under Sotopia's prompt. So they become answers of the
respondent the Sotopia importer makes from those rewards: judge ``gpt-4``, prompt version
``sotopia``, to the "Sotopia-EVAL judge" preset. An episode imported from its full log and then
given this file is unchanged where the two agree, and refused where they differ. The overall score
is derived (the mean of the seven), so it is read and checked as a number but not stored.
"""

from __future__ import annotations

from typing import Any

from ..models import Episode, Scenario
from .format import FileFormat
from .reading import check_json, decode_json
from .records import Fields, Origin, check_number, check_text, describe, max_length
from .responses import JUDGE_QUESTIONS, EpisodeResponsesDraft, ScoreDraft, scores_to_responses
from .sotopia import DERIVED_SCORES, DIMENSION_NAMES, PROMPT_VERSION

JUDGE_MODEL = "gpt-4"  # the judge of Sotopia's human-evaluation study (the logs' models[0])
AGENTS = ("agent1", "agent2")  # seat 0 and seat 1


def recognises(first: object) -> bool:
    """An object whose first value holds ``agent1`` and ``agent2`` score objects."""
    if not isinstance(first, dict) or not first:
        return False
    value = next(iter(first.values()))
    return isinstance(value, dict) and all(isinstance(value.get(agent), dict) for agent in AGENTS)


def parse(text: str, file: str) -> list[EpisodeResponsesDraft]:
    value = decode_json(text, Origin(file))
    if not isinstance(value, dict):
        raise Origin(file).problem(f"expected an object keyed by episode pk, got {describe(value)}")
    return [episode_scores(pk, item, Origin(file, f"record {pk}")) for pk, item in value.items()]


def episode_scores(pk: str, value: Any, origin: Origin) -> EpisodeResponsesDraft:
    check_json(value, origin)
    check_text(pk, origin, blank=False, max_length=max_length(Episode, "external_id"))
    fields = Fields(value, origin)
    scores = [
        score
        for seat, agent in enumerate(AGENTS)
        for score in agent_scores(fields.nested(agent), seat)
    ]
    return EpisodeResponsesDraft(
        episode_id=pk,
        origin=origin,
        responses=scores_to_responses(scores, range(len(AGENTS))),
        id_field="pk",
        scenario_id=fields.text("env_pk", required=True, blank=False, max_length=max_length(Scenario, "external_id")),
        scenario_field="env_pk",
        when_missing=EpisodeResponsesDraft.LIST,
    )


def agent_scores(fields: Fields, seat: int) -> list[ScoreDraft]:
    """The seven dimensions of one agent, each in its range; the derived overall score checked, not kept."""
    missing = [name for name in DIMENSION_NAMES if name not in fields.data]
    if missing:
        raise fields.origin.at(missing[0]).problem(
            f"required field is missing (an agent's scores name {', '.join(DIMENSION_NAMES)})"
        )
    drafts = []
    for key, value in fields.data.items():
        origin = fields.origin.at(key)
        number = check_number(value, origin)
        if key in DERIVED_SCORES:
            continue
        found = JUDGE_QUESTIONS.get(DIMENSION_NAMES.get(key, ""))
        if found is None:
            known = ", ".join([*DIMENSION_NAMES, *DERIVED_SCORES])
            raise origin.problem(f"{key!r} is not a Sotopia dimension ({known})")
        question = found[1]
        if not question.low <= number <= question.high:
            raise origin.problem(f"{number:g} is outside [{question.low}, {question.high}] for {key}")
        drafts.append(ScoreDraft(
            evaluator=JUDGE_MODEL, dimension=question.key, score=number, origin=origin, seat_position=seat,
            prompt_version=PROMPT_VERSION,
        ))
    return drafts


FORMAT = FileFormat(
    "sotopia-scores", label="Sotopia judge scores",
    shape="Sotopia judge scores keyed by episode pk (env_pk, agent1, agent2)",
    recognise=recognises, parse=parse,
)
