from .barriers import Barrier, BarrierCue
from .characters import Character, Relationship
from .episodes import ActionType, Episode, Seat, Turn
from .evaluations import Evaluation
from .scenarios import Role, Scenario

__all__ = [
    "ActionType",
    "Barrier",
    "BarrierCue",
    "Character",
    "Episode",
    "Evaluation",
    "Relationship",
    "Role",
    "Scenario",
    "Seat",
    "Turn",
]
