"""The web view's "may be finished" questions (issue 38): a step a message probably finished is asked about on the
task page, and a person answers it there (Finished completes the step, Not finished dismisses the question)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc

from taskmem.v1 import task_pb2, task_service_pb2 as tpb, task_service_pb2_grpc
from tests.web.conftest import KEY_A
from tests.web.test_web_view import A, TIMEOUT_MS, create_task, item, open_view


def _post(channel: grpc.Channel, task_id: str, content: str) -> tpb.PostMessageResponse:
    return task_service_pb2_grpc.TaskServiceStub(channel).PostMessage(tpb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, kind=task_pb2.MESSAGE_KIND_PROGRESS, content=content),
        metadata=A)


def _item(channel: grpc.Channel, task_id: str, item_id: str) -> task_pb2.PlanItem:
    plan = task_service_pb2_grpc.TaskServiceStub(channel).GetPlan(tpb.GetPlanRequest(task_id=task_id), metadata=A).plan
    return next(i for i in plan.items if i.id == item_id)


def test_a_person_answers_may_be_finished_questions_on_the_task_page(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Press the record", item("lacquers", "Get the lacquers cut"),
                          item("tests", "Approve the test pressings"))
    _post(channel, task_id, "lacquers are cut! side B runs a touch hot")
    _post(channel, task_id, "TPs sound great on both decks, approved")
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    questions = page.locator("#step-questions li")
    questions.first.wait_for(timeout=TIMEOUT_MS)
    assert questions.count() == 2 and "may be finished: step 1 'Get the lacquers cut'" in questions.first.inner_text()
    page.screenshot(path=str(screenshots / "task-step-questions.png"), full_page=True)

    page.click("#step-questions li[data-item=lacquers] button.answer-finished")
    page.wait_for_selector("#step-questions li[data-item=lacquers]", state="detached", timeout=TIMEOUT_MS)
    assert _item(channel, task_id, "lacquers").status == task_pb2.PLAN_ITEM_STATUS_COMPLETED

    page.click("#step-questions li[data-item=tests] button.answer-not-finished")
    page.wait_for_selector("#step-questions", state="detached", timeout=TIMEOUT_MS)
    answered = _item(channel, task_id, "tests")
    assert answered.status == task_pb2.PLAN_ITEM_STATUS_PENDING and not answered.HasField("question")
