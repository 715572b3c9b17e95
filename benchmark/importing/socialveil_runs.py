"""SocialVeil's run outputs (ulab-uiuc/social-veil), read into episodes with the SocialVeil judge's answers.

A run of SocialVeil's ``scripts/run.py`` writes, for each condition, ``<results>/mode_<condition>/``
(``baseline``, ``semantic``, ``cultural``, ``emotional``, ``composite_emotional_semantic``) and in it
one ``scenario_<N>/`` directory per scenario of the condition's episode file. In each,
``socialveil/communication.py`` (``run_single_scenario_simulation``) writes:

- ``conversation_log.json``: ``experimental_context`` (``scenario``: ``description``, the shared
  text the agents saw; ``agent_relationship``; ``barrier_type``, null for the baseline, else
  ``semantic_structure``, ``cultural_style``, ``emotional_influence`` or
  ``composite_emotional_semantic``; ``agents``: ``agent_a`` and ``agent_b``, each with ``name`` (the
  first name), ``profile`` (names, age, occupation, ``model_id``...), ``goal``, ``reason``;
  ``experimental_configuration.max_rounds``), ``conversation_log`` (one ``"Name: text"`` line a
  turn; agent A opens, then B and A alternate; ``[nonverbal] ...`` and ``[action] ...`` mark those
  actions, and a leave adds a line ``"Name left the conversation"``) and ``mcq_logs``.
- ``eval_result.json``: ``aggregated_scores`` from ``socialveil/evaluate.py``
  (``ConversationEvaluator.evaluate_conversation``): per agent the Sotopia-style dimensions
  (``goal_completion``, ``believability``, ...), ``interaction_quality``, and ``episode_level``
  ``unresolved_confusion`` and ``mutual_understanding`` on 1-5. Where the judge gave no score the
  code writes 0 (``.get("score", 0)``), and null when no barrier evaluation ran.

How Parley reads them:

- Agent A carries the barrier (the barrier prompt is ``barrier_prompts.agentA``); it is seat 0, B
  seat 1. ``barrier_type`` names the condition: ``cultural_style`` is Parley's ``sociocultural``;
  the composite condition has no built-in barrier, so the team must create one with key
  ``composite_emotional_semantic`` first (the import says so).
- The log carries no scenario id, so the scenario is found among the team's SocialVeil scenarios
  (imported from the episode file the run read) by its two characters' names and its context
  (``description``); none, or more than one, is refused, naming the characters.
- Agent A is the seat that carries the barrier, and it is marked so under the baseline too (the
  seat that would carry it), as in Parley's own runs: the report then analyses agent B, the
  partner, in every condition, as SocialVeil's Table 2 does.
- The two episode-level answers go onto the SocialVeil judge instrument; on their 1-5 scales a 0
  (or null) can only be the code's "no score", so it is read as missing and not stored, with a
  note saying how many. The per-agent Sotopia-style scores go onto the Sotopia-EVAL judge
  instrument, agent_1 for seat 0 and agent_2 for seat 1 (``goal_completion`` is ``goal``,
  ``financial_benefits`` is ``financial``): there 0 is a real score (a goal of 0 is given in a few
  episodes of every condition) and is kept; a score is missing only when its key is absent or
  null. ``overall`` (the mean of the others), ``interaction_quality`` and the ``mcq_logs`` are
  counted under ``ignored``.
- The judge's model is not in the files (``scripts/run.py --model``), so its answers are filed
  under the judge ``socialveil-judge``.
- An episode's id is ``socialveil-<barrier>-<digest of the log>``: importing the same output twice
  changes nothing, two runs of one scenario are two episodes. The run folder the log was read from
  (``mode_<condition>/scenario_<N>``, as SocialVeil's own human-evaluation ids name an episode) is
  kept in the episode's settings (``socialveil.run_folder``); ``import_episodes --tag`` keeps two
  runs of one model (say, the default and the repair strategy) apart in the report.
- SocialVeil's scenario files hold one environment and cast twice, word for word apart from the
  multiple-choice questions (``01H9F2KC013F5MWANBXH5W0AB9`` and ``01H88DXBK9EVSMG21SA8WFFRVZ``,
  records 19 and 20): their logs cannot be told apart by content, so the logs of one condition that
  fit such twins are dealt to them in the order of their run folders (``scenario_19`` to the first
  imported, ``scenario_20`` to the second), the order the run read the file in.

Import a ``scenario_<N>`` directory, a ``mode_<condition>`` directory, a whole results directory,
or one of the two files (its sibling is read when it is there; a ``conversation_log.json`` alone
imports the turns without scores).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..models import ActionType, Barrier, Team
from .checks import check_episode
from .format import FileFormat
from .problems import ImportProblem
from .reading import load_json, read_text
from .records import (
    MAX_TURN_CHARS,
    CharacterRef,
    Draft,
    EpisodeDraft,
    Fields,
    Origin,
    Remark,
    SeatDraft,
    TurnDraft,
    describe,
)
from .responses import ScoreDraft, check_responses, scores_to_responses
from .socialveil_matching import ScenarioMatch, find_scenarios

SOURCE = "socialveil"
LOG_FILE = "conversation_log.json"
SCORES_FILE = "eval_result.json"
JUDGE = "socialveil-judge"
PROMPT_VERSION = "socialveil"
# SocialVeil's barrier_type -> Parley's barrier key; any other value is looked up as a key of the team.
BARRIER_KEYS = {
    None: Barrier.NONE,
    "semantic_structure": "semantic",
    "cultural_style": "sociocultural",
    "emotional_influence": "emotional",
}
EPISODE_DIMENSIONS = ("unresolved_confusion", "mutual_understanding")
# SocialVeil's per-agent score -> the Sotopia-EVAL judge question it answers; ``overall`` is their mean, not kept.
AGENT_DIMENSIONS = {
    "goal_completion": "goal",
    "believability": "believability",
    "relationship": "relationship",
    "knowledge": "knowledge",
    "social_rules": "social_rules",
    "financial_benefits": "financial",
}
SCORED_AGENTS = ("agent_1", "agent_2")  # seat 0 (agent A, the barrier seat) and seat 1
AGENTS = ("agent_a", "agent_b")
LEFT = "left the conversation"


def recognises(first: object) -> bool:
    """A run's ``conversation_log.json`` or ``eval_result.json``."""
    return isinstance(first, dict) and (
        {"experimental_context", "conversation_log"} <= first.keys() or "aggregated_scores" in first
    )


