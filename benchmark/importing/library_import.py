"""A scenario library (``benchmark.scenarios.library_export`` writes it): barrier, character and scenario records.

Each line is one record with ``format_version`` and ``kind`` (``docs/formats.md``, "Scenario
library"). The rules, and why:

- **One reader per kind.** A character is read as in an episode line (``parley.character``), and a
  scenario too (``parley.scenario``), except that it names its template and its roles' characters
  by external id; a barrier is read by :func:`barrier`. A scenario's other casts (``casts``, read by
  :func:`cast`) name a character per role position by external id too, and are made with their
  scenario. An unknown ``kind`` is refused, naming its line.
- **Order.** A template must be given above the scenarios made from it (the file says so by being
  written that way, and the reader checks it as it goes); a character may be given anywhere in
  the file, or be one the team already has.
- **Barriers are the team's own.** A built-in barrier's key is refused: built-in barriers come with
  every install, and anything naming a barrier names it by key.
- **Existing wins, and says so.** A record whose external id (a barrier: key) the team already has
  is left as stored and counted unchanged, as every import does; when the file's definition differs
  from the stored one, a note names the record and the fields that differ, since a lab moving its
  design must learn that its file was not taken, and an import never overwrites a design. A stored
  scenario gets no casts from the file either: casts that differ are named among its fields.
- **A negotiation's parts come along.** A scenario's ``settings``, ``topics`` and its roles' ``preferences``
  (a ProMediate case's) are read by ``library_topics`` with the case importer's checks; a record without
  them (an older library) reads as before.

A field added to a kind is read in its reader, written by the writer of that kind in
``benchmark.scenarios.library_export`` and compared in that kind's ``*_differences`` here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.validators import slug_re

from ..exporting import stable_id
from ..models import Barrier, BarrierCue, Cast, Character, Scenario, Team
from . import saving
from .format import FileFormat, Saved
from .import_result import ImportResult, note_differing
from .library_topics import negotiation_differences, read_negotiation
from .lookups import chunks
from .parley import character, check_version, json_lines, scenario
from .records import (
    CHARACTER_FIELDS,
    MAX_SMALL_INTEGER,
    CharacterDraft,
    CharacterRef,
    Draft,
    Fields,
    ScenarioCastDraft,
    ScenarioDraft,
    check_text,
    max_length,
    values_of,
)
from .saving_barriers import BarrierDraft, save_barriers

KINDS = ("barrier", "character", "scenario")
BARRIER_TEXTS = (
    "example", "style_directive", "narrative_stance", "interaction_tactics", "confusion_mechanisms",
    "exemplar_templates",
)


def recognises(first: object) -> bool:
    """A library record: a ``kind`` (and, unlike an episode line, no ``seats``)."""
    return isinstance(first, dict) and "kind" in first and "seats" not in first


def parse(text: str, file: str) -> list[Draft | BarrierDraft]:
    """The file's records as drafts: barriers, then characters, then scenarios, each in file order."""
    templates: dict[str, ScenarioDraft] = {}
    barriers: dict[str, BarrierDraft] = {}
    drafts: list[Draft | BarrierDraft] = []
    for origin, record in json_lines(text, file):
        fields = Fields(record, origin)
        check_version(fields)
        kind = fields.choice("kind", KINDS, required=True)
        if kind == "barrier":
            draft = barrier(fields)
            if draft.key in barriers:
                raise origin.at("key").problem(
                    f"barrier {draft.key!r} appears twice in this file (first at {barriers[draft.key].origin.place})"
                )
            barriers[draft.key] = draft
        elif kind == "character":
            draft = character(fields).draft
        else:
            draft = scenario(fields, templates=templates)
            read_negotiation(fields, draft)
            draft.casts = [cast(item, draft) for item in fields.objects("casts")]
            check_casts(draft)
            if draft.values["is_template"]:
                templates.setdefault(draft.external_id, draft)
        drafts.append(draft)
    order = {BarrierDraft: 0, CharacterDraft: 1, ScenarioDraft: 2}
    return sorted(drafts, key=lambda draft: order[type(draft)])


