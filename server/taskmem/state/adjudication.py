"""The judge of reconciliation: a configured model answers the decisions core/reconcile's policy marks
uncertain (Decision.uncertain: a merge, keep or insert on similarity alone).

After the builtin pass, every uncertain decision is put to the utility model in one call per run (a JSON list
of {candidate, existing item}); its answers go back to core/reconcile as overrides, applied with the same
bookkeeping, so the outcome is deterministic given the model's answers. The model never fails the RPC: an
error, a timeout or an answer that cannot be read keeps every builtin outcome, and the evidence says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.model_usage import Purpose
from taskmem.core.reconcile import Adjudication, Decision
from taskmem.core.state_items import StateItem
from taskmem.core.state_prompts import (
    ADJUDICATION_SYSTEM, AdjudicationQuestion, adjudication_user_prompt, parse_adjudications,
)
from taskmem.providers.chat import ChatModel, ChatModelError
from taskmem.providers.model_meter import model_work

log = logging.getLogger(__name__)

OFF = "off"  # reconcile_adjudication: the builtin outcomes only (config.RECONCILE_ADJUDICATION_MODES)
MAX_QUESTIONS = 25  # a run reconciles at most state_max_candidates (25 by default); one call asks them all


class Adjudicator:
    """The utility model as the judge of uncertain decisions; `timeout` bounds its one call per run."""

    def __init__(self, chat: ChatModel, timeout: float) -> None:
        self.chat = chat
        self.timeout = timeout

    def questions(self, items: Sequence[StateItem], decisions: Sequence[Decision],
                  known: Mapping[str, StateItem]) -> tuple[list[AdjudicationQuestion], dict[int, str]]:
        """The uncertain decisions as questions (id = the candidate's index in `items`), and why each is asked.
        `decisions` are the builtin ones for `items`, in order; `known` has every item they may name."""
        asked: list[AdjudicationQuestion] = []
        why: dict[int, str] = {}
        for index, (item, decision) in enumerate(zip(items, decisions, strict=True)):
            reason = decision.uncertain
            subject = known.get(decision.existing_uid or decision.nearest_uid or "")
            if reason and subject is not None and len(asked) < MAX_QUESTIONS:
                asked.append(AdjudicationQuestion(index, item.type_tag, item.text, subject.uid, subject.text))
                why[index] = reason
        return asked, why

    async def overrides(self, items: Sequence[StateItem], decisions: Sequence[Decision],
                        known: Mapping[str, StateItem]) -> dict[int, Adjudication]:
        """The model's answers to the uncertain decisions, by candidate index (none asked: no call, {})."""
        asked, why = self.questions(items, decisions, known)
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
            return self._unanswered(asked, why, f"the model did not answer within {self.timeout} s")
        except (ChatModelError, ModelOutputInvalid) as error:
            return self._unanswered(asked, why, str(error))
        result = {}
        for question in asked:
            answer, reason = answers.get(question.id), why[question.id]
            result[question.id] = Adjudication(answer.outcome, answer.target, model, answer.reason, reason) \
                if answer is not None else Adjudication("", None, model, "", reason, "the question was not answered")
        return result

    def _unanswered(self, asked: Sequence[AdjudicationQuestion], why: Mapping[int, str],
                    error: str) -> dict[int, Adjudication]:
        """Every question keeps its builtin outcome; the evidence records why the model gave no answer."""
        log.warning("reconciliation adjudication kept the builtin outcomes of %d candidates: %s", len(asked), error)
        return {q.id: Adjudication("", None, self.chat.model, "", why[q.id], error[:200]) for q in asked}


def adjudicator_for(chat: ChatModel | None, mode: str, timeout: float) -> Adjudicator | None:
    """The adjudicator the settings ask for: None with no model configured or reconcile_adjudication off."""
    if chat is None or mode == OFF:
        return None
    return Adjudicator(chat, timeout)
