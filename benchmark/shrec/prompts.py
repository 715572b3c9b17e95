"""What a model (and a person in the human baseline) is asked for each of SHREC's eight tasks.

Every prompt follows the paper's structure (spec §1.3; App. B), reworded for Parley:

1. one sentence describing the agent for the item's source (the Empathic companion, the Wellness
   coach, or a neutral description for Parley's own episodes);
2. what is given ("the conversation history between ... and a participant");
3. the task text with its definitions (social competence and social error after Halberstadt et al.
   2001 and Tian & Oviatt 2021; the seven social attributes with the definitions seeded in
   ``SocialAttribute``);
4. the excerpt (``TaskItem.context``), then the options in their stored order, lettered (A), (B), …
   for tasks 1–3 and numbered (1)–(5) for tasks 5–8 (task 4 answers True or False);
5. the answer-format line the parser (``benchmark.shrec.answers``) reads.

``task_instructions`` is part 3 alone: the text the human-baseline study shows as its instructions,
so people and models read the same task. Nothing of an item's correct option, gold answer or
provenance reaches a prompt, except the worked examples of the few-shot variant, which are *other*
items of the same task set shown with their answers.

Variants: ``zero-shot``; ``few-shot`` (k other items of the task set with their answers before the
question; chosen by ``few_shot_examples``, deterministically); ``cot`` (reason step by step, then the
answer line last). Any change to the wording of a task, in any variant, bumps that task's entry in
``PROMPT_VERSIONS``: the version names the judge respondent, so answers to an older wording are
never mixed with, or served from the cache for, a newer one. Frames (SH-10) are not attached: the
prompts say "conversation history", never "images".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from benchmark.models import SocialAttribute, Task, TaskAnswer

PROMPT_VERSIONS: dict[str, str] = {task: f"shrec-{task}-1" for task in Task.values}
VARIANTS: tuple[str, ...] = tuple(TaskAnswer.Variant.values)
DEFAULT_EXAMPLES = 3

LETTERED = frozenset({Task.DETECTION, Task.ERROR, Task.ATTRIBUTES})
NUMBERED = frozenset({Task.PRE, Task.POST, Task.RATIONALE, Task.CORRECTION})

AGENT_DESCRIPTIONS = {
    "empathic": (
        "The robot, Jibo, is a social-support companion that trades emotionally meaningful stories with "
        "the person it talks to, drawing on techniques from narrative therapy."
    ),
    "wellness": (
        "The robot, Jibo, is a positive-psychology coach that leads short wellbeing exercises and builds "
        "rapport with the person it talks to."
    ),
    "": "The agent is a conversational AI talking with a person.",
}

COMPETENCE = (
    "Social Competence: the agent notices the social and emotional cues in the conversation, makes sense "
    "of them and responds the way the person would expect and hope."
)
ERROR = (
    "Social Error: the agent behaves in a way that goes against what the person expects, so that the "
    "agent seems less socially capable to them."
)
NONE = "None: neither a social competence nor a social error stands out in this stretch."
NO_ERROR = "No Social Error: nothing in this stretch is a social error."

LABEL_WORDS = {"error": "a Social Error", "competency": "a Social Competence"}


class PromptItem(Protocol):
    """What a prompt reads of a task item (a ``TaskItem`` or any object with these fields)."""

    task: str
    item_key: str
    label: str
    context: str
    options: list[str]
    correct: list[int]
    gold: Any
    source: str


def prompt_version(task: str) -> str:
    """The version of ``task``'s wording (all variants), e.g. 'shrec-pre-1': the judge's prompt version."""
    return PROMPT_VERSIONS[task]


def agent_description(source: str) -> str:
    """The one sentence about the agent for a dataset source ('empathic', 'wellness-home', …, or '')."""
    source = (source or "").lower()
    for prefix in ("empathic", "wellness"):
        if source.startswith(prefix):
            return AGENT_DESCRIPTIONS[prefix]
    return AGENT_DESCRIPTIONS[""]


def attribute_definitions() -> list[tuple[str, str, str]]:
    """The seven social attributes as (key, name, definition), in their seeded order."""
    return list(SocialAttribute.objects.order_by("position", "key").values_list("key", "name", "definition"))


def _attribute_list() -> str:
    return "\n".join(f"- {name}: {definition}" for _, name, definition in attribute_definitions())


def _labelled(label: str | None) -> str:
    return LABEL_WORDS.get(label or "", "a social error or a social competence")


def task_instructions(task: str, label: str | None = None) -> str:
    """The task's text for a reader: what to decide, with its definitions; no excerpt, options or answer.

    ``label`` is the segment's agreed label ('error', 'competency'), stated by the attribute tasks.
    """
    if task == Task.DETECTION:
        return (
            "Decide whether, in this conversation, the agent shows a Social Competence, makes a Social "
            f"Error, or neither.\n{COMPETENCE}\n{ERROR}\n{NONE}"
        )
    if task == Task.ERROR:
        return f"Decide whether the agent makes a social error in this conversation.\n{ERROR}\n{NO_ERROR}"
    if task == Task.ATTRIBUTES:
        return (
            f"This stretch of conversation has been marked as {_labelled(label)} of the agent. Choose the social "
            "attributes it has to do with; pick every one that applies.\n" + _attribute_list()
        )
    if task == Task.MULTIPLE:
        return (
            f"This stretch of conversation has been marked as {_labelled(label)} of the agent. The social "
            "attributes are:\n" + _attribute_list() + "\nSay True if more than one of these attributes is "
            "involved, and False if only one is."
        )
    if task == Task.PRE:
        return (
            "Below is something the agent said or did. Among the numbered things the person might have said "
            "just before, choose the one that the agent's behaviour most appropriately follows."
        )
    if task == Task.POST:
        return (
            "Below is something the person said or did. Among the numbered responses of the agent, choose "
            "the one the agent gave next."
        )
    if task == Task.RATIONALE:
        return (
            f"This stretch of conversation has been marked as {_labelled(label)} of the agent. Among the "
            "numbered explanations, choose the one that says correctly why."
        )
    if task == Task.CORRECTION:
        return (
            "This stretch of conversation has been marked as a Social Error of the agent. Among the numbered "
            "behaviours, choose what the agent should have done instead."
        )
    raise ValueError(f"unknown SHREC task {task!r}")


def answer_format(task: str) -> str:
    """The line that says how to write the answer (what ``answers.parse_answer`` reads first)."""
    if task == Task.ATTRIBUTES:
        return "Write your answer as one line with the letters of every attribute you choose, like: Answer: (X), (Y)"
    if task == Task.MULTIPLE:
        return "Write your answer as one line: Answer: True or Answer: False"
    if task in LETTERED:
        return "Write your answer as one line with the letter of your choice, like: Answer: (X)"
    return "Write your answer as one line with the number of your choice, like: Answer: (N)"


def option_mark(task: str, position: int) -> str:
    """'(A)' for the first option of a lettered task, '(1)' for a numbered one (``position`` from 0)."""
    if task in LETTERED:
        return f"({chr(ord('A') + position)})"
    return f"({position + 1})"


def options_block(task: str, options: Sequence[str]) -> str:
    """The options as shown, in stored order; empty for task 4 (True/False)."""
    if task == Task.MULTIPLE:
        return ""
    return "\n".join(f"{option_mark(task, i)} {text}" for i, text in enumerate(options))


def given_line(task: str, source: str) -> str:
    """What the reader is given: the conversation history, or the one utterance of pre/post."""
    agent = "the robot (Jibo)" if agent_description(source) != AGENT_DESCRIPTIONS[""] else "the agent"
    if task == Task.PRE:
        return f"You are given one behaviour of {agent} from a conversation with a participant."
    if task == Task.POST:
        return f"You are given one behaviour of a participant from a conversation with {agent}."
    return f"You are given the conversation history between {agent} and a participant."


def _question(item: PromptItem) -> str:
    """The item's own part: task text, excerpt and options (no answer)."""
    headings = {Task.PRE: "Agent's behaviour", Task.POST: "Participant's behaviour"}
    heading = headings.get(item.task, "Conversation history")
    parts = [task_instructions(item.task, item.label), f"{heading}:\n{item.context.strip()}"]
    block = options_block(item.task, item.options)
    if block:
        parts.append(f"Options:\n{block}")
    return "\n\n".join(parts)


