"""A LangGraph thread's checkpoints are steps of its task in the web view, each an event of the task, and the
page follows new ones live."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import grpc
from langgraph.graph import END, START, StateGraph

from taskmem.v1 import event_pb2, task_service_pb2 as tpb, task_service_pb2_grpc
from taskmem_langgraph import TaskmemSaver
from tests.web.conftest import KEY_A
from tests.web.test_web_view import A, TIMEOUT_MS, open_view

PUT = event_pb2.EVENT_TYPE_CHECKPOINT_PUT


class Count(TypedDict):
    steps: Annotated[list[str], operator.add]


def graph(saver: TaskmemSaver):  # type: ignore[no-untyped-def]
    built = StateGraph(Count)
    built.add_node("first", lambda state: {"steps": ["first"]})
    built.add_node("second", lambda state: {"steps": ["second"]})
    built.add_edge(START, "first")
    built.add_edge("first", "second")
    built.add_edge("second", END)
    return built.compile(checkpointer=saver)


def test_each_checkpoint_is_an_event_and_a_step_on_the_task_page(page: Any, web_url: str, web_server: Any,
                                                                  channel: grpc.Channel) -> None:
    saver = TaskmemSaver(web_server.address, token=KEY_A)
    try:
        config = {"configurable": {"thread_id": "web-thread"}}
        graph(saver).invoke({"steps": []}, config)
        checkpoints = list(saver.list(config))
        assert [c.metadata["step"] for c in checkpoints] == [2, 1, 0, -1]
        task_id = saver.task_of("web-thread")
        assert task_id
        events = task_service_pb2_grpc.TaskServiceStub(channel).ListEvents(
            tpb.ListEventsRequest(task_ids=[task_id], types=[PUT], page_size=100), metadata=A).events
        assert [e.payload["checkpoint_id"] for e in events] == [c.config["configurable"]["checkpoint_id"]
                                                                 for c in reversed(checkpoints)]

        open_view(page, web_url, f"task/{task_id}", KEY_A)
        page.wait_for_selector("#checkpoints-body tr.checkpoint-step", timeout=TIMEOUT_MS)
        rows = page.locator("#checkpoints-body tr.checkpoint-step")
        assert rows.count() == 4
        assert [rows.nth(i).locator("td").first.inner_text() for i in range(4)] == ["2", "1", "0", "-1"]
        assert "input" in rows.nth(3).inner_text() and "web-thread" in rows.nth(0).inner_text()

        graph(saver).invoke({"steps": []}, config)  # the same thread runs again: the page follows live
        page.wait_for_selector("#checkpoints-body tr.checkpoint-step >> nth=7", timeout=TIMEOUT_MS)
        assert page.locator("#checkpoints-body tr.checkpoint-step").count() == 8
    finally:
        saver.close()
