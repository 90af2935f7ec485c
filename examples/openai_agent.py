"""A small OpenAI Agents SDK agent whose conversation lives in a taskmem task.

The one-line change from the SDK's SQLiteSession is `session=TaskmemSession(task_id, address)`: every turn's
items (user input, tool calls, tool output, answers) are messages of the task's transcript, so the task's
record, web page, search and retention see the conversation, and a later run (another process, after a
restart) continues it.

    make run                                        # in another terminal
    .venv/bin/python examples/openai_agent.py --base-url http://127.0.0.1:11434/v1 --model llama3.2

Any OpenAI-compatible chat-completions endpoint serves (Ollama, vLLM, llama.cpp, a hosted API; the key from
OPENAI_API_KEY). TASKMEM_API_KEY is sent as the token when set.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

from taskmem_agents import TaskmemSession


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny" if city == "Paris" else "cloudy"


async def main(address: str, base_url: str, model: str) -> None:
    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=base_url, api_key=os.environ.get("OPENAI_API_KEY", "unused"))
    agent = Agent(name="assistant", instructions="Answer briefly.", tools=[get_weather],
                  model=OpenAIChatCompletionsModel(model=model, openai_client=client))
    token = os.environ.get("TASKMEM_API_KEY")
    session = await TaskmemSession.for_new_task("weather chat", address, token=token)
    first = await Runner.run(agent, "My name is Ada. What's the weather like in Paris?", session=session)
    print("agent: turn 1:", first.final_output)
    await session.close()
    # Another session object (another process would do the same) continues the task's conversation.
    again = TaskmemSession(session.session_id, address, token=token)
    second = await Runner.run(agent, "What is my name?", session=again)
    print("agent: turn 2:", second.final_output)
    print(f"agent: task {again.session_id} holds {len(await again.get_items())} items")
    await again.close()
    print("agent: done")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--base-url", required=True, help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1")
    parser.add_argument("--model", default="llama3.2")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.address, arguments.base_url, arguments.model))
