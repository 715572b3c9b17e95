"""Sotopia's castings: which agents play which environment, as extra casts of a scenario.

Sotopia does not play an environment with one fixed pair of people: it stores environment–agent
combinations (``EnvAgentComboStorage``; the released file has five per environment), each naming
the environment and the agents who play it. A line reads
``{"combo_id": ..., "env_id": ..., "agent_ids": [first, second]}``, and becomes a ``Cast`` of the
scenario whose external id is ``env_id``, with external id ``combo_id``: agent *i* plays role *i*,
because Sotopia hands the environment's *i*-th goal to the *i*-th agent.

A casting names; it does not describe. The scenario and the characters must already be in Parley
(import the environment and agent profiles first); a casting naming one that is not is refused,
naming the line, the field and the id. A cast already in Parley is left as it is (unchanged). Each
combination is played as its own cell by ``manage.py simulate --casts all``.
"""

from __future__ import annotations

from ..models import Cast, Character, Scenario
from .format import FileFormat
from .records import CastDraft, CharacterRef, Draft, Fields, Origin, ScenarioRef, max_length
from .sotopia import records

KEYS = frozenset({"combo_id", "env_id", "agent_ids"})
FIRST = (
    "import Sotopia's environment profiles (serialized_environment_profiles.jsonl) and agent profiles "
    "(serialized_agent_profiles.jsonl) first"
)


def recognises(first: object) -> bool:
    """A casting line: ``combo_id``, ``env_id`` and ``agent_ids``."""
    return isinstance(first, dict) and KEYS <= first.keys()


def parse(text: str, file: str) -> list[Draft]:
    drafts: list[Draft] = []
    seen: dict[str, Origin] = {}
    for origin, value in records(text, file):
        draft = casting(Fields(value, origin))
        first = seen.setdefault(draft.external_id, origin)
        if first is not origin:
            raise origin.at("combo_id").problem(
                f"casting {draft.external_id!r} appears twice in this file (first at {first.place})"
            )
        drafts.append(draft)
    return drafts


def casting(fields: Fields) -> CastDraft:
    origin = fields.origin
    combo_id = fields.text("combo_id", required=True, blank=False, max_length=max_length(Cast, "external_id"))
    env_id = fields.text("env_id", required=True, blank=False, max_length=max_length(Scenario, "external_id"))
    agents_origin = origin.at("agent_ids")
    agent_ids = fields.texts("agent_ids", required=True, max_length=max_length(Character, "external_id"))
    if len(agent_ids) < 2:
        raise agents_origin.problem(f"a casting names at least two agents, got {len(agent_ids)}")
    characters = []
    for position, agent_id in enumerate(agent_ids):
        at = agents_origin.at(position)
        if agent_id in agent_ids[:position]:
            raise at.problem(f"agent {agent_id!r} plays two roles; a cast gives each role its own character")
        characters.append(CharacterRef(at, external_id=agent_id, noun="agent"))
    return CastDraft(
        combo_id, ScenarioRef(env_id, origin.at("env_id"), noun="environment"), characters, origin, first=FIRST,
        id_field="combo_id", characters_field="agent_ids",
    )


FORMAT = FileFormat(
    "castings", label="Sotopia castings (scenario and character pairs)",
    shape="a Sotopia casting (combo_id, env_id)",
    recognise=recognises, parse=parse,
)
