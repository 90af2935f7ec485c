"""A small LangGraph graph whose checkpoints and long-term memory live in taskmem.

The graph drafts, reviews and revises an answer; the one-line change from LangGraph's in-memory saver is
`checkpointer=TaskmemSaver(address)` (and `store=TaskmemStore(address)` for memory across threads). The
thread becomes a taskmem task: each checkpoint is an event and a step on the task's web page, the thread
resumes after a restart, and copy_thread forks the task.

    make run                                        # in another terminal
    .venv/bin/python examples/langgraph_graph.py [--address 127.0.0.1:50051]

TASKMEM_API_KEY is sent as the token when set.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import os
import uuid
from typing import Annotated, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from taskmem_langgraph import TaskmemSaver, TaskmemStore


class Draft(TypedDict):
    question: str
    notes: Annotated[list[str], operator.add]
    answer: str


def draft(state: Draft, *, store: BaseStore) -> dict[str, object]:
    remembered = store.search(("facts",), query=state["question"], limit=1)
    known = remembered[0].value["text"] if remembered else "nothing yet"
    return {"answer": f"Draft answer to {state['question']!r} (known: {known})", "notes": ["drafted"]}


def review(state: Draft) -> dict[str, object]:
    return {"notes": ["reviewed: too long" if len(state["answer"]) > 40 else "reviewed: fine"]}


def revise(state: Draft, *, store: BaseStore) -> dict[str, object]:
    store.put(("facts",), "last-question", {"text": state["question"]})
    return {"answer": state["answer"][:40], "notes": ["revised"]}


def build(saver: TaskmemSaver, store: TaskmemStore):  # type: ignore[no-untyped-def]
    graph = StateGraph(Draft)
    graph.add_node("draft", draft)
    graph.add_node("review", review)
    graph.add_node("revise", revise)
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "review")
    graph.add_edge("review", "revise")
    graph.add_edge("revise", END)
    return graph.compile(checkpointer=saver, store=store)


async def main(address: str) -> None:
    token = os.environ.get("TASKMEM_API_KEY")
    saver, store = TaskmemSaver(address, token=token), TaskmemStore(address, token=token)
    graph = build(saver, store)
    config = {"configurable": {"thread_id": f"example-{uuid.uuid4().hex[:8]}"}}
    result = await graph.ainvoke({"question": "Which database should the ledger use?", "notes": []}, config)
    print("graph: answer:", result["answer"])
    history = [checkpoint async for checkpoint in saver.alist(config)]
    task_id = await saver.atask_of(config["configurable"]["thread_id"])
    print(f"graph: thread {config['configurable']['thread_id']} is task {task_id} (its web page lists each step)")
    for step in reversed(history):
        print(f"graph: checkpoint step {step.metadata.get('step')} ({step.metadata.get('source')})")
    # The same thread goes on from its last checkpoint: the notes keep growing.
    again = await graph.ainvoke({"question": "And the cache?", "notes": []}, config)
    print("graph: notes:", ", ".join(again["notes"]))
    fork = {"configurable": {"thread_id": f"{config['configurable']['thread_id']}-fork"}}
    await saver.acopy_thread(config["configurable"]["thread_id"], fork["configurable"]["thread_id"])
    forked = await saver.aget_tuple(fork)
    copies = len([c async for c in saver.alist(fork)])
    print(f"graph: copied to thread {fork['configurable']['thread_id']}, task {await saver.atask_of(fork['configurable']['thread_id'])}"
          f" (a fork of {task_id}): {copies} checkpoints, latest {'found' if forked else 'missing'}")
    await saver.aclose()
    await store.aclose()
    print("graph: done")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default="127.0.0.1:50051")
    asyncio.run(main(parser.parse_args().address))