def parse(text: str, file: str) -> list[Draft]:
    """One ``conversation_log.json`` given as text alone (an upload): its turns, without scores."""
    return read_outputs([RunOutput(file, text, None, None)])


def parse_path(path: Path) -> list[Draft]:
    """Every scenario output under ``path`` (a directory), or the output ``path`` (either file) belongs to."""
    if not path.is_dir():
        if path.name == SCORES_FILE:
            return read_outputs([output_in(path.parent, path.parent.parent)])
        scores = path.parent / SCORES_FILE if path.name == LOG_FILE else None
        found = scores is not None and scores.is_file()
        return read_outputs([RunOutput(
            path.name, read_text(path), f"{path.parent.name}/{SCORES_FILE}" if found else None,
            read_text(scores) if found else None, run_folder(path.resolve().parent),
        )])
    folders = sorted(
        {found.parent for name in (LOG_FILE, SCORES_FILE) for found in path.rglob(name)},
        key=lambda folder: [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(folder))],
    )
    if not folders:
        raise ImportProblem(f"holds no {LOG_FILE} or {SCORES_FILE} (a SocialVeil run's outputs)", file=path.name)
    return read_outputs([output_in(folder, path.parent) for folder in folders])


def output_in(folder: Path, base: Path) -> RunOutput:
    """The output of one ``scenario_<N>`` folder, its files named from ``base`` in messages."""
    log, scores = folder / LOG_FILE, folder / SCORES_FILE
    if not log.is_file():
        raise ImportProblem(
            f"no {LOG_FILE} beside it: scores cannot be placed without the conversation they score",
            file=scores.relative_to(base).as_posix(),
        )
    found = scores.is_file()
    return RunOutput(
        log.relative_to(base).as_posix(), read_text(log),
        scores.relative_to(base).as_posix() if found else None, read_text(scores) if found else None,
        run_folder(folder.resolve()),
    )


def run_folder(folder: Path) -> str:
    """The folder of one scenario's output as SocialVeil names it: ``mode_<condition>/scenario_<N>``."""
    if folder.parent.name.startswith("mode_"):
        return f"{folder.parent.name}/{folder.name}"
    return folder.name


