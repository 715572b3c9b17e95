"""A team's scenario library: its design written on its own, so a lab can move it between installs.

A library file is Parley JSON Lines whose lines are typed records, each with ``format_version`` and
``kind`` (``docs/formats.md``, "Scenario library"), written in the order an import needs them:

1. ``barrier``: the team's own barriers with their cues, by key. Built-in barriers are shared by
   every install and never written; anything that names a barrier names it by key.
2. ``character``: characters, by external id.
3. ``scenario``: templates first, then the other scenarios; each is the scenario object of an
   episode line (``exporting.scenario_record``), except that a role's character and the template
   are named by external id, since they are records of their own, and that its other casts come
   along (``casts``, naming characters by external id too), and a negotiation's parts: ``settings``,
   ``topics`` and each role's ``preferences`` (``benchmark.importing.library_topics`` reads them back).

Within a kind, records are sorted by key or external id, with keys sorted on each line, so the same
design always gives the same bytes. Ids must be stable across installs, so exporting gives every
scenario and character it writes that has no external id its stable one (``parley-scenario-<pk>``,
``parley-character-<pk>``, as the episode export names them) and saves it: the file then imports
back into the same team as unchanged, and every later export, of the library or of episodes, names
the object the same way.

Each kind is written by one function here (``barrier_record``, ``character_line``,
``scenario_line``) and read by one in ``benchmark.importing.library_import``; a field added to a kind
goes into both, and into that module's comparison of a record with the stored object.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db import models, transaction
from django.db.models.functions import Cast, Concat

from ..csv_output import Writable
from ..exporting import FORMAT_VERSION, character_record, json_line, scenario_record, stable_id
from ..models import Barrier, Character, Scenario, Team

_BATCH = 200


class LibraryProblem(ValueError):
    """A library that cannot be written as asked; the message says why."""


@dataclass
class Library:
    """What one export writes: the team's own barriers, characters and scenarios (templates included)."""

    team: Team
    barriers: models.QuerySet[Barrier]
    characters: models.QuerySet[Character]
    scenarios: models.QuerySet[Scenario]


def select_library(team: Team, *, source: str = "", codenames: Iterable[str] = ()) -> Library:
    """The team's design; with a ``source`` or ``codenames``, only those scenarios, the templates they
    were made from and the characters their roles and casts name. The team's own barriers are always written."""
    codenames = list(codenames)
    scenarios = Scenario.objects.of_team(team)
    characters = Character.objects.of_team(team)
    if source or codenames:
        if source:
            scenarios = scenarios.filter(source=source)
        if codenames:
            missing = sorted(set(codenames) - set(scenarios.filter(codename__in=codenames).values_list(
                "codename", flat=True
            )))
            if missing:
                raise LibraryProblem(f"no scenario of this team has codename {', '.join(map(repr, missing))}")
            scenarios = scenarios.filter(codename__in=codenames)
        templates = scenarios.exclude(template=None).values("template")
        scenarios = Scenario.objects.of_team(team).filter(models.Q(pk__in=scenarios.values("pk")) | models.Q(
            pk__in=templates
        ))
        characters = characters.filter(
            models.Q(roles__scenario__in=scenarios) | models.Q(cast_members__cast__scenario__in=scenarios)
        ).distinct()
    return Library(team, Barrier.objects.of_team(team).filter(team=team), characters, scenarios)


def give_stable_ids(library: Library) -> None:
    """Save the stable id of each scenario and character the library writes that has none.

    Refused when a stable id is already another object's external id (say, one imported from the
    install whose primary keys it names), since two objects would then share one id in the file.
    """
    with transaction.atomic():
        for model, rows in ((Character, library.characters), (Scenario, library.scenarios)):
            unnamed = model.objects.filter(pk__in=rows.values("pk")).filter(
                models.Q(external_id__isnull=True) | models.Q(external_id="")
            )
            prefix = f"parley-{model.__name__.lower()}-"
            wanted = {f"{prefix}{pk}" for pk in unnamed.values_list("pk", flat=True)}
            taken = sorted(
                model.objects.of_team(library.team).filter(external_id__in=wanted).values_list("external_id", flat=True)
            )
            if taken:
                raise LibraryProblem(
                    f"the {model.__name__.lower()} without an external id that would be exported as {taken[0]!r} "
                    "cannot be, since another one of the team has that external id; give one of them another"
                )
            unnamed.update(external_id=Concat(models.Value(prefix), Cast("pk", models.CharField())))


