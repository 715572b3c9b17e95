"""A small judged experiment for the results tests: known scores, known transcripts, several judges.

Two scenarios (one hard) x three conditions (none, semantic, emotional), one episode each, tagged
"exp". Seat 0 carries the barrier and is played by "barrier-model"; seat 1 is the partner,
"partner-model". The judge "judge-a" (prompt "v1") scores every dimension; "scripted" scores
only goal; "human mean" (imported human ratings: an annotator, not a judge) has more scores than
anyone, and must never be picked as the judge.
"""

from benchmark.instruments.rubrics import JUDGE_DIMENSIONS
from benchmark.models import ActionType, Episode
from benchmark.models.scenarios import Difficulty
from tests.builders import make_episode, make_scenario, make_scores

PARTNER_GOAL = {("a", "none"): 8, ("a", "semantic"): 4, ("a", "emotional"): 6,
                ("b", "none"): 6, ("b", "semantic"): 5, ("b", "emotional"): 2}
MUTUAL = {("a", "none"): 5, ("a", "semantic"): 2, ("a", "emotional"): 3,
          ("b", "none"): 4, ("b", "semantic"): 1, ("b", "emotional"): 3}
BARRIER_LINE = "Maybe it is sort of that thing, I guess."
PARTNER_LINE = "Thank you, that sounds wonderful to me."


def judged_experiment(*, tag: str = "exp", partner_model: str = "partner-model") -> list[Episode]:
    episodes = []
    scenarios = {
        "a": make_scenario(codename=f"{tag}-hard", difficulty=Difficulty.HARD),
        "b": make_scenario(codename=f"{tag}-standard", difficulty=Difficulty.STANDARD),
    }
    for (name, condition), goal in PARTNER_GOAL.items():
        episode = make_episode(
            scenario=scenarios[name], barrier=condition, barrier_seat=0, tag=tag,
            external_id=f"{tag}-{name}-{condition}",
            turns=[(ActionType.SPEAK, BARRIER_LINE), (ActionType.SPEAK, PARTNER_LINE),
                   (ActionType.NON_VERBAL, "sighs"), (ActionType.LEAVE, "")],
        )
        barrier_seat, partner_seat = episode.seats.order_by("position")
        episode.seats.filter(pk=barrier_seat.pk).update(model="barrier-model")
        episode.seats.filter(pk=partner_seat.pk).update(model=partner_model)
        judge, human = [], []
        for key, (_, dimension) in JUDGE_DIMENSIONS.items():
            if dimension.per_seat:
                judge.append((key, partner_seat.position, goal if key == "goal" else dimension.low))
                judge.append((key, barrier_seat.position, dimension.low))
                human += [(key, partner_seat.position, dimension.high), (key, barrier_seat.position, dimension.high)]
            else:
                judge.append((key, None, MUTUAL[(name, condition)] if key == "mutual_understanding" else 3))
                human.append((key, None, dimension.high))
        make_scores(episode, judge, evaluator="judge-a", prompt_version="v1")
        make_scores(episode, human, evaluator="human mean")
        make_scores(episode, [("goal", partner_seat.position, 1)], evaluator="scripted", prompt_version="heuristic-1")
        episodes.append(episode)
    return episodes
