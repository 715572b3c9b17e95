"""Write one file's drafts: resolve references, then insert everything with ``bulk_create``.

Runs inside the caller's transaction, for one team: external ids are looked up among that team's
rows only (another team's character with the same id is a stranger), and everything is created in
that team. Lookups are cached for the whole file: each external id the
file mentions is fetched once, in one query per model, before anything is created, and objects
created earlier in the same file are found again without a query. What already exists wins:
nothing is ever updated, so importing a file twice leaves the database as it was.

An episode already stored keeps its seats and turns, but the file's responses it lacks are added to
it (the episode counts as changed): a response of a respondent it has no response from (for that
instrument and seat), or answers to questions that respondent's stored response leaves open. An
answer the episode already has with the same value is unchanged; a different value is refused,
naming the place in the file, since an import never overwrites. Scores-only files
(``responses.EpisodeResponsesDraft``) add to stored episodes in the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from django.db import models
from django.db.models import Prefetch
from django.utils import timezone

from ..evaluation.interviews.instruments import PROBES_PRESET
from ..instruments.respondents import find_respondent
from ..models import (
    Answer,
    Barrier,
    Cast,
    CastMember,
    Character,
    Episode,
    Goal,
    Instrument,
    Probe,
    Question,
    Respondent,
    Response,
    Role,
    Scenario,
    Seat,
    Team,
    Turn,
)
from .records import (
    TEXT_SCENARIO_PREFIX,
    CastDraft,
    CharacterDraft,
    CharacterRef,
    CheckedRecord,
    Draft,
    EpisodeDraft,
    Remark,
    ScenarioDraft,
    ScenarioRef,
)
from .responses import AnswerDraft, EpisodeResponsesDraft, ResponseDraft
from .results import ImportResult
from .scenario_barriers import save_barrier_prompts

M = TypeVar("M", bound=models.Model)
_CHUNK = 500


def save(
    drafts: list[Draft], result: ImportResult, team: Team, *, progress: Callable[[int, int], None] | None = None
) -> None:
    """Create in ``team`` what ``drafts`` describe and the team does not have yet; count it all in ``result``.

    ``progress(done, total)`` is told, after each record, how many of the drafts have been handled."""
    Saver(drafts, result, team, progress).run()


def _chunks(values: Iterable[str]) -> Iterator[list[str]]:
    values = sorted(set(values))
    for start in range(0, len(values), _CHUNK):
        yield values[start : start + _CHUNK]


class Saver:
    def __init__(
        self, drafts: list[Draft], result: ImportResult, team: Team,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.drafts = drafts
        self.progress = progress
        self.result = result
        self.team = team
        self.barriers = {barrier.key: barrier for barrier in Barrier.objects.of_team(team)}
        self.characters: dict[str, Character] = {}
        self.scenarios: dict[str, Scenario] = {}
        self.roles: dict[str, dict[int, Role]] = {}
        self.episode_ids: set[str] = set()
        self.by_name: dict[str, Character | None] = {}
        self.existing: dict[str, set[str]] = {"character": set(), "scenario": set()}
        self.reused: dict[str, set[str]] = {"character": set(), "scenario": set()}
        self.new: dict[type[models.Model], list[models.Model]] = {
            model: []
            for model in (Character, Scenario, Role, Goal, Probe, Cast, CastMember, Instrument, Question, Episode, Seat,
                          Turn, Response, Answer)
        }
        self.casts: dict[tuple[str, str], Cast] = {}  # (scenario external id, cast external id) -> cast
        self.new_goals: dict[tuple[int, int], Goal] = {}  # (id of the new role, goal position) -> goal
        self.instruments: dict[tuple[str, int], tuple[Instrument, dict[str, Question]]] = {}
        self.respondents: dict[tuple[tuple[str, str], ...], Respondent] = {}
        self.stored: dict[str, Episode] = {}  # stored episodes the file adds responses to (``load_stored``)
        self.not_stored: list[str] = []  # episodes a scores file names that the team does not have
        self.stored_goals: dict[tuple[int, int], Goal] = {}  # (role id, position) -> goal, of stored episodes
        self.unknown_relationships = 0  # scenarios created without a relationship

    # --- lookups --------------------------------------------------------------------------------

    def preload(self) -> None:
        """Fetch every character, scenario and episode the file names, one query per model."""
        character_ids: set[str] = set()
        scenario_ids: set[str] = set()
        episode_ids: set[str] = set()

        def want_character(ref: CharacterRef | None) -> None:
            if ref is not None:
                character_ids.update(filter(None, [ref.external_id, ref.draft and ref.draft.external_id]))

        def want_scenario(draft: ScenarioDraft) -> None:
            scenario_ids.add(draft.external_id)
            for role in draft.roles:
                want_character(role.character)
            for cast in draft.casts:
                for ref in cast.members.values():
                    want_character(ref)
            if draft.template is not None:
                want_scenario(draft.template)

        for draft in self.drafts:
            if isinstance(draft, CharacterDraft):
                character_ids.add(draft.external_id)
            elif isinstance(draft, ScenarioDraft):
                want_scenario(draft)
            elif isinstance(draft, EpisodeDraft):
                episode_ids.add(draft.external_id)
                scenario_ids.add(draft.scenario.external_id)
                if draft.scenario.draft:
                    want_scenario(draft.scenario.draft)
                for seat in draft.seats:
                    want_character(seat.character)
            elif isinstance(draft, CastDraft):
                scenario_ids.add(draft.scenario.external_id)
                for ref in draft.characters:
                    want_character(ref)

        for chunk in _chunks(character_ids):
            for character in Character.objects.of_team(self.team).filter(external_id__in=chunk):
                self.characters[character.external_id] = character
                self.existing["character"].add(character.external_id)
        for chunk in _chunks(scenario_ids):
            for scenario in Scenario.objects.of_team(self.team).filter(external_id__in=chunk).prefetch_related("roles"):
                self.scenarios[scenario.external_id] = scenario
                self.roles[scenario.external_id] = {role.position: role for role in scenario.roles.all()}
                self.existing["scenario"].add(scenario.external_id)
        cast_ids = {draft.external_id for draft in self.drafts if isinstance(draft, CastDraft)}
        for chunk in _chunks(cast_ids):
            for cast in Cast.objects.of_team(self.team).filter(external_id__in=chunk).select_related(
                "scenario"
            ).prefetch_related("members__role", "members__character"):
                self.casts[(cast.scenario.external_id, cast.external_id)] = cast
        for chunk in _chunks(episode_ids):
            self.episode_ids.update(
                Episode.objects.of_team(self.team).filter(external_id__in=chunk).values_list("external_id", flat=True)
            )

    def _reuse(self, kind: str, external_id: str) -> None:
        if external_id in self.existing[kind]:
            self.reused[kind].add(external_id)

    def _character_named(self, name: str) -> Character | None:
        """The one character with this full name, or None when there is none or more than one."""
        if name not in self.by_name:
            first, _, last = name.partition(" ")
            matches = [character for character in self.new[Character] if character.name == name] or list(
                Character.objects.of_team(self.team).filter(
                    models.Q(first_name=first, last_name=last) | models.Q(first_name=name, last_name="")
                )
            )
            self.by_name[name] = matches[0] if len(matches) == 1 else None
        return self.by_name[name]

    def character(self, ref: CharacterRef) -> Character:
        if ref.found is not None:
            return ref.found
        if ref.external_id and ref.external_id in self.characters:
            self._reuse("character", ref.external_id)
            return self.characters[ref.external_id]
        if ref.name and (found := self._character_named(ref.name)):
            if found.pk is not None:
                self.reused["character"].add(found.external_id or f"pk:{found.pk}")
            return found
        if ref.draft is None:
            wanted = repr(ref.external_id) if ref.external_id else f"named {ref.name!r}"
            raise ref.origin.problem(f"{ref.noun} {wanted} is not in the database or in this file")
        return self.character_from(ref.draft)

    def character_from(self, draft: CharacterDraft) -> Character:
        if draft.external_id in self.characters:
            self._reuse("character", draft.external_id)
            return self.characters[draft.external_id]
        character = Character(team=self.team, external_id=draft.external_id, **draft.values)
        self.characters[draft.external_id] = character
        self.new[Character].append(character)
        self.result.created["character"] += 1
        return character

    def scenario(self, ref: ScenarioRef) -> tuple[Scenario, dict[int, Role]]:
        if ref.external_id in self.scenarios:
            self._reuse("scenario", ref.external_id)
            return self.scenarios[ref.external_id], self.roles[ref.external_id]
        if ref.draft is None:
            raise ref.origin.problem(f"{ref.noun} {ref.external_id!r} is not in the database or in this file")
        return self.scenario_from(ref.draft)

    def scenario_from(self, draft: ScenarioDraft) -> tuple[Scenario, dict[int, Role]]:
        if draft.external_id in self.scenarios:
            self._reuse("scenario", draft.external_id)
            return self.scenarios[draft.external_id], self.roles[draft.external_id]
        template = self.scenario_from(draft.template)[0] if draft.template is not None else None
        if template is not None and not template.is_template:
            raise draft.origin.at("template").problem(
                f"scenario {draft.template.external_id!r} is in the database but is not a template"
            )
        scenario = Scenario(team=self.team, external_id=draft.external_id, template=template, **draft.values)
        roles = {
            role.position: Role(
                scenario=scenario,
                position=role.position,
                reason=role.reason,
                private_knowledge=role.private_knowledge,
                communication=role.communication,
                character=self.character(role.character) if role.character else None,
                **role.slot,
            )
            for role in draft.roles
        }
        self.scenarios[draft.external_id] = scenario
        self.roles[draft.external_id] = roles
        self.new[Scenario].append(scenario)
        self.new[Role].extend(roles.values())
        for role in draft.roles:
            for number, goal in enumerate(role.goals):
                row = Goal(
                    role=roles[role.position], position=number, text=goal.text, goal_type=goal.goal_type,
                    tags=goal.tags,
                )
                self.new_goals[(id(roles[role.position]), number)] = row
                self.new[Goal].append(row)
        self.new[Probe].extend(
            Probe(
                scenario=scenario, about=roles[probe.about], position=number, topic=probe.topic, text=probe.text,
                options=probe.options, correct=probe.correct, asked_of=probe.asked_of,
            )
            for number, probe in enumerate(draft.probes)
        )
        self.scenario_casts(draft, scenario, roles)
        self.result.created["scenario"] += 1
        if scenario.relationship is None:
            self.unknown_relationships += 1
        return scenario, roles

    def scenario_casts(self, draft: ScenarioDraft, scenario: Scenario, roles: dict[int, Role]) -> None:
        """The casts a new scenario's record gives (a library's), their characters found as its roles' are."""
        for cast in draft.casts:
            row = Cast(scenario=scenario, external_id=cast.external_id, label=cast.label)
            self.new[Cast].append(row)
            self.new[CastMember].extend(
                CastMember(cast=row, role=roles[position], character=self.character(ref))
                for position, ref in cast.members.items()
            )
        if draft.casts:
            self.result.created["cast"] += len(draft.casts)

    # --- episodes -------------------------------------------------------------------------------

    def episode(self, draft: EpisodeDraft) -> None:
        if draft.external_id in self.episode_ids:
            self.add_to_stored(draft.external_id, draft.responses)
            return
        self.episode_ids.add(draft.external_id)
        barrier = self.barriers.get(draft.barrier_key)
        if barrier is None:
            raise draft.origin.at("barrier").problem(
                f"{draft.barrier_key!r} is not a barrier key; known keys: {', '.join(self.barriers)}"
            )
        scenario, roles = self.scenario(draft.scenario)
        episode = Episode(
            team=self.team,
            external_id=draft.external_id,
            scenario=scenario,
            barrier=barrier,
            source=draft.source,
            status=draft.status,
            end_reason=draft.end_reason,
            turn_cap=draft.turn_cap,
            tag=draft.tag,
            settings=draft.settings,
            started_at=draft.started_at,
            finished_at=draft.finished_at,
        )
        self.new[Episode].append(episode)
        if draft.created_at:
            episode.created_at = draft.created_at

        seats: dict[int, Seat] = {}
        for seat in draft.seats:
            role = roles.get(seat.role_position)
            if role is None:
                known = ", ".join(str(position) for position in sorted(roles))
                raise seat.origin.at("role").problem(
                    f"scenario {draft.scenario.external_id!r} has no role at position {seat.role_position} "
                    f"(roles: {known})"
                )
            seats[seat.position] = Seat(
                episode=episode,
                position=seat.position,
                role=role,
                character=self.character(seat.character),
                player=seat.player,
                model=seat.model,
                strategy=seat.strategy,
                carries_barrier=seat.carries_barrier,
            )
        self.new[Seat].extend(seats.values())

        for turn in draft.turns:
            row = Turn(
                episode=episode,
                index=turn.index,
                seat=seats[turn.seat_position],
                action_type=turn.action_type,
                content=turn.content,
                client_id=turn.client_id,
                model=turn.model,
                latency_ms=turn.latency_ms,
                prompt_tokens=turn.prompt_tokens,
                completion_tokens=turn.completion_tokens,
            )
            self.new[Turn].append(row)
            if turn.created_at:
                row.created_at = turn.created_at
        answered: set[tuple[int, int, int | None]] = set()
        for response in draft.responses:
            self.response(response, episode, roles, answered)
        self.result.created["episode"] += 1
        self.result.created["turn"] += len(draft.turns)
        self.result.skipped.update(draft.skipped)

    # --- casts ----------------------------------------------------------------------------------

    def cast(self, draft: CastDraft) -> None:
        """A cast of a scenario in Parley, one character per role, all of them already in Parley."""
        ref = draft.scenario
        if ref.external_id not in self.scenarios:
            raise ref.origin.problem(f"{ref.noun} {ref.external_id!r} is not in Parley; {draft.first}")
        scenario, roles = self.scenario(ref)
        for wanted in draft.characters:
            if wanted.external_id not in self.characters:
                raise wanted.origin.problem(f"{wanted.noun} {wanted.external_id!r} is not in Parley; {draft.first}")
        if len(draft.characters) != len(roles):
            raise draft.origin.at(draft.characters_field).problem(
                f"{ref.noun} {ref.external_id!r} has {len(roles)} roles; the cast names {len(draft.characters)}"
            )
        characters = {position: self.character(c) for position, c in zip(sorted(roles), draft.characters, strict=True)}
        existing = self.casts.get((ref.external_id, draft.external_id))
        if existing is not None:
            self.result.unchanged["cast"] += 1
            if existing.characters() != characters:
                self.result.note(
                    f"cast {draft.external_id!r} of {ref.noun} {ref.external_id!r} is in Parley with other "
                    "characters than the file's; Parley's were kept"
                )
            return
        cast = Cast(scenario=scenario, external_id=draft.external_id)
        self.casts[(ref.external_id, draft.external_id)] = cast
        self.new[Cast].append(cast)
        self.new[CastMember].extend(
            CastMember(cast=cast, role=roles[position], character=character)
            for position, character in characters.items()
        )
        self.result.created["cast"] += 1

    # --- responses ------------------------------------------------------------------------------

    def instrument(self, draft: ResponseDraft, scenario: Scenario) -> tuple[Instrument, dict[str, Question]]:
        """The instrument a response names, with its questions by key: one of the team's or a preset; a
        team instrument the file gives in full is made for the team when it has none of that name."""
        key = (draft.instrument, draft.version)
        if key not in self.instruments:
            instrument = (
                Instrument.objects.filter(name=draft.instrument, version=draft.version)
                .filter(models.Q(team__isnull=True) | models.Q(team=self.team))
                .order_by("team")  # the team's own before a preset of the same name
                .first()
            )
            if instrument is None and draft.definition is not None:
                self.instruments[key] = self.instrument_from(draft, scenario)
                return self.instruments[key]
            if instrument is None:
                raise draft.origin.at("instrument").problem(
                    f"instrument {draft.instrument!r} version {draft.version} is neither a preset nor one of "
                    "this team's instruments"
                )
            questions = {q.key: q for q in instrument.questions.all()}
            if draft.definition is not None and sorted(
                (q["key"], q["kind"], q["scope"]) for q in draft.definition.questions
            ) != sorted((q.key, q.kind, q.scope) for q in questions.values()):
                raise draft.origin.at("instrument").problem(
                    f"the team's instrument {draft.instrument!r} version {draft.version} asks other questions "
                    "than the file's; import it into another team, or rename one of them"
                )
            self.instruments[key] = (instrument, questions)
        return self.instruments[key]

    def instrument_from(self, draft: ResponseDraft, scenario: Scenario) -> tuple[Instrument, dict[str, Question]]:
        """A team instrument made from the file's definition, frozen, since answers come with it."""
        definition = draft.definition
        assert definition is not None
        instrument = Instrument(
            team=self.team, name=draft.instrument, version=draft.version, preset=definition.preset,
            description=definition.description, frozen_at=timezone.now(),
            scenario=scenario if definition.preset == PROBES_PRESET else None,
        )
        questions = {q["key"]: Question(instrument=instrument, **q) for q in definition.questions}
        self.new[Instrument].append(instrument)
        self.new[Question].extend(questions.values())
        self.result.created["instrument"] += 1
        return instrument, questions

    def respondent(self, draft: ResponseDraft) -> Respondent:
        key = tuple(sorted(draft.respondent.items()))
        if key not in self.respondents:
            self.respondents[key] = find_respondent(Respondent, {**draft.respondent, "user": None})
        return self.respondents[key]

    def response(
        self, draft: ResponseDraft, episode: Episode, roles: dict[int, Role], answered: set[tuple[int, int, int | None]]
    ) -> None:
        """A response and its answers, each answer checked against its question as the database would."""
        instrument, questions = self.instrument(draft, episode.scenario)
        respondent = self.respondent(draft)
        once = (instrument.pk or id(instrument), respondent.pk, draft.seat_position)
        if respondent.kind == Respondent.Kind.JUDGE and once in answered:
            raise draft.origin.problem(
                f"{respondent} answers {instrument} about this episode twice; a judge answers once"
            )
        answered.add(once)
        response = Response(
            instrument=instrument, episode=episode, respondent=respondent, seat_position=draft.seat_position,
            latency_ms=draft.latency_ms, prompt_tokens=draft.prompt_tokens, completion_tokens=draft.completion_tokens,
        )
        if draft.created_at:
            response.created_at = draft.created_at
        self.new[Response].append(response)
        self.new[Answer].extend(self.answer(answer, response, questions, roles) for answer in draft.answers)
        self.result.created["answer"] += len(draft.answers)

    def answer(self, draft: AnswerDraft, response: Response, questions: dict[str, Question],
               roles: dict[int, Role]) -> Answer:
        """The answer row of ``draft``, checked against its question as the database would."""
        question = questions.get(draft.question)
        if question is None:
            raise draft.origin.at("question").problem(
                f"{response.instrument} has no question {draft.question!r} (its questions: {', '.join(questions)})"
            )
        check_answer(draft, question)
        return Answer(
            response=response, question=question, seat_position=draft.seat_position,
            goal=self.goal(draft, roles), value=draft.value, number=draft.number, reasoning=draft.reasoning,
        )

    def goal(self, answer: AnswerDraft, roles: dict[int, Role]) -> Goal | None:
        if answer.goal is None:
            return None
        role_position, position = answer.goal
        role = roles.get(role_position)
        found = None
        if role is not None:  # a goal made from this file, else a stored one
            found = self.new_goals.get((id(role), position)) or self.stored_goals.get((role.pk, position))
            if found is None and role.pk is not None:
                found = Goal.objects.filter(role=role, position=position).first()
        if found is None:
            raise answer.origin.at("goal").problem(
                f"the scenario has no goal {position} of the role at position {role_position}"
            )
        return found

    # --- responses added to stored episodes -----------------------------------------------------

    def load_stored(self) -> None:
        """The stored episodes the file gives responses for, with their seats, roles and responses (with
        answers): a few queries per 500 episodes, however many responses the file adds."""
        wanted = {draft.episode_id for draft in self.drafts if isinstance(draft, EpisodeResponsesDraft)}
        wanted.update(
            draft.external_id for draft in self.drafts
            if isinstance(draft, EpisodeDraft) and draft.responses and draft.external_id in self.episode_ids
        )
        responses = Response.objects.exclude(status=Response.Status.SUPERSEDED).prefetch_related("answers")
        for chunk in _chunks(wanted):
            for episode in (
                Episode.objects.of_team(self.team).filter(external_id__in=chunk).select_related("scenario")
                .prefetch_related("seats", "scenario__roles__goals", Prefetch("responses", queryset=responses))
            ):
                self.stored[episode.external_id] = episode
                for role in episode.scenario.roles.all():
                    self.stored_goals.update(((role.pk, goal.position), goal) for goal in role.goals.all())

    def responses_for_stored(self, draft: EpisodeResponsesDraft) -> None:
        """A scores file's responses for one episode: added to the stored episode, which must play the
        scenario the file names; an episode the team lacks is refused or listed, as the format says."""
        episode = self.stored.get(draft.episode_id)
        if episode is None:
            if draft.when_missing == EpisodeResponsesDraft.LIST:
                self.not_stored.append(draft.episode_id)
                return
            raise draft.origin.at(draft.id_field).problem(
                f"episode {draft.episode_id!r} is not in Parley (in this team); import the episode first"
            )
        stored_scenario = episode.scenario.external_id or ""
        if stored_scenario.startswith(TEXT_SCENARIO_PREFIX) and draft.scenario_id is not None:
            self.result.note(
                "some episodes play a scenario built from a log's text, which has no environment id: the file's "
                f"{draft.scenario_field} could not be checked for them"
            )
        elif draft.scenario_id is not None and draft.scenario_id != stored_scenario:
            raise draft.origin.at(draft.scenario_field).problem(
                f"episode {draft.episode_id!r} plays scenario {episode.scenario.external_id!r} in Parley, "
                f"not {draft.scenario_id!r}"
            )
        self.add_to_stored(draft.episode_id, draft.responses)

    def add_to_stored(self, episode_id: str, responses: list[ResponseDraft]) -> None:
        """Add to a stored episode what ``responses`` hold and it lacks; count it changed, else unchanged.

        A file response is matched to the episode's stored response of the same instrument, respondent
        and seat (one whose answers are the same, if the respondent has several); unmatched, it is a new
        response. A judge answers once, so a file naming one judge twice is refused as it is for new episodes.
        """
        episode = self.stored.get(episode_id)
        if episode is None:  # nothing to add: the file gives no responses for it
            self.result.unchanged["episode"] += 1
            return
        roles = {role.position: role for role in episode.scenario.roles.all()}
        seats = sorted(seat.position for seat in episode.seats.all())
        stored = list(episode.responses.all())
        answered: set[tuple[int, int, int | None]] = set()
        matched: set[int] = set()
        before = self.result.created["answer"]
        for draft in responses:
            for answer in draft.answers:
                if answer.seat_position is not None and answer.seat_position not in seats:
                    raise answer.origin.at("seat").problem(
                        f"episode {episode_id!r} has no seat {answer.seat_position} "
                        f"(seats: {', '.join(map(str, seats))})"
                    )
            instrument, questions = self.instrument(draft, episode.scenario)
            respondent = self.respondent(draft)
            key = (instrument.pk, respondent.pk, draft.seat_position)
            same = [
                response for response in stored
                if (response.instrument_id, response.respondent_id, response.seat_position) == key
                and response.pk not in matched
            ]
            if instrument.pk is None or not same:
                self.response(draft, episode, roles, answered)
                continue
            answered.add(key)  # a second response of this judge in the file is refused as a new one
            rows = [self.answer(answer, same[0], questions, roles) for answer in draft.answers]
            target = next((response for response in same if _unchanged(response, rows)), None)
            if target is None and len(same) > 1:
                raise draft.origin.problem(
                    f"episode {episode_id!r} has {len(same)} responses of {respondent} to {instrument}, none with "
                    "exactly these answers; Parley cannot tell which one this file adds to"
                )
            target = target or same[0]
            matched.add(target.pk)
            self.add_answers(target, rows, draft)
        if self.result.created["answer"] > before:
            self.result.changed["episode"] += 1
        else:
            self.result.unchanged["episode"] += 1

    def add_answers(self, response: Response, rows: list[Answer], draft: ResponseDraft) -> None:
        """Answers to questions (per seat and goal) the stored response leaves open are added; where it has
        an answer, the file's must be the same (its reasoning, when it differs, is not kept)."""
        stored: dict[tuple[int, int | None, int | None], list[Answer]] = {}
        for answer in response.answers.all():
            stored.setdefault(_place(answer), []).append(answer)
        given: dict[tuple[int, int | None, int | None], list[tuple[Answer, AnswerDraft]]] = {}
        for row, answer in zip(rows, draft.answers, strict=True):
            row.response = response
            given.setdefault(_place(row), []).append((row, answer))
        for place, pairs in given.items():
            kept = stored.get(place)
            if not kept:
                self.new[Answer].extend(row for row, _ in pairs)
                self.result.created["answer"] += len(pairs)
                continue
            if sorted(map(_value, kept)) != sorted(_value(row) for row, _ in pairs):
                row, answer = pairs[0]
                seat = "" if row.seat_position is None else f" for seat {row.seat_position}"
                raise answer.origin.problem(
                    f"{response.respondent} already answered {row.question.key!r}{seat} of episode "
                    f"{response.episode.external_id!r} with {_shown(kept)}; this file gives "
                    f"{_shown(row for row, _ in pairs)}. "
                    "An import never overwrites an answer: delete that response first, or import these answers "
                    "under another prompt version"
                )
            reasons = {answer.reasoning for answer in kept}
            differ = sum(1 for row, _ in pairs if row.reasoning and row.reasoning not in reasons)
            if differ:
                self.result.ignored["reasoning"] += differ
                self.result.note(
                    "Where an answer was already stored with the same value, its stored reasoning was kept "
                    "and the file's different reasoning was not."
                )

    def list_not_stored(self) -> None:
        if not self.not_stored:
            return
        count = len(self.not_stored)
        shown = ", ".join(self.not_stored[:5]) + (", ..." if count > 5 else "")
        self.result.note(
            f"{count} episode(s) the file scores are not in Parley, so their scores were not imported "
            f"(nothing was invented for them): {shown}"
        )
        self.result.details.append(f"episodes not in Parley: {', '.join(self.not_stored)}")

    # --- the whole file -------------------------------------------------------------------------

    def run(self) -> None:
        self.preload()
        self.load_stored()
        # Profiles first, so an episode finds a profile given anywhere in the same file.
        for draft in self.drafts:
            if isinstance(draft, CharacterDraft):
                self.character_from(draft)
            elif isinstance(draft, ScenarioDraft):
                self.scenario_from(draft)
                self.result.ignored.update(draft.ignored)
            elif isinstance(draft, CheckedRecord):
                self.result.checked[draft.kind] += 1
            elif isinstance(draft, Remark):
                self.result.ignored.update(draft.ignored)
                for note in draft.notes:
                    self.result.note(note)
        done = sum(not isinstance(draft, (EpisodeDraft, EpisodeResponsesDraft)) for draft in self.drafts)
        for draft in self.drafts:
            if isinstance(draft, EpisodeDraft):
                self.episode(draft)
            elif isinstance(draft, EpisodeResponsesDraft):
                self.responses_for_stored(draft)
            else:
                if isinstance(draft, CastDraft):
                    self.cast(draft)
                continue  # counted as done before the loop
            done += 1
            if self.progress:
                self.progress(done, len(self.drafts))
        self.list_not_stored()
        for model, rows in self.new.items():
            if model is Scenario:  # templates first: the scenarios made from them point at them
                model.objects.bulk_create([row for row in rows if row.is_template], batch_size=_CHUNK)
                rows = [row for row in rows if not row.is_template]
            model.objects.bulk_create(rows, batch_size=_CHUNK)
        self.result.episodes = [row.pk for row in self.new[Episode]] + [row.pk for row in self.stored.values()]
        save_barrier_prompts(self)
        for kind, ids in self.reused.items():
            self.result.unchanged[kind] += len(ids)
        if self.progress:
            self.progress(len(self.drafts), len(self.drafts))
        if self.unknown_relationships:
            number = self.unknown_relationships
            self.result.note(
                f"{number} {'scenario' if number == 1 else 'scenarios'} made from this file "
                f"{'has' if number == 1 else 'have'} an unknown relationship: the file does not say how the "
                "people know each other, so they see no more of each other's profiles than strangers do. Give "
                "each scenario its relationship in the file before importing it; for scenarios already imported, "
                "ask whoever runs this Parley site to set it"
            )