def barrier(fields: Fields) -> BarrierDraft:
    key = fields.text("key", required=True, blank=False, max_length=max_length(Barrier, "key"))
    if not slug_re.fullmatch(key):
        raise fields.origin.at("key").problem(f"{key!r} is not a key: use letters, digits, hyphens and underscores")
    values: dict[str, Any] = {
        "name": fields.text("name", required=True, blank=False, max_length=max_length(Barrier, "name")),
        "definition": fields.text("definition", required=True, blank=False),
        **{name: fields.text(name) for name in BARRIER_TEXTS},
        "position": fields.integer("position", default=100, low=0, high=MAX_SMALL_INTEGER),
    }
    return BarrierDraft(key, values, fields.origin, cues=[cue(item) for item in fields.objects("cues")])


def cue(fields: Fields) -> dict[str, Any]:
    """A quantitative cue of a barrier, as ``BarrierCue`` takes it."""
    rate = fields.number("rate", required=True)
    if not 0 <= rate <= 1:
        raise fields.origin.at("rate").problem(f"{rate:g} is not a share between 0 and 1")
    return {
        "dimension": fields.choice("dimension", values_of(BarrierCue.Dimension), required=True),
        "instruction": fields.text(
            "instruction", required=True, blank=False, max_length=max_length(BarrierCue, "instruction")
        ),
        "rate": rate,
        "unit": fields.text("unit", required=True, blank=False, max_length=max_length(BarrierCue, "unit")),
    }


def cast(fields: Fields, draft: ScenarioDraft) -> ScenarioCastDraft:
    """Another cast of the scenario: ``members`` maps a role position (as a string, JSON's keys are) to the
    external id of a character record of the file, or of one the team has."""
    positions = sorted(role.position for role in draft.roles)
    members: dict[int, CharacterRef] = {}
    for key, value in fields.mapping("members").items():
        at = fields.origin.at("members").at(key)
        position = int(key) if key.isascii() and key.isdigit() else None
        if position not in positions:
            raise at.problem(
                f"{key!r} is not a role position of scenario {draft.external_id!r} "
                f"(positions: {', '.join(map(str, positions))})"
            )
        external_id = check_text(value, at, blank=False, max_length=max_length(Character, "external_id"))
        if any(ref.external_id == external_id for ref in members.values()):
            raise at.problem(f"character {external_id!r} plays two roles of this cast; give each role its own")
        members[position] = CharacterRef(at, external_id=external_id)
    return ScenarioCastDraft(
        external_id=fields.text("external_id", required=True, blank=False, max_length=max_length(Cast, "external_id")),
        label=fields.text("label", max_length=max_length(Cast, "label")),
        members=dict(sorted(members.items())),
        origin=fields.origin,
    )


def check_casts(draft: ScenarioDraft) -> None:
    seen: dict[str, int] = {}
    for index, item in enumerate(draft.casts):
        first = seen.setdefault(item.external_id, index)
        if first != index:
            raise item.origin.at("external_id").problem(
                f"cast {item.external_id!r} appears twice in this scenario (first at casts[{first}])"
            )


def save(drafts: Sequence[Draft | BarrierDraft], result: ImportResult, team: Team) -> None:
    """Barriers first (records of other kinds may name them), then characters and scenarios by ``saving``."""
    save_barriers([draft for draft in drafts if isinstance(draft, BarrierDraft)], result, team)
    others = [draft for draft in drafts if not isinstance(draft, BarrierDraft)]
    note_differences(others, result, team)
    saving.save(others, result, team)


class LibraryFormat(FileFormat):
    """A library saves its barriers before the records that name them (``save`` above)."""

    def save(self, drafts: Sequence[Any], result: ImportResult, team: Team, progress: Saved | None) -> None:
        save(drafts, result, team)


