"""Which model a QueryTask question goes to first: a fixed, documented rule (no model involved).

1. A status question — it asks where the task stands — goes to the utility model: "where was
   I?", "what's next?", "what step am I on?", "what is done?", "status", "progress", "how far".
2. Otherwise a question that asks for analysis or planning goes to the second model: it
   contains why, should, analyse/analyze, plan/replan/planning, strategy, compare, decide,
   evaluate, recommend, risk, root cause, explain, trade-off, alternative, assess, diagnose,
   improve.
3. Anything else goes to the utility model.

Rule 1 wins over rule 2, so "what's next in the plan?" is a status question. The caller's
override (QueryTaskRequest.model) replaces the rule.
"""

from __future__ import annotations

import enum
import re


class ModelTier(enum.StrEnum):
    UTILITY = "MODEL_TIER_UTILITY"
    SECOND = "MODEL_TIER_SECOND"

    @property
    def label(self) -> str:
        return self.value.removeprefix("MODEL_TIER_").lower()


_STATUS = re.compile(
    r"\bwhere (was|am|are|were) (i|we)\b|\bwhat'?s next\b|\bwhat (is|comes) next\b|\bnext step\b"
    r"|\b(what|which) step\b|\bcurrent step\b|\bwhat('?s| is| was) (done|left|remaining|completed)\b"
    r"|\bstatus\b|\bprogress\b|\bhow far\b|\bwhat (am|are) (i|we) (doing|on)\b")
_ANALYSIS = re.compile(
    r"\b(why|should|analy[sz]\w*|plan|plans|planning|replan\w*|strateg\w*|compare|comparison|decide|evaluate"
    r"|recommend\w*|risks?|root cause|explain\w*|trade-?offs?|alternatives?|assess\w*|diagnos\w*|improve\w*)\b")


def route_question(question: str) -> ModelTier:
    text = question.lower()
    if _STATUS.search(text):
        return ModelTier.UTILITY
    if _ANALYSIS.search(text):
        return ModelTier.SECOND
    return ModelTier.UTILITY
