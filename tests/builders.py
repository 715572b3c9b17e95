"""Small builders for test data: each makes a valid object with sensible defaults, any field overridable.

They need a database (use them inside a ``db`` test). Barriers come from the seeded rows when
present and are created otherwise, so the builders also work after a flushed transactional test.
Research objects belong to the default team unless a ``team`` is given; ``make_user(staff=True)``
and ``make_researcher`` make researchers of that team.
"""

from collections.abc import Sequence
from itertools import count
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group

from benchmark.instruments import rubrics
from benchmark.instruments.respondents import find_respondent, respondent_fields
from benchmark.models import (
    DEFAULT_TEAM_SLUG,
    ActionType,
    Answer,
    Barrier,
    Cast,
    CastMember,
    Character,
    Episode,
    Goal,
    Instrument,
    Question,
    Respondent,
    Response,
    Role,
    Scenario,
    Seat,
    Team,
    TeamMember,
    Turn,
)
from benchmark.models.scenarios import goal_lines

_numbers = count(1)
PASSWORD = "correct horse battery staple"


def default_team() -> Team:
    """The team a fresh install has (the migration makes it; a flushed test database may not)."""
    team, _ = Team.objects.get_or_create(slug=DEFAULT_TEAM_SLUG, defaults={"name": "Default team"})
    return team


def make_team(**fields: Any) -> Team:
    number = next(_numbers)
    fields.setdefault("name", f"Team {number}")
    fields.setdefault("slug", f"team-{number}")
    return Team.objects.create(**fields)


def add_to_team(user: AbstractUser, team: Team | None = None, role: str = TeamMember.Role.RESEARCHER) -> None:
    TeamMember.objects.update_or_create(team=team or default_team(), user=user, defaults={"role": role})


def make_user(*, staff: bool = False, superuser: bool = False, **fields: Any) -> AbstractUser:
    """A user whose password is ``PASSWORD``; ``staff=True`` makes a researcher of the default team."""
    number = next(_numbers)
    fields.setdefault("username", f"user{number}")
    fields.setdefault("email", f"user{number}@example.org")
    manager = get_user_model().objects
    if superuser:
        return manager.create_superuser(password=PASSWORD, **fields)
    user = manager.create_user(password=PASSWORD, is_staff=staff, **fields)
    if staff:
        add_to_team(user)
    return user


def make_researcher(team: Team | None = None, **fields: Any) -> AbstractUser:
    """A member of the researchers group (not staff) who is a researcher of ``team`` (default team)."""
    user = make_user(**fields)
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    add_to_team(user, team)
    return user


def make_character(**fields: Any) -> Character:
    fields.setdefault("team", default_team())
    number = next(_numbers)
    fields.setdefault("first_name", f"Person{number}")
    fields.setdefault("last_name", "Tester")
    fields.setdefault("occupation", "teacher")
    fields.setdefault("gender", "woman")
    fields.setdefault("pronouns", "she/her")
    return Character.objects.create(**fields)


def make_scenario(*, roles: int | Sequence[dict[str, Any]] = 2, **fields: Any) -> Scenario:
    """A scenario with ``roles`` roles (a number, or one dict of Role fields per role), each cast."""
    number = next(_numbers)
    fields.setdefault("team", default_team())
    fields.setdefault("codename", f"scenario-{number}")
    fields.setdefault("context", "Two neighbours meet in the stairwell to talk about a noisy party.")
    scenario = Scenario.objects.create(**fields)
    role_fields = [{} for _ in range(roles)] if isinstance(roles, int) else list(roles)
    for position, overrides in enumerate(role_fields):
        values = {"goal": f"Reach goal {position + 1}.", **overrides}
        if "character" not in values:
            values["character"] = make_character(team=scenario.team)
        make_role(scenario, position, **values)
    return scenario


def make_role(
    scenario: Scenario, position: int, *, goal: str | Sequence[str] = "Reach the goal.", **fields: Any
) -> Role:
    """A role with its goals: one text (one goal a line, as older data wrote them) or a list of texts."""
    role = Role.objects.create(scenario=scenario, position=position, **fields)
    texts = goal_lines(goal) if isinstance(goal, str) else list(goal)
    Goal.objects.bulk_create(Goal(role=role, position=number, text=text) for number, text in enumerate(texts))
    return role


