"""SocialVeil's scenario files (ulab-uiuc/social-veil, ``data/``), read as scenarios, not episodes.

SocialVeil keeps its scenario set as Sotopia environments with their casts, one record per
environment × cast, named ``episode_id`` although nothing has been played yet:

- ``episode_all.jsonl`` (the 180 scenarios), ``episode_all_neutralized.jsonl`` (the same with a
  neutral ``scenario`` and the original in ``scenario_detailed``) and ``episode_hard.jsonl`` (the
  scenarios of Sotopia's hard environments);
- one JSON array per barrier condition, ``episodes_all_<barrier>.json``, written by
  ``data/barrier_creation.py`` and ``data/create_composite_barriers.py``: the neutralised records
  plus ``barrier_type``, ``barrier_prompts.agentA`` (the prompt the barrier agent is given) and a
  trait note appended to ``agent1_profile``, with ``_<barrier>`` added to the ``episode_id``.

Each record becomes one scenario whose external id is the ``episode_id`` without that suffix, so
one scenario gathers the prompts of every barrier file. Its difficulty is ``hard`` when its Sotopia
``environment_id`` is one of the 14 hard environments SocialVeil counts as Sotopia-Hard
(``sotopia.HARD_ENVIRONMENTS``, from ``data/data_check.py``) or when it comes from
``episode_hard.jsonl``, so the report's ``hard`` split is the paper's Sotopia-Hard column. Its
two roles are cast with the Sotopia profiles in ``agent_profiles`` (a character already imported
with that ``pk`` is reused), its goals keep their hints and lose ``<extra_info>`` to the role's
private knowledge (``sotopia.split_goal``), and the multiple-choice questions about goals and
reasons become probes. A barrier file's prompt
becomes a ``ScenarioBarrier`` for that barrier: agentA is the first role, the one
``scripts/run.py`` builds from ``agent_profiles[0]`` and lets open the conversation. The field
mapping is in ``docs/formats.md`` ("SocialVeil scenario files").
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..models import Probe, Relationship, Scenario
from .checks import check_roles, check_scenario_shape, check_scenario_values
from .format import FileFormat
from .records import (
    BarrierDefinition,
    BarrierPromptDraft,
    CharacterRef,
    Draft,
    Fields,
    ProbeDraft,
    RoleDraft,
    ScenarioDraft,
    check_text,
    describe,
    goals_from_text,
    max_length,
)
from .sotopia import HARD_ENVIRONMENTS, agent_profile, records, split_goal

SOURCE = "socialveil"
KEYS = frozenset({"episode_id", "agent_profiles", "agent_goals"})

# Sotopia's relationship words as SocialVeil writes them (``agent_relationship``).
RELATIONSHIPS = {
    "stranger": Relationship.STRANGER,
    "know_by_name": Relationship.KNOW_BY_NAME,
    "acquaintance": Relationship.ACQUAINTANCE,
    "friend": Relationship.FRIEND,
    "romantic_relationship": Relationship.ROMANTIC,
    "family_member": Relationship.FAMILY,
    "family": Relationship.FAMILY,
}

COMPOSITE = BarrierDefinition(
    key="composite_emotional_semantic",
    values={
        "name": "Emotional + semantic (composite)",
        "definition": (
            "Emotional interference and semantic vagueness at once, each feeding the other: the speaker's "
            "mood blurs what they refer to, and failing to get through makes the mood worse. SocialVeil's "
            "composite condition."
        ),
        "example": "Ugh, that thing, you know... the whole business just gets to me.",
        "style_directive": (
            "Let your feelings lead and keep what you mean open at the same time: talk about how things feel, "
            "use 'this', 'that' or 'the thing' for what you mean, and when you are not understood, grow more "
            "upset and more vague rather than clearer."
        ),
        "narrative_stance": "Mood first, content blurred by it.",
    },
    cues_from=("emotional", "semantic"),
)

# barrier_type -> (the episode id's suffix, Parley's barrier key, a team barrier to make if missing)
BARRIER_TYPES: dict[str, tuple[str, str, BarrierDefinition | None]] = {
    "semantic_structure": ("semantic", "semantic", None),
    "cultural_style": ("cultural", "sociocultural", None),
    "emotional_influence": ("emotional", "emotional", None),
    "composite_emotional_semantic": ("composite_emotional_semantic", COMPOSITE.key, COMPOSITE),
}
# The leftmost match wins, so "_composite_emotional_semantic" goes whole, not just its "_semantic".
SUFFIX = re.compile("_(?:{})$".format("|".join(re.escape(suffix) for suffix, _, _ in BARRIER_TYPES.values())))
SEATS = {"agentA": 0, "agentB": 1}  # who gets each barrier prompt, by role position
# Fields read for checking but kept elsewhere or nowhere, counted in the summary when present.
NOT_KEPT = ("environment_id", "agent2_profile")
_AGENT = re.compile(r"\bAgent\s+(\d+)\b")


def recognises(first: object) -> bool:
    """A SocialVeil scenario record: an ``episode_id`` with the cast's profiles and goals."""
    return isinstance(first, dict) and KEYS <= first.keys()


