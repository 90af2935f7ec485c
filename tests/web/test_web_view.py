"""The web view in a real browser against a live server: lists, live updates, the plan graph,
an action that goes through the RPC, and namespace isolation."""

from __future__ import annotations

import json
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest

from taskmem.v1 import memory_pb2, memory_service_pb2 as mpb, memory_service_pb2_grpc
from taskmem.v1 import state_pb2, state_service_pb2 as spb, state_service_pb2_grpc
from taskmem.v1 import task_pb2, task_service_pb2 as tpb, task_service_pb2_grpc
from taskmem.v1 import wait_pb2, wait_service_pb2 as wpb, wait_service_pb2_grpc
from taskmem.core.tasks import TaskStatus, allowed_transitions
from tests.web.conftest import KEY_A, KEY_B
from tests.support.eventually import HANG_GUARD_SECONDS

TASK_JS = Path(__file__).resolve().parents[2] / "server" / "taskmem" / "web" / "static" / "task.js"

A = (("authorization", f"Bearer {KEY_A}"),)
TIMEOUT_MS = int(HANG_GUARD_SECONDS * 1000)  # a hang guard, never what a test judges


def tasks_stub(channel: grpc.Channel) -> task_service_pb2_grpc.TaskServiceStub:
    return task_service_pb2_grpc.TaskServiceStub(channel)


def open_view(page: Any, web_url: str, route: str, key: str) -> None:
    """Open a page of the view, type the key once, and wait until the page has loaded its data."""
    page.goto(f"{web_url}#/{route}")
    page.fill("#key-input", key)
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("main[data-ready=true]", timeout=TIMEOUT_MS)


def create_task(channel: grpc.Channel, name: str, *plan: task_pb2.PlanItemSpec) -> str:
    return tasks_stub(channel).CreateTask(tpb.CreateTaskRequest(name=name, goal=f"Goal of {name}", plan=plan),
                                          metadata=A).task.id


def item(item_id: str, title: str, *depends_on: str) -> task_pb2.PlanItemSpec:
    return task_pb2.PlanItemSpec(id=item_id, title=title, depends_on=depends_on)


def set_status(channel: grpc.Channel, task_id: str, status: int) -> None:
    tasks_stub(channel).UpdateTask(tpb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=status),
                                                         update_mask={"paths": ["status"]}), metadata=A)


def test_tasks_page_lists_a_task_created_over_grpc_and_follows_its_status_live(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    open_view(page, web_url, "tasks", KEY_A)
    task_id = create_task(channel, "Migrate the billing database", item("dump", "Dump MySQL"),
                          item("load", "Load into PostgreSQL", "dump"))
    row = page.locator(f"tr[data-task-id='{task_id}']")
    row.wait_for(timeout=TIMEOUT_MS)  # appeared without a reload
    assert "Migrate the billing database" in row.inner_text() and "0/2" in row.inner_text()
    set_status(channel, task_id, task_pb2.TASK_STATUS_EXECUTING)
    page.wait_for_selector(f"tr[data-task-id='{task_id}'][data-status='executing']", timeout=TIMEOUT_MS)
    tasks_stub(channel).UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="dump",
                                                                 status=task_pb2.PLAN_ITEM_STATUS_COMPLETED), metadata=A)
    page.wait_for_selector(f"tr[data-task-id='{task_id}'] .progress-text:text-is('1/2')", timeout=TIMEOUT_MS)
    page.select_option("#status-filter", "completed")
    assert page.locator(f"tr[data-task-id='{task_id}']").count() == 0
    page.select_option("#status-filter", "")
    page.fill("#name-search", "billing")
    assert page.locator(f"tr[data-task-id='{task_id}']").count() == 1
    page.screenshot(path=str(screenshots / "tasks.png"), full_page=True)