def _place(answer: Answer) -> tuple[int, int | None, int | None]:
    """What an answer answers: its question, for which seat and goal (a multi-label answer: several rows)."""
    return answer.question_id, answer.seat_position, answer.goal_id


def _value(answer: Answer) -> tuple[str, float | str]:
    return ("number", answer.number) if answer.number is not None else ("value", answer.value)


def _shown(answers: Iterable[Answer]) -> str:
    return ", ".join(sorted(f"{a.number:g}" if a.number is not None else repr(a.value) for a in answers))


def _unchanged(response: Response, rows: list[Answer]) -> bool:
    """The stored response has exactly these answers (questions, seats, goals and values)."""
    def values(answers: Iterable[Answer]) -> list[tuple[object, ...]]:
        return sorted((*_place(answer), *_value(answer)) for answer in answers)

    return values(response.answers.all()) == values(rows)


NUMERIC_KINDS = (Question.Kind.LIKERT, Question.Kind.SLIDER)
CHOICE_KINDS = (Question.Kind.CATEGORICAL, Question.Kind.PAIRWISE, Question.Kind.MULTIPLE_CHOICE,
                Question.Kind.MULTI_LABEL)


def check_answer(answer: AnswerDraft, question: Question) -> None:
    """Refuse what the database would refuse of this answer, naming the field: a seat or goal that does
    not match the question's scope, a number missing or out of range, a value that is not a choice."""
    origin = answer.origin
    scope = question.scope
    if scope == Question.Scope.SEAT and answer.seat_position is None:
        raise origin.at("seat").problem(f"{question.key!r} is asked per seat; give the seat position")
    if scope == Question.Scope.GOAL and answer.goal is None:
        raise origin.at("goal").problem(f"{question.key!r} is asked per goal; give the goal")
    if scope == Question.Scope.EPISODE and (answer.seat_position is not None or answer.goal is not None):
        raise origin.at("seat").problem(f"{question.key!r} is asked once per episode; the seat and goal must be null")
    if question.kind in NUMERIC_KINDS:
        if answer.number is None:
            raise origin.at("number").problem(f"{question.key!r} takes a number")
        low, high = question.low, question.high
        if low is not None and high is not None and not low <= answer.number <= high:
            raise origin.at("number").problem(
                f"{answer.number:g} is outside [{question.low:g}, {question.high:g}] for {question.key}"
            )
    elif question.kind == Question.Kind.YES_NO and answer.value not in ("yes", "no"):
        raise origin.at("value").problem(f"{question.key!r} is answered 'yes' or 'no', not {answer.value!r}")
    elif question.kind in CHOICE_KINDS:
        options = question.options if isinstance(question.options, dict) else {}
        values = [str(choice.get("value")) for choice in options.get("choices", []) if isinstance(choice, dict)]
        if answer.value not in values:
            raise origin.at("value").problem(
                f"{answer.value!r} is not one of the choices of {question.key!r} ({', '.join(values)})"
            )