def read_outputs(outputs: list[RunOutput]) -> list[Draft]:
    """The outputs' episodes, and one remark for them all: what was not kept, what was read as missing."""
    remark = Remark()
    drafts: list[Draft] = []
    for output in outputs:
        drafts.append(output.episode())
        remark.ignored.update(output.ignored)
    unscored = sum(output.scores_text is None for output in outputs)
    if unscored:
        remark.notes.append(
            f"{unscored} conversation log(s) had no {SCORES_FILE} beside them: their turns were imported "
            "without the judge's scores."
        )
    missing = sum(output.missing for output in outputs)
    if missing:
        remark.notes.append(
            f"{missing} of the judge's episode-level scores were 0 or null, SocialVeil's mark for no score, and "
            "were read as missing (not stored)."
        )
    absent = sum(output.absent for output in outputs)
    if absent:
        remark.notes.append(
            f"{absent} of the judge's per-agent scores were absent or null and were read as missing (not stored); "
            "a 0 is a score and was kept."
        )
    if any(output.scores_text is not None for output in outputs):
        remark.notes.append(f"The judge's model is not in the files; its answers are filed under the judge {JUDGE!r}.")
    return [*drafts, remark]


class RunOutput:
    """One scenario's ``conversation_log.json`` and, when given, its ``eval_result.json``."""

    def __init__(
        self, file: str, text: str, scores_file: str | None, scores_text: str | None, folder: str = ""
    ) -> None:
        self.file = file
        self.text = text
        self.scores_file = scores_file
        self.scores_text = scores_text
        self.folder = folder  # mode_<condition>/scenario_<N>, or "" for an upload
        self.missing = 0  # episode-level scores read as missing (0 or null)
        self.absent = 0  # per-agent scores read as missing (absent or null)
        self.ignored: Counter[str] = Counter()

    def episode(self) -> EpisodeDraft:
        origin = Origin(self.file)
        record = load_json(self.text, origin)
        if isinstance(record, dict) and "aggregated_scores" in record:
            raise origin.problem(
                f"an {SCORES_FILE} alone cannot be imported: import the directory that also holds its {LOG_FILE}"
            )
        log = Fields(record, origin)
        episode = self.conversation(log, record)
        if self.scores_text is not None:
            scores_origin = Origin(self.scores_file or SCORES_FILE)
            scores = self.scores(Fields(load_json(self.scores_text, scores_origin), scores_origin))
            episode.responses = scores_to_responses(scores, [0, 1]) if scores else []
            check_responses(episode)
        if log.sequence("mcq_logs"):
            self.ignored["mcq_logs"] += 1
        return episode

    def conversation(self, log: Fields, record: Any) -> EpisodeDraft:
        context = log.nested("experimental_context")
        scenario = context.nested("scenario")
        agents = context.nested("agents")
        barrier_type = scenario.data.get("barrier_type")
        if barrier_type is not None:
            scenario.text("barrier_type", blank=False)
        barrier_key = BARRIER_KEYS.get(barrier_type, barrier_type)
        people = [self.agent(agents.nested(name)) for name in AGENTS]
        if people[0].first == people[1].first:
            raise agents.origin.problem(
                f"both agents are named {people[0].first!r}: the conversation's lines cannot tell them apart"
            )
        rounds = context.nested("experimental_configuration").integer("max_rounds", required=True, low=1, high=10_000)
        digest = hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()[:24]
        seats = [
            SeatDraft(position=number, role_position=number, origin=person.origin, model=person.model,
                      character=CharacterRef(person.origin, name=person.name),
                      carries_barrier=number == 0)  # agent A; under the baseline, the seat that would
            for number, person in enumerate(people)
        ]
        draft = EpisodeDraft(
            external_id=f"{SOURCE}-{barrier_key}-{digest}",
            scenario=ScenarioMatch("", context.origin, noun="SocialVeil scenario",
                                   context=scenario.text("description", required=True, blank=False),
                                   run_folder=self.folder,
                                   agents=(people[0].name, people[1].name),
                                   reasons=tuple(agents.nested(name).text("reason") for name in AGENTS)),
            origin=log.origin,
            barrier_key=barrier_key,
            seats=seats,
            turns=self.turns(log, people),
            settings={"socialveil": {"barrier_type": barrier_type, "max_rounds": rounds,
                                     **({"run_folder": self.folder} if self.folder else {})}},
            id_field="conversation_log",
        )
        draft.turn_cap = max(2 * rounds + 1, len(draft.turns), 1)  # A opens, then B and A each round
        check_episode(draft)
        return draft

    def agent(self, fields: Fields) -> Agent:
        profile = fields.nested("profile")
        first = fields.text("name", required=True, blank=False)
        last = profile.text("last_name")
        return Agent(first, f"{first} {last}".strip(), profile.text("model_id"), fields.origin)

    def turns(self, log: Fields, people: list[Agent]) -> list[TurnDraft]:
        lines = log.texts("conversation_log", required=True, max_length=MAX_TURN_CHARS)
        turns: list[TurnDraft] = []
        for number, line in enumerate(lines):
            origin = log.origin.at("conversation_log").at(number)
            seat, content = self.speaker(line, people, origin)
            if content is None:  # "Name left the conversation", written after a leave action
                if turns and turns[-1].seat_position == seat and turns[-1].action_type == ActionType.LEAVE:
                    continue
                action, content = ActionType.LEAVE, ""
            else:
                action, content = read_action(content)
            turns.append(TurnDraft(index=len(turns), seat_position=seat, action_type=action, content=content,
                                   origin=origin, model=people[seat].model))
        return turns

    @staticmethod
    def speaker(line: str, people: list[Agent], origin: Origin) -> tuple[int, str | None]:
        for seat, person in enumerate(people):
            if line == f"{person.first}:" or line.startswith(f"{person.first}: "):
                return seat, line[len(person.first) + 1:].strip()
            if line == f"{person.first} {LEFT}":
                return seat, None
        names = " or ".join(repr(person.first) for person in people)
        raise origin.problem(f"a line must start with {names} and a colon, got {describe(line)}")

    def scores(self, result: Fields) -> list[ScoreDraft]:
        aggregated = result.nested("aggregated_scores")
        episode = aggregated.nested("episode_level")
        scores, missing = [], 0
        for name in EPISODE_DIMENSIONS:
            value = episode.number(name)
            if not value:  # 0 is SocialVeil's "no score"; null: no barrier evaluation ran
                missing += 1
                continue
            scores.append(ScoreDraft(JUDGE, name, value, episode.origin.at(name), prompt_version=PROMPT_VERSION))
        self.missing += missing
        for seat, agent in enumerate(SCORED_AGENTS):
            scores.extend(self.agent_scores(aggregated, agent, seat))
        for name in aggregated.data:
            if name not in ("episode_level", *SCORED_AGENTS):
                self.ignored[f"aggregated_scores.{name}"] += 1
        return scores

    def agent_scores(self, aggregated: Fields, agent: str, seat: int) -> list[ScoreDraft]:
        """One agent's Sotopia-style scores; 0 is a score here, a missing one is absent or null."""
        if aggregated.data.get(agent) is None:
            self.absent += len(AGENT_DIMENSIONS)
            return []
        fields = aggregated.nested(agent)
        scores = []
        for name, dimension in AGENT_DIMENSIONS.items():
            value = fields.number(name)
            if value is None:
                self.absent += 1
                continue
            scores.append(ScoreDraft(JUDGE, dimension, value, fields.origin.at(name), seat_position=seat,
                                     prompt_version=PROMPT_VERSION))
        for name in fields.data:
            if name not in AGENT_DIMENSIONS:
                self.ignored[f"aggregated_scores.{agent}.{name}"] += 1
        return scores


