"""Export episodes as Parley JSON Lines or as a flat CSV of turns (see ``docs/formats.md``).

The JSON Lines export is deterministic: keys sorted, episodes in order of external id, seats,
roles, turns, responses and answers in their natural order, timestamps in ISO 8601 UTC, no database
primary keys. Responses are those of respondents named by a model or a label (judges, interviewed
agents, imported ratings such as ``human mean``); the answers of people with accounts (annotators,
participants) belong to their studies and leave through the studies' own exports.

Every episode has an external id since it was created (``Episode.save``), so an export imports
back into the same team as unchanged. A scenario or character without one gets a
stable one (``parley-scenario-<pk>``, ``parley-character-<pk>``), which becomes its external id
when the file is imported, so export, import into an empty database and export again gives the
same bytes.

The CSV of turns is written like every CSV Parley writes (``benchmark.csv_output``): a cell that a
spreadsheet would run as a formula (a turn ``=1+1``) gets a leading quote, which the CSV importer
removes again, so that file round-trips too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from django.db.models import Prefetch, QuerySet

from .csv_output import CsvWriter, Writable
from .instruments.targets import Target
from .models import Answer, Character, Episode, Instrument, Response, Scenario, Seat, Team, Turn

EXPORT_FORMATS = ("parley", "csv")
FORMAT_VERSION = 1
CSV_COLUMNS = ("episode_id", "turn_index", "speaker", "action_type", "text", "scenario", "barrier")
_BATCH = 200


def select_episodes(
    team: Team, *, source: str | None = None, barrier: str | None = None, tag: str | None = None
) -> QuerySet[Episode]:
    """The team's episodes to export, filtered by source, barrier key and tag when given."""
    episodes = Episode.objects.of_team(team)
    if source:
        episodes = episodes.filter(source=source)
    if barrier:
        episodes = episodes.filter(barrier__key=barrier)
    if tag:
        episodes = episodes.filter(tag=tag)
    return episodes


def stable_id(obj: Episode | Scenario | Character) -> str:
    """The object's external id, or one made from its kind and primary key."""
    return obj.external_id or f"parley-{type(obj).__name__.lower()}-{obj.pk}"