def test_task_page_draws_the_plan_graph_with_each_items_status(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Release 2.4", item("build", "Build wheels"), item("test", "Run the test suite", "build"),
                          item("docs", "Write release notes"), item("tag", "Tag the release", "test", "docs"),
                          item("publish", "Publish to PyPI", "tag"))
    stub = tasks_stub(channel)
    for item_id, status in (("build", task_pb2.PLAN_ITEM_STATUS_COMPLETED), ("test", task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS),
                            ("docs", task_pb2.PLAN_ITEM_STATUS_FAILED)):
        stub.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id=item_id, status=status), metadata=A)
    set_status(channel, task_id, task_pb2.TASK_STATUS_EXECUTING)
    action = stub.RecordAction(tpb.RecordActionRequest(task_id=task_id, plan_item_id="test", type=task_pb2.ACTION_TYPE_CLI,
                                                       tool_name="pytest", summary="pytest -q"), metadata=A).action
    stub.AppendActionLog(tpb.AppendActionLogRequest(action_id=action.id, lines=[
        tpb.LogLineInput(content="collected 412 items")]), metadata=A)
    stub.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER,
                                            content="Ship 2.4 once the tests pass"), metadata=A)
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    statuses = {node.get_attribute("data-id"): node.get_attribute("data-status")
                for node in page.locator("#plan-graph g.node").all()}
    assert statuses == {"build": "completed", "test": "in progress", "docs": "failed", "tag": "pending",
                        "publish": "pending"}
    edges = {(edge.get_attribute("data-from"), edge.get_attribute("data-to"))
             for edge in page.locator("#plan-graph path.edge").all()}
    assert edges == {("build", "test"), ("test", "tag"), ("docs", "tag"), ("tag", "publish")}
    # steps are numbered as people count them, and counted in words that agree with the number
    assert page.locator("#plan-graph g.node[data-id=build] text.node-title").text_content().startswith("1. Build")
    assert page.locator("#plan-graph").get_attribute("aria-label") is None
    assert page.locator("#plan-graph svg").get_attribute("aria-label") == "plan graph, 5 items"
    # the running action is listed as running now, its log tailed live
    page.wait_for_selector(f"#running-actions pre[data-action-log='{action.id}']:has-text('collected 412 items')",
                           timeout=TIMEOUT_MS)
    stub.AppendActionLog(tpb.AppendActionLogRequest(action_id=action.id, lines=[
        tpb.LogLineInput(content="412 passed")]), metadata=A)
    page.wait_for_selector(f"pre[data-action-log='{action.id}']:has-text('412 passed')", timeout=TIMEOUT_MS)
    stub.CompleteAction(tpb.CompleteActionRequest(action_id=action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED), metadata=A)
    page.wait_for_selector("#running-actions :text('Nothing is running.')", timeout=TIMEOUT_MS)
    page.wait_for_selector(f"#actions-list li[data-action-id='{action.id}'][data-status=succeeded]", timeout=TIMEOUT_MS)
    # a status change shows up in the graph without a reload, and in the event list
    stub.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="test",
                                                  status=task_pb2.PLAN_ITEM_STATUS_COMPLETED), metadata=A)
    page.wait_for_selector("#plan-graph g.node[data-id=test][data-status=completed]", timeout=TIMEOUT_MS)
    page.wait_for_selector("#event-list li[data-type='plan item updated']", timeout=TIMEOUT_MS)
    # keyboard: Tab to a node, Enter shows its details
    page.focus("#plan-graph g.node[data-id=docs]")
    page.keyboard.press("Enter")
    assert "Write release notes" in page.inner_text("#plan-item-detail")
    assert "Ship 2.4 once the tests pass" in page.inner_text("#transcript-body")
    page.screenshot(path=str(screenshots / "task.png"), full_page=True)


def test_resolving_an_external_wait_in_the_page_resolves_it_over_grpc(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Deploy after approval", item("approve", "Get approval"))
    waits = wait_service_pb2_grpc.WaitServiceStub(channel)
    wait = waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, criteria="release manager approves",
                                                  target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(
                                                      resolver="release manager"))), metadata=A).wait
    seen: list[wait_pb2.Wait] = []
    watch = waits.WatchWait(wpb.WatchWaitRequest(wait_id=wait.id), metadata=A)
    watcher = threading.Thread(target=lambda: seen.extend(reply.wait for reply in watch), daemon=True)
    watcher.start()
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    row = page.locator(f"tr[data-wait-id='{wait.id}']")
    assert row.get_attribute("data-status") == "waiting"
    row.locator("input.wait-result").fill("approved by Dana")
    row.locator("button.resolve-wait").click()
    watcher.join(timeout=HANG_GUARD_SECONDS)
    assert not watcher.is_alive(), "WatchWait did not end"
    assert seen[-1].status == wait_pb2.WAIT_STATUS_RESOLVED and seen[-1].result == "approved by Dana"
    page.wait_for_selector(f"tr[data-wait-id='{wait.id}'][data-status=resolved]", timeout=TIMEOUT_MS)
    # the resolution is written into the task's history, as for a ResolveWait from any client
    page.wait_for_selector("#transcript-body :text('approved by Dana')", timeout=TIMEOUT_MS)
    page.screenshot(path=str(screenshots / "task-wait-resolved.png"), full_page=True)


