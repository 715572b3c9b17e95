"""An agent takes its turn: the offline scripted model, or a language model through the gateway.

This is the one place that chooses between the two. The scripted model reads the same context
the prompt is built from (:mod:`benchmark.agents.prompt`), so the choice lives above both and
neither imports the other's caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from . import llm, scripted
from .prompt import Action, AgentContext, build_agent_messages, parse_action


async def act(
    context: AgentContext,
    *,
    model: str,
    temperature: float = 0.7,
    seed: int = 0,
    beats: Sequence[str] | None = None,
) -> tuple[Action, llm.Usage]:
    """Take this seat's next turn with ``model``; the scripted model is dispatched offline.

    ``beats`` (lines the character would say in order) only steer the scripted model; an LLM
    ignores them. ``seed`` makes the scripted model reproducible.
    """
    if llm.is_scripted(model):
        return await scripted.act(context, seed=seed, beats=beats)
    validate = partial(parse_action, allowed=context.action_types)
    data, usage = await llm.complete_json(
        build_agent_messages(context), model=model, temperature=temperature, validate=validate
    )
    return validate(data), usage
