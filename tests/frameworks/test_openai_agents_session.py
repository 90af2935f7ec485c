"""TaskmemSession is the OpenAI Agents SDK's memory: the SDK's Runner, with a scripted model on loopback, keeps a
two-turn conversation in the task's transcript across a server restart; get_items with limit, pop_item and
clear_session behave as the Session protocol says, and the transcript keeps what the session retracts."""

from __future__ import annotations


import grpc
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from agents.memory import Session
from openai import AsyncOpenAI

from taskmem.v1 import task_pb2, task_service_pb2 as tpb, task_service_pb2_grpc
from taskmem_agents import TaskmemSession
from tests.frameworks.scripted_chat_model import scripted_chat_model
from tests.support.server_process import ServerProcess

set_tracing_disabled(True)  # nothing leaves the machine


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny" if city == "Paris" else "unknown"


def agent(base_url: str) -> Agent:
    model = OpenAIChatCompletionsModel(model="scripted", openai_client=AsyncOpenAI(base_url=base_url, api_key="test"))
    return Agent(name="assistant", instructions="Be brief.", model=model, tools=[get_weather])


async def transcript(address: str, task_id: str) -> list[tuple[int, str]]:
    async with grpc.aio.insecure_channel(address) as channel:
        found = await task_service_pb2_grpc.TaskServiceStub(channel).ListMessages(
            tpb.ListMessagesRequest(task_id=task_id, page_size=500, kinds=[task_pb2.MESSAGE_KIND_TEXT]))
    return [(m.role, m.content) for m in found.messages]


async def test_the_runner_keeps_two_turns_in_the_task_across_a_server_restart(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    with scripted_chat_model() as (base_url, requests):
        session = await TaskmemSession.for_new_task("weather chat", address)
        assert isinstance(session, Session)
        first = await Runner.run(agent(base_url), "My name is Ada. What's the weather like?", session=session)
        assert first.final_output == "It is sunny in Paris."
        task_id = session.session_id
        items = await session.get_items()
        assert [item.get("type", "message") for item in items] == [
            "message", "function_call", "function_call_output", "message"]
        assert items[0] == {"content": "My name is Ada. What's the weather like?", "role": "user"}
        await session.close()

        fresh_server.restart()

        again = TaskmemSession(task_id, address)
        second = await Runner.run(agent(base_url), "What is my name?", session=again)
        assert second.final_output == "Your name is Ada."
        sent = requests[-1]["messages"]  # the last turn's request carried the first turn from taskmem
        assert any("My name is Ada" in str(m.get("content")) for m in sent)
        assert any(m.get("role") == "tool" and m.get("content") == "sunny" for m in sent)
        assert len(await again.get_items()) == 6

        said = await transcript(address, task_id)
        assert said == [
            (task_pb2.MESSAGE_ROLE_USER, "My name is Ada. What's the weather like?"),
            (task_pb2.MESSAGE_ROLE_AGENT, 'calls get_weather({"city": "Paris"})'),
            (task_pb2.MESSAGE_ROLE_TOOL, "sunny"), (task_pb2.MESSAGE_ROLE_AGENT, "It is sunny in Paris."),
            (task_pb2.MESSAGE_ROLE_USER, "What is my name?"), (task_pb2.MESSAGE_ROLE_AGENT, "Your name is Ada.")]
        await again.close()


async def test_limit_pop_and_clear_follow_the_session_protocol_and_the_transcript_keeps_everything(
        server: ServerProcess) -> None:
    session = await TaskmemSession.for_new_task("protocol", server.address)
    try:
        assert await session.get_items() == [] and await session.pop_item() is None
        items = [{"role": "user", "content": f"m{n}"} for n in range(5)]
        await session.add_items(items[:3])
        await session.add_items(items[3:])
        assert await session.get_items() == items
        assert await session.get_items(limit=2) == items[3:]
        assert await session.pop_item() == items[4]
        assert await session.get_items() == items[:4]
        exact = {"type": "function_call", "name": "f", "arguments": "{\"x\": 1.0}", "call_id": "c", "id": None}
        await session.add_items([exact])
        assert (await session.get_items(limit=1)) == [exact]
        await session.clear_session()
        assert await session.get_items() == [] and await session.pop_item() is None
        said = await transcript(server.address, session.session_id)
        assert [content for _, content in said] == ["m0", "m1", "m2", "m3", "m4", 'calls f({"x": 1.0})']
    finally:
        await session.close()


async def test_two_sessions_are_two_tasks_and_do_not_see_each_other(server: ServerProcess) -> None:
    one = await TaskmemSession.for_new_task("one", server.address)
    two = await TaskmemSession.for_new_task("two", server.address)
    try:
        await one.add_items([{"role": "user", "content": "for one"}])
        assert await two.get_items() == [] and len(await one.get_items()) == 1
    finally:
        await one.close()
        await two.close()
