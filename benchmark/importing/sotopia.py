"""Sotopia's shapes: episode logs and the agent, environment and relationship profiles.

Accepted, in any ``.json`` (one value, a list, or a redis dump keyed ``:sotopia...:<pk>``) or
``.jsonl`` file, also double-encoded (a JSON string holding the JSON):

- the native ``EpisodeLog`` (``pk, environment, agents, tag, models, messages, rewards, ...``);
- the ``sotopia_episodes_v1`` line (``episode_id, environment_id, agent_ids, raw_messages, ...``,
  plus the scenario, goals and backgrounds in clear);
- the human-evaluation partial log (``pk, environment, tag, models, rewards_prompt``), whose
  transcript exists only as text inside the prompt;
- ``AgentProfile`` / ``EnvironmentProfile`` / ``RelationshipProfile`` in the redis-om shape (``pk``)
  and in the serialized shape (``agent_id``, ``env_id``, ``relationship_id``).

An environment's id is its scenario's external id; the 14 environments of Sotopia-Hard
(``HARD_ENVIRONMENTS``) are scenarios of difficulty ``hard``, the others ``standard``.

How each field maps onto Parley, and why, is in ``docs/formats.md`` ("Sotopia").
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.utils.text import slugify

from ..models import ActionType, Character, Episode, Scenario, Seat
from .checks import (
    check_character_values,
    check_episode,
    check_roles,
    check_scenario_values,
)
from .format import FileFormat
from .parley import json_lines
from .problems import ImportProblem
from .reading import check_json, decode_json, load_json
from .records import (
    MAX_INTEGER,
    MAX_TURN_CHARS,
    TEXT_SCENARIO_PREFIX,
    CharacterDraft,
    CharacterRef,
    CheckedRecord,
    Draft,
    EpisodeDraft,
    Fields,
    Origin,
    Remark,
    RoleDraft,
    ScenarioDraft,
    ScenarioRef,
    SeatDraft,
    TurnDraft,
    check_integer,
    check_number,
    check_text,
    describe,
    goals_from_text,
    max_length,
    unique,
)
from .responses import JUDGE_QUESTIONS, ScoreDraft, scores_to_responses

# Sotopia's evaluation dimensions and ours; overall_score is their mean, so it is not stored.
DIMENSION_NAMES = {
    "believability": "believability",
    "relationship": "relationship",
    "knowledge": "knowledge",
    "secret": "secret",
    "social_rules": "social_rules",
    "financial_and_material_benefits": "financial",
    "goal": "goal",
}
DERIVED_SCORES = ("overall_score",)
PROMPT_VERSION = "sotopia"
ENVIRONMENT = "Environment"

# Field names in Sotopia's agent profile, by our Character field, for messages about a bad value.
AGENT_FIELD_NAMES = {
    "pronouns": "gender_pronoun",
    "personal_values": "schwartz_personal_values",
    "personality": "personality_and_values",
    "decision_style": "decision_making_style",
}


# Sotopia's shapes, as the "not a known Sotopia shape" message lists them.
SHAPES = (
    "a native EpisodeLog (pk, environment, agents, messages)",
    "a sotopia_episodes_v1 line (episode_id, environment_id, agent_ids, raw_messages)",
    "an early v1 line (episode_id, social_interactions, agents_background)",
    "a human-evaluation log (pk, environment, rewards_prompt)",
    "an agent profile (pk or agent_id, first_name)",
    "an environment profile (pk or env_id, agent_goals)",
    "a relationship profile (agent1_id, agent2_id, background_story)",
)

# Sotopia-Hard: the 14 environments Sotopia's hard subset plays, as SocialVeil lists them (SOTOPIA_HARD_ENVS of
# ulab-uiuc/social-veil @ 6008b2f, data/data_check.py). A scenario of one of them is difficulty ``hard``.
HARD_ENVIRONMENTS = frozenset({
    "01H7VFHNV13MHN97GAH73E3KM8", "01H7VFHN5WVC5HKKVBHZBA553R", "01H7VFHN9W0WAFZCBT09PKJJNK",
    "01H7VFHPDZVVCDZR3AARA547CY", "01H7VFHPQQQY6H4DNC6NBQ8XTG", "01H7VFHN7WJK7VWVRZZTQ6DX9T",
    "01H7VFHPS5WJW2694R1MNC8JFY", "01H7VFHNN7XTR99319DS8KZCQM", "01H7VFHQ11NAMZS4A2RDGDB01V",
    "01H7VFHPSWGDGEYRP63H2DJKV0", "01H7VFHNF4G18PC9JHGRC8A1R6", "01H7VFHNNYH3W0VRWVY178K2TK",
    "01H7VFHP8AN5643B0NR0NP00VE", "01H7VFHN7A1ZX5KSMT2YN9RXC4",
})


def difficulty_of(environment_id: str) -> str:
    """``hard`` for one of Sotopia's hard environments, else ``standard``."""
    return "hard" if environment_id in HARD_ENVIRONMENTS else "standard"


def shape(value: dict[str, Any]) -> str | None:
    """Which of Sotopia's shapes a record has, from the keys only that shape has; None for none.

    The test is narrow on purpose: Sotopia's castings (``combo_id, env_id, agent_ids``) and the
    human-evaluation judge scores share some key names with these shapes but are not them.
    """
    keys = value.keys()
    if "episode_id" in keys and ({"raw_messages", "messages", "agent_ids"} & keys):
        return "v1"
    if "episode_id" in keys and "social_interactions" in keys:
        return "v1 transcript"
    if "pk" in keys and "messages" in keys:
        return "native"
    if "rewards_prompt" in keys and "environment" in keys:
        return "human evaluation"
    if "first_name" in keys:
        return "agent"
    if "agent_goals" in keys:
        return "environment"
    if "background_story" in keys or {"agent1_id", "agent2_id"} <= keys or {"agent_1_id", "agent_2_id"} <= keys:
        return "relationship"
    return None


