"""The model's question about a "may be finished" plan step (core/plan_inference), and reading its answer.

One question per step asked: the step (its number and title, among the plan's other steps), the whole
message and who said it, and the clause the rule read with why it was not certain. The model answers
finished, not_finished or unsure; unsure (or an answer that cannot be read) leaves the question open.
Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from collections.abc import Sequence

from taskmem.core.errors import ModelOutputInvalid

REASON_CHARS = 200

JUDGE_SYSTEM = """You decide whether a progress message says that one step of a plan is finished.

Answer "finished" only when the message says the step's work is done and its outcome happened, in any words
(a synonym, the result the step leaves, an abbreviation). Answer "not_finished" when the message says the step
is only partly done, still going on, pending, planned or booked for later, failed, handed over for someone
else's decision that has not come, only the work before the step's outcome (drafted, ordered, submitted), or
when the message is about something other than this step. Answer "unsure" when the message does not let you
tell.

Return ONLY a JSON object, no prose, no markdown fences:
{"answer": "finished" | "not_finished" | "unsure", "reason": "<one short sentence>"}"""


class Verdict(enum.StrEnum):
    FINISHED = "finished"
    NOT_FINISHED = "not_finished"
    UNSURE = "unsure"


@dataclasses.dataclass(frozen=True)
class StepAsked:
    """What the rule saw: the step, the plan around it, the message and who said it, and its evidence."""

    ordinal: int
    title: str
    plan_titles: tuple[str, ...]  # every step's title, in plan order
    message: str
    said_by: str  # user or agent
    evidence: str
    reason: str


@dataclasses.dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str


def judge_prompt(asked: StepAsked) -> str:
    steps = "\n".join(f"{n + 1}. {title}" for n, title in enumerate(asked.plan_titles))
    return (f"The plan:\n{steps}\n\n"
            f"The message, said by the {asked.said_by}:\n{json.dumps(asked.message, ensure_ascii=False)}\n\n"
            f"A rule read {json.dumps(asked.evidence, ensure_ascii=False)} as maybe finishing step"
            f" {asked.ordinal + 1} but was not certain ({asked.reason}).\n\n"
            f"Question: does this message say that step {asked.ordinal + 1}, {json.dumps(asked.title, ensure_ascii=False)},"
            f" is finished?")


_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_judgement(text: str) -> Judgement:
    """The model's answer. Raises ModelOutputInvalid when it holds no JSON object with a known answer."""
    match = _OBJECT.search(text)
    try:
        entry = json.loads(match.group()) if match else None
    except json.JSONDecodeError:
        entry = None
    answer = str(entry.get("answer", "")).strip().lower().replace(" ", "_").replace("-", "_") \
        if isinstance(entry, dict) else ""
    if answer not in Verdict.__members__.values():
        raise ModelOutputInvalid(f"no answer of {', '.join(Verdict)} in the model's reply: {text[:120]!r}")
    return Judgement(Verdict(answer), str(entry.get("reason") or "")[:REASON_CHARS])  # type: ignore[union-attr]


def asked_steps(titles: Sequence[str], ordinals: Sequence[int], message: str, said_by: str,
                evidence: Sequence[str], reasons: Sequence[str]) -> list[StepAsked]:
    return [StepAsked(o, titles[o], tuple(titles), message, said_by, e, r)
            for o, e, r in zip(ordinals, evidence, reasons, strict=True)]
