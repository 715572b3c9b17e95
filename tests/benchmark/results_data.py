"""A small judged experiment for the results tests: known scores, known transcripts, several judges.

Two scenarios (one hard) x three conditions (none, semantic, emotional), one episode each, tagged
"exp". Seat 0 carries the barrier and is played by "barrier-model"; seat 1 is the partner,
"partner-model". The judge "judge-a" (prompt "v1") scores every dimension; "scripted" scores
only goal; "human mean" has more rows than anyone (it must never be picked as the judge).
"""

from benchmark.dimensions import DIMENSIONS
from benchmark.models import ActionType, Episode, Evaluation
from benchmark.models.scenarios import Difficulty
from tests.builders import make_episode, make_scenario

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
        rows = []
        for key, dimension in DIMENSIONS.items():
            if dimension.per_seat:
                partner_score = goal if key == "goal" else dimension.low
                rows.append(Evaluation(episode=episode, seat=partner_seat, evaluator="judge-a", prompt_version="v1",
                                       dimension=key, score=partner_score))
                rows.append(Evaluation(episode=episode, seat=barrier_seat, evaluator="judge-a", prompt_version="v1",
                                       dimension=key, score=dimension.low))
                rows.append(Evaluation(episode=episode, seat=partner_seat, evaluator="human mean",
                                       prompt_version="", dimension=key, score=dimension.high))
                rows.append(Evaluation(episode=episode, seat=barrier_seat, evaluator="human mean",
                                       prompt_version="", dimension=key, score=dimension.high))
            else:
                score = MUTUAL[(name, condition)] if key == "mutual_understanding" else 3
                rows.append(Evaluation(episode=episode, evaluator="judge-a", prompt_version="v1", dimension=key,
                                       score=score))
                rows.append(Evaluation(episode=episode, evaluator="human mean", prompt_version="", dimension=key,
                                       score=dimension.high))
        rows.append(Evaluation(episode=episode, seat=partner_seat, evaluator="scripted",
                               prompt_version="heuristic-1", dimension="goal", score=1))
        Evaluation.objects.bulk_create(rows)
        episodes.append(episode)
    return episodes
