"""The demo's ProMediate negotiations: ProMediate's HMO case (``cases/hmo.json``, a copy of the
public case file) played offline under two conflict modes and the three mediator conditions, then read by
the scripted evaluation pass, so the ProMediate results page shows its tables and trajectories on first
open.

Competing (ProMediate's hard setting) and Accommodating (an easy one) cross no mediator, the generic
mediator and the socially intelligent one: six negotiations of 61 turns at most, played by the scripted
negotiators with one seed, through the same run plan as ``simulate --preset promediate`` (so their
settings, seats and external ids are those of a run named ``demo-promediate``). Everything is found
again by external id: a second load changes nothing; ``reset`` plays them afresh.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from asgiref.sync import async_to_sync

from ..agents.llm import SCRIPTED
from ..evaluation.promediate.passes import CACHED, evaluate_negotiations
from ..importing import import_file
from ..models import Episode, Scenario, Team
from ..runs.options import PROMEDIATE, RunOptions
from ..runs.planning import plan_run, prepare_episodes
from ..runs.simulation import run_episode

CASE = Path(__file__).with_name("cases") / "hmo.json"  # the importer names the scenario after the file
SCENARIO_ID = "promediate-hmo"
TAG = "demo-promediate"
MODES = ("promediate-competing", "promediate-accommodating")
MEDIATORS = ("none", "generic", "social")
SEED = 7


@dataclass(frozen=True)
class Negotiations:
    scenario: Scenario
    episodes: list[Episode]
    played: int
    evaluated: int


def install_negotiations(team: Team, *, reset: bool = False, say: Callable[[str], None] = print) -> Negotiations:
    """Import the case (once), play the six negotiations that are not finished, and read their consensus."""
    scenario = Scenario.objects.of_team(team).filter(external_id=SCENARIO_ID).first()
    if scenario is None:
        import_file(CASE, team=team, format="promediate")
        scenario = Scenario.objects.of_team(team).get(external_id=SCENARIO_ID)
    options = RunOptions(
        preset=PROMEDIATE, scenarios=(SCENARIO_ID,), conditions=MODES, mediators=MEDIATORS,
        agent_model=SCRIPTED, partner_model=SCRIPTED, party_model=SCRIPTED, mediator_model=SCRIPTED,
        judge_model="none", seed=SEED,
    )
    plan = plan_run(options, team, tag=TAG)
    if reset:
        Episode.objects.of_team(team).filter(external_id__in=[p.external_id for p in plan.episodes()]).delete()
    prepared = prepare_episodes(plan)
    for episode_id, seed in prepared.to_play:
        episode = async_to_sync(run_episode)(Episode.objects.get(pk=episode_id), seed=seed)
        say(f"  {episode.external_id}: {episode.turns.count()} turns")
    results = async_to_sync(evaluate_negotiations)(prepared.episode_ids, model=SCRIPTED)
    failed = [result for result in results if not result.ok]
    if failed:
        raise RuntimeError(f"the scripted evaluation of episode {failed[0].episode_id} failed: {failed[0].error}")
    episodes = list(Episode.objects.filter(pk__in=prepared.episode_ids).order_by("pk"))
    evaluated = sum(result.outcome != CACHED for result in results)
    return Negotiations(scenario, episodes, played=len(prepared.to_play), evaluated=evaluated)
