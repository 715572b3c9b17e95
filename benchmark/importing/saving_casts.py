"""Save casts: those a new scenario's record gives (a library's), and a castings file's casts of
scenarios already in Parley (``records.CastDraft``). A cast already stored is kept as stored.

Functions of the file's :class:`saving.Saver`, which holds the lookups and the rows to create.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..models import Cast, CastMember, Role, Scenario
from .records import CastDraft, ScenarioDraft

if TYPE_CHECKING:
    from .saving import Saver


def scenario_casts(saver: Saver, draft: ScenarioDraft, scenario: Scenario, roles: dict[int, Role]) -> None:
    """The casts a new scenario's record gives (a library's), their characters found as its roles' are."""
    for cast in draft.casts:
        row = Cast(scenario=scenario, external_id=cast.external_id, label=cast.label)
        saver.new[Cast].append(row)
        saver.new[CastMember].extend(
            CastMember(cast=row, role=roles[position], character=saver.character(ref))
            for position, ref in cast.members.items()
        )
    if draft.casts:
        saver.result.created["cast"] += len(draft.casts)


def save_cast(saver: Saver, draft: CastDraft) -> None:
    """A cast of a scenario in Parley, one character per role, all of them already in Parley."""
    ref = draft.scenario
    if ref.external_id not in saver.scenarios:
        raise ref.origin.problem(f"{ref.noun} {ref.external_id!r} is not in Parley; {draft.first}")
    scenario, roles = saver.scenario(ref)
    for wanted in draft.characters:
        if wanted.external_id not in saver.characters:
            raise wanted.origin.problem(f"{wanted.noun} {wanted.external_id!r} is not in Parley; {draft.first}")
    if len(draft.characters) != len(roles):
        raise draft.origin.at(draft.characters_field).problem(
            f"{ref.noun} {ref.external_id!r} has {len(roles)} roles; the cast names {len(draft.characters)}"
        )
    characters = {position: saver.character(c) for position, c in zip(sorted(roles), draft.characters, strict=True)}
    existing = saver.casts.get((ref.external_id, draft.external_id))
    if existing is not None:
        saver.result.unchanged["cast"] += 1
        if existing.characters() != characters:
            saver.result.note(
                f"cast {draft.external_id!r} of {ref.noun} {ref.external_id!r} is in Parley with other "
                "characters than the file's; Parley's were kept"
            )
        return
    cast = Cast(scenario=scenario, external_id=draft.external_id)
    saver.casts[(ref.external_id, draft.external_id)] = cast
    saver.new[Cast].append(cast)
    saver.new[CastMember].extend(
        CastMember(cast=cast, role=roles[position], character=character)
        for position, character in characters.items()
    )
    saver.result.created["cast"] += 1
