"""SHREC's task builders: seeded distractors and option order (spec SH-6, acceptance SH-A3 and SH-A4)."""

from collections import Counter

import pytest

from benchmark.shrec.builders import (
    ATTRIBUTE_OPTIONS,
    BuildOptions,
    build_tasks,
    condition_items,
    explanation_items,
)
from benchmark.shrec.excerpts import Excerpt
from benchmark.shrec.records import EpisodeRecord, TurnRecord
from benchmark.shrec.segments import Segment

from .shrec_data import sh_a1_episode

AGENT, USER = 0, 1
EPISODE = EpisodeRecord("video", [TurnRecord(0, AGENT, "AI Agent", "Hello.")], agent_seat=AGENT)

ERRORS = [  # SH-A3's error pool: key, attributes, rationale
    ("E1", {"emotions"}, "Robot answered a sad story with a cheerful joke."),
    ("E2", {"conversational-mechanics"}, "Robot kept talking over the user."),
    ("E3", {"emotions", "engagement"}, "Robot ignored the user's sadness."),
    ("E4", {"knowledge-state"}, "Robot forgot the user's name."),
    ("E5", {"emotions"}, "Robot responded 'sweet' to a flat 'ok'."),
    ("E6", {"intention"}, "Robot missed that the user wanted to stop."),
    ("E7", {"social-norms"}, "Robot did not apologise for its mistake."),
    ("E8", {"engagement"}, "Robot did not check in when the user walked away."),
    ("E9", {"knowledge-state"}, "Robot forgot the user's name."),
]


def segment(key, label, attributes=(), rationale="", episode=EPISODE, start_turn=0) -> Segment:
    return Segment(
        key, episode, label, True, None, None, start_turn, start_turn, Excerpt((f"excerpt of {key}",), 0, 0),
        attributes=tuple(sorted(attributes)), rationale=rationale, correction=rationale, span_ids=(f"span {key}",),
        annotators=("external 1",),
    )


def rationale_pool(without=()):
    pool = [segment(key, "error", attributes, text) for key, attributes, text in ERRORS if key not in without]
    return pool + [segment("C1", "competency", {"conversational-mechanics"}, "Robot waited for the user to finish.")]


def rationale_of_e1(options: BuildOptions, without=()):
    skipped = Counter()
    items = {item.item_key: item for item in explanation_items("rationale", rationale_pool(without), options, skipped)}
    return items.get("E1"), skipped


def test_sh_a3_disjoint_distractors_and_their_order():
    item, _ = rationale_of_e1(BuildOptions(seed=0))
    assert item.options == [
        "Robot answered a sad story with a cheerful joke.",
        "Robot did not check in when the user walked away.",
        "Robot kept talking over the user.",
        "Robot did not apologise for its mistake.",
        "Robot missed that the user wanted to stop.",
    ]
    assert item.correct == [0] and item.gold == 1
    assert [source["segment"] for source in item.provenance["distractors"]] == ["E8", "E2", "E7", "E6"]
    assert item.provenance["spans"] == ["span E1"]


def test_sh_a3_not_identical_admits_overlapping_attribute_sets():
    item, _ = rationale_of_e1(BuildOptions(seed=0, distractors="not_identical"))
    assert item.options == [
        "Robot answered a sad story with a cheerful joke.",
        "Robot did not check in when the user walked away.",
        "Robot kept talking over the user.",
        "Robot ignored the user's sadness.",
        "Robot missed that the user wanted to stop.",
    ]
    assert item.gold == 1


def test_sh_a3_min_eligible_five_builds_with_five_and_drops_with_four():
    assert rationale_of_e1(BuildOptions(min_eligible=5))[0] is not None
    assert rationale_of_e1(BuildOptions(min_eligible=4), without={"E8"})[0] is not None
    item, skipped = rationale_of_e1(BuildOptions(min_eligible=5), without={"E8"})
    assert item is None
    assert skipped["rationale: fewer than 5 eligible distractors"] >= 1


def test_the_duplicate_text_is_offered_once_from_its_first_segment():
    item, _ = rationale_of_e1(BuildOptions(seed=3))
    assert item.options.count("Robot forgot the user's name.") <= 1
    sources = [source["segment"] for source in item.provenance["distractors"]]
    assert "E9" not in sources