def recognises(first: object) -> bool:
    """One of Sotopia's shapes (``shape``), or the redis dump of profiles."""
    return isinstance(first, dict) and bool(shape(first) or any(key.startswith(":sotopia.") for key in first))


def parse(text: str, file: str) -> list[Draft]:
    """The file's drafts, and a remark with the fields they held but Parley does not keep."""
    remark = Remark()
    drafts = [record(value, origin, remark) for origin, value in records(text, file)]
    return [*drafts, remark] if remark.ignored else drafts


def records(text: str, file: str) -> list[tuple[Origin, Any]]:
    """The records of a file with their origins: ``record N`` in a JSON file, ``line N`` in JSON Lines.

    ``.json`` is read as one JSON value, ``.jsonl`` line by line; any other name is tried as one
    value first, then as lines.
    """
    suffix = Path(file).suffix.lower()
    if not text.strip():
        return []
    if suffix in (".jsonl", ".ndjson"):
        return json_lines(text, file)
    try:
        value = decode_json(text, Origin(file))
    except ImportProblem:
        if suffix != ".json":
            return json_lines(text, file)
        raise
    if isinstance(value, str):
        value = load_json(value, Origin(file, "record 1"))
    if isinstance(value, list):
        found = [(Origin(file, f"record {number}"), item) for number, item in enumerate(value, start=1)]
        for origin, item in found:
            check_json(item, origin)
        return found
    if isinstance(value, dict) and value and all(key.startswith(":sotopia.") for key in value):
        # The redis dump: {":sotopia.database.persistent_profile.AgentProfile:<pk>": {...}, ...}. A
        # problem found before the records are split names its record by that key.
        check_json(value, Origin(file))
        return [
            (
                Origin(file, f"record {number}"),
                {"pk": key.rsplit(":", 1)[1], **item} if isinstance(item, dict) else item,
            )
            for number, (key, item) in enumerate(value.items(), start=1)
        ]
    check_json(value, Origin(file, "record 1"))
    return [(Origin(file, "record 1"), value)]


def record(value: Any, origin: Origin, remark: Remark | None = None) -> Draft:
    """One record as a draft; the fields it holds but Parley does not keep are counted in ``remark``."""
    if isinstance(value, str):  # double-encoded
        value = load_json(value, origin)
    fields = Fields(value, origin)
    found = shape(value)
    if found == "v1":
        draft = episode(fields, Log.from_v1(fields))
    elif found == "v1 transcript":
        draft = episode(fields, Log.from_v1_transcript(fields))
    elif found == "native":
        draft = episode(fields, Log.from_native(fields))
    elif found == "human evaluation":
        draft = episode(fields, Log.from_human_eval(fields))
    elif found == "agent":
        draft = agent_profile(fields)
    elif found == "environment":
        draft = environment_profile(fields)
    elif found == "relationship":
        draft = relationship_profile(fields)
    else:
        keys = ", ".join(sorted(value)[:8]) or "none"
        raise origin.problem(
            f"not a known Sotopia shape (its keys: {keys}); Parley reads {'; '.join(SHAPES)}"
        )
    if remark is not None:
        remark.ignored.update(ignored_fields(fields, found, draft))
    return draft


# The fields each shape keeps (as a Parley field, a setting, or a check), by ``shape``; every other
# field with a value is reported as ignored (``ignored_fields``).
KEPT_FIELDS = {
    "v1": {
        "episode_id", "environment_id", "agent_ids", "experiment_tag", "experiment_model_name_pairs",
        "raw_messages", "messages", "raw_rewards", "scenario", "codename", "agents_background", "social_goals",
        # the transcript again as text, read from raw_messages
        "social_interactions",
    },
    "v1 transcript": {
        "episode_id", "scenario", "codename", "agents_background", "social_goals", "social_interactions", "rewards",
    },
    "native": {"pk", "environment", "agents", "tag", "models", "messages", "rewards"},
    "human evaluation": {"pk", "environment", "agents", "tag", "models", "rewards_prompt", "rewards"},
    "agent": {
        "pk", "agent_id", "first_name", "last_name", "age", "occupation", "gender", "gender_pronoun", "public_info",
        "big_five", "mbti", "moral_values", "schwartz_personal_values", "personality_and_values",
        "decision_making_style", "secret",
    },
    "environment": {"pk", "env_id", "codename", "source", "scenario", "agent_goals", "relationship"},
    "relationship": {
        "pk", "relationship_id", "agent_1_id", "agent_2_id", "agent1_id", "agent2_id", "relationship",
        "background_story",
    },
}
_EMPTY_VALUES = ("", "nan", "none", "null")


def ignored_fields(fields: Fields, found: str, draft: Draft) -> list[str]:
    """The fields of a record that hold something Parley does not keep.

    A field holding nothing (null, "", Sotopia's pandas "nan" or "none", an empty list) is not
    reported. The v1 line's ``rewards`` repeats ``raw_rewards`` without the overall score and counts
    as kept when it agrees; the judge's ``reasoning`` is kept with the scores, or as the environment's
    comment, and is ignored only when a log has neither.
    """
    kept = set(KEPT_FIELDS[found])
    if found == "v1" and rewards_agree(fields.data.get("raw_rewards"), fields.data.get("rewards")):
        kept.add("rewards")
    if isinstance(draft, EpisodeDraft) and (draft.responses or draft.settings.get("environment_comments")):
        kept.add("reasoning")
    ignored = []
    for key, value in fields.data.items():
        if key in kept or value is None or value == [] or value == {}:
            continue
        if isinstance(value, str) and value.strip().lower() in _EMPTY_VALUES:
            continue
        ignored.append(key)
    return ignored


