from .barriers import Barrier, BarrierCue
from .characters import PROFILE_LABELS, Character, Relationship
from .episodes import ActionType, Episode, Seat, Turn
from .instruments import Answer, Instrument, Question, Respondent, Response
from .runs import NeutralContext, SimulationRun
from .scenarios import Goal, Probe, Role, Scenario, TurnTaking
from .teams import DEFAULT_TEAM_SLUG, OwnedQuerySet, Team, TeamMember

__all__ = [
    "ActionType",
    "Answer",
    "Goal",
    "Instrument",
    "Probe",
    "Question",
    "Respondent",
    "Response",
    "TurnTaking",
    "DEFAULT_TEAM_SLUG",
    "OwnedQuerySet",
    "Team",
    "TeamMember",
    "Barrier",
    "BarrierCue",
    "Character",
    "Episode",
    "NeutralContext",
    "PROFILE_LABELS",
    "Relationship",
    "Role",
    "Scenario",
    "Seat",
    "SimulationRun",
    "Turn",
]