def correct_answer_line(item: PromptItem) -> str:
    """'Answer: (B)' / 'Answer: (A), (D)' / 'Answer: True' / 'Answer: (3)': a worked example's answer."""
    if item.task == Task.MULTIPLE:
        return f"Answer: {bool(item.gold)}"
    return "Answer: " + ", ".join(option_mark(item.task, p) for p in sorted(item.correct))


def build_prompt(item: PromptItem, variant: str = "zero-shot", examples: Iterable[PromptItem] = ()) -> str:
    """The whole prompt for ``item`` under ``variant``; ``examples`` are used by the few-shot variant only."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown prompt variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    parts = [agent_description(item.source), given_line(item.task, item.source)]
    if variant == TaskAnswer.Variant.FEW_SHOT:
        shown = [ex for ex in examples if ex.item_key != item.item_key]
        if shown:
            parts.append("Here are worked examples of the same task, each with its answer.")
            for number, example in enumerate(shown, start=1):
                parts.append(f"Example {number}.\n{_question(example)}\n{correct_answer_line(example)}")
            parts.append("Now the question to answer.")
    parts.append(_question(item))
    if variant == TaskAnswer.Variant.COT:
        parts.append("Think it through step by step first. Then give your answer on the last line.")
    parts.append(answer_format(item.task))
    return "\n\n".join(parts)


def _example_rank(item_key: str, other_key: str) -> str:
    return hashlib.sha256(f"{item_key}|example|{other_key}".encode()).hexdigest()


def few_shot_examples(item: PromptItem, pool: Iterable[PromptItem], k: int = DEFAULT_EXAMPLES) -> list[PromptItem]:
    """``k`` other items of the same task from ``pool`` for ``item``'s few-shot prompt.

    Deterministic and independent of the pool's order: the candidates with the smallest
    ``sha256("<item_key>|example|<other key>")``, so the same task set always shows the same examples.
    """
    others = [other for other in pool if other.task == item.task and other.item_key != item.item_key]
    return sorted(others, key=lambda other: _example_rank(item.item_key, other.item_key))[:k]