def test_the_chosen_plan_item_stays_shown_and_focused_while_the_plan_changes(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    """The item a person chose stays in the detail, with its news, when the plan redraws; a keyboard user's focus
    stays on its node (both went back to "Choose an item" and the page's top)."""
    task_id = create_task(channel, "Release 2.4", item("build", "Build"), item("docs", "Write release notes"))
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    page.focus("#plan-graph g.node[data-id=docs]")
    page.keyboard.press("Enter")
    assert "Write release notes" in page.inner_text("#plan-item-detail")
    tasks_stub(channel).UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="docs",
                                                                 status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS), metadata=A)
    page.wait_for_selector("#plan-graph g.node[data-id=docs][data-status='in progress']", timeout=TIMEOUT_MS)
    detail = page.inner_text("#plan-item-detail")
    assert "Write release notes" in detail and "in progress" in detail
    assert page.evaluate("document.activeElement.closest('g.node')?.dataset.id") == "docs"


def test_a_result_being_typed_for_a_wait_survives_another_wait_being_created(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    """The task page's waits are kept by id: a wait created while a person types another's result adds a row
    and leaves theirs, its focus and its text alone (the table was drawn anew and the keys were lost)."""
    task_id = create_task(channel, "Deploy after approval")
    waits = wait_service_pb2_grpc.WaitServiceStub(channel)

    def external(criteria: str) -> wait_pb2.Wait:
        return waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, criteria=criteria, target=wait_pb2.WaitTarget(
            external=wait_pb2.ExternalTarget(resolver="release manager"))), metadata=A).wait
    first = external("release manager approves")
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    row = page.locator(f"tr[data-wait-id='{first.id}']")
    row.locator("input.wait-result").click()
    page.keyboard.type("approved ")
    second = external("security signs off")
    page.wait_for_selector(f"tr[data-wait-id='{second.id}']", timeout=TIMEOUT_MS)  # the table has changed
    page.keyboard.type("by Dana")
    row.locator("button.resolve-wait").click()
    page.wait_for_selector(f"tr[data-wait-id='{first.id}'][data-status=resolved]", timeout=TIMEOUT_MS)
    resolved = waits.GetWait(wpb.GetWaitRequest(wait_id=first.id), metadata=A).wait
    assert (resolved.status, resolved.result) == (wait_pb2.WAIT_STATUS_RESOLVED, "approved by Dana")
    assert page.locator(f"tr[data-wait-id='{second.id}']").get_attribute("data-status") == "waiting"


def test_pinning_a_state_item_in_the_page_pins_it_over_grpc(page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Cache design")
    state = state_service_pb2_grpc.StateServiceStub(channel)
    added = state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task_id, items=[state_pb2.StateItemCandidate(
        type=state_pb2.STATE_ITEM_TYPE_DECISION, text="Use Redis for caching")]), metadata=A).items[0]
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    page.click(f"tr[data-uid='{added.uid}'] button.pin")
    page.wait_for_selector(f"tr[data-uid='{added.uid}'] button.pin[aria-pressed=true]", timeout=TIMEOUT_MS)
    items = state.ListStateItems(spb.ListStateItemsRequest(task_id=task_id), metadata=A).items
    assert [i.pinned for i in items if i.uid == added.uid] == [True]


