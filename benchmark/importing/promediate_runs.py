"""ProMediate's run folders (microsoft/ProMediate-Eval ``output/``), read into episodes of the case's scenario
with the consensus trace and the mediator-intelligence scores upstream computed for them.

A run of ``multiparty_conversation_negotiate.py`` and the scripts after it leaves, in
``output/<case>/<method>/<model>_<response_type>_<mode>_<intervene_freq>_<id>/``:

- ``conversation.txt``: a verbose log, then a line ``📋 Conversation Summary:`` and one line per utterance,
  ``🔄 Turn <i>: <name>: "<text>"`` (i from 1; the opening is Turn 1). A text with a line break spills onto
  the next lines: those continuation lines belong to the turn before them. Only the summary is read.
- ``attitudes.json`` (``scripts/consensus_agreement_pipeline.py``): one snapshot before the first turn and
  one after each, ``{party: {topic: attitude}}``.
- ``agreement_scores.json`` (same script): as many snapshots, ``{topic: [pair result, ...]}`` with one result
  per pair of parties (the five dimensions, ``overall_consensus_score`` and ``reasoning``). The script lists
  the pairs in the ``names`` order at the start but writes each rescored pair into the slot of the pair at
  that index in the ``config`` order, so once the two orders differ (hmo, flagship, river) a slot can hold
  another pair's score (spec §2.1 item 7).
- ``behavior_score.json`` (``scripts/behavior_evaluation.py``): one judge answer per mediator turn after the
  opening, in turn order, without the turn's index; a score of -1 means "not applicable".
- ``results_summary.csv`` (``scripts/evaluation.py``): one row of metric values.

How Parley keeps them:

- The episode plays the scenario ``promediate-<case>`` (import the case file first); its id is
  ``promediate-run-<case>-<method>-<folder>``, so importing the folder again changes nothing. Its barrier is
  the mode's (``promediate_modes``), carried by the party seats. The method names the mediator condition
  (``NoAgent``: no Mediator seat; ``Baseline2``: generic; ``Social``: social; ``Baseline1``: innerthought).
- Turns: one per summary utterance, index i - 1.
- Attitudes and pair scores become ``Attitude`` and ``PairAgreement`` rows of the judge ``upstream``, stored
  where they change, each pair under its own two seats: a party's utterance rescored the pairs that include
  it (in their config-order slots); a snapshot that changes a slot outside them, or anything after a
  Mediator turn, disagrees with the conversation and is refused. The two orders are kept in the episode's
  settings (``upstream_pairs``) so upstream's slot arithmetic can be replayed
  (``benchmark.stats.promediate_slots``).
- The metric row is kept whole in ``Episode.settings["promediate"]["upstream_results"]`` for comparison; the
  mediator-intelligence answers go to the per-intervention instrument (respondent: the judge ``upstream``),
  one per mediator turn after the opening, in order.

Files that disagree on parties, topics or turns are refused, naming the file, record and field. Each file is
read on its own by ``promediate_run_files``; this module checks them together against the scenario and saves.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from ..instruments.interventions import InterventionAnswerError, store_intervention_answers
from ..instruments.respondents import judge_respondent
from ..models import ActionType, Attitude, Episode, PairAgreement, Scenario, Team
from .checks import check_episode
from .format import FileFormat, Saved
from .import_result import ImportResult
from .problems import ImportProblem
from .promediate import MEDIATOR
from .promediate import SOURCE as CASE_SOURCE
from .promediate_modes import MODES
from .promediate_run_files import (
    AGREEMENT,
    ATTITUDES,
    BEHAVIOUR,
    CONVERSATION,
    METHODS,
    MI_KEYS,
    PairScore,
    UpstreamRun,
    Utterance,
    claims,
    parse_path,
)
from .records import CharacterRef, Draft, EpisodeDraft, Fields, Origin, Remark, ScenarioRef, SeatDraft, TurnDraft
from .saving import save as save_drafts

JUDGE = "upstream"
PARTY_MODEL = "claude-sonnet-4-20250514"  # every party call upstream, whatever --model says
DIMENSIONS = PairAgreement.DIMENSIONS
PARSE_ERROR = "Error in parsing the response"

# --- checked against the case's scenario -----------------------------------------------------------


def resolve(drafts: list[Any], team: Team) -> None:
    """Check each run against its case's scenario and build its episode (seats, turns, trace rows)."""
    runs = [draft for draft in drafts if isinstance(draft, UpstreamRun)]
    wanted = {f"{CASE_SOURCE}-{run.case}" for run in runs}
    scenarios = {
        scenario.external_id: scenario
        for scenario in Scenario.objects.of_team(team)
        .filter(external_id__in=wanted)
        .prefetch_related("roles__character", "topics")
    }
    for run in runs:
        scenario = scenarios.get(f"{CASE_SOURCE}-{run.case}")
        if scenario is None or CASE_SOURCE not in scenario.settings:
            raise run.origin("").problem(
                f"no scenario 'promediate-{run.case}' with its topics in this team: import the case file "
                f"(cases/{run.case}.json) first"
            )
        RunReader(run, scenario).read()


