"""A party at the negotiation table (PM-5): it has thoughts, rates how much it wants to voice each,
and says the chosen one; and anyone can predict who the last remark hands the floor to.

With the model ``scripted`` each step is drawn offline (:mod:`.scripted`); otherwise each is one
JSON request through the gateway (``benchmark.agents.llm``), repaired once when the reply is not the
JSON asked for. A party whose reply stays unusable has no thoughts that step (it is not picked),
a rating that stays unusable counts as the scale's lowest, and an articulation that stays unusable
leaves the thought itself to be said, so one bad reply never stops a negotiation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...scenarios.floor import ANYONE
from .. import llm
from . import prompts, scripted
from .context import NegotiationContext, PartyView
from .replies import ask_json, check_list_of, check_rating, check_text

THOUGHTS_PER_TURN = 2


@dataclass
class Thought:
    content: str
    stimuli: str = ""


@dataclass
class Rated:
    rating: float | None  # None: the rater's reply was unusable
    reasoning: str = ""


def _scripted(model: str) -> bool:
    return llm.is_scripted(model)


class PartyAgent:
    """One party's thinking and speaking, with one model."""

    def __init__(self, party: PartyView, model: str, *, temperature: float = 0.7) -> None:
        self.party = party
        self.model = model
        self.temperature = temperature

    async def think(
        self, context: NegotiationContext, count: int = THOUGHTS_PER_TURN
    ) -> tuple[list[Thought], llm.Usage | None]:
        if _scripted(self.model):
            return [Thought(text) for text in scripted.thoughts(context, self.party, count)], None
        data, usage = await self._ask(
            prompts.party_thoughts(context, self.party, count), check_list_of("thoughts", "content")
        )
        if data is None:
            return [], usage
        found = [Thought(str(item["content"]).strip(), str(item.get("stimuli", ""))) for item in data["thoughts"]]
        return [thought for thought in found if thought.content][:count], usage

    async def rate(
        self, context: NegotiationContext, thought: Thought, number: int = 0
    ) -> tuple[Rated, llm.Usage | None]:
        if _scripted(self.model):
            return Rated(scripted.motivation(context, self.party, thought.content, number)), None
        data, usage = await self._ask(prompts.party_motivation(context, self.party, thought.content), check_rating)
        if data is None:
            return Rated(None, "The rating reply was not usable."), usage
        return Rated(float(data["rating"]), str(data.get("reasoning", ""))), usage

    async def articulate(self, context: NegotiationContext, thought: Thought) -> tuple[str, llm.Usage | None]:
        if _scripted(self.model):
            return scripted.articulation(context, self.party, thought.content), None
        data, usage = await self._ask(
            prompts.party_articulation(context, self.party, thought.content), check_text("articulation")
        )
        return (str(data["articulation"]).strip() if data else thought.content), usage

    async def _ask(
        self, messages: list[dict[str, str]], validate: Any
    ) -> tuple[dict[str, Any] | None, llm.Usage | None]:
        data, _, usage = await ask_json(messages, self.model, self.temperature, validate)
        return data, usage


async def predict_allocation(
    context: NegotiationContext, model: str, *, temperature: float = 0.7
) -> tuple[str, llm.Usage | None]:
    """Who the last remark hands the floor to: a party's name, or ``"anyone"``."""
    if _scripted(model):
        return scripted.next_speaker(context), None
    data, _, usage = await ask_json(prompts.next_speaker(context), model, temperature, check_text("next_speaker"))
    name = str(data["next_speaker"]).strip() if data else ANYONE
    named = {party.lower(): party for party in context.party_names()}
    return named.get(name.lower(), ANYONE), usage
