from .barriers import Barrier, BarrierCue
from .characters import PROFILE_LABELS, Character, Relationship
from .episodes import ActionType, Episode, Seat, Turn
from .evaluations import Evaluation
from .runs import NeutralContext, SimulationRun
from .scenarios import Role, Scenario

__all__ = [
    "ActionType",
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
