"""A scripted OpenAI-compatible chat-completions endpoint on loopback for the Agents SDK: it calls the weather tool
once for a weather question, then answers from the conversation it is sent (so a test sees what history the agent
was given)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.json_http import json_server


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}


def answer(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    last = messages[-1]
    said = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    if last["role"] == "user" and "weather" in str(last["content"]):
        call = {"id": "call_1", "type": "function", "function": {"name": "get_weather",
                                                                 "arguments": json.dumps({"city": "Paris"})}}
        return _completion({"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls")
    if last["role"] == "tool":
        return _completion({"role": "assistant", "content": f"It is {last['content']} in Paris."}, "stop")
    name = "Ada" if "My name is Ada" in said else "unknown"
    return _completion({"role": "assistant", "content": f"Your name is {name}."}, "stop")


@contextmanager
def scripted_chat_model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """(base URL for AsyncOpenAI, the requests received)."""
    received: list[dict[str, Any]] = []

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        received.append(body)
        return answer(body)

    with json_server(reply) as base_url:
        yield f"{base_url}/v1", received