def is_hard_file(file: str) -> bool:
    """``episode_hard.jsonl`` (and any ``episode_hard*`` copy) holds Sotopia's hard environments only."""
    return Path(file).name.lower().startswith("episode_hard")


def parse(text: str, file: str) -> list[Draft]:
    hard_file = is_hard_file(file)
    return [scenario(Fields(value, origin), hard_file) for origin, value in records(text, file)]


def scenario(fields: Fields, hard_file: bool = False) -> ScenarioDraft:
    episode_id = fields.text("episode_id", required=True, blank=False)
    external_id = SUFFIX.sub("", episode_id)
    check_text(external_id, fields.origin.at("episode_id"), max_length=max_length(Scenario, "external_id"))
    context = fields.text("scenario", required=True, blank=False)
    hard = hard_file or fields.text("environment_id") in HARD_ENVIRONMENTS
    values: dict[str, Any] = {
        "codename": fields.text("codename"),
        "source": SOURCE,
        "context": context,
        "original_context": fields.text("scenario_detailed") or context,
        "difficulty": "hard" if hard else "standard",
        "relationship": relationship(fields),
    }
    check_scenario_values(values, fields.origin, {"context": "scenario", "original_context": "scenario_detailed"})
    if values["codename"] and not re.fullmatch(r"[-a-zA-Z0-9_]+", values["codename"]):
        raise fields.origin.at("codename").problem(f"{values['codename']!r} is not a slug (letters, digits, - and _)")

    profiles = fields.objects("agent_profiles", required=True)
    goals = fields.sequence("agent_goals", required=True)
    if len(profiles) != 2:
        raise fields.origin.at("agent_profiles").problem(f"a SocialVeil scenario has two agents, got {len(profiles)}")
    if len(goals) != len(profiles):
        raise fields.origin.at("agent_goals").problem(f"{len(goals)} goals for {len(profiles)} agents")
    roles = []
    for position, (profile, goal_text) in enumerate(zip(profiles, goals, strict=True)):
        check_text(goal_text, fields.origin.at("agent_goals").at(position), blank=False)
        goal, knowledge = split_goal(goal_text)
        character = agent_profile(profile)
        roles.append(RoleDraft(
            position,
            goals_from_text(goal),
            reason=fields.text(f"agent{position + 1}_reason"),
            private_knowledge=knowledge,
            character=CharacterRef(profile.origin, external_id=character.external_id, draft=character, noun="agent"),
            goals_field="agent_goals",
        ))
    check_roles(roles, fields.origin.at("agent_goals"))
    draft = ScenarioDraft(
        external_id, values, roles, fields.origin, id_field="episode_id",
        probes=[*probes(fields, "agent_goals_mcqas", Probe.Topic.GOAL),
                *probes(fields, "agent_reasons_mcqas", Probe.Topic.REASON)],
    )
    check_scenario_shape(draft)
    draft.ignored = ignored_fields(fields.data)
    prompt = barrier_prompt(fields, profiles[0].data)
    if prompt is not None:
        draft.barrier_prompts.append(prompt)
    return draft