class RunReader:
    def __init__(self, run: UpstreamRun, scenario: Scenario) -> None:
        self.run = run
        self.scenario = scenario
        self.settings = scenario.settings[CASE_SOURCE]
        self.parties: list[str] = list(self.settings["parties"])
        self.topics = [topic.title for topic in scenario.topics.all()]
        self.roles = {role.character.name: role for role in scenario.roles.all() if role.character}
        self.mediated = METHODS[run.method] != "none"
        seated = self.parties + ([MEDIATOR] if self.mediated and MEDIATOR in self.roles else [])
        self.seats = {name: number for number, name in enumerate(seated)}

    def read(self) -> None:
        run = self.run
        turns = [self.turn(index, utterance) for index, utterance in enumerate(run.utterances)]
        if run.attitudes is not None:
            self.read_attitudes()
        if run.agreement is not None:
            self.read_agreement()
        mi = self.read_behaviour() if run.behaviour is not None else None
        condition = METHODS[run.method]
        settings: dict[str, Any] = {
            "mediator": condition,
            "mediator_model": run.model if self.mediated else "",
            "party_model": PARTY_MODEL,
            "method": run.method,
            "response_type": run.response_type,
            "mode": "general" if run.mode == "none" else run.mode,
            "intervene_freq": run.frequency,
            "run_id": run.run_id,
            "run_folder": run.folder,
            "imported_from": JUDGE,
            "persona_to_mediator": True,  # upstream appends the persona to the Mediator's memory too
            "upstream_pairs": {
                "names_order": self.parties,
                "config_order": [
                    name for name in self.settings.get("config_order") or self.parties if name != MEDIATOR
                ],
            },
        }
        if self.mediated and MEDIATOR in self.seats:
            settings["mediator_position"] = self.seats[MEDIATOR]
        if run.results is not None:
            settings["upstream_results"] = run.results
        episode = EpisodeDraft(
            external_id=f"promediate-run-{run.case}-{run.method}-{Path(run.folder).name}"[:100],
            scenario=ScenarioRef(self.scenario.external_id, run.origin("")),
            origin=run.origin(""),
            barrier_key=MODES[run.mode],
            turn_cap=max(len(turns), self.scenario.turn_cap or 0, 1),
            settings={CASE_SOURCE: settings},
            seats=[self.seat(name, number) for name, number in self.seats.items()],
            turns=turns,
        )
        check_episode(episode)
        run.episode = episode
        run.mi = mi or []

    def seat(self, name: str, number: int) -> SeatDraft:
        role = self.roles[name]
        mediator = name == MEDIATOR
        return SeatDraft(
            position=number,
            role_position=role.position,
            character=CharacterRef(self.run.origin(""), found=role.character),
            origin=self.run.origin(""),
            model=self.run.model if mediator else PARTY_MODEL,
            carries_barrier=not mediator,
        )

    def turn(self, index: int, utterance: Utterance) -> TurnDraft:
        if utterance.speaker not in self.seats:
            raise utterance.origin.at("speaker").problem(
                f"{utterance.speaker!r} is not at the table of {self.scenario.external_id} under {self.run.method} "
                f"({', '.join(self.seats)})"
            )
        return TurnDraft(
            index=index,
            seat_position=self.seats[utterance.speaker],
            action_type=ActionType.SPEAK,
            origin=utterance.origin,
            content=utterance.text,
        )

    def expect_points(self, snapshots: list[Any], name: str) -> None:
        points = len(self.run.utterances) + 1
        if len(snapshots) != points:
            raise self.run.origin(name).problem(
                f"has {len(snapshots)} snapshots; {CONVERSATION} has {points - 1} turns, so {points} are expected "
                "(one before the first turn and one after each)"
            )

    def topic_named(self, title: str, origin: Origin) -> str:
        if title in self.topics:
            return title
        folded = {topic.casefold(): topic for topic in self.topics}
        if title.casefold() in folded:
            return folded[title.casefold()]
        raise origin.problem(f"{title!r} is not a topic of {self.scenario.external_id} ({'; '.join(self.topics)})")

    def read_attitudes(self) -> None:
        self.expect_points(self.run.attitudes, ATTITUDES)
        previous: dict[tuple[str, str], str] = {}
        for point, snapshot in enumerate(self.run.attitudes):
            origin = self.run.origin(ATTITUDES, f"record {point + 1}")
            fields = Fields(snapshot, origin)
            if set(fields.data) != set(self.parties):
                raise origin.problem(
                    f"names the parties {', '.join(map(repr, fields.data))}; {self.scenario.external_id} has "
                    f"{', '.join(map(repr, self.parties))}"
                )
            for party in self.parties:
                stances = fields.mapping(party)
                for title in stances:
                    topic = self.topic_named(title, origin.at(party))
                    text = Fields(stances, origin.at(party)).text(title)
                    if text and previous.get((party, topic)) != text:
                        self.run.attitude_rows.append((point, party, topic, text))
                        previous[(party, topic)] = text

    def read_agreement(self) -> None:
        """The pair scores each snapshot changed, each under the pair it was scored for (see the module doc)."""
        self.expect_points(self.run.agreement, AGREEMENT)
        pairs = list(combinations(self.parties, 2))
        config = [name for name in self.settings.get("config_order") or self.parties if name != MEDIATOR]
        slot = {frozenset(pair): number for number, pair in enumerate(combinations(config, 2))}
        stances = self.stances_by_point()
        before: dict[str, list[Any]] = {}
        for point, snapshot in enumerate(self.run.agreement):
            origin = self.run.origin(AGREEMENT, f"record {point + 1}")
            fields = Fields(snapshot, origin)
            now = {self.topic_named(title, origin): fields.sequence(title) for title in fields.data}
            if set(now) != set(self.topics):
                missing = [topic for topic in self.topics if topic not in now]
                raise origin.problem(f"has no scores for the topic {missing[0]!r}")
            for topic, results in now.items():
                if len(results) != len(pairs):
                    raise origin.at(topic).problem(
                        f"has {len(results)} pair results; {len(self.parties)} parties make {len(pairs)} pairs"
                    )
                for number, result in enumerate(results):
                    self.pair_values(result, origin.at(topic).at(number))
                if point == 0:
                    self.run.pair_rows.extend(PairScore(0, topic, pair, results[n]) for n, pair in enumerate(pairs))
                    continue
                changed = [n for n, result in enumerate(results) if result != before[topic][n]]
                speaker = self.run.utterances[point - 1].speaker
                own = (
                    {slot[frozenset((speaker, other))]: other for other in self.parties if other != speaker}
                    if speaker in self.parties
                    else {}
                )
                stray = [n for n in changed if n not in own]
                if stray:
                    who = "the Mediator's turn" if speaker not in self.parties else f"{speaker}'s turn"
                    raise (
                        origin.at(topic)
                        .at(stray[0])
                        .problem(
                            f"changes a pair score after {who} ({CONVERSATION} Turn {point}) in a slot that holds "
                            f"no pair with {speaker}: the files disagree"
                        )
                    )
                if changed or (point, speaker, topic) in stances:
                    for number, other in sorted(own.items()):
                        pair = tuple(sorted((speaker, other), key=self.parties.index))
                        self.run.pair_rows.append(PairScore(point, topic, pair, results[number]))
            before = now

    def stances_by_point(self) -> set[tuple[int, str, str]]:
        """(point, party, topic) where the attitudes file records a new stance."""
        return {(point, party, topic) for point, party, topic, _text in self.run.attitude_rows if point}

    def pair_values(self, result: Any, origin: Origin) -> dict[str, Any]:
        fields = Fields(result, origin)
        values = {name: fields.number(name) for name in (*DIMENSIONS, "overall_consensus_score")}
        for name, value in values.items():
            if value is not None and not 0 <= value <= 1:
                raise origin.at(name).problem(f"{value} is outside 0 to 1")
        return values

    def read_behaviour(self) -> list[dict[str, Any]]:
        """The judge's answers, one per mediator turn after the opening, in turn order."""
        turns = [
            index for index, utterance in enumerate(self.run.utterances) if utterance.speaker == MEDIATOR and index
        ]
        origin = self.run.origin(BEHAVIOUR)
        if len(self.run.behaviour) != len(turns):
            raise origin.problem(
                f"has {len(self.run.behaviour)} judged turns; {CONVERSATION} has {len(turns)} mediator turns after the "
                "opening"
            )
        answers = []
        for number, (entry, index) in enumerate(zip(self.run.behaviour, turns, strict=True)):
            simple = Fields(entry, Origin(origin.file, f"record {number + 1}")).nested("simple")
            scores: dict[str, int | None] = {}
            reasoning: dict[str, str] = {}
            for key in MI_KEYS:
                answer = simple.nested(key)
                score = answer.number("score", required=True)
                if score != -1 and not (1 <= score <= 5 and score.is_integer()):
                    raise answer.origin.at("score").problem(
                        f"{score:g} is neither -1 (not applicable) nor a whole number from 1 to 5"
                    )
                scores[key] = None if score == -1 else int(score)
                said = [(label, answer.text(name)) for name, label in (("evidence", "Evidence"), ("reasoning", "Why"))]
                reasoning[key] = "\n\n".join(f"{label}: {text}" for label, text in said if text.strip())
            answers.append({"turn_index": index, "scores": scores, "reasoning": reasoning})
        return answers