def barrier_record(barrier: Barrier) -> dict[str, Any]:
    """A team's barrier with its cues (expects ``cues`` prefetched)."""
    return {
        "format_version": FORMAT_VERSION,
        "kind": "barrier",
        "key": barrier.key,
        "name": barrier.name,
        "definition": barrier.definition,
        "example": barrier.example,
        "style_directive": barrier.style_directive,
        "narrative_stance": barrier.narrative_stance,
        "interaction_tactics": barrier.interaction_tactics,
        "confusion_mechanisms": barrier.confusion_mechanisms,
        "exemplar_templates": barrier.exemplar_templates,
        "position": barrier.position,
        "cues": [
            {"dimension": cue.dimension, "instruction": cue.instruction, "rate": cue.rate, "unit": cue.unit}
            for cue in sorted(barrier.cues.all(), key=lambda cue: (cue.dimension, cue.pk))
        ],
    }


def character_line(character: Character) -> dict[str, Any]:
    return {"format_version": FORMAT_VERSION, "kind": "character", **character_record(character)}


def scenario_line(scenario: Scenario) -> dict[str, Any]:
    """A scenario as an episode line has it, the template and characters named by external id, and its
    other casts."""
    record = {
        "format_version": FORMAT_VERSION, "kind": "scenario", **scenario_record(scenario, by_reference=True),
        **casts_record(scenario), **negotiation_record(scenario),
    }
    add_preferences(scenario, record["roles"])
    return record


def negotiation_record(scenario: Scenario) -> dict[str, Any]:
    """``settings`` and ``topics`` (a ProMediate case's, which its negotiation and evaluation read), each only
    when the scenario has them, so other scenarios are written as before. Expects ``topics`` prefetched."""
    record: dict[str, Any] = {}
    if scenario.settings:
        record["settings"] = scenario.settings
    topics = sorted(scenario.topics.all(), key=lambda topic: topic.position)
    if topics:
        record["topics"] = [
            {
                "title": topic.title,
                "question": topic.question,
                "options": [{"key": str(option["key"]), "text": option["text"]} for option in topic.options],
            }
            for topic in topics
        ]
    return record


def add_preferences(scenario: Scenario, roles: list[dict[str, Any]]) -> None:
    """Give each written role that states preferences its ``preferences``, naming topics by their index in
    ``topics``. Expects ``topics`` and ``roles__preferences`` prefetched."""
    index = {topic.pk: number for number, topic in enumerate(sorted(scenario.topics.all(), key=lambda t: t.position))}
    by_position = {role.position: role for role in scenario.roles.all()}
    for written in roles:
        stated = sorted(by_position[written["position"]].preferences.all(), key=lambda p: index[p.topic_id])
        if stated:
            written["preferences"] = [
                {
                    "topic": index[preference.topic_id],
                    "ranking": list(preference.ranking),
                    "unacceptable": list(preference.unacceptable),
                    "text": preference.text,
                }
                for preference in stated
            ]


def casts_record(scenario: Scenario) -> dict[str, Any]:
    """``{"casts": [...]}`` for a scenario with other casts, by key, each naming a character per role
    position it fills; else nothing, so scenarios without casts are written as before. A cast without an
    external id is written under its key (its primary key), the name episodes and run options give it.
    Expects ``casts__members__role`` and ``casts__members__character`` prefetched."""
    casts = sorted(scenario.casts.all(), key=lambda cast: cast.key)
    if not casts:
        return {}
    return {
        "casts": [
            {
                "external_id": cast.key,
                "label": cast.label,
                "members": {str(member.role.position): stable_id(member.character) for member in cast.members.all()},
            }
            for cast in casts
        ]
    }


def _scenarios_in_order(scenarios: models.QuerySet[Scenario]) -> Iterator[Scenario]:
    """Templates, then the other scenarios, each by stable id, fetched in batches with their parts."""
    order = sorted(
        (not is_template, external_id or f"parley-scenario-{pk}", pk)
        for pk, external_id, is_template in scenarios.values_list("pk", "external_id", "is_template")
    )
    pks = [pk for *_, pk in order]
    for start in range(0, len(pks), _BATCH):
        batch = pks[start : start + _BATCH]
        fetched = Scenario.objects.filter(pk__in=batch).select_related("template").prefetch_related(
            "roles__character", "roles__goals", "probes", "barrier_prompts__barrier",
            "casts__members__role", "casts__members__character", "topics", "roles__preferences",
        )
        by_pk = {scenario.pk: scenario for scenario in fetched}
        yield from (by_pk[pk] for pk in batch)


def write_library(library: Library, out: Writable) -> dict[str, int]:
    """Write the library's records to ``out``, giving objects without an external id their stable one;
    returns how many records of each kind."""
    give_stable_ids(library)
    counts = {"barrier": 0, "character": 0, "scenario": 0}
    for barrier in sorted(library.barriers.prefetch_related("cues"), key=lambda barrier: barrier.key):
        out.write(json_line(barrier_record(barrier)))
        counts["barrier"] += 1
    for character in sorted(library.characters, key=stable_id):
        out.write(json_line(character_line(character)))
        counts["character"] += 1
    for scenario in _scenarios_in_order(library.scenarios):
        out.write(json_line(scenario_line(scenario)))
        counts["scenario"] += 1
    return counts
