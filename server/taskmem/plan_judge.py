"""The judge of plan progress: a configured model answers the "may be finished" questions a message leaves
(core/plan_inference), one question per step, each with everything the rule saw (core/plan_judge).

PostMessage stores the message and its questions first; then, with a model configured, each question is put
to the model and its answer applied in a second write (store/tasks/plan_progress.settle_questions): finished
completes the step (source INFERRED, the model and its reason in the event), not_finished dismisses the
question, unsure leaves it open. The model never fails the RPC: an error, a timeout or an answer that cannot
be read leaves the question open for the agent or a person.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.model_usage import Purpose
from taskmem.core.plan_judge import JUDGE_SYSTEM, Judgement, StepAsked, judge_prompt, parse_judgement
from taskmem.core.plans import PlanItem
from taskmem.providers.chat import ChatModel, ChatModelError
from taskmem.providers.model_meter import model_work
from taskmem.store.storage import Storage
from taskmem.store.tasks import plan_progress
from taskmem.store.tasks import tasks as task_store

log = logging.getLogger(__name__)

OFF = "off"  # reconcile_adjudication off turns this judge off too (config.RECONCILE_ADJUDICATION_MODES)


class PlanJudge:
    """The utility model as the judge of "may be finished" questions; `timeout` bounds each call."""

    def __init__(self, chat: ChatModel, timeout: float) -> None:
        self.chat = chat
        self.timeout = timeout

    @property
    def model(self) -> str:
        return self.chat.model

    async def judge(self, namespace: str, task_id: str, asked: Sequence[StepAsked]) -> list[Judgement | None]:
        """The model's answer to each question, in order (None where it gave none that can be read)."""
        with model_work(namespace, task_id, Purpose.ADJUDICATION):
            return list(await asyncio.gather(*(self._one(question) for question in asked)))

    async def _one(self, asked: StepAsked) -> Judgement | None:
        try:
            text = await asyncio.wait_for(self.chat.complete(JUDGE_SYSTEM, judge_prompt(asked), timeout=self.timeout),
                                          self.timeout)
            return parse_judgement(text)
        except TimeoutError:
            log.warning("plan judge: no answer within %s s; step %d stays asked", self.timeout, asked.ordinal + 1)
        except (ChatModelError, ModelOutputInvalid) as error:
            log.warning("plan judge: step %d stays asked: %s", asked.ordinal + 1, error)
        return None


    async def settle(self, storage: Storage, namespace: str, correlation_id: str, task_id: str, message_id: str,
                     content: str, said_by: str, asked: Sequence[tuple[str, str, str]]) -> tuple[list[PlanItem], set[str]]:
        """Put a message's questions, (item id, evidence, reason) each, to the model and apply its answers:
        the items it completed and the ids of the questions it settled (completed or dismissed)."""
        _, plan = await storage.read(task_store.load_task_with_plan, namespace, task_id, 0)
        if plan is None:
            return [], set()
        titles = [item.title for item in plan.items]
        ordinal = {item.id: item.ordinal for item in plan.items}
        questions = [(item_id, StepAsked(ordinal[item_id], titles[ordinal[item_id]], tuple(titles), content, said_by,
                                         evidence, reason))
                     for item_id, evidence, reason in asked if item_id in ordinal]
        judgements = await self.judge(namespace, task_id, [q for _, q in questions])
        answers = [(item_id, j) for (item_id, _), j in zip(questions, judgements, strict=True) if j is not None]
        if not answers:
            return [], set()
        completed = await storage.write(
            lambda tx: plan_progress.settle_questions(tx, task_id, message_id, self.model, answers),
            namespace, correlation_id)
        return completed, {item_id for item_id, j in answers if j.verdict.value != "unsure"}


def plan_judge_for(chat: ChatModel | None, mode: str, timeout: float) -> PlanJudge | None:
    """The judge the settings ask for: None with no model configured or adjudication off."""
    if chat is None or mode == OFF:
        return None
    return PlanJudge(chat, timeout)
