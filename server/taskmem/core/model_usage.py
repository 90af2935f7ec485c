"""What the server's own model calls cost: one record per call, a task's sums, and the namespace budget.

Every call to a chat model or an embedding endpoint is recorded with its model, what it was for, the
tokens the endpoint's `usage` reported, its latency and outcome, and the task and namespace it worked
for. GetTaskUsage adds the tokens agents report on their actions, so a task's whole model cost is one
call. A namespace may have a token budget: once its calls have used it, further model work is refused
(the write that wanted it still succeeds; the model step is skipped and says so).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence


class Purpose(enum.StrEnum):
    """What a model call was for (ModelCallPurpose on the wire)."""

    STATE_EXTRACTION = "state_extraction"
    MEMORY_EXTRACTION = "memory_extraction"
    RUNNING_SUMMARY = "running_summary"
    ADJUDICATION = "adjudication"
    QUERY = "query"
    EMBEDDING = "embedding"


class Outcome(enum.StrEnum):
    OK = "ok"
    TIMEOUT = "timeout"
    ERROR = "error"
    REFUSED = "refused"  # the namespace's budget was used up: the model was not asked


@dataclasses.dataclass(frozen=True)
class ModelCall:
    """One call as it is recorded; task_id is "" for work of no task (e.g. a search's query embedding),
    purpose None for a call whose caller named none."""

    namespace: str
    task_id: str
    purpose: Purpose | None
    model: str
    outcome: Outcome
    tokens_in: int
    tokens_out: int
    latency_us: int

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


@dataclasses.dataclass(frozen=True)
class UsageLine:
    """A task's calls of one model and purpose, summed."""

    model: str
    purpose: Purpose | None
    calls: int
    failed_calls: int
    refused_calls: int
    tokens_in: int
    tokens_out: int
    latency_us: int


@dataclasses.dataclass(frozen=True)
class Budget:
    """A namespace's token budget (tokens in plus out of its model calls) and what is used of it."""

    limit_tokens: int
    used_tokens: int

    @property
    def exhausted(self) -> bool:
        return self.used_tokens >= self.limit_tokens


@dataclasses.dataclass(frozen=True)
class TaskUsage:
    """GetTaskUsage: the server's model calls for a task beside the tokens its agents reported."""

    task_id: str
    lines: list[UsageLine]
    agent_tokens_in: int
    agent_tokens_out: int
    actions: int
    budget: Budget | None

    @property
    def model_tokens_in(self) -> int:
        return sum(line.tokens_in for line in self.lines)

    @property
    def model_tokens_out(self) -> int:
        return sum(line.tokens_out for line in self.lines)


@dataclasses.dataclass(frozen=True)
class Share:
    """Part of one call's work done for a namespace and task (the embedding backlog's batches span both),
    weighed by how much of the input was theirs (at least 1)."""

    namespace: str
    task_id: str
    weight: int


def apportion(call: ModelCall, shares: Sequence[Share]) -> list[ModelCall]:
    """The call as one record per (namespace, task) of the shares, its tokens and latency split by weight in
    whole units (the remainders to the largest shares first), so the parts add up to the call. No shares: the
    call as it is."""
    weights: dict[tuple[str, str], int] = {}
    for share in shares:
        owner = (share.namespace, share.task_id)
        weights[owner] = weights.get(owner, 0) + max(1, share.weight)
    if not weights:
        return [call]
    owners = sorted(weights, key=lambda owner: (-weights[owner], owner))
    ordered = [weights[owner] for owner in owners]
    splits = [_split(value, ordered) for value in (call.tokens_in, call.tokens_out, call.latency_us)]
    return [dataclasses.replace(call, namespace=namespace, task_id=task_id, tokens_in=splits[0][n],
                                tokens_out=splits[1][n], latency_us=splits[2][n])
            for n, (namespace, task_id) in enumerate(owners)]


def _split(value: int, weights: Sequence[int]) -> list[int]:
    total = sum(weights)
    parts = [value * weight // total for weight in weights]
    for n in range(value - sum(parts)):  # fewer than len(weights): the largest shares get one more
        parts[n] += 1
    return parts


def refusal(namespace: str, budget: Budget) -> str:
    """What a refused model step says, wherever it is reported (event, response, log)."""
    return (f"the model budget of namespace {namespace!r} is used up ({budget.used_tokens} of"
            f" {budget.limit_tokens} tokens; model_token_budgets): the model step was skipped")
