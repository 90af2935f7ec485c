"""A loopback OpenAI-compatible chat-completions server that tests script: each request gets the
answer of the first rule whose marker appears in the prompt (or the default), and is recorded. With
`usage` set, answers carry it as the endpoint's `usage` (prompt_tokens, completion_tokens)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.json_http import json_server

Answer = Callable[[str, str], str]  # (system, user) -> assistant text


class ScriptedLLM:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer: Answer = lambda system, user: "[]"
        self.hold = threading.Event()  # while set, requests stall (a model that never answers)
        self.release = threading.Event()
        self.base_url = ""
        self.usage: tuple[int, int] | None = None  # (prompt_tokens, completion_tokens) of every answer

    @property
    def user_prompts(self) -> list[str]:
        return [r["messages"][1]["content"] for r in self.requests]

    def prompts_of(self, system_says: str) -> list[str]:
        """The user prompts of the requests whose system prompt holds `system_says`: a server asks the same model
        for other work at any time (the running summary after each message, the plan judge), so the last prompt
        of all need not be the one a test just caused."""
        return [r["messages"][1]["content"] for r in self.requests if system_says in r["messages"][0]["content"]]


@contextmanager
def scripted_llm() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        llm.requests.append(body)
        if llm.hold.is_set():
            llm.release.wait(60)
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        answer: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": llm.answer(system, user)}}]}
        if llm.usage is not None:
            prompt, completion = llm.usage
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}
        return answer

    with json_server(reply) as base_url:
        llm.base_url = f"{base_url}/v1"
        try:
            yield llm
        finally:
            llm.release.set()  # a held request finishes rather than outliving the test
