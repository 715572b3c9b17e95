"""AgentSense's own files (ljcleo/agent_sense), read into scenarios, templates, episodes and answers.

AgentSense keeps its scenes as JSON Lines, one scene a line, in the shape its ``SENSE/utils/
data_utils.py`` reads: ``sample_idx``, ``template_idx``, ``background``, ``description`` and
``characters``, each with ``name``, ``profile``, ``private_info``, ``goals`` (each ``goal`` with its
``eval_questions`` for ``self``, ``others`` and ``judge``, the first two naming who is asked in
``obj``) and ``info_reason_questions`` (``question``, ``options``, ``answer_label``). The pairwise
files of ``SENSE/utils/label_role.py`` add ``roles`` (name → sender or receiver) and each
character's ``model``.

A run of ``SENSE/simulation.py`` writes, per scene, ``chat_history`` (autogen's messages, each with
the speaker's ``name``), ``goal_answer`` (character → goal text → perspective → the raw answers,
in the order of the goal's evaluation questions; the judges' in the order of ``goal_metrics``'s
``judge_<model>`` keys) and ``info_answer`` (character → raw answers, in the order of its
questions). Those answers only mean something next to the scene's questions, so a scene with
outputs is its scenario line with the output object's keys added (the run's ``model`` too, when the
characters do not name theirs); such a line becomes an episode with its answers.

The mapping, field by field, is in ``docs/formats.md`` ("AgentSense files"). Readings follow
``SENSE/metric.py``: a goal answer containing "Yes" is yes, anything else no; a multiple-choice
answer is read as the metric reads it, and one it cannot read is left out and counted.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.utils.text import slugify

from ..evaluation.interviews.instruments import PROBES_PRESET, goals_instrument, probe_question
from ..models import ActionType, Episode, Probe, Relationship, Respondent
from ..models.scenarios import Category, Communication, GoalType, TurnTaking
from .checks import check_character_values, check_episode, check_roles, check_scenario_shape, check_scenario_values
from .format import FileFormat
from .parley import json_lines
from .records import (
    MAX_TURN_CHARS,
    CharacterDraft,
    CharacterRef,
    Draft,
    EpisodeDraft,
    Fields,
    GoalDraft,
    Origin,
    ProbeDraft,
    RoleDraft,
    ScenarioDraft,
    ScenarioRef,
    SeatDraft,
    TurnDraft,
    check_integer,
    check_text,
    describe,
    max_length,
    values_of,
)
from .responses import AnswerDraft, InstrumentDraft, ResponseDraft, check_responses

SOURCE = "agentsense"
TURN_CAP = 15  # AgentSense's max_round (SENSE/run_eval.py), the scripts' mean scene length
PROMPT_VERSION = "agentsense"  # the interview and judge prompts of SENSE/simulation.py
OUTPUT_KEYS = ("chat_history", "goal_answer", "info_answer")
PERSPECTIVES = ("self", "others", "judge")
JUDGE_SUMMARIES = ("judge_avg", "judge_majority")  # goal_metrics keys that are not a judge


def recognises(first: object) -> bool:
    """An AgentSense scene line (``sample_idx`` and ``characters``) or a scene's output object."""
    return isinstance(first, dict) and (
        {"sample_idx", "characters"} <= first.keys() or {"chat_history", "goal_answer"} <= first.keys()
    )


def parse(text: str, file: str) -> list[Draft]:
    templates: dict[str, ScenarioDraft] = {}
    drafts: list[Draft] = []
    for origin, record in json_lines(text, file):
        fields = Fields(record, origin)
        if not fields.has("sample_idx") and fields.has("chat_history"):
            raise origin.problem(
                "an AgentSense output on its own cannot be imported: its answers follow the scene's questions. "
                "Add its keys (chat_history, goal_answer, goal_metrics, info_answer) to the scene's line"
            )
        scene = read_scene(fields, templates)
        drafts.append(scene.episode(fields) if any(fields.has(key) for key in OUTPUT_KEYS) else scene.scenario)
    return drafts


