"""A SocialVeil run's log names no scenario: find it among the team's SocialVeil scenarios by content.

The log gives its two characters' names, the shared context and the agents' reasons; the scenario is
the team's SocialVeil scenario (imported from the episode file the run read, ``socialveil``) with
those characters and that context, the reasons telling apart scenarios of one cast. None, or more
than one that differ, is refused, naming the characters; word-for-word identical twins share the
logs that fit them, dealt out in run-folder order (``socialveil_runs`` explains why).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..models import Barrier, Scenario, Team
from .records import CharacterRef, Draft, EpisodeDraft, Remark, ScenarioRef, SeatDraft
from .socialveil import SOURCE


@dataclass
class ScenarioMatch(ScenarioRef):
    """The scenario of a log, found by ``find_scenarios`` among the team's SocialVeil scenarios (the log has no id)."""

    context: str = ""
    run_folder: str = ""  # mode_<condition>/scenario_<N>: deals logs out to identical scenarios in run order
    agents: tuple[str, str] = ("", "")  # agent A's and B's full names
    reasons: tuple[str, str] = ("", "")  # agent A's and B's reasons, which tell apart scenarios of one cast
    seats: list[SeatDraft] = field(default_factory=list)


def find_scenarios(drafts: list[Draft], team: Team) -> None:
    """Give each episode its scenario (by characters and context), the roles its seats play, and a known barrier."""
    matches = [draft.scenario for draft in drafts if isinstance(draft, EpisodeDraft)]
    if not matches:
        return
    candidates = list(
        Scenario.objects.of_team(team).filter(source__startswith=SOURCE, is_template=False)
        .prefetch_related("roles__character", "roles__goals")
    )
    by_names: dict[frozenset[str], list[Scenario]] = {}
    for scenario in candidates:
        names = frozenset(role.character.name for role in scenario.roles.all() if role.character)
        by_names.setdefault(names, []).append(scenario)
    barriers = set(Barrier.objects.of_team(team).values_list("key", flat=True))
    remark = Remark()
    twins: dict[tuple[str, tuple[int, ...]], list[EpisodeDraft]] = {}
    for draft in drafts:
        if isinstance(draft, EpisodeDraft):
            found = _resolve_episode(draft, by_names, barriers)
            if len(found) > 1:
                twins.setdefault((draft.barrier_key, tuple(sorted(s.pk for s in found))), []).append(draft)
            else:
                _seat(draft, found[0])
    scenarios = {scenario.pk: scenario for scenario in candidates}
    for (_, pks), group in twins.items():
        _deal(group, [scenarios[pk] for pk in pks], remark)
    if remark.notes:
        drafts.append(remark)


def _folder_order(draft: EpisodeDraft) -> list:
    folder = draft.scenario.run_folder if isinstance(draft.scenario, ScenarioMatch) else ""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", folder)]


def _deal(group: list[EpisodeDraft], scenarios: list[Scenario], remark: Remark) -> None:
    """Logs of one condition that fit word-for-word identical scenarios (in import order), dealt to them in
    run-folder order; a log beyond their number goes to the last."""
    group.sort(key=_folder_order)
    ids = ", ".join(repr(scenario.external_id) for scenario in scenarios)
    for number, draft in enumerate(group):
        scenario = scenarios[min(number, len(scenarios) - 1)]
        _seat(draft, scenario)
        remark.notes.append(
            f"{draft.origin.file}: {len(scenarios)} identical scenarios ({ids}) fit this log; its episode went to "
            f"{scenario.external_id!r}, number {min(number, len(scenarios) - 1) + 1} in import order, as its run "
            f"folder is number {number + 1} of the {len(group)} that fit them"
        )


def _candidates(draft: EpisodeDraft, by_names: dict[frozenset[str], list[Scenario]]) -> list[Scenario]:
    """The team's SocialVeil scenarios a log fits: its characters, its context, and its reasons when they tell."""
    match = draft.scenario
    assert isinstance(match, ScenarioMatch)
    wanted = " ".join(match.context.split())
    found = [
        scenario for scenario in by_names.get(frozenset(match.agents), [])
        if wanted in (" ".join(scenario.context.split()), " ".join(scenario.original_context.split()))
    ]
    if len(found) > 1 and any(match.reasons):
        # SocialVeil's files hold some environments with one cast twice, worded apart only in the reasons
        wanted_reasons = dict(zip(match.agents, (" ".join(reason.split()) for reason in match.reasons), strict=True))
        found = [
            scenario for scenario in found
            if all(
                " ".join(role.reason.split()) == wanted_reasons.get(role.character.name, "")
                for role in scenario.roles.all() if role.character
            )
        ] or found
    return found


def _content(scenario: Scenario) -> tuple:
    """What the agents of a scenario are given, to tell a word-for-word repeat from a different scenario."""
    return (
        " ".join(scenario.context.split()),
        tuple(
            (role.position, role.character_id, role.reason, role.private_knowledge,
             tuple(goal.text for goal in role.goals.all()))
            for role in scenario.roles.all()
        ),
    )


def _resolve_episode(
    draft: EpisodeDraft, by_names: dict[frozenset[str], list[Scenario]], barriers: set[str]
) -> list[Scenario]:
    """The scenarios a log fits: one, or several word-for-word identical ones (else the log is refused)."""
    match = draft.scenario
    assert isinstance(match, ScenarioMatch)
    if draft.barrier_key not in barriers:
        raise draft.origin.at("experimental_context.scenario.barrier_type").problem(
            f"the condition {draft.settings['socialveil']['barrier_type']!r} has no barrier in Parley: create a "
            f"barrier with key {draft.barrier_key!r} for this team (the style prompt is the episode file's "
            "barrier_prompts.agentA), then import again"
        )
    found = _candidates(draft, by_names)
    who = f"{match.agents[0]} and {match.agents[1]}"
    if not found:
        raise match.origin.at("experimental_context").problem(
            f"no SocialVeil scenario of this team has the characters {who} and this context "
            f"({match.context[:60]!r}); import the episode file the run read (data/episodes_all_<condition>.json "
            "or the baseline's episode file) first"
        )
    if len(found) > 1 and len({_content(scenario) for scenario in found}) > 1:
        ids = ", ".join(repr(scenario.external_id) for scenario in found)
        raise match.origin.at("experimental_context").problem(
            f"{len(found)} SocialVeil scenarios of this team have the characters {who} and this context ({ids}); "
            "keep one"
        )
    return found


def _seat(draft: EpisodeDraft, scenario: Scenario) -> None:
    """Give the episode its scenario and the roles (and characters) its seats play."""
    match = draft.scenario
    assert isinstance(match, ScenarioMatch)
    match.external_id = scenario.external_id or ""
    roles = {role.character.name: role for role in scenario.roles.all() if role.character}
    for seat, name in zip(draft.seats, match.agents, strict=True):
        role = roles[name]
        seat.role_position = role.position
        seat.character = CharacterRef(seat.origin, name=name, found=role.character)
