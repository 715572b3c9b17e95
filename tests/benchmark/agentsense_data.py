"""AgentSense answers written straight into the database, as the shared contract of issue 14 stores them.

``agentsense_episode`` makes a three-party scenario (a sender and two receivers, one typed goal
each, one probe about each role), an episode whose seats are played by the given models, and the
answers: every agent about every goal (its own: self; the others': other), each judge about every
goal, and every agent about the probes on the others (and, with ``blind``, the same before the
conversation).
"""

from collections.abc import Callable, Sequence

from benchmark.evaluation.interviews.instruments import goals_instrument, probes_instrument
from benchmark.models import Answer, Episode, Goal, Probe, Respondent, Response, Scenario, Team
from tests.builders import make_character, make_episode, make_scenario

GOAL_TYPES = ("information_provision", "relationship_building", "cooperation")
COMMUNICATION = ("sender", "receiver", "receiver")

# (respondent, seat the goal belongs to) -> yes?; respondent is "self", "other" or a judge's name.
Verdict = Callable[[str, int], bool]


def agentsense_scenario(
    team: Team, *, template: Scenario | None = None, category: str = "small_society"
) -> Scenario:
    """Three roles with one goal each (typed), a probe about each role's private information."""
    scenario = make_scenario(
        team=team, template=template, category=category,
        roles=[
            {"character": make_character(team=team), "communication": COMMUNICATION[index],
             "private_knowledge": f"Secret {index}."}
            for index in range(3)
        ],
    )
    for role in scenario.roles.order_by("position"):
        Goal.objects.filter(role=role).update(goal_type=GOAL_TYPES[role.position])
        Probe.objects.create(scenario=scenario, about=role, position=role.position, topic="secret",
                             text=f"What does character {role.position} hide?", options=["this", "that"], correct=0)
    return scenario


def agentsense_episode(
    scenario: Scenario,
    models: Sequence[str],
    *,
    verdict: Verdict = lambda respondent, seat: respondent == "self",
    judges: Sequence[str] = ("judge-a", "judge-b"),
    guesses: Callable[[int, int], bool] = lambda seat, about: True,
    blind: bool = False,
    tag: str = "agentsense",
) -> Episode:
    """An episode of ``scenario`` with seat i played by ``models[i]`` and every answer of the contract."""
    episode = make_episode(scenario=scenario, barrier_seat=None, tag=tag, turns=3)
    for seat in episode.seats.all():
        seat.model = models[seat.position]
        seat.save(update_fields=["model"])
    goals = goals_instrument()
    question = goals.questions.get()
    goal_rows = list(Goal.objects.filter(role__scenario=scenario).select_related("role"))
    for seat in range(len(models)):
        agent, _ = Respondent.objects.get_or_create(kind="agent", model=models[seat], prompt_version="interview-1")
        response = Response.objects.create(instrument=goals, episode=episode, respondent=agent, seat_position=seat)
        Answer.objects.bulk_create(
            Answer(response=response, question=question, goal=goal, seat_position=goal.role.position,
                   value="yes" if verdict("self" if goal.role.position == seat else "other", goal.role.position)
                   else "no", reasoning="Read from the conversation.")
            for goal in goal_rows
        )
    for name in judges:
        judge, _ = Respondent.objects.get_or_create(kind="judge", model=name, prompt_version="goals-judge-1")
        response = Response.objects.create(instrument=goals, episode=episode, respondent=judge)
        Answer.objects.bulk_create(
            Answer(response=response, question=question, goal=goal, seat_position=goal.role.position,
                   value="yes" if verdict(name, goal.role.position) else "no")
            for goal in goal_rows
        )
    probes = probes_instrument(scenario)
    questions = list(probes.questions.order_by("position"))
    for version in ("interview-1", *(("blind-1",) if blind else ())):
        for seat in range(len(models)):
            agent, _ = Respondent.objects.get_or_create(kind="agent", model=models[seat], prompt_version=version)
            response = Response.objects.create(instrument=probes, episode=episode, respondent=agent,
                                               seat_position=seat)
            Answer.objects.bulk_create(
                Answer(response=response, question=q, value="0" if guesses(seat, q.position) else "1")
                for q in questions if q.position != seat
            )
    return episode