def rewards_agree(raw: Any, plain: Any) -> bool:
    """Whether v1's ``rewards`` (``[{dims}, ...]``) holds the scores of ``raw_rewards``
    (``[[overall, {dims}], ...]``), the overall score left out; true when either is absent (then
    ``rewards`` is the one read)."""
    if raw is None or plain is None:
        return True
    if not (isinstance(raw, list) and isinstance(plain, list) and len(raw) == len(plain)):
        return False
    for entry, scores in zip(raw, plain, strict=True):
        dims = entry[1] if isinstance(entry, list) and len(entry) == 2 else entry
        if not (isinstance(dims, dict) and isinstance(scores, dict)) or without_derived(dims) != without_derived(
            scores
        ):
            return False
    return True


def without_derived(scores: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in scores.items() if key not in DERIVED_SCORES}


# --- small readers for Sotopia's loose typing -------------------------------------------------------


def text_of(fields: Fields, name: str) -> str:
    """A string field where Sotopia's pandas export writes ``"nan"`` for nothing."""
    value = fields.text(name)
    return "" if value.strip().lower() == "nan" else value


def first_key(fields: Fields, *names: str) -> str:
    """The first of ``names`` present in the record (the shapes name the same thing differently)."""
    return next((name for name in names if name in fields.data), names[0])


def int_of(fields: Fields, name: str, *, low: int, high: int, default: int | None = None) -> int | None:
    """An integer that the serialized shape writes as a string (``"3"``)."""
    value = fields.data.get(name)
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "nan")):
        return default
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,18}", value.strip()):
        value = int(value.strip())
    return check_integer(value, fields.origin.at(name), low=low, high=high)


def joined_values(fields: Fields, name: str) -> str:
    """Moral or Schwartz values as ``"Care, Fairness"``.

    The serialized shape has ``["Care", " Fairness"]``; the redis shape has the Python repr of a
    list split at its commas, ``["['Care'", " ' Fairness']"]``. Both become the same text.
    """
    value = fields.data.get(name)
    origin = fields.origin.at(name)
    if value is None:
        return ""
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = value
    else:
        raise origin.problem(f"expected a list of strings, got {describe(value)}")
    text = ",".join(items).strip()
    if text.startswith("[") and text.endswith("]"):
        try:
            parsed = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            parsed = None
        if isinstance(parsed, list) and all(isinstance(item, str) for item in parsed):
            items = parsed
    parts = [part.strip() for item in items for part in item.split(",")]
    return ", ".join(part for part in parts if part and part.lower() != "nan")