# --- saving ---------------------------------------------------------------------------------------------


def save(drafts: Sequence[Any], result: ImportResult, team: Team, progress: Saved | None) -> None:
    """The episodes (``saving.save``), then the trace rows and judge answers of those it created."""
    runs = [draft for draft in drafts if isinstance(draft, UpstreamRun)]
    stored = set(
        Episode.objects.of_team(team)
        .filter(external_id__in=[run.episode.external_id for run in runs])
        .values_list("external_id", flat=True)
    )
    save_drafts(
        [run.episode for run in runs] + [d for d in drafts if isinstance(d, Remark)], result, team, progress=progress
    )
    for run in runs:
        if run.episode.external_id in stored:  # already imported: what exists wins
            continue
        episode = Episode.objects.of_team(team).get(external_id=run.episode.external_id)
        seats = {seat.character.name: seat for seat in episode.seats.select_related("character")}
        topics = {topic.title: topic for topic in episode.scenario.topics.all()}
        Attitude.objects.bulk_create(
            Attitude(episode=episode, point=point, seat=seats[party], topic=topics[topic], text=text, judge=JUDGE)
            for point, party, topic, text in run.attitude_rows
        )
        PairAgreement.objects.bulk_create(pair_row(episode, seats, topics, score) for score in run.pair_rows)
        if run.attitude_rows:
            result.created["attitude"] += len(run.attitude_rows)
        if run.pair_rows:
            result.created["pair agreement"] += len(run.pair_rows)
        if run.mi:
            respondent = judge_respondent(JUDGE, "")
            for answer in run.mi:
                try:
                    store_intervention_answers(
                        episode, answer["turn_index"], respondent, answer["scores"], reasoning=answer["reasoning"]
                    )
                except InterventionAnswerError as error:
                    raise run.origin(BEHAVIOUR).problem(str(error)) from None
            result.created["answer"] += len(run.mi) * len(MI_KEYS)