def note_differences(drafts: Sequence[Draft], result: ImportResult, team: Team) -> None:
    """A note per kind naming the characters and scenarios the team has under the file's ids but with
    another definition (they are kept as stored: ``saving`` reuses what exists)."""
    characters = {draft.external_id: draft for draft in drafts if isinstance(draft, CharacterDraft)}
    scenarios = {draft.external_id: draft for draft in drafts if isinstance(draft, ScenarioDraft)}
    differing: dict[str, list[tuple[str, list[str]]]] = {"character": [], "scenario": []}
    for chunk in chunks(characters):
        for stored in Character.objects.of_team(team).filter(external_id__in=chunk):
            if changed := character_differences(characters[stored.external_id], stored):
                differing["character"].append((stored.external_id, changed))
    for chunk in chunks(scenarios):
        found = Scenario.objects.of_team(team).filter(external_id__in=chunk).select_related("template")
        for stored in found.prefetch_related(
            "roles__character", "roles__goals", "probes", "casts__members__role", "casts__members__character",
            "topics", "roles__preferences",
        ):
            if changed := scenario_differences(scenarios[stored.external_id], stored):
                differing["scenario"].append((stored.external_id, changed))
    for kind, found in differing.items():
        note_differing(result, kind, sorted(found))


def character_differences(draft: CharacterDraft, stored: Character) -> list[str]:
    return [name for name in CHARACTER_FIELDS if draft.values[name] != getattr(stored, name)]


def scenario_differences(draft: ScenarioDraft, stored: Scenario) -> list[str]:
    """The fields (as the file names them) in which ``draft`` differs from ``stored``."""
    file_names = {"greeter_position": "greeter"}
    changed = [file_names.get(name, name) for name, value in draft.values.items() if value != getattr(stored, name)]
    roles = {role.position: role for role in stored.roles.all()}
    if sorted(roles) != sorted(role.position for role in draft.roles):
        changed.append("roles")
    else:
        for index, role in enumerate(draft.roles):
            kept = roles[role.position]
            pairs = {
                "goals": (
                    [(goal.text, goal.tags, goal.goal_type) for goal in role.goals],
                    [(goal.text, list(goal.tags), goal.goal_type) for goal in kept.goals.all()],
                ),
                "reason": (role.reason, kept.reason),
                "private_knowledge": (role.private_knowledge, kept.private_knowledge),
                "communication": (role.communication, kept.communication),
                "character": (
                    role.character.external_id if role.character else None,
                    stable_id(kept.character) if kept.character else None,
                ),
                "slot": (role.slot, kept.slot_constraints),
            }
            changed.extend(f"roles[{index}].{name}" for name, (new, old) in pairs.items() if new != old)
        positions = {role.pk: role.position for role in roles.values()}
        probes = [
            (probe.about, probe.topic, probe.text, probe.options, probe.correct, probe.asked_of)
            for probe in draft.probes
        ]
        if probes != [
            (positions[probe.about_id], probe.topic, probe.text, list(probe.options), probe.correct, probe.asked_of)
            for probe in stored.probes.all()
        ]:
            changed.append("probes")
    template = draft.template.external_id if draft.template else None
    if template != (stable_id(stored.template) if stored.template_id else None):
        changed.append("template")
    casts = {c.external_id: (c.label, {p: ref.external_id for p, ref in c.members.items()}) for c in draft.casts}
    if casts != {
        c.key: (c.label, {m.role.position: stable_id(m.character) for m in c.members.all()})
        for c in stored.casts.all()
    }:
        changed.append("casts")
    return changed + negotiation_differences(draft, stored)


FORMAT = LibraryFormat(
    "library", label="Parley scenario library",
    shape="a Parley library record (kind)",
    recognise=recognises, parse=parse,
)