@dataclass
class Agent:
    first: str  # the name the conversation's lines use
    name: str
    model: str
    origin: Origin


_MARKS = {"[nonverbal]": ActionType.NON_VERBAL, "[action]": ActionType.ACTION}


def read_action(content: str) -> tuple[str, str]:
    """A line's text as (action type, content), after ``_format_action_output`` of communication.py."""
    if content == LEFT:
        return ActionType.LEAVE, ""
    if not content:
        return ActionType.NONE, ""
    for mark, action in _MARKS.items():
        if content.startswith(mark + " ") and " [" not in content:
            return action, content[len(mark):].strip()
    return ActionType.SPEAK, content


class RunFormat(FileFormat):
    """A run's outputs: a directory of them, or one output read with the scores beside it (``parse_path``);
    its scenarios are found among the team's by content (``socialveil_matching``)."""

    reads_directory = True

    def claims_directory(self, path: Path) -> bool:
        return any(next(path.rglob(name), None) for name in (LOG_FILE, SCORES_FILE))

    def parse_file(self, path: Path, text: str) -> list[Any]:
        return parse_path(path)

    def resolve(self, drafts: list[Any], team: Team) -> None:
        find_scenarios(drafts, team)


FORMAT = RunFormat(
    "socialveil-run",
    label="SocialVeil conversation log (turns only; scores come with a run's directory)",
    shape="a SocialVeil run's conversation_log.json (experimental_context, conversation_log)",
    recognise=recognises, parse=parse,
)