def test_a_wrong_key_sees_nothing(page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Secret project of team A")
    page.goto(f"{web_url}#/tasks")
    page.fill("#key-input", "not-a-key")
    page.click("#key-form button[type=submit]")
    page.wait_for_selector("#auth-notice:not([hidden])", timeout=TIMEOUT_MS)
    assert "UNAUTHENTICATED" in page.inner_text("#auth-notice")
    assert page.locator("tr[data-task-id]").count() == 0
    page.goto(f"{web_url}#/task/{task_id}")
    page.wait_for_selector("#auth-notice:not([hidden])", timeout=TIMEOUT_MS)
    assert "Secret project" not in page.inner_text("body")
    page.screenshot(path=str(screenshots / "wrong-key.png"), full_page=True)
    # team B's key works, but team A's tasks are not in its namespace
    open_view(page, web_url, "tasks", KEY_B)
    assert "Secret project" not in page.inner_text("main")
    page.goto(f"{web_url}#/task/{task_id}")
    page.wait_for_selector("#overview-body .error", timeout=TIMEOUT_MS)
    assert "NOT_FOUND" in page.inner_text("#overview-body") and "Secret project" not in page.inner_text("body")


def test_knowledge_and_search_pages_show_the_namespaces_memory(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Search backend")
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    for value, confidence in (("Use node: prefix for builtins", 0.7), ("Use the node: prefix for every builtin", 0.9)):
        memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(category=memory_pb2.KNOWLEDGE_CATEGORY_CONVENTION, key="imports",
                                                          value=value, confidence=confidence, source="agent-7"), metadata=A)
    memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(category=memory_pb2.KNOWLEDGE_CATEGORY_DECISION, key="orm",
                                                      value="No ORM: raw SQL with prepared statements", source="user"),
                           metadata=A)
    memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[
        mpb.NewMemoryEntry(task_id=task_id, type=memory_pb2.MEMORY_TYPE_DECISION, summary="Chose PostgreSQL full text search",
                           detail="tsvector with a GIN index beat the trigram index on our corpus"),
        mpb.NewMemoryEntry(task_id=task_id, type=memory_pb2.MEMORY_TYPE_ERROR, summary="Elasticsearch ran out of heap")]),
        metadata=A)
    open_view(page, web_url, "knowledge", KEY_A)
    assert "Use the node: prefix for every builtin" in page.inner_text("tr[data-key=imports]")
    page.click("tr[data-key=imports] button.link")
    page.wait_for_selector("tr.history-row :text('Use node: prefix for builtins')", timeout=TIMEOUT_MS)
    imports = page.inner_text("tr[data-key=imports]")
    assert "agent-7" in imports and "90%" in imports  # its source and confidence
    page.screenshot(path=str(screenshots / "knowledge.png"), full_page=True)
    page.select_option("#knowledge-category", "DECISION")
    page.click(".filters button[type=submit]")
    # the orm row is on the page before the filter too: wait for the convention row to go
    page.wait_for_selector("tr[data-key=imports]", state="detached", timeout=TIMEOUT_MS)
    assert page.locator("tr[data-key=orm]").count() == 1
    page.goto(f"{web_url}#/search")
    page.fill("#search-query", "full text search")
    page.select_option("#search-mode", "FULLTEXT")
    page.press("#search-query", "Enter")
    page.wait_for_selector("#search-results li.hit mark", timeout=TIMEOUT_MS)
    assert "Chose PostgreSQL full text search" in page.inner_text("#search-results")
    assert "Elasticsearch" not in page.inner_text("#search-results")
    # filters: another task's id finds nothing; this task's id finds it again
    other = create_task(channel, "Another task")
    page.fill("#search-task", other)
    page.press("#search-query", "Enter")
    page.wait_for_selector("#search-results :text('Nothing found.')", timeout=TIMEOUT_MS)
    page.fill("#search-task", task_id)
    page.press("#search-query", "Enter")
    page.wait_for_selector("#search-results li.hit", timeout=TIMEOUT_MS)
    page.screenshot(path=str(screenshots / "search.png"), full_page=True)


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=HANG_GUARD_SECONDS) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize(("headers", "status", "code"), [
    ({"x-taskmem-web": "1"}, 401, "UNAUTHENTICATED"),
    ({"x-taskmem-web": "1", "authorization": "Bearer nope"}, 401, "UNAUTHENTICATED"),
    ({"authorization": f"Bearer {KEY_A}"}, 403, "PERMISSION_DENIED"),  # another site's page cannot send the header
    ({"x-taskmem-web": "1", "authorization": f"Bearer {KEY_A}", "x-taskmem-namespace": "team-b"}, 403, "PERMISSION_DENIED"),
])
def test_api_calls_are_refused_without_a_good_key_or_the_pages_header(
        web_url: str, headers: dict[str, str], status: int, code: str) -> None:
    assert _post(f"{web_url}api/call/TaskService/ListTasks", {}, headers) == (status, _error_body(code))


def _error_body(code: str) -> Any:
    class _Matches(dict[str, Any]):
        def __eq__(self, other: object) -> bool:
            return isinstance(other, dict) and other.get("code") == code and bool(other.get("message"))
    return _Matches()


def test_bad_input_through_the_web_is_invalid_argument_naming_the_field(web_url: str) -> None:
    headers = {"x-taskmem-web": "1", "authorization": f"Bearer {KEY_A}"}
    status, body = _post(f"{web_url}api/call/TaskService/ListTasks", {"page_size": -1}, headers)
    assert (status, body["code"]) == (400, "INVALID_ARGUMENT") and "page_size" in body["message"]
    status, body = _post(f"{web_url}api/call/TaskService/ListTasks", {"no_such_field": 1}, headers)
    assert (status, body["code"]) == (400, "INVALID_ARGUMENT") and "no_such_field" in body["message"]
    status, body = _post(f"{web_url}api/call/TaskService/CreateTask", {"name": "x"}, headers)
    assert (status, body["code"]) == (404, "NOT_FOUND")  # only the page's methods are open


