"""SHREC prompts: the task text, the options in stored order, no correct answer leaking, the variants."""

from types import SimpleNamespace

import pytest

from benchmark.models import Task
from benchmark.shrec.prompts import (
    PROMPT_VERSIONS,
    build_prompt,
    few_shot_examples,
    prompt_version,
    task_instructions,
)

pytestmark = pytest.mark.django_db


def item(task="rationale", key="E1", options=None, correct=(0,), gold=1, label="error", source="empathic", context=""):
    return SimpleNamespace(
        task=task, item_key=key, label=label, source=source,
        context=context or "AI Agent: Sweet! Let's start.\nUser A: My cat died.",
        options=list(options if options is not None else [f"reason {n} of {key}" for n in "abcde"]),
        correct=list(correct), gold=gold,
    )


def test_every_task_has_a_version_and_instructions():
    for task in Task.values:
        assert prompt_version(task) == PROMPT_VERSIONS[task]
        assert task_instructions(task, "error")


def test_attribute_instructions_define_the_seven_attributes_and_state_the_label():
    text = task_instructions(Task.ATTRIBUTES, "competency")
    assert "Social Competence" in text
    for name in ("Emotions", "Engagement", "Conversational mechanics", "Knowledge state", "Intention",
                 "Social context and relationships", "Social norms and routines"):
        assert f"- {name}: " in text


def test_detection_defines_competence_and_error():
    text = task_instructions(Task.DETECTION)
    assert "Social Competence:" in text and "Social Error:" in text and "None:" in text


def test_numbered_options_in_stored_order_and_no_answer_leaks():
    options = ["Robot kept talking.", "Robot forgot the name.", "Robot joked at a sad story.", "Robot left.",
               "Robot lied."]
    prompt = build_prompt(item(options=options, correct=[2], gold=3))
    positions = [prompt.index(f"({n}) {text}") for n, text in enumerate(options, start=1)]
    assert positions == sorted(positions)
    assert "Answer: (3)" not in prompt
    assert "Answer: (N)" in prompt.splitlines()[-1]
    assert "narrative therapy" in prompt and "Jibo" in prompt


def test_lettered_options_for_detection():
    prompt = build_prompt(item(task="detection", options=["Social Competence", "Social Error", "None"],
                               correct=[1], gold="error"))
    assert "(A) Social Competence\n(B) Social Error\n(C) None" in prompt
    assert "Answer: (B)" not in prompt


def test_parley_episodes_get_a_neutral_agent_description():
    prompt = build_prompt(item(source=""))
    assert "Jibo" not in prompt and "conversational AI" in prompt


def test_wellness_sources_share_the_coach_description():
    assert "positive-psychology coach" in build_prompt(item(source="wellness-dorm"))


def test_multiple_lists_no_options_and_asks_true_or_false():
    prompt = build_prompt(item(task="multiple", options=["True", "False"], correct=[0], gold=True))
    assert "(A) True" not in prompt and prompt.endswith("Answer: True or Answer: False")


def test_few_shot_shows_other_items_with_their_answers_but_not_this_ones():
    target = item(key="E1", correct=[2], gold=3)
    pool = [target] + [item(key=f"E{n}", correct=[n % 5], gold=n % 5 + 1) for n in range(2, 9)]
    examples = few_shot_examples(target, pool, k=3)
    assert len(examples) == 3 and target not in examples
    assert few_shot_examples(target, list(reversed(pool)), k=3) == examples
    prompt = build_prompt(target, "few-shot", examples)
    assert prompt.count("Example ") == 3
    question = prompt.split("Now the question to answer.")[1]
    assert "Answer: (" in prompt.split("Now the question to answer.")[0]
    assert "reason a of E1" in question and "Answer: (3)" not in question


def test_cot_asks_for_reasoning_before_the_answer_line():
    prompt = build_prompt(item(), "cot")
    assert "step by step" in prompt and prompt.index("step by step") < prompt.index("Write your answer")


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown prompt variant"):
        build_prompt(item(), "five-shot")