def make_cast(scenario: Scenario, characters: Sequence[Character] | None = None, **fields: Any) -> Cast:
    """A cast of ``scenario``: ``characters`` in role order, or a new character of its team per role."""
    number = next(_numbers)
    fields.setdefault("external_id", f"cast-{number}")
    cast = Cast.objects.create(scenario=scenario, **fields)
    roles = list(scenario.roles.order_by("position"))
    chosen = list(characters) if characters is not None else [make_character(team=scenario.team) for _ in roles]
    CastMember.objects.bulk_create(
        CastMember(cast=cast, role=role, character=character) for role, character in zip(roles, chosen, strict=False)
    )
    return cast


def get_barrier(key: str = "none") -> Barrier:
    """The barrier with ``key``: the seeded one, or a minimal stand-in when the table was flushed."""
    barrier, _ = Barrier.objects.get_or_create(
        key=key, team=None, defaults={"name": key.title(), "definition": f"The {key} condition.", "builtin": True}
    )
    return barrier


def make_episode(
    *,
    scenario: Scenario | None = None,
    barrier: Barrier | str = "none",
    turns: int | Sequence[tuple[ActionType | str, str]] = 4,
    barrier_seat: int | None = 0,
    seat_fields: dict[str, Any] | None = None,
    **fields: Any,
) -> Episode:
    """An episode with one seat per scenario role, cast with the role's character.

    ``turns`` is a number of speech turns, or a list of ``(action_type, content)`` pairs; seats take
    turns in order. ``barrier_seat`` is the position of the seat under the barrier (None: no seat).
    ``seat_fields`` apply to every seat (e.g. ``{"model": "scripted"}``).
    """
    scenario = scenario or make_scenario()
    if isinstance(barrier, str):
        barrier = get_barrier(barrier)
    fields.setdefault("source", Episode.Source.SIMULATED)
    fields.setdefault("status", Episode.Status.FINISHED)
    fields.setdefault("team", scenario.team)
    episode = Episode.objects.create(scenario=scenario, barrier=barrier, **fields)
    seats = [
        Seat.objects.create(
            episode=episode,
            position=role.position,
            role=role,
            character=role.character or make_character(team=scenario.team),
            carries_barrier=role.position == barrier_seat,
            **(seat_fields or {}),
        )
        for role in scenario.roles.select_related("character")
    ]
    actions = (
        [(ActionType.SPEAK, f"Line {index + 1}.") for index in range(turns)] if isinstance(turns, int) else turns
    )
    Turn.objects.bulk_create(
        Turn(episode=episode, index=index, seat=seats[index % len(seats)], action_type=action, content=content,
             model=seats[index % len(seats)].model)
        for index, (action, content) in enumerate(actions)
    )
    return episode


def make_scores(
    episode: Episode,
    scores: Sequence[tuple[str, int | None, float]],
    *,
    evaluator: str = "judge",
    prompt_version: str = "",
    reasoning: str = "",
    respondent: Respondent | None = None,
) -> list[Answer]:
    """Scores of one evaluator on the judge presets' dimensions, as answers: ``(dimension, seat position or
    None, score)`` each. The evaluator is a judge respondent (or, for ``human mean``, a labelled annotator),
    or the ``respondent`` given (a person, say); its answers to each preset go into one response, added to
    any it already has."""
    instruments = {instrument.preset: instrument for instrument in rubrics.install(Instrument, Question)}
    respondent = respondent or find_respondent(Respondent, respondent_fields(evaluator, prompt_version))
    responses: dict[str, Response] = {}
    answers = []
    for dimension, seat, score in scores:
        rubric, _ = rubrics.JUDGE_DIMENSIONS[dimension]
        instrument = instruments[rubric.preset]
        if rubric.preset not in responses:
            responses[rubric.preset] = Response.objects.filter(
                episode=episode, respondent=respondent, instrument=instrument
            ).first() or Response.objects.create(episode=episode, respondent=respondent, instrument=instrument)
        answers.append(Answer(
            response=responses[rubric.preset], question=instrument.questions.get(key=dimension), seat_position=seat,
            value=str(int(score)) if float(score).is_integer() else repr(float(score)), number=score,
            reasoning=reasoning,
        ))
    return Answer.objects.bulk_create(answers)
