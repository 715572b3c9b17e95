"""Mediator policies (PM-6): each decides *when* to intervene and *how*, after every utterance not its own.

- **Generic** (ProMediate's ``Baseline2``): a helpful assistant in a group chat; it intervenes when it
  says it should, and its message is spoken as written.
- **Social** (``Social``): looks for misaligned perceptions, negative emotions, faulty reasoning and
  communication breakdowns, rates the need to intervene, and intervenes only when it says so and the
  rating is above 3.5 (the code's threshold); then it weighs ``strategies`` candidate strategies
  (three, as the paper says), rates each, and articulates the best with ``articulation_model``
  (default: its own model; the ProMediate code always used gpt-4.1).

A reply that is not the JSON asked for is repaired once by the gateway; if it stays unusable the
decision is kept as failed (``failed``, ``raw``) and counts as not intervening, never skipped.
With the model ``scripted`` both policies decide offline (:mod:`.scripted`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .. import llm
from . import prompts, scripted
from .context import NegotiationContext
from .replies import as_text, ask_json, check_list_of, check_rating, check_text, total_usage

SOCIAL_THRESHOLD = scripted.SOCIAL_THRESHOLD
DEFAULT_STRATEGIES = 3
POLICIES = ("generic", "social")


@dataclass
class When:
    """Whether to intervene now; unpacks as ``(engage, rating, reason)``."""

    engage: bool
    rating: float | None
    reason: str
    failed: bool = False
    raw: str = ""
    usage: llm.Usage | None = None

    def __iter__(self) -> Iterator[Any]:
        return iter((self.engage, self.rating, self.reason))


@dataclass
class How:
    """What to say: the text, the candidates weighed (``[{"text", "rating"}]``) and the one chosen."""

    text: str
    candidates: list[dict[str, Any]] = field(default_factory=list)
    chosen: str = ""
    failed: bool = False
    raw: str = ""
    usage: llm.Usage | None = None


class MediatorPolicy:
    """The interface: ``decide_when`` then, if it engages, ``decide_how``."""

    key = ""

    def __init__(self, model: str, *, temperature: float = 0.7) -> None:
        self.model = model
        self.temperature = temperature

    @property
    def scripted(self) -> bool:
        return llm.is_scripted(self.model)

    async def decide_when(self, context: NegotiationContext) -> When:
        raise NotImplementedError

    async def decide_how(self, context: NegotiationContext) -> How:
        raise NotImplementedError

    async def _json(
        self, messages: list[dict[str, str]], validate: Any, model: str | None = None
    ) -> tuple[dict[str, Any] | None, str, llm.Usage | None]:
        return await ask_json(messages, model or self.model, self.temperature, validate)


class GenericMediator(MediatorPolicy):
    key = "generic"

    async def decide_when(self, context: NegotiationContext) -> When:
        if self.scripted:
            engage, rating, reason = scripted.generic_when(context)
            return When(engage, rating, reason)
        data, raw, usage = await self._json(prompts.generic_when(context), check_engage)
        if data is None:
            return When(False, None, "The reply was not the JSON asked for.", failed=True, raw=raw)
        return When(bool(data["should_engage"]), None, as_text(data.get("reason")), usage=usage)

    async def decide_how(self, context: NegotiationContext) -> How:
        if self.scripted:
            text = scripted.generic_message(context)
            return How(text, chosen=text)
        data, raw, usage = await self._json(prompts.generic_how(context), check_text("message"))
        if data is None:
            return How("", failed=True, raw=raw)
        text = str(data["message"]).strip()
        return How(text, chosen=text, usage=usage)


class SocialMediator(MediatorPolicy):
    key = "social"

    def __init__(
        self,
        model: str,
        *,
        strategies: int = DEFAULT_STRATEGIES,
        articulation_model: str | None = None,
        temperature: float = 0.7,
    ) -> None:
        super().__init__(model, temperature=temperature)
        self.strategies = strategies
        self.articulation_model = articulation_model or model

    async def decide_when(self, context: NegotiationContext) -> When:
        if self.scripted:
            engage, rating, reason = scripted.social_when(context)
            return When(engage, rating, reason)
        data, raw, usage = await self._json(prompts.social_when(context), check_engage)
        if data is None:
            return When(False, None, "The reply was not the JSON asked for.", failed=True, raw=raw)
        rating = data.get("rating")
        rating = float(rating) if isinstance(rating, int | float) and not isinstance(rating, bool) else 3.0
        engage = bool(data["should_engage"]) and rating > SOCIAL_THRESHOLD
        return When(engage, rating, as_text(data.get("reason")), usage=usage)

    async def decide_how(self, context: NegotiationContext) -> How:
        if self.scripted:
            candidates = scripted.social_strategies(context, self.strategies)
            best = max(candidates, key=lambda item: item[1])[0]
            return How(
                scripted.social_articulation(context, best),
                [{"text": text, "rating": rating} for text, rating in candidates],
                best,
            )
        data, raw, usage = await self._json(
            prompts.social_strategies(context, self.strategies), check_list_of("strategies", "content", non_empty=True)
        )
        if data is None:
            return How("", failed=True, raw=raw)
        texts = [str(item["content"]).strip() for item in data["strategies"] if str(item["content"]).strip()]
        texts = texts[: self.strategies]
        if not texts:
            return How("", failed=True, raw="no strategy was proposed")
        rated = await asyncio.gather(
            *(self._json(prompts.social_strategy_rating(context, text), check_rating) for text in texts)
        )
        candidates = [
            {"text": text, "rating": float(reply[0]["rating"]) if reply[0] is not None else None}
            for text, reply in zip(texts, rated, strict=True)
        ]
        usage = total_usage(usage, *(reply[2] for reply in rated))
        best = max(candidates, key=lambda item: item["rating"] if item["rating"] is not None else 0.0)["text"]
        spoken, raw, spoken_usage = await self._json(
            prompts.social_articulation(context, best), check_text("message"), model=self.articulation_model
        )
        usage = total_usage(usage, spoken_usage)
        if spoken is None:
            return How("", candidates, best, failed=True, raw=raw, usage=usage)
        return How(str(spoken["message"]).strip(), candidates, best, usage=usage)


def mediator_for(
    policy: str,
    model: str,
    *,
    strategies: int = DEFAULT_STRATEGIES,
    articulation_model: str | None = None,
    temperature: float = 0.7,
) -> MediatorPolicy:
    """The mediator policy named ``policy`` (``generic`` or ``social``) playing with ``model``."""
    if policy == GenericMediator.key:
        return GenericMediator(model, temperature=temperature)
    if policy == SocialMediator.key:
        return SocialMediator(
            model, strategies=strategies, articulation_model=articulation_model, temperature=temperature
        )
    raise ValueError(f"unknown mediator policy {policy!r}; use one of {', '.join(POLICIES)}")


def check_engage(data: dict[str, Any]) -> None:
    if not isinstance(data.get("should_engage"), bool):
        raise ValueError('"should_engage" must be true or false')