def timestamp(moment: datetime | None, timespec: str = "microseconds") -> str | None:
    """ISO 8601 in UTC with a ``Z``. Episode exports keep microseconds so they round-trip byte for
    byte; reports and exports people read pass ``timespec="seconds"``."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec=timespec).replace("+00:00", "Z")


def in_export_order(episodes: QuerySet[Episode]) -> Iterator[Episode]:
    """Episodes sorted by stable id, fetched in batches with everything a record needs.

    Sorting happens in Python so the order does not depend on the database's collation.
    """
    order = sorted(
        (external_id or f"parley-episode-{pk}", pk) for pk, external_id in episodes.values_list("pk", "external_id")
    )
    pks = [pk for _, pk in order]
    for start in range(0, len(pks), _BATCH):
        batch = pks[start : start + _BATCH]
        fetched = (
            Episode.objects.filter(pk__in=batch)
            .select_related("scenario__template", "barrier")
            .prefetch_related(
                "scenario__roles__character",
                "scenario__roles__goals",
                "scenario__probes",
                "scenario__barrier_prompts__barrier",
                "scenario__template__roles__character",
                "scenario__template__roles__goals",
                "scenario__template__probes",
                "scenario__template__barrier_prompts__barrier",
                "seats__character",
                "turns",
                Prefetch(
                    "responses",
                    queryset=Response.objects.filter(respondent__user__isnull=True).select_related(
                        "respondent", "instrument"
                    ),
                ),
                Prefetch("responses__answers", queryset=Answer.objects.select_related("question", "goal__role")),
                "responses__instrument__questions",
            )
        )
        by_pk = {episode.pk: episode for episode in fetched}
        for pk in batch:
            yield by_pk[pk]


def character_record(character: Character) -> dict[str, Any]:
    return {
        "external_id": stable_id(character),
        "first_name": character.first_name,
        "last_name": character.last_name,
        "age": character.age,
        "gender": character.gender,
        "pronouns": character.pronouns,
        "occupation": character.occupation,
        "big_five": character.big_five,
        "mbti": character.mbti,
        "moral_values": character.moral_values,
        "personal_values": character.personal_values,
        "personality": character.personality,
        "decision_style": character.decision_style,
        "public_info": character.public_info,
        "secret": character.secret,
    }


def scenario_record(scenario: Scenario, *, by_reference: bool = False) -> dict[str, Any]:
    """A scenario with its roles and goals, probes, turn-taking and (for an instance) its template in full.

    Expects ``roles__character``, ``roles__goals`` and ``probes`` prefetched (and the same under
    ``template``), as :func:`in_export_order` does. ``by_reference`` (the scenario library, which
    writes characters and templates as records of their own) names a role's character and the
    template by their stable ids instead, and needs only ``template`` itself.
    """
    roles = sorted(scenario.roles.all(), key=lambda role: role.position)
    positions = {role.pk: role.position for role in roles}
    return {
        "external_id": stable_id(scenario),
        "codename": scenario.codename,
        "source": scenario.source,
        "context": scenario.context,
        "original_context": scenario.original_context,
        "difficulty": scenario.difficulty,
        "relationship": scenario.relationship,
        **_when_set("category", scenario.category),
        "turn_taking": scenario.turn_taking,
        "greeter": scenario.greeter_position,
        "turn_cap": scenario.turn_cap,
        "is_template": scenario.is_template,
        "template": None if not scenario.template_id else (
            stable_id(scenario.template) if by_reference else scenario_record(scenario.template)
        ),
        "roles": [
            {
                "position": role.position,
                "goals": [
                    {"text": goal.text, "tags": list(goal.tags), **_when_set("goal_type", goal.goal_type)}
                    for goal in sorted(role.goals.all(), key=lambda goal: goal.position)
                ],
                "reason": role.reason,
                "private_knowledge": role.private_knowledge,
                **_when_set("communication", role.communication),
                "character": None if not role.character else (
                    stable_id(role.character) if by_reference else character_record(role.character)
                ),
                "slot": {
                    "min_age": role.min_age, "max_age": role.max_age, "gender": role.gender,
                    "occupation": role.occupation,
                },
            }
            for role in roles
        ],
        "probes": [
            {
                "about": positions[probe.about_id],
                "topic": probe.topic,
                "text": probe.text,
                "options": list(probe.options),
                "correct": probe.correct,
                "asked_of": probe.asked_of,
            }
            for probe in sorted(scenario.probes.all(), key=lambda probe: probe.position)
        ],
        **barrier_prompts_record(scenario),
    }


def barrier_prompts_record(scenario: Scenario) -> dict[str, Any]:
    """``{"barrier_prompts": [...]}`` for a scenario with its own barrier prompts (SocialVeil's), else nothing,
    so scenarios without them export exactly as they did. Expects ``barrier_prompts__barrier`` prefetched."""
    prompts = sorted(scenario.barrier_prompts.all(), key=lambda prompt: prompt.barrier.key)
    if not prompts:
        return {}
    return {
        "barrier_prompts": [
            {
                "barrier": prompt.barrier.key,
                "style_directive": prompt.style_directive,
                "trait_note": prompt.trait_note,
                "barrier_seats": list(prompt.barrier_positions),
            }
            for prompt in prompts
        ]
    }


def _when_set(name: str, value: str) -> dict[str, str]:
    """``{name: value}`` for an AgentSense label that is set, else nothing: files from before the labels
    (and scenarios without them) export exactly as they did."""
    return {name: value} if value else {}


def episode_record(episode: Episode) -> dict[str, Any]:
    """One episode as a Parley JSON Lines record (expects the prefetches of :func:`in_export_order`)."""
    seats = sorted(episode.seats.all(), key=lambda seat: seat.position)
    seat_positions = {seat.pk: seat.position for seat in seats}
    role_positions = {role.pk: role.position for role in episode.scenario.roles.all()}
    responses = sorted((response_record(response) for response in episode.responses.all()), key=_response_order)
    return {
        "format_version": FORMAT_VERSION,
        "external_id": stable_id(episode),
        "scenario": scenario_record(episode.scenario),
        "barrier": episode.barrier.key,
        "source": episode.source,
        "status": episode.status,
        "end_reason": episode.end_reason,
        "turn_cap": episode.turn_cap,
        "tag": episode.tag,
        "settings": episode.settings,
        "created_at": timestamp(episode.created_at),
        "started_at": timestamp(episode.started_at),
        "finished_at": timestamp(episode.finished_at),
        "seats": [seat_record(seat, role_positions) for seat in seats],
        "turns": [turn_record(turn, seat_positions) for turn in sorted(episode.turns.all(), key=lambda t: t.index)],
        "responses": responses,
    }


def seat_record(seat: Seat, role_positions: dict[int, int]) -> dict[str, Any]:
    return {
        "position": seat.position,
        "role": role_positions[seat.role_id] if seat.role_id in role_positions else seat.role.position,
        "character": character_record(seat.character),
        "player": seat.player,
        "model": seat.model,
        "strategy": seat.strategy,
        "carries_barrier": seat.carries_barrier,
    }


def turn_record(turn: Turn, seat_positions: dict[int, int]) -> dict[str, Any]:
    return {
        "index": turn.index,
        "seat": seat_positions[turn.seat_id],
        "action_type": turn.action_type,
        "content": turn.content,
        "client_id": turn.client_id,
        "model": turn.model,
        "latency_ms": turn.latency_ms,
        "prompt_tokens": turn.prompt_tokens,
        "completion_tokens": turn.completion_tokens,
        "created_at": timestamp(turn.created_at),
    }


def response_record(response: Response) -> dict[str, Any]:
    """One respondent's answers to one instrument (named by name and version) about the episode."""
    respondent = response.respondent
    answers = sorted(response.answers.all(), key=lambda answer: _answer_order(answer, Target.of(answer)))
    return {
        "instrument": instrument_reference(response.instrument),
        "respondent": {
            "kind": respondent.kind,
            "model": respondent.model,
            "prompt_version": respondent.prompt_version,
            "label": respondent.label,
        },
        "seat": response.seat_position,
        "created_at": timestamp(response.created_at),
        "latency_ms": response.latency_ms,
        "prompt_tokens": response.prompt_tokens,
        "completion_tokens": response.completion_tokens,
        "answers": [answer_record(answer) for answer in answers],
    }


def instrument_reference(instrument: Instrument) -> dict[str, Any]:
    """A preset by its name and version; a team's own instrument (say, one built from a scenario's
    probes) in full as well, so that a team importing the file can have it made."""
    reference: dict[str, Any] = {"name": instrument.name, "version": instrument.version}
    if instrument.team_id is not None:
        reference["preset"] = instrument.preset
        reference["description"] = instrument.description
        reference["questions"] = [
            {
                "key": q.key, "position": q.position, "kind": q.kind, "prompt": q.prompt, "label": q.label,
                "help_text": q.help_text, "required": q.required, "scope": q.scope, "rationale": q.rationale,
                "options": q.options, "low": q.low, "high": q.high, "dimension": q.dimension, "truth": q.truth,
            }
            for q in sorted(instrument.questions.all(), key=lambda question: question.position)
        ]
    return reference


def _answer_order(answer: Answer, target: Target) -> tuple[Any, ...]:
    """Question, then target as the transcript reads (a goal by its role's and its own position), then value."""
    return (
        answer.question.position,
        -1 if target.seat is None else target.seat,
        (-1, -1) if answer.goal is None else (answer.goal.role.position, answer.goal.position),
        tuple(-1 if value is None else value for value in Target.turn_keys(target.turn_record()).values()),
        answer.value,
    )


def answer_record(answer: Answer) -> dict[str, Any]:
    """An answer: its question's key, its target (``seat``, ``goal``, and ``turn``... only when set), its value."""
    target = Target.of(answer)
    return {
        "question": answer.question.key,
        "seat": target.seat,
        "goal": None if answer.goal is None else {"role": answer.goal.role.position, "position": answer.goal.position},
        **target.turn_record(),
        "value": answer.value,
        "number": None if answer.number is None else float(answer.number),
        "reasoning": answer.reasoning,
    }


def _response_order(record: dict[str, Any]) -> tuple[Any, ...]:
    instrument, respondent = record["instrument"], record["respondent"]
    return (
        instrument["name"], instrument["version"], respondent["kind"], respondent["model"], respondent["label"],
        respondent["prompt_version"], -1 if record["seat"] is None else record["seat"], record["created_at"] or "",
    )


def json_line(record: dict[str, Any]) -> str:
    """``record`` as one line of JSON: sorted keys, UTF-8 text as is, except the characters that
    some readers take for line breaks (U+0085, U+2028, U+2029), which are escaped."""
    text = json.dumps(record, sort_keys=True, ensure_ascii=False)
    for separator in ("\u0085", "\u2028", "\u2029"):
        text = text.replace(separator, f"\\u{ord(separator):04x}")
    return text + "\n"


def write_parley(episodes: QuerySet[Episode], out: Writable) -> int:
    """Write one JSON line per episode; returns how many."""
    count = 0
    for episode in in_export_order(episodes):
        out.write(json_line(episode_record(episode)))
        count += 1
    return count


def write_turns_csv(episodes: QuerySet[Episode], out: Writable) -> int:
    """Write the turns of every episode as CSV rows (speaker = the seat's character name)."""
    writer = CsvWriter(out)
    writer.writerow(CSV_COLUMNS)
    count = 0
    for episode in in_export_order(episodes):
        speakers = {seat.pk: seat.character.name for seat in episode.seats.all()}
        for turn in sorted(episode.turns.all(), key=lambda t: t.index):
            writer.writerow(
                [
                    stable_id(episode),
                    turn.index,
                    speakers[turn.seat_id],
                    turn.action_type,
                    turn.content,
                    episode.scenario.codename or stable_id(episode.scenario),
                    episode.barrier.key,
                ]
            )
        count += 1
    return count


def export_episodes(episodes: QuerySet[Episode], out: Writable, *, format: str = "parley") -> int:
    """Write ``episodes`` to ``out`` as ``parley`` JSON Lines or a ``csv`` of turns; returns how many."""
    if format == "parley":
        return write_parley(episodes, out)
    if format == "csv":
        return write_turns_csv(episodes, out)
    raise ValueError(f"unknown export format {format!r}; use one of {', '.join(EXPORT_FORMATS)}")
