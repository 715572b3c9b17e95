"""Save barriers: a library's team barriers (``BarrierDraft``, ``save_barriers``), and the barrier
prompts a file gives for its scenarios (``ScenarioDraft.barrier_prompts``).

A library's barrier whose key the team already has is kept as stored, and a note names the fields in
which the file's differs; a built-in barrier's key is refused (built-in barriers come with every
install and are named by key).

A prompt belongs to a scenario and a barrier: SocialVeil's barrier files give one per scenario, and
a Parley export carries them with the scenario. The rules are the importer's: what exists wins (a
stored prompt is never overwritten, and a file that says otherwise gets a note), a prompt added
to a scenario already in the database counts that scenario as added to, not unchanged. A barrier
the team lacks is made from the draft's definition when it has one (SocialVeil's composite
condition), else the file is refused naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..models import Barrier, BarrierCue, ScenarioBarrier, Team
from .import_result import ImportResult, note_differing
from .records import BarrierDefinition, BarrierPromptDraft, EpisodeDraft, Origin, ScenarioDraft

if TYPE_CHECKING:
    from .saving import Saver


@dataclass
class BarrierDraft:
    """One of the team's barriers, to create unless the team has one with ``key`` (the stored one wins)."""

    key: str
    values: dict[str, Any]
    origin: Origin
    cues: list[dict[str, Any]] = field(default_factory=list)


def save_barriers(drafts: list[BarrierDraft], result: ImportResult, team: Team) -> None:
    builtin = set(Barrier.objects.filter(team__isnull=True).values_list("key", flat=True))
    found = Barrier.objects.filter(team=team, key__in=[draft.key for draft in drafts]).prefetch_related("cues")
    stored = {barrier.key: barrier for barrier in found}
    barriers, cues, differing = [], [], []
    for draft in drafts:
        if draft.key in builtin:
            raise draft.origin.at("key").problem(
                f"{draft.key!r} is a built-in barrier's key; built-in barriers come with every install and are "
                "named by key, not given in a library"
            )
        if draft.key in stored:
            result.unchanged["barrier"] += 1
            if changed := barrier_differences(draft, stored[draft.key]):
                differing.append((draft.key, changed))
            continue
        row = Barrier(team=team, builtin=False, key=draft.key, **draft.values)
        barriers.append(row)
        cues.extend(BarrierCue(barrier=row, **values) for values in draft.cues)
    if barriers:
        Barrier.objects.bulk_create(barriers)
        BarrierCue.objects.bulk_create(cues)
        result.created["barrier"] += len(barriers)
    note_differing(result, "barrier", differing)


def barrier_differences(draft: BarrierDraft, stored: Barrier) -> list[str]:
    changed = [name for name, value in draft.values.items() if value != getattr(stored, name)]
    cues = [(cue.dimension, cue.instruction, cue.rate, cue.unit) for cue in stored.cues.all()]
    if sorted(cues) != sorted(tuple(cue.values()) for cue in draft.cues):
        changed.append("cues")
    return changed


def scenario_drafts(saver: Saver) -> list[ScenarioDraft]:
    """Every scenario the file describes, records and those inside episodes, once each (first wins)."""
    found: dict[str, ScenarioDraft] = {}
    for draft in saver.drafts:
        if isinstance(draft, ScenarioDraft):
            found.setdefault(draft.external_id, draft)
        elif isinstance(draft, EpisodeDraft) and draft.scenario.draft is not None:
            found.setdefault(draft.scenario.external_id, draft.scenario.draft)
    return [draft for draft in found.values() if draft.barrier_prompts]


def save_barrier_prompts(saver: Saver) -> None:
    """Create the prompts the team's scenarios lack; run after the scenarios themselves are saved."""
    drafts = scenario_drafts(saver)
    if not drafts:
        return
    scenarios = {draft.external_id: saver.scenarios[draft.external_id] for draft in drafts}
    stored = {
        (scenario_id, key): directive
        for scenario_id, key, directive in ScenarioBarrier.objects.filter(
            scenario__in=[s for s in scenarios.values() if s.external_id in saver.existing["scenario"]]
        ).values_list("scenario_id", "barrier__key", "style_directive")
    }
    rows: list[ScenarioBarrier] = []
    for draft in drafts:
        scenario = scenarios[draft.external_id]
        positions = set(saver.roles[draft.external_id])
        added = False
        for prompt in draft.barrier_prompts:
            barrier = barrier_for(saver, prompt)
            missing = [p for p in prompt.positions if p not in positions]
            if missing:
                raise prompt.origin.problem(
                    f"scenario {draft.external_id!r} has no role at position {missing[0]} for the barrier"
                )
            key = (scenario.pk, barrier.key)
            if key in stored:
                saver.result.unchanged["barrier prompt"] += 1
                if stored[key] != prompt.style_directive:
                    saver.result.note(
                        f"Scenario {draft.external_id} already has a prompt for {barrier.key} that differs from "
                        "the file's; the stored one was kept, since an import never overwrites a stored prompt."
                    )
                continue
            stored[key] = prompt.style_directive
            rows.append(ScenarioBarrier(
                scenario=scenario, barrier=barrier, style_directive=prompt.style_directive,
                trait_note=prompt.trait_note, barrier_positions=list(prompt.positions),
            ))
            saver.result.created["barrier prompt"] += 1
            added = True
        if added and draft.external_id in saver.existing["scenario"]:
            saver.reused["scenario"].discard(draft.external_id)
            saver.result.changed["scenario"] += 1
    ScenarioBarrier.objects.bulk_create(rows, batch_size=500)


def barrier_for(saver: Saver, prompt: BarrierPromptDraft) -> Barrier:
    """The barrier the prompt is for: a built-in or the team's, else made from the prompt's definition."""
    barrier = saver.barriers.get(prompt.barrier_key)
    if barrier is None and prompt.barrier is not None:
        barrier = create_barrier(saver, prompt, prompt.barrier)
    if barrier is None:
        raise prompt.origin.problem(
            f"{prompt.barrier_key!r} is not a barrier key; known keys: {', '.join(saver.barriers)}"
        )
    if barrier.is_baseline:
        raise prompt.origin.problem("the no-barrier baseline has no prompt to replace")
    return barrier


def create_barrier(saver: Saver, prompt: BarrierPromptDraft, definition: BarrierDefinition) -> Barrier:
    """A team barrier from its definition, with the cues and exemplar templates of ``cues_from``, saved
    as a library's barrier is (``save_barriers``)."""
    sources = [saver.barriers[key] for key in definition.cues_from if key in saver.barriers]
    values = {**definition.values, "exemplar_templates": "\n".join(line for s in sources for line in s.templates)}
    cues = [
        {"dimension": cue.dimension, "instruction": cue.instruction, "rate": cue.rate, "unit": cue.unit}
        for source in sources
        for cue in source.cues.all()
    ]
    save_barriers([BarrierDraft(definition.key, values, prompt.origin, cues=cues)], saver.result, saver.team)
    barrier = Barrier.objects.get(team=saver.team, key=definition.key)
    saver.barriers[definition.key] = barrier
    saver.result.note(
        f"Made the team barrier {definition.key!r} ({barrier.name}) for the file's condition, with Parley's "
        "own definition and parameterisation of it."
    )
    return barrier
