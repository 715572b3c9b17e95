from .barriers import Barrier, BarrierCue, ScenarioBarrier
from .casts import Cast, CastMember
from .characters import PROFILE_LABELS, Character, Relationship, relationship_label
from .episodes import ActionType, Episode, Seat, Turn, TurnFeatures
from .imports import ImportJob
from .instruments import Answer, Instrument, Question, Respondent, Response, SocialAttribute
from .jobs import Job
from .negotiation import Attitude, MediatorDecision, PairAgreement, PartyThought, Preference, Topic, TopicTag
from .recordings import Recording
from .runs import NeutralContext, RunChunk, SimulationRun
from .scenarios import ERG, Category, Communication, Difficulty, Goal, GoalType, Probe, Role, Scenario, TurnTaking
from .task_items import Task, TaskAnswer, TaskItem, TaskSet
from .teams import DEFAULT_TEAM_SLUG, OwnedQuerySet, Team, TeamMember

__all__ = [
    "Recording",
    "Task",
    "TaskAnswer",
    "TaskItem",
    "TaskSet",
    "ActionType",
    "Attitude",
    "MediatorDecision",
    "PairAgreement",
    "PartyThought",
    "Preference",
    "Topic",
    "TopicTag",
    "Answer",
    "Cast",
    "CastMember",
    "Category",
    "Communication",
    "Difficulty",
    "ERG",
    "Goal",
    "ImportJob",
    "Job",
    "GoalType",
    "Instrument",
    "Probe",
    "Question",
    "Respondent",
    "Response",
    "SocialAttribute",
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
    "relationship_label",
    "Role",
    "Scenario",
    "ScenarioBarrier",
    "Seat",
    "RunChunk",
    "SimulationRun",
    "Turn",
    "TurnFeatures",
]