def test_event_stream_resumes_after_last_event_id(web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Resume me")
    set_status(channel, task_id, task_pb2.TASK_STATUS_EXECUTING)
    headers = {"x-taskmem-web": "1", "authorization": f"Bearer {KEY_A}", "last-event-id": "0"}
    request = urllib.request.Request(f"{web_url}api/events?task={task_id}", headers=headers)
    with urllib.request.urlopen(request, timeout=HANG_GUARD_SECONDS) as response:
        events = _read_sse(response, count=3)
    assert events[0][0] == "ready" and [e[0] for e in events[1:]] == ["event", "event"]
    types = [json.loads(data)["type"] for _, _, data in events[1:]]
    assert types == ["EVENT_TYPE_TASK_CREATED", "EVENT_TYPE_TASK_STATUS_CHANGED"]
    first_id = events[1][1]
    headers["last-event-id"] = first_id
    request = urllib.request.Request(f"{web_url}api/events?task={task_id}", headers=headers)
    with urllib.request.urlopen(request, timeout=HANG_GUARD_SECONDS) as response:
        resumed = _read_sse(response, count=2)
    assert resumed[0] == ("ready", first_id, json.dumps({"cursor": int(first_id)}))
    assert json.loads(resumed[1][2])["type"] == "EVENT_TYPE_TASK_STATUS_CHANGED"


def _read_sse(response: Any, count: int) -> list[tuple[str, str, str]]:
    """The first `count` SSE events (name, id, data) of a response."""
    events: list[tuple[str, str, str]] = []
    name, event_id, data = "message", "", ""
    while len(events) < count:
        line = response.readline().decode().rstrip("\r\n")
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data = line[5:].strip()
        elif not line and data:
            events.append((name, event_id, data))
            name, event_id, data = "message", "", ""
    return events


def test_pausing_and_cancelling_a_task_in_the_page_changes_it_over_grpc(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Long crawl", item("crawl", "Crawl the site"))
    set_status(channel, task_id, task_pb2.TASK_STATUS_EXECUTING)
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    page.click("#pause-task")
    page.wait_for_selector("#overview-body [data-status=paused]", timeout=TIMEOUT_MS)
    get = tasks_stub(channel).GetTask
    assert get(tpb.GetTaskRequest(task_id=task_id), metadata=A).task.status == task_pb2.TASK_STATUS_PAUSED
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#cancel-task")
    page.wait_for_selector("#overview-body [data-status=cancelled]", timeout=TIMEOUT_MS)
    assert get(tpb.GetTaskRequest(task_id=task_id), metadata=A).task.status == task_pb2.TASK_STATUS_CANCELLED
    page.wait_for_selector("#event-list li[data-type='task status changed']", timeout=TIMEOUT_MS)
    assert page.locator("#pause-task, #cancel-task").count() == 0


def _offered_moves(page: Any) -> set[str]:
    return {name for name, button in (("PAUSED", "#pause-task"), ("CANCELLED", "#cancel-task"))
            if page.locator(button).count()}


@pytest.mark.parametrize("path", [
    ("EXECUTING",), ("EXECUTING", "PAUSED"), ("EXECUTING", "COMPLETED"), ("EXECUTING", "FAILED"),
    ("EXECUTING", "COMPLETED", "ARCHIVED"),
], ids=lambda path: path[-1].lower())
def test_a_task_page_offers_only_the_moves_its_status_allows(
        page: Any, web_url: str, channel: grpc.Channel, path: tuple[str, ...]) -> None:
    task_id = create_task(channel, f"Reaches {path[-1].lower()}")
    for status in path:
        set_status(channel, task_id, task_pb2.TaskStatus.Value(f"TASK_STATUS_{status}"))
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    page.wait_for_selector(f"#overview-body [data-status={path[-1].lower()}]", timeout=TIMEOUT_MS)
    allowed = {move.name for move in allowed_transitions(TaskStatus[path[-1]])}
    assert _offered_moves(page) == allowed & {"PAUSED", "CANCELLED"}


def _statuses_offered(script: str, name: str) -> set[str]:
    """The statuses in task.js's `const NAME = new Set([...])`, following `...OTHER` spreads."""
    found = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", script)
    assert found is not None, name
    statuses = set(re.findall(r'"([A-Z_]+)"', found.group(1)))
    for spread in re.findall(r"\.\.\.(\w+)", found.group(1)):
        statuses |= _statuses_offered(script, spread)
    return statuses


def test_the_pages_moves_are_the_ones_the_server_allows_from_every_status() -> None:
    """Every status, including those only a wait on a person reaches, offers a move exactly when UpdateTask
    would make it."""
    script = TASK_JS.read_text()
    pause, cancel = _statuses_offered(script, "CAN_PAUSE"), _statuses_offered(script, "CAN_CANCEL")
    for status in TaskStatus:
        moves = allowed_transitions(status)
        assert (status.name in pause) == (TaskStatus.PAUSED in moves), status
        assert (status.name in cancel) == (TaskStatus.CANCELLED in moves), status


def test_a_page_reached_under_another_host_name_is_refused(web_url: str) -> None:
    # A DNS-rebinding page would reach the loopback listener under its own name.
    port = web_url.rstrip("/").rpartition(":")[2]
    request = urllib.request.Request(web_url, headers={"host": f"attacker.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=HANG_GUARD_SECONDS)
    assert refused.value.code == 400


def test_the_plan_history_shows_an_earlier_version_on_request(page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Replanned", item("a", "First idea"))
    tasks_stub(channel).ReplacePlan(tpb.ReplacePlanRequest(task_id=task_id, reason="split the work", items=[
        item("b", "Second idea"), item("c", "Third idea", "b")]), metadata=A)
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    assert [n.get_attribute("data-id") for n in page.locator("#plan-graph g.node").all()] == ["b", "c"]
    assert "split the work" in page.inner_text("#plan-body")
    page.click("#plan-body details.history summary")
    page.click("#plan-body button:has-text('version 1')")
    page.wait_for_selector("#plan-graph g.node[data-id=a]", timeout=TIMEOUT_MS)
    assert page.locator("#plan-graph g.node").count() == 1


def test_the_state_history_lists_versions_and_shows_the_diff_from_one_to_now(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Pick a chart library", item("draw", "Draw the charts"))
    state = state_service_pb2_grpc.StateServiceStub(channel)
    first = state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Chart.js for the charts"), metadata=A)
    state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Plotly for the charts",
                                             supersedes=first.item.uid), metadata=A)
    versions = state.GetTaskStateHistory(spb.GetTaskStateHistoryRequest(task_id=task_id), metadata=A).versions
    decided = versions[1].cursor  # just after the first decision
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    page.wait_for_selector(f"#history-body tr[data-cursor='{decided}']", timeout=TIMEOUT_MS)
    assert page.locator("#history-body tr[data-cursor]").count() == len(versions)
    history = page.inner_text("#history-body")  # who changed what, in words
    assert "'Use Plotly for the charts' replaces" in history and "'Use Chart.js for the charts' by key key-" in history
    page.click(f"#history-body tr[data-cursor='{decided}'] button")
    page.wait_for_selector("#state-diff pre.diff", timeout=TIMEOUT_MS)
    removed = page.locator("#state-diff pre.diff span.removed").all_inner_texts()
    added = page.locator("#state-diff pre.diff span.added").all_inner_texts()
    assert any("Use Chart.js" in line for line in removed) and any("Use Plotly" in line for line in added)
    page.locator("#section-history").screenshot(path=str(screenshots / "state-history-diff.png"))


def test_a_batch_answers_each_call_alone(web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Batched")
    headers = {"x-taskmem-web": "1", "authorization": f"Bearer {KEY_A}"}
    status, body = _post(f"{web_url}api/batch", {"calls": [
        {"service": "TaskService", "method": "GetProgress", "request": {"task_id": task_id}},
        {"service": "TaskService", "method": "GetProgress", "request": {"task_id": "tsk_missing"}},
        {"service": "TaskService", "method": "CreateTask", "request": {"name": "no"}}]}, headers)
    assert status == 200
    first, missing, refused = body["results"]
    assert first["reply"]["task"]["name"] == "Batched"
    assert (missing["error"]["status"], missing["error"]["code"]) == (404, "NOT_FOUND")
    assert (refused["error"]["status"], refused["error"]["code"]) == (404, "NOT_FOUND")
    status, body = _post(f"{web_url}api/batch", {"calls": "nope"}, headers)
    assert (status, body["code"]) == (400, "INVALID_ARGUMENT")
    other_namespace = {**headers, "authorization": f"Bearer {KEY_B}"}
    status, body = _post(f"{web_url}api/batch", {"calls": [
        {"service": "TaskService", "method": "GetProgress", "request": {"task_id": task_id}}]}, other_namespace)
    assert body["results"][0]["error"]["code"] == "NOT_FOUND"


def test_task_page_shows_lifecycle_state_yaml_artifacts_episodes_and_snapshots(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id = create_task(channel, "Chart the sales", item("draw", "Draw the charts"))
    set_status(channel, task_id, task_pb2.TASK_STATUS_EXECUTING)
    state = state_service_pb2_grpc.StateServiceStub(channel)
    first = state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Chart.js for the charts"), metadata=A)
    state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Plotly for the charts",
                                             supersedes=first.item.uid), metadata=A)
    state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task_id, items=[state_pb2.StateItemCandidate(
        type=state_pb2.STATE_ITEM_TYPE_CONSTRAINT, text="Charts must print in greyscale")]), metadata=A)
    memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
    content = b"month,sales\njan,10\n"
    artifact = memory.RegisterArtifact(mpb.RegisterArtifactRequest(
        task_id=task_id, type=memory_pb2.ARTIFACT_TYPE_FILE, path="out/sales.csv", description="the sales table",
        content=content), metadata=A).artifact
    memory.RecordEpisode(mpb.RecordEpisodeRequest(task_id=task_id, agent_id="charter",
                                                  action=memory_pb2.EPISODE_ACTION_ATTEMPTED,
                                                  approach="Plot with matplotlib", outcome="fonts missing"), metadata=A)
    tasks_stub(channel).RecordContextSnapshot(tpb.RecordContextSnapshotRequest(
        task_id=task_id, label="before compaction", content="We were drawing the January chart."), metadata=A)
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    # lifecycle: the phase timestamps the task went through
    page.wait_for_selector("#overview-body dl.lifecycle", timeout=TIMEOUT_MS)
    lifecycle = page.inner_text("#overview-body dl.lifecycle")
    assert "Execution started" in lifecycle and "0/1 items done" in lifecycle
    started = page.locator("#overview-body dl.lifecycle dt:text('Execution started') + dd").inner_text()
    assert started.strip() not in ("", "—")
    # structured state: the current items, and the retired decision with what replaced it and why
    page.wait_for_selector(f"#state-body tr[data-uid='{first.item.uid}']", timeout=TIMEOUT_MS)
    retired = page.locator(f"#state-body tr[data-uid='{first.item.uid}']").inner_text()
    assert "Use Chart.js for the charts" in retired and "Use Plotly for the charts" in retired
    assert "stated by the caller" in retired
    current = page.inner_text("#state-body")
    assert "Charts must print in greyscale" in current and "Superseded (1)" in current
    # the task-state YAML as the agent reads it: only the active decision
    page.wait_for_selector("#yaml-body pre.yaml:has-text('decisions_log')", timeout=TIMEOUT_MS)
    yaml_text = page.inner_text("#yaml-body pre.yaml")
    assert "Use Plotly for the charts" in yaml_text and "Chart.js" not in yaml_text
    # artifacts with their size and sha256, episodes, snapshots
    page.wait_for_selector("#artifacts-body :text('out/sales.csv')", timeout=TIMEOUT_MS)
    row = page.locator("#artifacts-body tr:has-text('out/sales.csv')")
    assert f"{len(content)}" in row.inner_text()
    assert row.locator("td.sha").get_attribute("title") == artifact.sha256 and len(artifact.sha256) == 64
    page.wait_for_selector("#episodes-body :text('Plot with matplotlib')", timeout=TIMEOUT_MS)
    assert "fonts missing" in page.inner_text("#episodes-body")
    page.wait_for_selector("#snapshots-body :text('before compaction')", timeout=TIMEOUT_MS)
    page.screenshot(path=str(screenshots / "task-record.png"), full_page=True)


# WCAG 2 contrast of every visible text run against the background it is drawn on (the nearest
# ancestor with an opaque background colour), computed in the page from the computed styles.
CONTRAST_SCRIPT = """
() => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number); return { r, g, b, a }; };
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = parse(getComputedStyle(e).backgroundColor);
    if (c && c.a >= 0.99) return c; } return { r: 255, g: 255, b: 255, a: 1 }; };
  const worst = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || Number(style.opacity) === 0 || el.closest("[hidden], svg")) continue;
    if (el.closest("button:disabled, input:disabled")) continue;  // WCAG exempts inactive controls
    const fg = parse(style.color), bg = background(el);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
    const ratio = (hi + 0.05) / (lo + 0.05);
    const large = parseFloat(style.fontSize) >= 24 || (parseFloat(style.fontSize) >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) worst.push(`${ratio.toFixed(2)} ${el.tagName}.${el.className}: ${node.textContent.trim().slice(0, 40)}`);
  }
  return worst;
}
"""


def test_every_page_has_readable_contrast(page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Contrast check", item("a", "First"), item("b", "Second", "a"))
    stub = tasks_stub(channel)
    stub.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="a",
                                                  status=task_pb2.PLAN_ITEM_STATUS_COMPLETED), metadata=A)
    set_status(channel, task_id, task_pb2.TASK_STATUS_EXECUTING)
    for route in ("tasks", f"task/{task_id}", "knowledge", "search"):
        open_view(page, web_url, route, KEY_A)
        assert page.evaluate(CONTRAST_SCRIPT) == [], route


def _conflicted(channel: grpc.Channel, name: str) -> tuple[str, str, str]:
    """A task whose two near decisions are an open question, nothing certain relating them: (task, held, rival)."""
    task_id = create_task(channel, name)
    state = state_service_pb2_grpc.StateServiceStub(channel)
    uids = []
    for text in ("Use Redis for caching", "Do not use Redis for caching"):
        upserted = state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task_id, items=[
            state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_DECISION, text=text)]), metadata=A)
        uids.append(upserted.report.results[0].uid)
    assert upserted.report.results[0].outcome == state_pb2.RECONCILE_OUTCOME_CONFLICTED
    return task_id, uids[0], uids[1]