def ulid_time(value: str) -> datetime | None:
    """The creation time inside a ULID (Sotopia's pks), or None if ``value`` is not one."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    if len(value) != 26 or any(char not in alphabet for char in value.upper()):
        return None
    milliseconds = 0
    for char in value[:10].upper():
        milliseconds = milliseconds * 32 + alphabet.index(char)
    try:
        return datetime.fromtimestamp(milliseconds / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


# --- scenario text, goals and backgrounds ----------------------------------------------------------

_VIEWER = re.compile(r'<p viewer="([^"]*)">(.*?)</p>', re.S)
_HINT = re.compile(r"<(strategy_hint|clarification_hint)>(.*?)</\1>", re.S)
_EXTRA = re.compile(r"<extra_info>(.*?)</extra_info>", re.S)
_LEFTOVER_TAG = re.compile(r"</?(?:extra_info|strategy_hint|clarification_hint)>")
_RENDERED_EXTRA = re.compile(r"\s*\((Extra information:|Hint:)(.*)\)\s*$", re.S)


def split_scenario(text: str) -> tuple[str, dict[int, list[str]]]:
    """The neutral context every side sees, and what only agent *i* may see.

    Sotopia marks restricted text ``<p viewer="environment">...</p>`` (the judge only) or
    ``viewer="agent_0"``; such text leaves the shared context (it stays in ``original_context``).
    """
    private: dict[int, list[str]] = defaultdict(list)

    def keep_for_viewer(match: re.Match[str]) -> str:
        viewer, content = match.group(1), match.group(2).strip()
        if viewer == "all":
            return content
        agent = re.fullmatch(r"agent_(\d+)", viewer)
        if agent:
            private[int(agent.group(1))].append(content)
        return ""

    context = _VIEWER.sub(keep_for_viewer, text)
    context = re.sub(r"[ \t]{2,}", " ", context).strip()
    return context, private


def split_goal(text: str) -> tuple[str, str]:
    """``(goal, private_knowledge)`` from a Sotopia goal.

    ``<extra_info>`` (facts only this side knows) becomes private knowledge, without its
    "Extra information:" label. ``<strategy_hint>`` and ``<clarification_hint>`` are advice on how to
    pursue the goal, shown to the agent with it, so they stay in the goal on a line of their own
    ("Hint: ..."). Goals already rendered for a prompt ("... (Extra information: ... Hint: ...)")
    are split the same way.
    """
    hints = [match.group(2).strip() for match in _HINT.finditer(text)]
    extras = [match.group(1).strip() for match in _EXTRA.finditer(_HINT.sub("", text))]
    goal = _LEFTOVER_TAG.sub("", _EXTRA.sub("", _HINT.sub("", text)))
    if not hints and not extras:
        rendered = _RENDERED_EXTRA.search(goal)
        if rendered:
            goal = goal[: rendered.start()]
            body = (rendered.group(1) + rendered.group(2)).strip()
            extra, _, hint = body.partition("Hint:")
            extras = [extra.strip()] if extra.strip() else []
            hints = [f"Hint: {hint.strip()}"] if hint.strip() else []
    goal = re.sub(r"\(\s*\)", "", goal).strip()
    private = "\n".join(re.sub(r"^Extra information:\s*", "", extra) for extra in extras if extra)
    return "\n".join([goal, *hints]).strip(), private.strip()


_BACKGROUND = re.compile(
    r"^(?P<name>.+?) is an? (?P<age>\d+)-year-old (?P<gender>\S+) (?P<occupation>.+?)\. "
    r"(?P<pronouns>\S+/\S+) pronouns\.\s*(?P<public_info>.*?)\s*"
    r"Personality and values description:\s*(?P<personality>.*?)\s*"
    r"(?:\S+'s secrets:\s*(?P<secret>.*?))?\s*$",
    re.S,
)


def character_from_background(name: str, background: str, external_id: str, origin: Origin) -> CharacterDraft:
    """A character rebuilt from the background sentence Sotopia writes into its prompts.

    The sentence follows one template ("X is a 29-year-old male chef. He/him pronouns. ...
    Personality and values description: ... X's secrets: ..."); when it does not, the whole
    background is kept as public information.
    """
    first_name, _, last_name = name.strip().partition(" ")
    values: dict[str, Any] = {"first_name": first_name or name, "last_name": last_name}
    match = _BACKGROUND.match(background.strip())
    if match:
        values.update(
            {
                key: (match.group(key) or "").strip()
                for key in ("gender", "occupation", "pronouns", "public_info", "personality", "secret")
            }
        )
        values["age"] = int(match.group("age"))
    else:
        values["public_info"] = background.strip()
    check_character_values(values, origin)
    return CharacterDraft(external_id, values, origin)


@dataclass
class Context:
    """What a log says in clear about its scenario and people (in prompts, or v1's own fields)."""

    scenario: str
    names: list[str]
    backgrounds: dict[str, str] = field(default_factory=dict)
    goals: dict[str, str] = field(default_factory=dict)
    codename: str = ""


def context_from_prompt(text: str) -> Context | None:
    """Read "Scenario: ... Participants: A and B / A's background: ... / A's goal: ..." from a prompt."""
    participants = re.search(r"^Participants:[ \t]*(.+)$", text, re.M)
    if not participants:
        return None
    names = [name.strip() for name in re.split(r",\s*|\s+and\s+", participants.group(1).strip()) if name.strip()]
    scenario = re.search(r"Scenario:(.*?)^Participants:", text, re.S | re.M)
    headers = [
        (match.start(), match.end(), kind, name)
        for name in names
        for kind in ("background", "goal")
        for match in re.finditer(rf"^{re.escape(name)}'s {kind}:[ \t]*", text, re.M)
    ]
    ends = sorted(
        [start for start, _, _, _ in headers]
        + [match.start() for match in re.finditer(r"^(?:Conversation Starts:|Turn #\d+)", text, re.M)]
        + [len(text)]
    )
    context = Context(scenario=scenario.group(1).strip() if scenario else "", names=names)
    for start, body_start, kind, name in headers:
        end = next(position for position in ends if position > start)
        body = text[body_start:end].strip()
        if kind == "goal" and body == "Unknown":
            continue
        (context.backgrounds if kind == "background" else context.goals).setdefault(name, body)
    return context


# --- actions and transcripts ----------------------------------------------------------------------


def parse_action(text: str, origin: Origin) -> tuple[str, str]:
    """``(action_type, content)`` from an agent's action as Sotopia words it."""
    text = text.strip()
    if text.startswith("said:"):
        content = text[len("said:") :].strip()
        if len(content) >= 2 and content.startswith('"') and content.endswith('"'):
            content = content[1:-1]
        # An empty utterance says nothing: keep the turn, as silence, rather than refuse the file.
        return (ActionType.SPEAK, content) if content.strip() else (ActionType.NONE, "")
    if text == "did nothing":
        return ActionType.NONE, ""
    if text == "left the conversation":
        return ActionType.LEAVE, ""
    for marker, action_type in (("[non-verbal communication]", ActionType.NON_VERBAL), ("[action]", ActionType.ACTION)):
        if text.startswith(marker):
            # A bare "[non-verbal communication] " is a gesture no one described: a silent non-verbal
            # turn (checks.ACTIONS_NEEDING_CONTENT); a bare "[action]" is refused by check_episode.
            return action_type, text[len(marker) :].strip()
    raise origin.problem(
        f'{describe(text)} is not a Sotopia action (said: "...", did nothing, left the conversation, '
        "[non-verbal communication] ..., [action] ...)"
    )


def turns_from_messages(messages: list[Any], names: list[str], origin: Origin) -> list[TurnDraft]:
    """One turn per round of ``messages``: the action of the agent whose turn it was.

    Each round holds every agent's action. In Sotopia's round-robin order only one agent acts per
    round and the others are recorded as "did nothing" to fill the round; those fillers are dropped,
    so turn *k* is Sotopia's "Turn #k". When every agent did nothing, the agent whose turn it was
    (round *k* mod the number of agents) keeps a ``none`` turn. Several real actions in one round
    (simultaneous order) each become a turn. Environment messages (the turn-0 context, the
    "Turn #k: ..." echoes) are skipped.
    """
    turns: list[TurnDraft] = []
    for number, round_ in enumerate(messages):
        round_origin = origin.at(number)
        if not isinstance(round_, list):
            raise round_origin.problem(f"expected a list of [sender, receiver, text] messages, got {describe(round_)}")
        actions = []
        for position, message in enumerate(round_):
            message_origin = round_origin.at(position)
            if not (isinstance(message, list) and len(message) == 3 and all(isinstance(part, str) for part in message)):
                raise message_origin.problem(f"expected [sender, receiver, text], got {describe(message)}")
            sender, _, text = message
            if sender == ENVIRONMENT:
                continue
            if sender not in names:
                raise message_origin.at(0).problem(
                    f"unknown speaker {sender!r}; the participants are {', '.join(names)}"
                )
            action_type, content = parse_action(text, message_origin.at(2))
            check_text(content, message_origin.at(2), max_length=MAX_TURN_CHARS)
            actions.append((names.index(sender), action_type, content, message_origin))
        if not actions:
            continue
        taken = [action for action in actions if action[1] != ActionType.NONE]
        if not taken:
            whose_turn = number % len(names)
            taken = [action for action in actions if action[0] == whose_turn] or actions[:1]
        for seat, action_type, content, message_origin in taken:
            turns.append(TurnDraft(len(turns), seat, action_type, message_origin, content=content))
    return turns


_TURN_HEADER = re.compile(r"^Turn #(?P<number>[0-9]+)(?:(?P<colon>:)[ \t]*|,?[ \t]*$)", re.M)


def turn_headers(text: str, names: list[str], origin: Origin) -> list[tuple[re.Match[str], int]]:
    """The real turn headers of a transcript, with their numbers.

    A transcript writes "Turn #1" on a line of its own (the human-evaluation export) or "Turn #0: X
    said ..." (Sotopia's prompt); the first header sets which. A model's utterance may itself hold
    lines like "Turn #3: none" or a whole replayed transcript, so a header starts a turn only when it
    is written like the first, carries the next number, and is followed by a participant's name or,
    for an empty turn, by the next header or the end. Any other "Turn #" line stays in the utterance.
    """
    candidates = list(_TURN_HEADER.finditer(text))
    if not candidates:
        return []
    colon = candidates[0].group("colon") is not None
    expected = turn_number(candidates[0].group("number"), origin)
    speakers = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    follows = re.compile(rf"(?:{speakers})[ :]|Turn #|Based on previous interactions|$")
    headers = []
    for header in candidates:
        if (header.group("colon") is not None) != colon or header.group("number") != str(expected):
            continue
        if not follows.match(text[header.end() :].lstrip()):
            continue
        headers.append((header, expected))
        expected += 1
    return headers


def turns_from_transcript(text: str, names: list[str], origin: Origin) -> list[TurnDraft]:
    """Turns from the transcript in a prompt: "Turn #1\nX said: ..." or "Turn #0: X said: ..."
    (``turn_headers`` finds where each starts).

    Numbering starting at 1 (the human-evaluation export) is shifted to start at 0. An empty turn
    ("Turn #8,") is a ``none`` turn by the agent whose turn it was.
    """
    headers = turn_headers(text, names, origin)
    if not headers:
        return []
    offset = 1 if headers[0][1] == 1 else 0
    speakers = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    turns: list[TurnDraft] = []
    for position, (header, number) in enumerate(headers):
        end = headers[position + 1][0].start() if position + 1 < len(headers) else len(text)
        body = text[header.end() : end]
        body = re.split(r"\n\s*Based on previous interactions", body)[0].strip().removesuffix(",").strip()
        index = number - offset
        turn_origin = Origin(origin.file, origin.place, f"{origin.field} (Turn #{number})")
        if not body:
            turns.append(TurnDraft(index, index % len(names), ActionType.NONE, turn_origin))
            continue
        for action in re.split(rf";(?=(?:{speakers}) )", body):
            speaker = re.match(rf"({speakers}) ", action)
            if not speaker:
                raise turn_origin.problem(
                    f"Turn #{number} does not start with a participant's name ({', '.join(names)}): "
                    f"{describe(action)}"
                )
            action_type, content = parse_action(action[speaker.end() :], turn_origin)
            check_text(content, turn_origin, max_length=MAX_TURN_CHARS)
            turns.append(TurnDraft(index, names.index(speaker.group(1)), action_type, turn_origin, content=content))
    return turns


def turns_from_interactions(text: str, names: list[str], origin: Origin) -> list[TurnDraft]:
    """Turns from an early v1 line's ``social_interactions``: one paragraph per action,
    'X said: "..."', 'X: left the conversation', 'X: [non-verbal communication] nod'.

    Paragraphs are separated by a blank line; one that does not start with a participant's name
    belongs to the utterance before it (an utterance may hold blank lines). Turns that did nothing
    are not written there, so turns are numbered as they come.
    """
    speakers = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    starts = re.compile(rf"(?P<name>{speakers}):? (?=said:|did nothing|left the conversation|\[)")
    actions: list[tuple[str, list[str]]] = []
    for paragraph in text.strip().split("\n\n"):
        start = starts.match(paragraph)
        if start:
            actions.append((start.group("name"), [paragraph[start.end() :]]))
        elif actions:
            actions[-1][1].append(paragraph)
        elif paragraph.strip():
            raise origin.problem(
                f"the transcript does not start with a participant's name ({', '.join(names)}): "
                f"{describe(paragraph)}"
            )
    turns = []
    for index, (name, parts) in enumerate(actions):
        turn_origin = Origin(origin.file, origin.place, f"{origin.field} (turn {index + 1})")
        action_type, content = parse_action("\n\n".join(parts), turn_origin)
        check_text(content, turn_origin, max_length=MAX_TURN_CHARS)
        turns.append(TurnDraft(index, names.index(name), action_type, turn_origin, content=content))
    return turns


def turn_number(digits: str, origin: Origin) -> int:
    """A transcript's "Turn #N", which must fit the turn index column."""
    if len(digits) > len(str(MAX_INTEGER)):
        raise origin.problem(f"Turn #{digits[:20]}... is above the maximum turn number {MAX_INTEGER}")
    return check_integer(int(digits), origin, high=MAX_INTEGER)


def split_reasoning(text: str) -> tuple[str, dict[tuple[int, str], str]]:
    """The environment's comment and each agent's reasoning per dimension, from Sotopia's text.

    The text reads "Environment comments: ...\\nAgent 1 comments:\\nbelievability: ...\\n...".
    """
    sections = re.split(r"^Agent (\d+) comments:[ \t]*$", text, flags=re.M)
    environment = re.sub(r"^\s*Environment comments:\s*", "", sections[0]).strip()
    keys = "|".join(re.escape(key) for key in [*DIMENSION_NAMES, *DERIVED_SCORES])
    by_agent: dict[tuple[int, str], str] = {}
    for number, body in zip(sections[1::2], sections[2::2], strict=True):
        parts = re.split(rf"^({keys}):[ \t]*", body, flags=re.M)
        for key, reasoning in zip(parts[1::2], parts[2::2], strict=True):
            by_agent[(int(number) - 1, key)] = reasoning.strip()
    return environment, by_agent


# --- episodes -----------------------------------------------------------------------------------


@dataclass
class Log:
    """The three episode shapes read into one: who, where, what was done, how it was scored."""

    fields: Fields
    pk: str
    pk_field: str
    environment: str
    environment_field: str
    agents: list[str] | None
    agents_field: str
    names: list[str]
    tag: str
    models: list[str]
    context: Context | None
    context_origin: Origin
    turns: list[TurnDraft]
    rewards_field: str | None
    reasoning: str

    @staticmethod
    def _common(fields: Fields, *, pk: str, environment: str, agents: str | None, tag: str, models: str) -> dict:
        agent_ids = None
        if agents is not None:
            agent_ids = fields.sequence(agents, required=True)
            for index, agent in enumerate(agent_ids):
                check_text(
                    agent,
                    fields.origin.at(agents).at(index),
                    blank=False,
                    max_length=max_length(Character, "external_id"),
                )
        model_names = fields.sequence(models)
        for index, model in enumerate(model_names):
            check_text(model, fields.origin.at(models).at(index), max_length=max_length(Seat, "model"))
        return {
            "fields": fields,
            "pk": fields.text(pk, required=True, blank=False, max_length=max_length(Episode, "external_id")),
            "pk_field": pk,
            "environment": fields.text(
                environment, required=True, blank=False, max_length=max_length(Scenario, "external_id")
            ),
            "environment_field": environment,
            "agents": agent_ids,
            "agents_field": agents or "agents",
            "tag": fields.text(tag, max_length=max_length(Episode, "tag")),
            "models": model_names,
            "reasoning": fields.text("reasoning"),
        }

    @classmethod
    def from_v1(cls, fields: Fields) -> Log:
        """A ``sotopia_episodes_v1`` line: the scenario, goals and backgrounds are given in clear."""
        common = cls._common(
            fields,
            pk="episode_id",
            environment="environment_id",
            agents="agent_ids",
            tag="experiment_tag",
            models="experiment_model_name_pairs",
        )
        context = v1_context(fields)
        messages_field = first_key(fields, "raw_messages", "messages")
        messages = fields.sequence(messages_field, required=True)
        names = context.names if context else senders(messages)
        return cls(
            **common,
            names=names,
            context=context,
            context_origin=fields.origin.at("agents_background"),
            turns=turns_from_messages(messages, names, fields.origin.at(messages_field)),
            rewards_field=first_key(fields, "raw_rewards", "rewards"),
        )

    @classmethod
    def from_v1_transcript(cls, fields: Fields) -> Log:
        """An early v1 line: no environment or agent ids, the transcript only as ``social_interactions``
        text. The scenario's id is made from its text and goals, so lines of one environment share it;
        the people are found by name, else built from their backgrounds."""
        context = v1_context(fields)
        if context is None or len(context.names) < 2:
            raise fields.origin.at("agents_background").problem(
                "an early v1 line needs the backgrounds of two or more agents, keyed by name"
            )
        transcript = fields.text("social_interactions", required=True, blank=False)
        return cls(
            fields=fields,
            pk=fields.text("episode_id", required=True, blank=False, max_length=max_length(Episode, "external_id")),
            pk_field="episode_id",
            environment=scenario_key(context),
            environment_field="scenario",
            agents=None,
            agents_field="agents_background",
            names=context.names,
            tag="",
            models=[],
            context=context,
            context_origin=fields.origin.at("agents_background"),
            turns=turns_from_interactions(transcript, context.names, fields.origin.at("social_interactions")),
            rewards_field="rewards",
            reasoning=fields.text("reasoning"),
        )

    @classmethod
    def from_native(cls, fields: Fields) -> Log:
        """A native ``EpisodeLog``: the context is in the Environment's turn-0 messages, if anywhere."""
        common = cls._common(fields, pk="pk", environment="environment", agents="agents", tag="tag", models="models")
        messages = fields.sequence("messages", required=True)
        context = context_from_messages(messages)
        names = context.names if context else senders(messages)
        return cls(
            **common,
            names=names,
            context=context,
            context_origin=fields.origin.at("messages").at(0),
            turns=turns_from_messages(messages, names, fields.origin.at("messages")),
            rewards_field="rewards",
        )

    @classmethod
    def from_human_eval(cls, fields: Fields) -> Log:
        """A partial log for human evaluation: the transcript only inside the prompt; the agents' pks
        in some exports (``agents``), else the people are found by name."""
        agents = "agents" if fields.has("agents") else None
        common = cls._common(fields, pk="pk", environment="environment", agents=agents, tag="tag", models="models")
        prompt_origin = fields.origin.at("rewards_prompt")
        prompt = fields.text("rewards_prompt", required=True)
        context = context_from_prompt(prompt)
        if context is None or len(context.names) < 2:
            raise prompt_origin.problem(
                "no 'Participants: A and B' line naming two or more people, so who took part is unknown"
            )
        return cls(
            **common,
            names=context.names,
            context=context,
            context_origin=prompt_origin,
            turns=turns_from_transcript(prompt, context.names, prompt_origin),
            rewards_field="rewards" if fields.has("rewards") else None,
        )


def v1_context(fields: Fields) -> Context | None:
    """The scenario, backgrounds and goals a v1 line gives in clear (None when it gives neither)."""
    backgrounds = fields.mapping("agents_background")
    goals = fields.mapping("social_goals")
    for name, value in backgrounds.items():
        check_text(value, fields.origin.at("agents_background").at(name))
    for name, value in goals.items():
        check_text(value, fields.origin.at("social_goals").at(name))
    if not (backgrounds or goals):
        return None
    return Context(
        scenario=fields.text("scenario"),
        names=list(backgrounds or goals),
        backgrounds=backgrounds,
        goals=goals,
        codename=fields.text("codename"),
    )


def scenario_key(context: Context) -> str:
    """An id for a scenario known only by its text: its codename and a digest of its text and goals in
    order (not the names: the same environment is played by different agents)."""
    digest = hashlib.sha256(
        json.dumps([context.scenario, [context.goals.get(name, "") for name in context.names]]).encode()
    ).hexdigest()[:16]
    return f"{TEXT_SCENARIO_PREFIX}{slugify(context.codename)[:60]}:{digest}"


def senders(messages: list[Any]) -> list[str]:
    """Agent names in order of first appearance (each round lists the agents in their order)."""
    return unique(
        message[0]
        for round_ in messages
        if isinstance(round_, list)
        for message in round_
        if isinstance(message, list) and message and isinstance(message[0], str) and message[0] != ENVIRONMENT
    )


def context_from_messages(messages: list[Any]) -> Context | None:
    """The context the Environment sends each agent at turn 0.

    Each agent's background and goal are taken from the message sent to that agent, since the other
    side's goal may read "Unknown" there.
    """
    if not messages or not isinstance(messages[0], list):
        return None
    merged: Context | None = None
    own: dict[str, Context] = {}
    for message in messages[0]:
        if not (isinstance(message, list) and len(message) == 3 and message[0] == ENVIRONMENT):
            continue
        context = context_from_prompt(str(message[2]))
        if context is None:
            continue
        merged = merged or context
        own[str(message[1])] = context
    if merged is None:
        return None
    for name in merged.names:
        sources = [own[name]] if name in own else []
        sources += list(own.values())
        for kind in ("backgrounds", "goals"):
            found = next((getattr(source, kind)[name] for source in sources if name in getattr(source, kind)), None)
            if found is not None:
                getattr(merged, kind)[name] = found
    return merged


def episode(fields: Fields, log: Log) -> EpisodeDraft:
    """An imported, finished episode under no barrier, scored by Sotopia's judge (``models[0]``)."""
    origin = fields.origin
    agents_origin = origin.at(log.agents_field)
    count = len(log.agents) if log.agents is not None else len(log.names)
    if count < 2:
        raise agents_origin.problem(f"a Sotopia episode needs at least two agents, got {count}")
    if log.context and len(log.context.names) != count:
        raise agents_origin.problem(
            f"the log names {len(log.context.names)} participants ({', '.join(log.context.names)}) "
            f"but lists {count} agents"
        )
    if len(log.names) > count:
        raise agents_origin.problem(f"{len(log.names)} agents speak ({', '.join(log.names)}) but {count} are listed")

    characters = []
    for position in range(count):
        agent_id = log.agents[position] if log.agents is not None else None
        name = log.names[position] if position < len(log.names) else None
        fallback = None
        if log.context and name in log.context.backgrounds:
            fallback = character_from_background(
                name, log.context.backgrounds[name], agent_id or f"sotopia-name:{name}", log.context_origin
            )
        characters.append(
            CharacterRef(
                agents_origin.at(position) if agent_id else origin,
                external_id=agent_id,
                name=None if agent_id else name,
                draft=fallback,
                noun="agent",
            )
        )

    environment_origin = origin.at(log.environment_field)
    scenario = None
    if log.context:
        scenario = scenario_from_context(log.environment, log.context, characters, log.context_origin)
    environment_comment, reasoning = split_reasoning(log.reasoning)
    draft = EpisodeDraft(
        external_id=log.pk,
        scenario=ScenarioRef(log.environment, environment_origin, draft=scenario, noun="environment"),
        origin=origin,
        tag=log.tag,
        turn_cap=max(20, len(log.turns)),
        settings={"environment_comments": environment_comment} if environment_comment else {},
        created_at=ulid_time(log.pk),
        seats=[
            SeatDraft(
                position,
                position,
                character,
                agents_origin.at(position),
                model=log.models[position + 1] if position + 1 < len(log.models) else "",
            )
            for position, character in enumerate(characters)
        ],
        turns=log.turns,
        responses=scores_to_responses(scores(fields, log, reasoning), range(len(characters))),
        id_field=log.pk_field,
    )
    check_episode(draft)
    return draft


def scenario_from_context(
    external_id: str, context: Context, characters: list[CharacterRef], origin: Origin
) -> ScenarioDraft:
    """The scenario a log describes, for when its environment is not in the database."""
    shared, private = split_scenario(context.scenario)
    roles = []
    for position, name in enumerate(context.names):
        goal, knowledge = split_goal(context.goals.get(name, ""))
        knowledge = "\n".join(filter(None, [knowledge, *private.get(position, [])]))
        roles.append(
            RoleDraft(position, goals_from_text(goal), private_knowledge=knowledge, character=characters[position])
        )
    values = {
        "codename": context.codename,
        "source": "sotopia",
        "context": shared,
        "original_context": context.scenario,
        "difficulty": difficulty_of(external_id),
        "relationship": None,  # a log does not say how its people know each other
    }
    check_scenario_values(values, origin, {"context": "scenario", "original_context": "scenario"})
    check_roles(roles, origin)
    return ScenarioDraft(external_id, values, roles, origin)


def scores(fields: Fields, log: Log, reasoning: dict[tuple[int, str], str]) -> list[ScoreDraft]:
    """One score per agent and dimension from Sotopia's rewards; the overall score is derived, not stored.

    The evaluator is ``models[0]``, the judge model, so the scores become that judge's answers to the
    Sotopia-EVAL judge preset. Each score's reasoning is the judge's text for that agent and dimension
    when the reasoning can be split that way, otherwise the whole reasoning text.
    """
    if log.rewards_field is None or not fields.has(log.rewards_field):
        return []
    evaluator = log.models[0] if log.models else "sotopia"
    drafts = []
    for agent, entry in enumerate(fields.sequence(log.rewards_field)):
        entry_origin = fields.origin.at(log.rewards_field).at(agent)
        if isinstance(entry, (int, float)) and not isinstance(entry, bool):
            continue  # only the overall score
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict):
            scores, scores_origin = entry[1], entry_origin.at(1)
        elif isinstance(entry, dict):
            scores, scores_origin = entry, entry_origin
        else:
            raise entry_origin.problem(f"expected [overall, {{dimension: score}}] or a number, got {describe(entry)}")
        for key, score in scores.items():
            if key in DERIVED_SCORES:
                continue
            score_origin = scores_origin.at(key)
            found = JUDGE_QUESTIONS.get(DIMENSION_NAMES.get(key, ""))
            if found is None:
                raise score_origin.problem(
                    f"{key!r} is not a Sotopia dimension ({', '.join([*DIMENSION_NAMES, *DERIVED_SCORES])})"
                )
            score = check_number(score, score_origin)
            question = found[1]
            if not question.low <= score <= question.high:
                raise score_origin.problem(f"{score:g} is outside [{question.low}, {question.high}] for {key}")
            drafts.append(
                ScoreDraft(
                    evaluator=evaluator,
                    dimension=question.key,
                    score=score,
                    origin=score_origin,
                    seat_position=agent,
                    prompt_version=PROMPT_VERSION,
                    reasoning=reasoning.get((agent, key), log.reasoning.strip()),
                )
            )
    return drafts


# --- profiles -----------------------------------------------------------------------------------


def agent_profile(fields: Fields) -> CharacterDraft:
    id_field = first_key(fields, "pk", "agent_id")
    external_id = fields.text(id_field, required=True, blank=False, max_length=max_length(Character, "external_id"))
    values: dict[str, Any] = {
        "first_name": fields.text("first_name", required=True, blank=False),
        "last_name": text_of(fields, "last_name"),
        "age": int_of(fields, "age", low=0, high=130),
        "gender": text_of(fields, "gender"),
        "pronouns": text_of(fields, "gender_pronoun"),
        "occupation": text_of(fields, "occupation"),
        "big_five": text_of(fields, "big_five"),
        "mbti": text_of(fields, "mbti"),
        "moral_values": joined_values(fields, "moral_values"),
        "personal_values": joined_values(fields, "schwartz_personal_values"),
        "personality": text_of(fields, "personality_and_values"),
        "decision_style": text_of(fields, "decision_making_style"),
        "public_info": text_of(fields, "public_info"),
        "secret": text_of(fields, "secret"),
    }
    check_character_values(values, fields.origin, AGENT_FIELD_NAMES)
    return CharacterDraft(external_id, values, fields.origin, id_field=id_field)


def environment_profile(fields: Fields) -> ScenarioDraft:
    """An environment becomes a scenario with one role per agent goal (casting is left open).

    The age, occupation and agent constraints have no counterpart in Parley and are not kept.
    """
    id_field = first_key(fields, "pk", "env_id")
    external_id = fields.text(id_field, required=True, blank=False, max_length=max_length(Scenario, "external_id"))
    scenario = fields.text("scenario", required=True, blank=False)
    shared, private = split_scenario(scenario)
    source = text_of(fields, "source")
    values = {
        "codename": text_of(fields, "codename"),
        "source": f"sotopia/{source}" if source else "sotopia",
        "context": shared,
        "original_context": scenario,
        "difficulty": difficulty_of(external_id),
        "relationship": int_of(fields, "relationship", low=0, high=5),  # None: unknown
    }
    check_scenario_values(values, fields.origin, {"context": "scenario", "original_context": "scenario"})
    goals_origin = fields.origin.at("agent_goals")
    roles = []
    for position, goal_text in enumerate(fields.sequence("agent_goals", required=True)):
        check_text(goal_text, goals_origin.at(position), blank=False)
        goal, knowledge = split_goal(goal_text)
        knowledge = "\n".join(filter(None, [knowledge, *private.get(position, [])]))
        roles.append(RoleDraft(position, goals_from_text(goal), private_knowledge=knowledge))
    check_roles(roles, goals_origin)
    return ScenarioDraft(external_id, values, roles, fields.origin, id_field=id_field)


def relationship_profile(fields: Fields) -> CheckedRecord:
    """Checked and counted, not stored: Parley keeps a relationship on the scenario, not per pair."""
    fields.text(first_key(fields, "pk", "relationship_id"), required=True, blank=False)
    fields.text(first_key(fields, "agent_1_id", "agent1_id"), required=True, blank=False)
    fields.text(first_key(fields, "agent_2_id", "agent2_id"), required=True, blank=False)
    if int_of(fields, "relationship", low=0, high=5) is None:
        raise fields.origin.at("relationship").problem("required field is missing")
    fields.text("background_story")
    return CheckedRecord("relationship")


FORMAT = FileFormat(
    "sotopia", label="Sotopia episode logs or profiles",
    shape="a Sotopia log or profile",
    recognise=recognises, parse=parse,
)
