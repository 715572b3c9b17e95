"""A fabricated ProMediate run folder, written the way upstream's scripts write one, and upstream's own
arithmetic for its ``results_summary.csv`` (``scripts/evaluation.py``), redone here independently of Parley's
stats module so an import and a recomputation can be checked against it.

The judge answers that need a model (attitudes, pair scores, topic mentions J4, topics addressed J5, the MI
judge) are fixed by hand-made deterministic rules; everything else follows upstream's code path: pair
scores written into the ``config``-order slot of the ``names``-order list, a Mediator turn copying the last
snapshot, and each metric with upstream's windows, sentinels and quirks.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from statistics import StatisticsError, mean

DIMENSIONS = (
    "shared_goals",
    "common_understanding",
    "agreement_on_terms",
    "tone_and_willingness",
    "shared_decision_making",
)
MI_KEYS = ("perception_alignment", "emotional_dynamics", "cognitive_challenges", "communication_breakdowns")
COLUMNS = [
    "intervene_yield",
    "latency",
    "success_rate",
    "success_rate_max",
    "consensus_change",
    "frequency",
    "mean_topic_efficiency",
    "monitoring_score",
    "planning_score",
    "simple_score",
    "intervene_per_step",
    "topic_efficiencies",
]


def _unit(*parts: object) -> float:
    """A fixed number in [0, 1) with two decimals, from the parts (an LLM judge's score stands in)."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "big") % 100 / 100


def pair_score(topic: str, a: str, b: str) -> dict:
    """The J2 stand-in: five dimensions and an overall score from the two stances (same letter: high)."""
    if not a or not b:
        return {"reasoning": "one state is empty", **dict.fromkeys(DIMENSIONS, 0.0), "overall_consensus_score": 0.0}
    same = a.split()[-1] == b.split()[-1]
    dims = {name: round(0.5 * same + 0.5 * _unit(topic, a, b, name), 2) for name in DIMENSIONS}
    if _unit("fail", topic, a, b) < 0.05:
        return {"reasoning": "Error in parsing the response", "overall_consensus_score": 0.0}
    overall = round(0.6 * same + 0.4 * _unit(topic, a, b), 2)
    return {"reasoning": f"{a} vs {b}", **dims, "overall_consensus_score": overall}


@dataclass
class Run:
    names: list[str]  # the case's party order (``names``)
    config: list[str]  # the ``config`` order, Mediator left out
    topics: list[str]
    initial: dict[str, dict[str, str]]  # party -> topic -> starting stance
    # (speaker, text, {topic: new stance}) per utterance; the Mediator's carry no stances
    utterances: list[tuple[str, str, dict[str, str]]]
    mentions: list[set[str]] = field(default_factory=list)  # J4 per utterance
    addressed: dict[int, list[str] | None] = field(default_factory=dict)  # J5 per mediator turn; None = "None"
    mi: list[dict[str, int]] = field(default_factory=list)  # per mediator turn after the opening
    method: str = "Social"


def consensus_pipeline(run: Run) -> tuple[list, list]:
    """``consensus_agreement_pipeline.main``: the attitude and pair-score snapshots."""
    index = {}
    count = 0
    for i, first in enumerate(run.config):
        for second in run.config[i + 1 :]:
            index[f"{first}_{second}"] = index[f"{second}_{first}"] = count
            count += 1
    attitudes = [copy.deepcopy(run.initial)]
    scores = [
        {
            topic: [
                pair_score(topic, run.initial[a][topic], run.initial[b][topic]) for a, b in combinations(run.names, 2)
            ]
            for topic in run.topics
        }
    ]
    for speaker, _text, stances in run.utterances:
        now_attitudes, now_scores = copy.deepcopy(attitudes[-1]), copy.deepcopy(scores[-1])
        if speaker != "Mediator":
            for topic in run.topics:
                if topic in stances:
                    now_attitudes[speaker][topic] = stances[topic]
                    for other in (name for name in run.names if name != speaker):
                        now_scores[topic][index[f"{speaker}_{other}"]] = pair_score(
                            topic, now_attitudes[speaker][topic], now_attitudes[other][topic]
                        )
        attitudes.append(now_attitudes)
        scores.append(now_scores)
    return attitudes, scores


def summary_lines(run: Run) -> list[str]:
    return [f'🔄 Turn {number}: {speaker}: "{text}"\n' for number, (speaker, text, _s) in enumerate(run.utterances, 1)]


def aggregate(scores: list) -> dict[str, list[float]]:
    """``evaluation.process_scores``."""
    out: dict[str, list[float]] = {"overall": []}
    topics = list(scores[0])
    for topic in topics:
        out[topic] = []
    for snapshot in scores:
        values = []
        for topic in topics:
            items = snapshot[topic]
            value = (
                sum(item["overall_consensus_score"] for item in items if item["overall_consensus_score"]) / len(items)
                if items
                else 0
            )
            out[topic].append(value)
            values.append(value)
        out["overall"].append(sum(values) / len(values) if values else 0)
    return out


def upstream_results(run: Run, scores: list) -> dict:
    """``scripts/evaluation.py``'s row for the run, with the J4/J5/MI answers fixed in ``run``."""
    aggregated = aggregate(scores)
    lines = summary_lines(run)
    mediator_turns = [i for i, line in enumerate(lines) if i and line.strip() and "Mediator" in line.split(":")[1]]
    count = sum("Mediator" in line.split(": ", 2)[1] for line in lines)
    frequency = (count - 1) / len(lines) if lines else 0
    overall = aggregated["overall"]
    consensus_change = None if len(overall) < 10 else sum(overall[-10:]) / 10 - sum(overall[:10]) / 10
    successes = [
        [sum(aggregated[t][-10:]) / 10 >= 0.9, max(aggregated[t][-10:]) >= 0.9]
        for t in aggregated
        if t != "overall" and len(aggregated[t]) >= 10
    ]
    success_rate = sum(s[0] for s in successes) / len(successes) if successes else 0
    success_rate_max = sum(s[1] for s in successes) / len(successes) if successes else 0
    differences = []
    for turn in mediator_turns:
        if turn <= 5 or turn >= len(lines) - 5 or run.addressed.get(turn) is None:
            differences.append(-1)
            continue
        per_turn = []
        for topic in run.addressed[turn]:
            series = aggregated[topic]
            per_turn.append((series[turn + 5] - series[turn]) / 5 - (series[turn] - series[turn - 5]) / 5)
        differences.append(mean(per_turn))
    try:
        intervene_yield = mean(d for d in differences if d != -1)
    except StatisticsError:
        intervene_yield = -1
    latencies = []
    for i in range(10, len(overall)):
        if overall[i - 10] - overall[i] > 0.1:
            later = [turn for turn in mediator_turns if turn > i]
            if later:
                latencies.append(later[0] - i)
    latency = sum(latencies) / len(latencies) if latencies else -1
    efficiencies = []
    for topic in run.topics:
        selected = [
            aggregated[topic][lines.index(line) + 1] for k, line in enumerate(lines) if topic in run.mentions[k]
        ]
        nums, w = len(selected), len(selected) // 5
        first = sum(selected[:w]) / w if w else 0
        last = sum(selected[-w:]) / w if w else 0
        efficiencies.append((last - first) / nums if nums else 0)
    simple = (
        mean(
            (sum(s for s in scores_.values() if s != -1) / len([s for s in scores_.values() if s != -1]))
            if any(s != -1 for s in scores_.values())
            else 0
            for scores_ in run.mi
        )
        if run.mi
        else None
    )
    no_agent = run.method == "NoAgent"
    return {
        "intervene_yield": intervene_yield,
        "latency": latency,
        "success_rate": success_rate,
        "success_rate_max": success_rate_max,
        "consensus_change": consensus_change,
        "frequency": frequency,
        "mean_topic_efficiency": mean(efficiencies),
        "monitoring_score": -1 if no_agent else 0,
        "planning_score": -1 if no_agent else 0,
        "simple_score": -1 if no_agent else simple,
        "intervene_per_step": -1 if no_agent else differences,
        "topic_efficiencies": efficiencies,
    }


def write_folder(base: Path, run: Run, case: str = "hmo", name: str = "gpt-4.1_separate_competing_less_1") -> Path:
    """The run's folder as upstream leaves it; returns it."""
    folder = base / case / run.method / name
    folder.mkdir(parents=True)
    attitudes, scores = consensus_pipeline(run)
    log = "---- Turn 1 ----\n🧠 Alex's thoughts:\n💭 stay firm (Intrinsic Motivation: 3.2)\n"
    (folder / "conversation.txt").write_text(
        log + "\n==== 🏁 End of Conversation 🏁 ====\n📋 Conversation Summary:\n" + "".join(summary_lines(run)),
        encoding="utf-8",
    )
    (folder / "attitudes.json").write_text(json.dumps(attitudes, indent=4))
    (folder / "agreement_scores.json").write_text(json.dumps(scores, indent=4))
    if run.method != "NoAgent":
        behaviour = [
            {
                "monitoring": [],
                "planning": [],
                "simple": {key: {"evidence": "e", "reasoning": "r", "score": answer[key]} for key in MI_KEYS},
            }
            for answer in run.mi
        ]
        (folder / "behavior_score.json").write_text(json.dumps(behaviour, indent=4))
    results = upstream_results(run, scores)
    with (folder / "results_summary.csv").open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        writer.writerow(["" if results[c] is None else str(results[c]) for c in COLUMNS])
    return folder


HMO_TOPICS = [
    "Market Share Target Tiers",
    "Discount Pricing Schedule",
    "Marketing Support",
    "Formulary Status",
    "Contract Term",
]


def hmo_run(method: str = "Social") -> Run:
    """A 20-utterance hmo negotiation: names Alex, Jamie, Lee; config Lee, Alex, Jamie; the Mediator opens and
    intervenes at turns 6, 13 and 18 (not for NoAgent, where Alex opens). Agreement builds, falls apart in the
    middle and returns, so every metric of the row is defined (turn 18 is too late for ME: a -1 step)."""
    names = ["Alex", "Jamie", "Lee"]
    letters = "abc"
    initial = {
        name: {topic: f"prefers {letters[(n + t) % 3]}" for t, topic in enumerate(HMO_TOPICS)}
        for n, name in enumerate(names)
    }
    order = [
        "Lee",
        "Alex",
        "Jamie",
        "Lee",
        "Jamie",
        "Mediator",
        "Alex",
        "Lee",
        "Jamie",
        "Alex",
        "Lee",
        "Jamie",
        "Mediator",
        "Alex",
        "Jamie",
        "Lee",
        "Alex",
        "Mediator",
        "Lee",
    ]
    opener = "Mediator" if method != "NoAgent" else "Alex"
    utterances = [(opener, "Welcome everyone! Let's discuss!", {})]
    mentions = [set()]
    for k, speaker in enumerate(order, start=1):
        if method == "NoAgent" and speaker == "Mediator":
            speaker = "Lee" if order[k - 2] != "Lee" else "Jamie"
        if speaker == "Mediator":
            utterances.append((speaker, f"Let us look at {HMO_TOPICS[k % 5]} again.", {}))
            mentions.append({HMO_TOPICS[k % 5]})
            continue
        topics = [HMO_TOPICS[k % 5], HMO_TOPICS[(k * 3) % 5]]
        # agreement builds, breaks down in the middle (a drop the Mediator answers at turn 18), then returns
        letter = "a" if k < 7 or k >= 14 else letters[(k + names.index(speaker)) % 3]
        stances = {topic: f"accepts {letter}" for topic in topics}
        utterances.append((speaker, f"On {' and '.join(topics)} I can take option {k % 3}.", stances))
        mentions.append(set(topics))
    mediator = [k for k, (speaker, _t, _s) in enumerate(utterances) if speaker == "Mediator" and k]
    return Run(
        names=names,
        config=["Lee", "Alex", "Jamie"],
        topics=HMO_TOPICS,
        initial=initial,
        utterances=utterances,
        mentions=mentions,
        addressed={m: [HMO_TOPICS[m % 5]] for m in mediator},
        mi=[
            {
                "perception_alignment": 4,
                "emotional_dynamics": -1,
                "cognitive_challenges": -1,
                "communication_breakdowns": 5,
            },
            dict.fromkeys(MI_KEYS, -1),
            dict.fromkeys(MI_KEYS, 3),
        ][: len(mediator)],
        method=method,
    )
