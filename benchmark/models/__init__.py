from .barriers import Barrier, BarrierCue
from .characters import PROFILE_LABELS, Character, Relationship
from .episodes import ActionType, Episode, Seat, Turn
from .evaluations import Evaluation
from .runs import NeutralContext, SimulationRun
from .scenarios import Role, Scenario
from .teams import DEFAULT_TEAM_SLUG, OwnedQuerySet, Team, TeamMember

__all__ = [
    "ActionType",
    "DEFAULT_TEAM_SLUG",
    "OwnedQuerySet",
    "Team",
    "TeamMember",
    "Barrier",
    "BarrierCue",
    "Character",
    "Episode",
    "Evaluation",
    "NeutralContext",
    "PROFILE_LABELS",
    "Relationship",
    "Role",
    "Scenario",
    "Seat",
    "SimulationRun",
    "Turn",
]