def _index(fields: Fields, name: str) -> str:
    """``sample_idx`` or ``template_idx``: an integer or a non-empty string, as text."""
    value = fields.data.get(name)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(check_integer(value, fields.origin.at(name), low=0))
    return fields.text(name, required=True, blank=False, max_length=60)


@dataclass
class SceneCharacter:
    """A character of the scene being read: its role position, goals as given, and its questions."""

    name: str
    position: int
    goals: list[Fields]  # each with its eval_questions
    questions: list[int]  # index of each info_reason_question among the scene's probes
    model: str
    origin: Origin


@dataclass
class Scene:
    scenario: ScenarioDraft
    characters: dict[str, SceneCharacter]
    sample: str
    skipped: Counter[str] = field(default_factory=Counter)

    # --- outputs --------------------------------------------------------------------------------

    def episode(self, fields: Fields) -> EpisodeDraft:
        origin = fields.origin
        by_position = sorted(self.characters.values(), key=lambda c: c.position)
        for character in by_position:
            if not character.model:
                raise character.origin.at("model").problem(
                    f"the file does not say which model played {character.name}: give the run's \"model\" on the "
                    "line, or each character's \"model\" as SENSE/utils/label_role.py does"
                )
        models = "+".join(dict.fromkeys(character.model for character in by_position))
        roles = {role.position: role for role in self.scenario.roles}
        draft = EpisodeDraft(
            external_id=f"agentsense-{self.sample}-{models}"[: max_length(Episode, "external_id")],
            scenario=ScenarioRef(self.scenario.external_id, origin, draft=self.scenario),
            origin=origin,
            seats=[
                SeatDraft(position=c.position, role_position=c.position, character=roles[c.position].character,
                          origin=c.origin, model=c.model)
                for c in by_position
            ],
            turns=self.turns(fields),
            settings={"agentsense": {"sample_idx": self.sample}},
            id_field="sample_idx",
        )
        draft.turn_cap = max(TURN_CAP, len(draft.turns))
        check_episode(draft)
        draft.responses = [*self.goal_responses(fields), *self.probe_responses(fields)]
        check_responses(draft)
        draft.skipped = self.skipped
        return draft

    def character(self, name: Any, origin: Origin) -> SceneCharacter:
        found = self.characters.get(name) if isinstance(name, str) else None
        if found is None:
            raise origin.problem(f"{describe(name)} is not a character of this scene ({', '.join(self.characters)})")
        return found

    def turns(self, fields: Fields) -> list[TurnDraft]:
        turns = []
        for index, message in enumerate(fields.objects("chat_history", required=True)):
            speaker = self.character(message.data.get("name"), message.origin.at("name"))
            content = message.text("content", max_length=MAX_TURN_CHARS)
            turns.append(TurnDraft(
                index=index, seat_position=speaker.position, origin=message.origin, content=content,
                action_type=ActionType.SPEAK if content.strip() else ActionType.NONE, model=speaker.model,
            ))
        return turns

    def goal_responses(self, fields: Fields) -> list[ResponseDraft]:
        """``goal_answer`` as answers to the goals preset: one response per interviewed seat, one per judge."""
        judges = judge_models(fields)
        by_seat: dict[int, list[AnswerDraft]] = {}
        by_judge: dict[str, list[AnswerDraft]] = {}
        answered = fields.nested("goal_answer") if fields.has("goal_answer") else None
        for name, goals in (answered.data.items() if answered else ()):
            owner = self.character(name, answered.origin.at(name))
            for text, perspectives in Fields(goals, answered.origin.at(name)).data.items():
                given = Fields(perspectives, answered.origin.at(name).at(text))
                for perspective, who, answer in self.goal_answers(owner, text, given, judges, fields.origin):
                    if perspective == "judge":
                        by_judge.setdefault(judges[who], []).append(answer)
                    else:
                        by_seat.setdefault(who, []).append(answer)
        instrument = goals_instrument()
        models = {c.position: c.model for c in self.characters.values()}
        origin = fields.origin.at("goal_answer")
        return [
            *(self.response(instrument.name, instrument.version, "agent", models[seat], origin, seat=seat,
                            answers=answers) for seat, answers in sorted(by_seat.items())),
            *(self.response(instrument.name, instrument.version, "judge", judge, origin, answers=answers)
              for judge, answers in by_judge.items()),
        ]

    def goal_answers(
        self, owner: SceneCharacter, text: str, given: Fields, judges: list[str], line: Origin
    ) -> list[tuple[str, int, AnswerDraft]]:
        """One goal's replies as (perspective, seat or judge index, answer), checked against its questions."""
        texts = [goal.data["goal"] for goal in owner.goals]
        if text not in texts:
            raise given.origin.problem(f"{owner.name} has no goal with this text (goals: {' | '.join(texts)})")
        number = texts.index(text)
        asked = owner.goals[number].nested("eval_questions")
        found = []
        for perspective in given.data:
            where = given.origin.at(perspective)
            if perspective not in PERSPECTIVES:
                raise where.problem(f"not one of {', '.join(PERSPECTIVES)}")
            replies = [check_text(reply, where.at(place)) for place, reply in enumerate(given.sequence(perspective))]
            questions = asked.objects(perspective)
            if perspective == "judge" and replies and not judges:
                raise line.at("goal_metrics").problem(
                    "the judges are not named: give goal_metrics with its judge_<model> keys, as SENSE writes it, "
                    "or a \"judges\" list of model names"
                )
            if perspective == "judge" and len(questions) > 1:
                raise asked.origin.at("judge").problem(
                    f"{len(questions)} judge questions; Parley keeps one answer per judge and goal"
                )
            expected = len(questions) * (len(judges) if perspective == "judge" else 1)
            if len(replies) != expected:
                raise where.problem(
                    f"{len(replies)} answers, but the goal has {len(questions)} {perspective} question(s)"
                    + (f" for {len(judges)} judge(s)" if perspective == "judge" else "")
                )
            for place, reply in enumerate(replies):
                answer = AnswerDraft("goal_achieved", where.at(place), goal=(owner.position, number),
                                     value="yes" if "Yes" in reply else "no", reasoning=reply)
                if perspective == "judge":
                    who = place
                else:
                    who = self.character(questions[place].data.get("obj"), questions[place].origin.at("obj")).position
                found.append((perspective, who, answer))
        return found

    def probe_responses(self, fields: Fields) -> list[ResponseDraft]:
        if not fields.has("info_answer"):
            return []
        probes = self.scenario.probes
        definition = InstrumentDraft(
            preset=PROBES_PRESET,
            description="The scenario's probes as multiple-choice questions, asked of interviewed agents.",
            questions=[
                probe_question(Probe(text=p.text, options=p.options, correct=p.correct, topic=p.topic), number)
                for number, p in enumerate(probes)
            ],
            origin=fields.origin.at("info_answer"),
        )
        answers = fields.nested("info_answer")
        responses = []
        for name in answers.data:
            character = self.character(name, answers.origin.at(name))
            replies = [check_text(reply, answers.origin.at(name).at(place))
                       for place, reply in enumerate(answers.sequence(name))]
            if len(replies) != len(character.questions):
                raise answers.origin.at(name).problem(
                    f"{len(replies)} answers, but {name} has {len(character.questions)} info_reason_questions"
                )
            chosen = []
            for place, (reply, number) in enumerate(zip(replies, character.questions, strict=True)):
                picked = read_choice(reply, probes[number].options)
                if picked is None:
                    self.skipped["unreadable probe answer"] += 1
                    continue
                chosen.append(AnswerDraft(f"probe_{number + 1}", answers.origin.at(name).at(place),
                                          value=str(picked), reasoning=reply))
            if chosen:
                response = self.response(f"Probes of {self.scenario.external_id}", 1, "agent", character.model,
                                         answers.origin.at(name), seat=character.position, answers=chosen)
                response.definition = definition
                responses.append(response)
        return responses

    @staticmethod
    def response(instrument: str, version: int, kind: str, model: str, origin: Origin, *,
                 answers: list[AnswerDraft], seat: int | None = None) -> ResponseDraft:
        return ResponseDraft(
            instrument=instrument, version=version, origin=origin, seat_position=seat, answers=answers,
            respondent={"kind": kind, "model": model, "prompt_version": PROMPT_VERSION, "label": ""},
        )