def pair_row(episode: Episode, seats: dict, topics: dict, score: PairScore) -> PairAgreement:
    a, b = sorted((seats[score.pair[0]], seats[score.pair[1]]), key=lambda seat: seat.position)
    values = score.values
    return PairAgreement(
        episode=episode,
        point=score.point,
        topic=topics[score.topic],
        seat_a=a,
        seat_b=b,
        overall=values.get("overall_consensus_score"),
        reasoning=str(values.get("reasoning") or ""),
        failed=values.get("reasoning") == PARSE_ERROR,
        judge=JUDGE,
        **{name: values.get(name) for name in DIMENSIONS},
    )


class RunFolderFormat(FileFormat):
    """A ProMediate run folder, or a folder of them; checked against the team's case scenarios (``resolve``)."""

    reads_directory = True

    def claims_directory(self, path: Path) -> bool:
        return claims(path)

    def parse_file(self, path: Path, text: str) -> list[Any]:
        return parse_path(path)

    def resolve(self, drafts: list[Any], team: Team) -> None:
        resolve(drafts, team)

    def save(self, drafts: Sequence[Any], result: ImportResult, team: Team, progress: Saved | None) -> None:
        save(drafts, result, team, progress)


def _never(first: object) -> bool:
    """A run is a folder, never recognised from a file's first record."""
    return False


def _refuse(text: str, file: str) -> list[Draft]:
    raise ImportProblem("a ProMediate run is a folder: import the folder that holds conversation.txt", file=file)


FORMAT = RunFolderFormat(
    "promediate-run",
    label="ProMediate run folder (conversation.txt, attitudes, agreement scores, judge scores, results)",
    shape="a ProMediate run folder (conversation.txt with its summary)",
    recognise=_never,
    parse=_refuse,
)