PAIRS = [  # SH-A4's competence pairs: user, then agent
    (
        "P1", "Today I took a walk around my building.",
        "Taking a walk can clear the mind. Do you have a story to share?",
    ),
    ("P2", "Yes.", "Great, I'll be listening."),
    ("P3", "Not yet. I'll tell you next week.", "Looking forward to it. How was the rest of your day?"),
    ("P4", "It left me sore, but it was fun.", "Spending time with friends can be refreshing."),
    ("P5", "Yes.", "Wonderful, let's begin the exercise."),
    ("P6", "I finished my book last night.", "Congratulations on finishing the book!"),
    ("P7", "I'm ready.", "Okay, let's continue."),
]


def condition_pool():
    pool = []
    for key, user, agent in PAIRS:
        turns = [TurnRecord(0, USER, "User A", user), TurnRecord(1, AGENT, "AI Agent", agent)]
        pool.append(segment(key, "competency", {"engagement"}, episode=EpisodeRecord(key, turns, agent_seat=AGENT)))
    return pool


def conditions(options: BuildOptions):
    built = condition_items(condition_pool(), options, Counter())
    return {item.item_key: item for task in ("pre", "post") for item in built[task]}


def test_sh_a4_pre_condition_of_p2():
    item = conditions(BuildOptions(seed=0))["P2:pre"]
    assert item.context == "Great, I'll be listening."
    assert item.options == [
        "I'm ready.", "Yes.", "Not yet. I'll tell you next week.", "I finished my book last night.",
        "It left me sore, but it was fun.",
    ]
    assert item.gold == 2 and item.correct == [1]


def test_sh_a4_post_condition_of_p5_excludes_the_other_answer_to_the_same_yes():
    item = conditions(BuildOptions(seed=0))["P5:post"]
    assert item.context == "Yes."
    assert item.options == [
        "Looking forward to it. How was the rest of your day?", "Congratulations on finishing the book!",
        "Spending time with friends can be refreshing.",
        "Taking a walk can clear the mind. Do you have a story to share?", "Wonderful, let's begin the exercise.",
    ]
    assert item.gold == 5
    assert "P2" not in [source["segment"] for source in item.provenance["distractors"]]


def test_sh_a4_without_the_exclusion_p2_becomes_eligible():
    pool = condition_pool()
    built = condition_items(pool, BuildOptions(seed=0, same_context_exclusion=False, min_eligible=6), Counter())
    # Six eligible now (P1, P2, P3, P4, P6, P7): with min_eligible 6 the item still builds.
    assert "P5:post" in [item.item_key for item in built["post"]]
    strict = condition_items(pool, BuildOptions(seed=0, min_eligible=6), Counter())
    assert "P5:post" not in [item.item_key for item in strict["post"]]


def test_a_pair_whose_excerpt_is_not_user_then_agent_is_not_in_the_pool():
    turns = [TurnRecord(0, AGENT, "AI Agent", "Hi."), TurnRecord(1, USER, "User A", "Hello.")]
    odd = segment("X", "competency", episode=EpisodeRecord("x", turns, agent_seat=AGENT), start_turn=1)
    built = condition_items([*condition_pool(), odd], BuildOptions(), Counter())
    assert not any(item.item_key.startswith("X:") for task in built.values() for item in task)


def test_build_tasks_from_an_episode_gives_every_fixed_option_task():
    result = build_tasks([sh_a1_episode()], options=BuildOptions())
    by_task = {task: [item for item in result.items if item.task == task] for task in result.counts}
    assert [item.gold for item in by_task["error"]] == ["error"]
    assert sorted(item.gold for item in by_task["detection"]) == ["error", "none"]
    [attributes] = by_task["attributes"]
    assert attributes.options == ATTRIBUTE_OPTIONS and attributes.gold == ["emotions"] and attributes.correct == [0]
    assert [item.gold for item in by_task["multiple"]] == [False]
    assert result.items[0].source == "empathic"


def test_bad_options_are_refused_together():
    with pytest.raises(ValueError, match="unknown distractor rule 'any'.*min_eligible must be at least 4"):
        build_tasks([], options=BuildOptions(distractors="any", min_eligible=3))
    with pytest.raises(ValueError, match="unknown task 'summary'"):
        build_tasks([], ["summary"])