def judge_models(fields: Fields) -> list[str]:
    """The judges, in the order their answers are listed: ``judge_<model>`` keys of ``goal_metrics``."""
    if fields.has("judges"):
        return fields.texts("judges")
    return [
        name.removeprefix("judge_") for name in fields.mapping("goal_metrics")
        if name.startswith("judge_") and name not in JUDGE_SUMMARIES
    ]


_MARKED = re.compile(r"\([1-9A-Za-z]\)")
_LETTERS = {mark: index for marks in ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz", "123456789")
            for index, mark in enumerate(marks)}


def read_choice(reply: str, options: list[str]) -> int | None:
    """The option a multiple-choice reply picks, read as ``SENSE/metric.py``'s ``SingleChoiceMetric``
    reads it: the first ``(B)``-style mark; else a lone letter or digit; else the one option whose
    text the reply contains (or is contained in). None when it picks none."""
    found = _MARKED.search(reply)
    if found:
        picked = _LETTERS[found.group()[1]]
    elif len(reply.rstrip(".")) == 1 and reply.rstrip(".") in _LETTERS:
        picked = _LETTERS[reply.rstrip(".")]
    else:
        text = re.sub(r"^[A-Z][).]", "", reply).strip() if re.match(r"[A-Z][).].+", reply) else reply
        if not text:
            return None
        matches = [
            index for index, option in enumerate(options)
            if option == text
            or (option in text and not any(other in text for other in options if other != option))
            or (text in option and not any(text in other for other in options if other != option))
        ]
        picked = matches[0] if matches else None
    return picked if picked is not None and picked < len(options) else None


