"""The utility model and the optional second model, and which one answers a QueryTask question.

    router = ModelRouter(utility, second)
    routed = await router.complete(system, prompt, question=question, requested=None, timeout=30)
    routed.text, routed.tier, routed.model, routed.fell_back

The first model asked is the caller's choice or core.model_routing.route_question's; a
tier that is not configured is skipped. If that model fails (timeout, refused, HTTP
error), the other one answers, and the result says so. Extraction and running summaries
never come here: they always use the utility model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from taskmem.settings import LlmSettings
from taskmem.core.model_routing import ModelTier, route_question
from taskmem.providers.chat import ChatModel, ChatModelError, ChatModelNotConfigured, ChatModelTimeout


@dataclasses.dataclass(frozen=True)
class Routed:
    text: str
    tier: ModelTier
    model: str
    fell_back: bool


class ModelRouter:
    def __init__(self, utility: ChatModel | None, second: ChatModel | None) -> None:
        self._models = {ModelTier.UTILITY: utility, ModelTier.SECOND: second}
        # Told (tier asked first, tier that answered), as labels "utility" | "second", after each answer.
        self.on_answer: Callable[[str, str], None] | None = None

    @property
    def configured(self) -> bool:
        return any(self._models.values())

    def order(self, question: str, requested: ModelTier | None) -> list[tuple[ModelTier, ChatModel]]:
        """The configured models in the order they are asked."""
        first = requested or route_question(question)
        tiers = [first, ModelTier.SECOND if first is ModelTier.UTILITY else ModelTier.UTILITY]
        return [(tier, model) for tier in tiers if (model := self._models[tier]) is not None]

    async def complete(self, system: str, user: str, *, question: str, requested: ModelTier | None,
                       timeout: float) -> Routed:
        """The first answer in order(); raises the first model's error (naming the other's) when all fail."""
        order = self.order(question, requested)
        if not order:
            raise ChatModelNotConfigured()
        failures: list[ChatModelError] = []
        for position, (tier, model) in enumerate(order):
            try:
                text = await model.complete(system, user, timeout=timeout)
            except ChatModelError as error:
                failures.append(error)
                continue
            if self.on_answer is not None:
                self.on_answer(order[0][0].label, tier.label)
            return Routed(text, tier, model.model, fell_back=position > 0)
        first = failures[0]
        if len(failures) == 1:
            raise first
        kind = ChatModelTimeout if all(isinstance(f, ChatModelTimeout) for f in failures) else type(first)
        raise kind(f"{first}; the {order[1][0].label} model also failed: {failures[1]}")


def second_model_from_config(settings: LlmSettings) -> ChatModel | None:
    """The second model, or None when llm_second_base_url or llm_second_model is unset."""
    if not settings.second_base_url or not settings.second_model:
        return None
    return ChatModel(settings.second_base_url, settings.second_model, api_key=settings.second_api_key,
                     timeout=settings.timeout_seconds, retries=settings.retries, tier="second")
