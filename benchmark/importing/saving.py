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

This module saves characters, scenarios (with their roles, goals and probes) and episodes (with their
seats and turns), and runs the whole file; the rest is saved by a module per thing, each a set of
functions of the :class:`Saver`: ``saving_responses`` (responses and answers, checked against their
questions), ``saving_stored`` (responses onto stored episodes), ``saving_casts`` (casts) and
``saving_barriers`` (a library's barriers and scenarios' barrier prompts).
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import models

from ..models import (
    Answer,
    Barrier,
    Cast,
    CastMember,
    Character,
    Episode,
    Goal,
    Instrument,
    Preference,
    Probe,
    Question,
    Respondent,
    Response,
    Role,
    Scenario,
    Seat,
    Team,
    Topic,
    Turn,
)
from .import_result import ImportResult
from .lookups import CHUNK, chunks
from .records import (
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
from .responses import EpisodeResponsesDraft
from .saving_barriers import save_barrier_prompts
from .saving_casts import save_cast, scenario_casts
from .saving_responses import save_response
from .saving_stored import add_to_stored, list_not_stored, load_stored, responses_for_stored


def save(
    drafts: list[Draft], result: ImportResult, team: Team, *, progress: Callable[[int, int], None] | None = None
) -> None:
    """Create in ``team`` what ``drafts`` describe and the team does not have yet; count it all in ``result``.

    ``progress(done, total)`` is told, after each record, how many of the drafts have been handled."""
    Saver(drafts, result, team, progress).run()


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
            for model in (Character, Scenario, Role, Goal, Topic, Preference, Probe, Cast, CastMember, Instrument,
                          Question, Episode, Seat, Turn, Response, Answer)
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

        for chunk in chunks(character_ids):
            for character in Character.objects.of_team(self.team).filter(external_id__in=chunk):
                self.characters[character.external_id] = character
                self.existing["character"].add(character.external_id)
        for chunk in chunks(scenario_ids):
            for scenario in Scenario.objects.of_team(self.team).filter(external_id__in=chunk).prefetch_related("roles"):
                self.scenarios[scenario.external_id] = scenario
                self.roles[scenario.external_id] = {role.position: role for role in scenario.roles.all()}
                self.existing["scenario"].add(scenario.external_id)
        cast_ids = {draft.external_id for draft in self.drafts if isinstance(draft, CastDraft)}
        for chunk in chunks(cast_ids):
            for cast in Cast.objects.of_team(self.team).filter(external_id__in=chunk).select_related(
                "scenario"
            ).prefetch_related("members__role", "members__character"):
                self.casts[(cast.scenario.external_id, cast.external_id)] = cast
        for chunk in chunks(episode_ids):
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
        topics = [
            Topic(scenario=scenario, position=number, title=topic.title, question=topic.question, options=topic.options)
            for number, topic in enumerate(draft.topics)
        ]
        self.new[Topic].extend(topics)
        self.new[Preference].extend(
            Preference(role=roles[role.position], topic=topics[preference.topic], ranking=preference.ranking,
                       unacceptable=preference.unacceptable, text=preference.text)
            for role in draft.roles
            for preference in role.preferences
        )
        if topics:
            self.result.created["topic"] += len(topics)
        self.new[Probe].extend(
            Probe(
                scenario=scenario, about=roles[probe.about], position=number, topic=probe.topic, text=probe.text,
                options=probe.options, correct=probe.correct, asked_of=probe.asked_of,
            )
            for number, probe in enumerate(draft.probes)
        )
        scenario_casts(self, draft, scenario, roles)
        self.result.created["scenario"] += 1
        if scenario.relationship is None:
            self.unknown_relationships += 1
        return scenario, roles

    # --- episodes -------------------------------------------------------------------------------

    def episode(self, draft: EpisodeDraft) -> None:
        if draft.external_id in self.episode_ids:
            add_to_stored(self, draft.external_id, draft.responses)
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
                start_s=turn.start_s,
                end_s=turn.end_s,
                words=turn.words,
            )
            self.new[Turn].append(row)
            if turn.created_at:
                row.created_at = turn.created_at
        answered: set[tuple[int, int, int | None]] = set()
        for response in draft.responses:
            save_response(self, response, episode, roles, answered)
        self.result.created["episode"] += 1
        self.result.created["turn"] += len(draft.turns)
        self.result.skipped.update(draft.skipped)

    # --- the whole file -------------------------------------------------------------------------

    def run(self) -> None:
        self.preload()
        load_stored(self)
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
                responses_for_stored(self, draft)
            else:
                if isinstance(draft, CastDraft):
                    save_cast(self, draft)
                continue  # counted as done before the loop
            done += 1
            if self.progress:
                self.progress(done, len(self.drafts))
        list_not_stored(self)
        for model, rows in self.new.items():
            if model is Scenario:  # templates first: the scenarios made from them point at them
                model.objects.bulk_create([row for row in rows if row.is_template], batch_size=CHUNK)
                rows = [row for row in rows if not row.is_template]
            model.objects.bulk_create(rows, batch_size=CHUNK)
        self.result.episodes = [row.pk for row in self.new[Episode]] + [row.pk for row in self.stored.values()]
        self.result.scenarios = [row.pk for row in self.new[Scenario]]
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