# --- the scene line -------------------------------------------------------------------------------


def read_scene(fields: Fields, templates: dict[str, ScenarioDraft]) -> Scene:
    sample = _index(fields, "sample_idx")
    template_index = _index(fields, "template_idx") if fields.has("template_idx") else None
    background = fields.text("background", required=True)
    description = fields.text("description")
    context = "\n\n".join(part.strip() for part in (background, description) if part.strip())
    if not context:
        raise fields.origin.at("background").problem("a scene needs a background or a description")
    external_id = f"agentsense-{sample}"
    values: dict[str, Any] = {
        "codename": slugify(external_id)[:100], "source": SOURCE, "context": context, "original_context": "",
        "difficulty": "standard", "relationship": Relationship.KNOW_BY_NAME,
        "category": fields.choice("category", values_of(Category)),
    }
    check_scenario_values(values, fields.origin)
    values.update(turn_taking=TurnTaking.RANDOM_AFTER_GREETING, greeter_position=None, turn_cap=TURN_CAP,
                  is_template=False)
    communication = Fields(fields.mapping("roles"), fields.origin.at("roles"))
    line_model = fields.text("model", max_length=max_length(Respondent, "model"))

    characters: dict[str, SceneCharacter] = {}
    roles: list[RoleDraft] = []
    asked: list[tuple[SceneCharacter, Fields]] = []
    for position, item in enumerate(fields.objects("characters", required=True)):
        name = item.text("name", required=True, blank=False, max_length=200).strip()
        if name in characters:
            raise item.origin.at("name").problem(f"two characters are named {name!r}")
        goals = item.objects("goals", required=True)
        first, _, last = name.partition(" ")
        person = {"first_name": first, "last_name": last, "personality": item.text("profile")}
        check_character_values(person, item.origin, {"first_name": "name", "last_name": "name",
                                                      "personality": "profile"})
        character_id = f"{external_id}-{position}"
        roles.append(RoleDraft(
            position=position,
            goals=[GoalDraft(goal.text("goal", required=True, blank=False),
                             goal_type=goal.choice("goal_type", values_of(GoalType))) for goal in goals],
            private_knowledge=item.text("private_info"),
            communication=communication.choice(name, values_of(Communication)),
            character=CharacterRef(item.origin, external_id=character_id,
                                   draft=CharacterDraft(character_id, person, item.origin)),
            goals_field="goals",
        ))
        characters[name] = SceneCharacter(
            name, position, goals, [], item.text("model", max_length=max_length(Respondent, "model")) or line_model,
            item.origin,
        )
        asked.extend((characters[name], question) for question in item.objects("info_reason_questions"))
    check_roles(roles, fields.origin.at("characters"))
    for goal in (goal for character in characters.values() for goal in character.goals):
        for perspective in ("self", "others"):
            for question in goal.nested("eval_questions").objects(perspective) if goal.has("eval_questions") else ():
                if question.data.get("obj") not in characters:
                    raise question.origin.at("obj").problem(
                        f"{describe(question.data.get('obj'))} is not a character of this scene"
                    )

    probes: list[ProbeDraft] = []
    for asker, question in asked:
        probe = read_probe(question, asker, characters)
        same = next((number for number, p in enumerate(probes) if (p.about, p.text, p.options, p.correct)
                     == (probe.about, probe.text, probe.options, probe.correct)), None)
        if same is None:
            probes.append(probe)
            same = len(probes) - 1
        asker.questions.append(same)

    scenario = ScenarioDraft(external_id, values, roles, fields.origin, id_field="sample_idx", probes=probes)
    if template_index is not None:
        scenario.template = templates.setdefault(template_index, template_of(scenario, template_index))
    check_scenario_shape(scenario)
    return Scene(scenario, characters, sample)


