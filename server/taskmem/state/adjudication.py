"""The first to answer reconciliation's open questions: a configured model.

After the policy's pass (core/reconcile), every candidate it kept as an open question ("does B replace A,
stand beside it, or say the same?") is put to the utility model in one call per run, with what the policy
saw: both texts, who said B (user, agent, document, tool) and the words of the message behind it. Its
answers go back to core/reconcile as overrides and are applied as decisions with the answer as evidence; a
question it does not settle ("unsure", no answer, an error, a timeout) stays open for the calling agent or a
person. The model never fails the RPC.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.model_usage import Purpose
from taskmem.core.reconcile import Adjudication, Decision, Outcome, Prepared, grounding_of
from taskmem.core.state_items import StateItem
from taskmem.core.state_prompts import (
    ADJUDICATION_SYSTEM, AdjudicationQuestion, adjudication_user_prompt, parse_adjudications,
)
from taskmem.providers.chat import ChatModel, ChatModelError
from taskmem.providers.model_meter import model_work

log = logging.getLogger(__name__)

OFF = "off"  # reconcile_adjudication: no model answers (config.RECONCILE_ADJUDICATION_MODES)
MAX_QUESTIONS = 25  # a run reconciles at most state_max_candidates (25 by default); one call asks them all


class Adjudicator:
    """The utility model as the first to answer open questions; `timeout` bounds its one call per run."""

    def __init__(self, chat: ChatModel, timeout: float) -> None:
        self.chat = chat
        self.timeout = timeout

    def questions(self, prepared: Prepared, decisions: Sequence[Decision],
                  known: Mapping[str, StateItem]) -> list[AdjudicationQuestion]:
        """The open questions among `decisions` (the policy's, one per prepared item, in order), id = the
        candidate's index; `known` has every item they may name."""
        asked: list[AdjudicationQuestion] = []
        for index, (item, decision) in enumerate(zip(prepared.items, decisions, strict=True)):
            existing = known.get(decision.existing_uid or "")
            if decision.outcome is Outcome.ASK and existing is not None and len(asked) < MAX_QUESTIONS:
                grounding = grounding_of(item, prepared.batch)
                asked.append(AdjudicationQuestion(index, item.type_tag, existing.uid, existing.text, item.text,
                                                  grounding.said_by, grounding.message))
        return asked

    async def overrides(self, prepared: Prepared, decisions: Sequence[Decision],
                        known: Mapping[str, StateItem]) -> dict[int, Adjudication]:
        """The model's answers to the open questions, by candidate index (none open: no call, {})."""
        asked = self.questions(prepared, decisions, known)
        if not asked:
            return {}
        model = self.chat.model
        try:
            with model_work(purpose=Purpose.ADJUDICATION):
                text = await asyncio.wait_for(
                    self.chat.complete(ADJUDICATION_SYSTEM, adjudication_user_prompt(asked), timeout=self.timeout),
                    self.timeout)
            answers = parse_adjudications(text, asked)
        except TimeoutError:
            return self._unanswered(asked, f"the model did not answer within {self.timeout} s")
        except (ChatModelError, ModelOutputInvalid) as error:
            return self._unanswered(asked, str(error))
        return {q.id: Adjudication(answers[q.id].answer, model, answers[q.id].reason) if q.id in answers
                else Adjudication("", model, "", "the question was not answered") for q in asked}

    def _unanswered(self, asked: Sequence[AdjudicationQuestion], error: str) -> dict[int, Adjudication]:
        log.warning("reconciliation: the model settled none of %d open questions: %s", len(asked), error)
        return {q.id: Adjudication("", self.chat.model, "", error[:200]) for q in asked}


def adjudicator_for(chat: ChatModel | None, mode: str, timeout: float) -> Adjudicator | None:
    """The adjudicator the settings ask for: None with no model configured or reconcile_adjudication off."""
    if chat is None or mode == OFF:
        return None
    return Adjudicator(chat, timeout)
