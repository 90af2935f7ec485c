"""The utility model: an OpenAI-compatible chat-completions client (OpenAI, Ollama, vLLM, llama.cpp server).

    model = chat_model_from_config(LlmSettings.of(config))        # None when llm_base_url / llm_model are unset
    text = await require_chat_model(model).complete(system, user, timeout=30)

`complete` sends one system and one user message and returns the assistant's text.
Each HTTP attempt is bounded by `llm_timeout_seconds`; transport errors, timeouts, 429
and 5xx answers are retried `llm_retries` times with exponential back-off; the optional
`timeout` argument bounds the whole call, retries included. Failures raise a subclass
of `ChatModelError` whose message says what went wrong and where:
`ChatModelNotConfigured` (names the settings), `ChatModelTimeout`,
`ChatModelUnavailable` (refused, HTTP error, or an answer with no text), and its
`ChatModelBudgetExhausted` when the meter refuses the call (the namespace's budget is used up).

With a `meter` set, each call is first admitted by it and then recorded with the tokens of the
answer's `usage`, its latency and outcome, for the work named by providers.model_meter.model_work.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx
import tenacity

from taskmem.core.model_usage import ModelCall, Outcome
from taskmem.providers.model_meter import ModelMeter, ModelWork, current_work, reported_usage
from taskmem.settings import LlmSettings


class ChatModelError(Exception):
    """The utility model could not give an answer."""


class ChatModelNotConfigured(ChatModelError):
    """No model is configured; `setting` names what to set."""

    def __init__(self, setting: str = "llm_base_url and llm_model") -> None:
        super().__init__(f"no utility model is configured: set {setting}")
        self.setting = setting


class ChatModelTimeout(ChatModelError):
    """The model did not answer in time (after retries)."""


class ChatModelUnavailable(ChatModelError):
    """The endpoint refused, failed, or answered something that is not a chat completion."""


class ChatModelBudgetExhausted(ChatModelUnavailable):
    """The namespace's model budget is used up: the model was not asked."""


class _Transient(Exception):
    """An answer worth retrying (429, 5xx)."""


class ChatModel:
    """One configured endpoint and model; one pooled HTTP client, opened on first use."""

    def __init__(self, base_url: str, model: str, *, api_key: str = "", timeout: float = 60.0,
                 retries: int = 2, tier: str = "utility") -> None:
        self.model = model
        # Which of the configured models this is ("utility", "second"), for metrics.
        self.tier = tier
        # Told (tier, model, outcome "ok" | "timeout" | "error", seconds) after every call; the server sets it.
        self.observe: Callable[[str, str, str, float], None] | None = None
        # Admits and records every call (usage.meter.StoredMeter); the server sets it.
        self.meter: ModelMeter | None = None
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._attempt_timeout = timeout
        self._retries = retries
        self._client: httpx.AsyncClient | None = None

    async def complete(self, system: str, user: str, *, timeout: float | None = None,
                       temperature: float = 0.0, max_tokens: int | None = None) -> str:
        """The assistant's reply to [system, user]; `timeout` (seconds) bounds the whole call, retries included."""
        work = current_work()
        if self.meter is not None and (why := await self.meter.refusal(work)):
            await self._record(work, Outcome.REFUSED, (0, 0), 0.0)
            raise ChatModelBudgetExhausted(why)
        started, outcome, usage = time.perf_counter(), Outcome.ERROR, (0, 0)
        try:
            text, usage = await self._complete(system, user, timeout, temperature, max_tokens)
            outcome = Outcome.OK
            return text
        except ChatModelTimeout:
            outcome = Outcome.TIMEOUT
            raise
        finally:
            seconds = time.perf_counter() - started
            if self.observe is not None:
                self.observe(self.tier, self.model, outcome.value, seconds)
            await self._record(work, outcome, usage, seconds)

    async def _record(self, work: ModelWork, outcome: Outcome, usage: tuple[int, int], seconds: float) -> None:
        if self.meter is not None:
            await self.meter.record([ModelCall(work.namespace, work.task_id, work.purpose, self.model, outcome,
                                               usage[0], usage[1], int(seconds * 1_000_000))])

    async def _complete(self, system: str, user: str, timeout: float | None, temperature: float,
                        max_tokens: int | None) -> tuple[str, tuple[int, int]]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": temperature,
            "stream": False,
        }
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        deadline = time.monotonic() + (timeout if timeout is not None else float("inf"))
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self._retries + 1),
            wait=tenacity.wait_exponential(multiplier=0.25, max=4.0),
            retry=tenacity.retry_if_exception_type((httpx.TransportError, _Transient)),
            reraise=True)
        try:
            async with asyncio.timeout(timeout):
                async for attempt in retrying:
                    with attempt:
                        remaining = max(0.001, deadline - time.monotonic())
                        return await self._post(body, min(self._attempt_timeout, remaining))
        except TimeoutError:
            raise ChatModelTimeout(f"{self.url} ({self.model}) did not answer within {timeout} s") from None
        except httpx.TimeoutException:
            raise ChatModelTimeout(f"{self.url} ({self.model}) did not answer within"
                                   f" {self._attempt_timeout} s ({self._retries + 1} attempts)") from None
        except (httpx.HTTPError, _Transient) as error:
            raise ChatModelUnavailable(f"{self.url} ({self.model}) failed: {error or type(error).__name__}") from None
        raise AssertionError("unreachable")

    async def _post(self, body: dict[str, Any], timeout: float) -> tuple[str, tuple[int, int]]:
        """The answer's text and its (prompt, completion) tokens from `usage` (0s when it reports none)."""
        if self._client is None:
            self._client = httpx.AsyncClient()
        response = await self._client.post(self.url, json=body, headers=self._headers, timeout=timeout)
        if response.status_code == 429 or response.status_code >= 500:
            raise _Transient(f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise ChatModelUnavailable(f"{self.url} answered HTTP {response.status_code}: {response.text[:200]}")
        try:
            answer = response.json()
            content = answer["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ChatModelUnavailable(f"{self.url} answered something that is not a chat completion") from None
        if not isinstance(content, str):
            raise ChatModelUnavailable(f"{self.url} answered a chat completion with no text")
        return content, reported_usage(answer, "completion_tokens")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def chat_model_from_config(settings: LlmSettings) -> ChatModel | None:
    """The configured utility model, or None when llm_base_url or llm_model is unset."""
    if not settings.base_url or not settings.model:
        return None
    return ChatModel(settings.base_url, settings.model, api_key=settings.api_key,
                     timeout=settings.timeout_seconds, retries=settings.retries)


def require_chat_model(model: ChatModel | None) -> ChatModel:
    """The model, or ChatModelNotConfigured naming the settings to set."""
    if model is None:
        raise ChatModelNotConfigured()
    return model