def relationship(fields: Fields) -> int:
    """``agent_relationship`` as Sotopia's level: a word (``acquaintance``) or its number (2)."""
    value = fields.data.get("agent_relationship")
    origin = fields.origin.at("agent_relationship")
    if value is None:
        raise origin.problem("required field is missing")
    if isinstance(value, int) and not isinstance(value, bool) and value in Relationship.values:
        return value
    if isinstance(value, str) and value.strip().lower() in RELATIONSHIPS:
        return int(RELATIONSHIPS[value.strip().lower()])
    raise origin.problem(f"{describe(value)} is not one of {', '.join(RELATIONSHIPS)}")


def probes(fields: Fields, name: str, topic: str) -> list[ProbeDraft]:
    """Questions such as "What is Agent 2's goal in this scenario?": about the agent they name, options
    A to D in letter order, ``correct_answer`` the letter of the right one."""
    found = []
    for item in fields.objects(name):
        text = item.text("question", required=True, blank=False)
        named = {int(number) for number in _AGENT.findall(text)}
        if len(named) != 1 or not 1 <= next(iter(named)) <= 2:
            raise item.origin.at("question").problem("cannot tell which agent it asks about: name Agent 1 or Agent 2")
        options = item.nested("options")
        letters = sorted(options.data)
        texts = [check_text(options.data[letter], options.origin.at(letter), blank=False) for letter in letters]
        answer = item.text("correct_answer", required=True, blank=False).strip()
        if answer not in letters:
            raise item.origin.at("correct_answer").problem(f"{answer!r} is not one of the options {', '.join(letters)}")
        found.append(ProbeDraft(
            about=next(iter(named)) - 1, topic=topic, text=text, options=texts, correct=letters.index(answer),
            origin=item.origin,
        ))
    return found


def barrier_prompt(fields: Fields, first_agent: dict[str, Any]) -> BarrierPromptDraft | None:
    """A barrier file's ``barrier_prompts`` as the scenario's prompt for that barrier, or None without one.

    The trait note is what ``barrier_creation.py`` appended to ``agent1_profile`` after the short
    profile it rebuilt ("Name Surname, a 45-year-old Surgeon.").
    """
    if not fields.has("barrier_type") and not fields.has("barrier_prompts"):
        return None
    barrier_type = fields.choice("barrier_type", list(BARRIER_TYPES), required=True)
    _, key, definition = BARRIER_TYPES[barrier_type]
    prompts = fields.nested("barrier_prompts")
    given = {}
    for name, value in prompts.data.items():
        if name not in SEATS:
            raise prompts.origin.at(name).problem(f"not one of {', '.join(SEATS)}")
        if check_text(value, prompts.origin.at(name)).strip():
            given[SEATS[name]] = value.strip()
    if not given:
        raise prompts.origin.problem("no agent is given a barrier prompt")
    if len(set(given.values())) > 1:
        raise prompts.origin.problem("agentA and agentB are given different prompts; Parley keeps one per barrier")
    short = (
        f"{first_agent.get('first_name', '')} {first_agent.get('last_name', '')}, "
        f"a {first_agent.get('age', '')}-year-old {first_agent.get('occupation', '')}."
    )
    profile = fields.text("agent1_profile").strip()
    note = profile[len(short):].strip() if profile.startswith(short) else ""
    return BarrierPromptDraft(
        barrier_key=key, style_directive=next(iter(given.values())), origin=prompts.origin,
        trait_note=note, positions=sorted(given), barrier=definition,
    )


def ignored_fields(value: dict[str, Any]) -> list[str]:
    """The fields of a record that have no place in Parley: the environment id, and the one-sentence
    profiles (rebuilt from ``agent_profiles``) except a barrier file's trait note."""
    names = [name for name in NOT_KEPT if value.get(name)]
    if value.get("agent1_profile") and not value.get("barrier_prompts"):
        names.append("agent1_profile")
    return names


FORMAT = FileFormat(
    "socialveil", label="SocialVeil scenarios",
    shape="a SocialVeil scenario (episode_id, agent_profiles, agent_goals)",
    recognise=recognises, parse=parse,
)