def test_the_pages_data_asks_an_open_question_once_until_it_is_answered(web_url: str, channel: grpc.Channel) -> None:
    task_id, held, rival = _conflicted(channel, "Cache layer, web data")
    headers = {"x-taskmem-web": "1", "authorization": f"Bearer {KEY_A}"}
    status, progress = _post(f"{web_url}api/call/TaskService/GetProgress", {"task_id": task_id}, headers)
    assert status == 200
    [conflict] = progress["open_conflicts"]
    assert conflict["question"] == (f"does [{rival}] Do not use Redis for caching replace [{held}] Use Redis for"
                                    f" caching, stand beside it, or say the same?")
    assert [n["uid"] for n in conflict["items"]] == [held, rival] and not progress.get("decisions")
    status, _ = _post(f"{web_url}api/call/StateService/AnswerQuestion", {
        "task_id": task_id, "new_uid": rival, "old_uid": held, "answer": "QUESTION_ANSWER_SAME"}, headers)
    assert status == 200
    _, progress = _post(f"{web_url}api/call/TaskService/GetProgress", {"task_id": task_id}, headers)
    assert not progress.get("open_conflicts") and [n["uid"] for n in progress["decisions"]] == [held]


def test_a_person_answers_an_open_question_in_the_page_and_it_is_applied_over_grpc(
        page: Any, web_url: str, channel: grpc.Channel, screenshots: Path) -> None:
    task_id, held, rival = _conflicted(channel, "Cache layer, in the page")
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    question = page.locator("#section-state ul.conflicts li")
    question.wait_for(timeout=TIMEOUT_MS)
    assert "stand beside it, or say the same?" in question.inner_text()
    assert page.locator(f"tr[data-uid='{held}']").count() == 0
    page.screenshot(path=str(screenshots / "task-open-question.png"), full_page=True)
    page.click("button.answer[data-answer='QUESTION_ANSWER_REPLACES']")
    page.wait_for_selector(f"tr[data-uid='{rival}']", timeout=TIMEOUT_MS)  # B is a plain current item now
    assert page.locator("#section-state ul.conflicts").count() == 0
    items = state_service_pb2_grpc.StateServiceStub(channel).ListStateItems(spb.ListStateItemsRequest(
        task_id=task_id, include_superseded=True), metadata=A).items
    assert {i.uid: i.status for i in items} == {held: state_pb2.STATE_ITEM_STATUS_SUPERSEDED,
                                               rival: state_pb2.STATE_ITEM_STATUS_ACTIVE}
    assert next(i for i in items if i.uid == held).supersession_evidence.matched_by == "answered by person"


def test_the_plan_graph_and_overview_name_each_items_holder_and_follow_claims_live(
        page: Any, web_url: str, channel: grpc.Channel) -> None:
    task_id = create_task(channel, "Shared plan", item("lint", "Run the linter"), item("test", "Run the tests"))
    stub = tasks_stub(channel)
    stub.ClaimPlanItem(tpb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-1"), metadata=A)
    open_view(page, web_url, f"task/{task_id}", KEY_A)
    assert page.locator("#plan-graph g.node[data-id=lint]").get_attribute("data-holder") == "agent-1"
    assert "lint by agent-1" in page.inner_text("ul.holders")
    stub.ClaimPlanItem(tpb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-2"), metadata=A)
    page.wait_for_selector("#plan-graph g.node[data-id=test][data-holder=agent-2]", timeout=TIMEOUT_MS)
    page.focus("#plan-graph g.node[data-id=test]")
    page.keyboard.press("Enter")
    assert "Held by" in page.inner_text("#plan-item-detail") and "agent-2" in page.inner_text("#plan-item-detail")