def read_probe(question: Fields, asker: SceneCharacter, characters: dict[str, SceneCharacter]) -> ProbeDraft:
    """An ``info_reason_questions`` item: asked of ``asker``, about the character whose private
    information it asks for (``role`` when given, as the generating script names it; else the one other
    character named in the question; else, in a scene of two, the other one)."""
    text = question.text("question", required=True, blank=False)
    options = question.texts("options", required=True)
    label = question.data.get("answer_label")
    if isinstance(label, str) and label.strip().isdigit():
        label = int(label)
    correct = check_integer(label, question.origin.at("answer_label"), low=0)
    others = [name for name in characters if name != asker.name]
    if question.has("role"):
        about = question.choice("role", others)
    else:
        named = [name for name in others if re.search(rf"(?<!\w){re.escape(name.split()[0])}(?!\w)", text)]
        if len(named) == 1 or len(others) == 1:
            about = named[0] if len(named) == 1 else others[0]
        else:
            raise question.origin.at("role").problem(
                f"cannot tell whose private information this asks about ({', '.join(others)}); "
                "name them in \"role\""
            )
    return ProbeDraft(
        about=characters[about].position,
        topic=Probe.Topic.REASON if text.lower().startswith("why") else Probe.Topic.PRIVATE_INFO,
        text=text, options=options, correct=correct, origin=question.origin,
    )


def template_of(scene: ScenarioDraft, index: str) -> ScenarioDraft:
    """The template scenes sharing ``template_idx`` were made from: the first such scene's context and
    goals, its roles as empty slots (AgentSense's files keep only the instances)."""
    values = {**scene.values, "codename": slugify(f"agentsense-template-{index}")[:100], "is_template": True}
    roles = [RoleDraft(role.position, list(role.goals), goals_field="goals") for role in scene.roles]
    return ScenarioDraft(f"agentsense-template-{index}", values, roles, scene.origin, id_field="template_idx")


FORMAT = FileFormat(
    "agentsense", label="AgentSense scenes (with or without a run's outputs)",
    shape="an AgentSense scene (sample_idx, characters)",
    recognise=recognises, parse=parse,
)
