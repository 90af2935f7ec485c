"""The web view's questions waiting on a person (issue 28, point 2): the tasks page lists every open wait of kind
INPUT or AUTH with who must answer what, and a form that answers (or refuses) it through ResolveWait, under the
view's own key and header rules."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc

from taskmem.v1 import task_pb2, task_service_pb2 as tpb, task_service_pb2_grpc
from taskmem.v1 import wait_pb2, wait_service_pb2 as wpb, wait_service_pb2_grpc
from tests.web.conftest import KEY_A, KEY_B
from tests.support.eventually import HANG_GUARD_SECONDS

A = (("authorization", f"Bearer {KEY_A}"),)
TIMEOUT_MS = int(HANG_GUARD_SECONDS * 1000)  # a hang guard, never what a test judges


def _task(channel: grpc.Channel, name: str, *plan: task_pb2.PlanItemSpec) -> str:
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    task_id = tasks.CreateTask(tpb.CreateTaskRequest(name=name, goal=f"Goal of {name}", plan=plan), metadata=A).task.id
    tasks.UpdateTask(tpb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING),
                                           update_mask={"paths": ["status"]}), metadata=A)
    return task_id


def _ask(channel: grpc.Channel, task_id: str, kind: int, question: str, resolver: str, item_id: str = "") -> str:
    target = wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(resolver=resolver, kind=kind,  # type: ignore[arg-type]
                                                                  question=question, plan_item_id=item_id))
    waits = wait_service_pb2_grpc.WaitServiceStub(channel)
    return waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, target=target), metadata=A).wait.id


def _wait(channel: grpc.Channel, wait_id: str) -> wait_pb2.Wait:
    return wait_service_pb2_grpc.WaitServiceStub(channel).GetWait(wpb.GetWaitRequest(wait_id=wait_id), metadata=A).wait


def _status(channel: grpc.Channel, task_id: str) -> int:
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    return tasks.GetTask(tpb.GetTaskRequest(task_id=task_id), metadata=A).task.status


def _open(page: Any, web_url: str, key: str) -> None:
    page.goto(f"{web_url}#/tasks")
    page.fill("#key-input", key)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("main[data-ready=true]", timeout=TIMEOUT_MS)


def test_the_tasks_page_lists_who_must_answer_what_and_answers_over_grpc(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = _task(channel, "Launch the newsletter")
    _open(page, web_url, KEY_A)
    wait_id = _ask(channel, task_id, wait_pb2.EXTERNAL_WAIT_KIND_INPUT, "Which mailing list?", "editor")
    row = page.locator(f"#awaiting-person tr[data-wait-id='{wait_id}']")
    row.wait_for(timeout=TIMEOUT_MS)  # appeared live, without a reload
    text = row.inner_text()
    assert "Launch the newsletter" in text and "editor" in text and "Which mailing list?" in text and "input" in text
    page.wait_for_selector(f"#tasks-table tr[data-task-id='{task_id}'][data-status='input required']",
                           timeout=TIMEOUT_MS)
    page.select_option("#status-filter", "AWAITING_PERSON")
    assert page.locator(f"#tasks-table tr[data-task-id='{task_id}']").count() == 1
    page.screenshot(path=str(screenshots / "tasks-awaiting-person.png"), full_page=True)

    row.locator("input.answer-text").fill("subscribers-eu")
    row.locator("button.answer-wait").click()
    row.wait_for(state="detached", timeout=TIMEOUT_MS)
    answered = _wait(channel, wait_id)
    assert (answered.status, answered.result) == (wait_pb2.WAIT_STATUS_RESOLVED, "subscribers-eu")
    assert _status(channel, task_id) == task_pb2.TASK_STATUS_EXECUTING
    assert page.locator(f"#tasks-table tr[data-task-id='{task_id}']").count() == 0  # no longer waiting on anyone


def test_an_answer_being_written_keeps_its_field_while_the_page_redraws(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    """A person who has clicked into an answer keeps the field, its focus and what they type while other news
    of the task redraws the page (the row was drawn anew, so keys pressed after a redraw went nowhere)."""
    task_id = _task(channel, "Plan the offsite")
    wait_id = _ask(channel, task_id, wait_pb2.EXTERNAL_WAIT_KIND_INPUT, "Which city?", "organiser")
    _open(page, web_url, KEY_A)
    row = page.locator(f"#awaiting-person tr[data-wait-id='{wait_id}']")
    row.locator("input.answer-text").click()
    tasks = task_service_pb2_grpc.TaskServiceStub(channel)
    tasks.UpdateTask(tpb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, goal="Book rooms for forty"),
                                           update_mask={"paths": ["goal"]}), metadata=A)
    page.wait_for_selector(f"#tasks-table tr[data-task-id='{task_id}']:has-text('Book rooms for forty')",
                           timeout=TIMEOUT_MS)  # the page has redrawn with the news
    page.keyboard.type("Lisbon")
    row.locator("button.answer-wait").click()
    row.wait_for(state="detached", timeout=TIMEOUT_MS)
    assert (_wait(channel, wait_id).status, _wait(channel, wait_id).result) == (wait_pb2.WAIT_STATUS_RESOLVED, "Lisbon")


def test_an_item_waiting_for_an_authorisation_can_be_refused_in_the_page(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = _task(channel, "Rotate the certificates", task_pb2.PlanItemSpec(id="renew", title="Renew"))
    wait_id = _ask(channel, task_id, wait_pb2.EXTERNAL_WAIT_KIND_AUTH, "Unlock the CA key", "security", "renew")
    _open(page, web_url, KEY_A)
    row = page.locator(f"#awaiting-person tr[data-wait-id='{wait_id}']")
    assert "item renew" in row.inner_text() and "auth" in row.inner_text()
    row.locator("button.refuse-wait").click()
    assert "write an answer first" in row.inner_text()  # nothing sent without an answer
    assert _wait(channel, wait_id).status == wait_pb2.WAIT_STATUS_WAITING
    row.locator("input.answer-text").fill("not during the freeze")
    row.locator("button.refuse-wait").click()
    row.wait_for(state="detached", timeout=TIMEOUT_MS)
    refused = _wait(channel, wait_id)
    assert (refused.status, refused.result) == (wait_pb2.WAIT_STATUS_FAILED, "not during the freeze")


def test_another_namespace_sees_no_question_and_cannot_answer_one(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = _task(channel, "Team A's secret plan")
    wait_id = _ask(channel, task_id, wait_pb2.EXTERNAL_WAIT_KIND_INPUT, "Go or no go?", "lead")
    _open(page, web_url, KEY_B)
    assert page.locator(f"tr[data-wait-id='{wait_id}']").count() == 0
    assert _post(web_url, {"wait_id": wait_id, "result": "go"}, {"authorization": f"Bearer {KEY_B}"})[0] == 404
    # Another site's page cannot send the view's header: refused before the body is read.
    assert _post(web_url, {"wait_id": wait_id, "result": "go"}, {"authorization": f"Bearer {KEY_A}"}, web=False)[0] == 403
    time.sleep(0.2)
    assert _wait(channel, wait_id).status == wait_pb2.WAIT_STATUS_WAITING


def _post(web_url: str, body: dict[str, Any], headers: dict[str, str], *, web: bool = True) -> tuple[int, Any]:
    if web:
        headers = {**headers, "x-taskmem-web": "1"}
    request = urllib.request.Request(f"{web_url}api/call/WaitService/ResolveWait", data=json.dumps(body).encode(),
                                     headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_SECONDS) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())

