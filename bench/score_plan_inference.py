"""Score plan-progress inference (taskmem.core.plan_inference) on labelled progress messages.

    .venv/bin/python bench/score_plan_inference.py [FILE.yaml ...] [--show-misses] [--stages]

Each file (default: every labelled set under tests/data/) holds plans and cases (a message and the
ids it says are finished). Printed per file, in the terms the issues use:

- wrong completions: (message, item) pairs claimed finished that the label does not finish, and
  the messages that hold them — the harmful error (a resumed agent would skip unfinished work);
- finishing messages (label not empty) found (every labelled item claimed) and exact (claimed ==
  labelled);
- messages that finish nothing (label empty) left untouched; missed completions; exact overall.

--show-misses prints each case judged wrongly: never pass it for a set that must stay unseen.
--stages prints, per file, stage A's clause-level figures: the finished clauses in messages that finish
nothing (each a wrong completion waiting for a link) and how many labelled steps have a finished clause
in their message at all (the ceiling any link can reach).
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

import yaml

from taskmem.core.plan_inference import completion_claims, finished_clauses
from taskmem.core.plans import PlanItem

DATA = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT_FILES = sorted(DATA.glob("plan_progress_messages*.yaml"))


def load(path: pathlib.Path) -> tuple[dict[str, list[PlanItem]], list[dict[str, Any]]]:
    document = yaml.safe_load(path.read_text())
    plans = {name: [PlanItem(id=spec["id"], ordinal=n, title=spec["title"]) for n, spec in enumerate(specs)]
             for name, specs in document["plans"].items()}
    return plans, document["cases"]


def score(path: pathlib.Path, show_misses: bool = False) -> dict[str, int]:
    plans, cases = load(path)
    figures = dict(cases=len(cases), right=0, finishing=0, found=0, finishing_right=0, mentioning=0,
                   mentioning_right=0, wrong_completions=0, wrong_messages=0, missed_completions=0,
                   finished_in_nothing=0, nothing_messages_with_finished=0, labelled=0, labelled_with_finished=0)
    for case in cases:
        items = plans[case["plan"]]
        claimed = {c.item_id for c in completion_claims(items, case["message"])}
        finished = len(finished_clauses(items, case["message"]))
        if case["completes"]:
            figures["labelled"] += len(case["completes"])
            figures["labelled_with_finished"] += min(finished, len(case["completes"]))
        else:
            figures["finished_in_nothing"] += finished
            figures["nothing_messages_with_finished"] += bool(finished)
        expected = set(case["completes"])
        kind = "finishing" if expected else "mentioning"
        figures[kind] += 1
        figures["wrong_completions"] += len(claimed - expected)
        figures["wrong_messages"] += bool(claimed - expected)
        figures["missed_completions"] += len(expected - claimed)
        figures["found"] += bool(expected) and expected <= claimed
        if claimed == expected:
            figures["right"] += 1
            figures[f"{kind}_right"] += 1
        elif show_misses:
            print(f"  MISS {case['message']!r}: claimed {sorted(claimed)}, labelled {sorted(expected)}")
    return figures


def main(argv: list[str]) -> None:
    show, stages = "--show-misses" in argv, "--stages" in argv
    files = [pathlib.Path(a) for a in argv if not a.startswith("--")] or DEFAULT_FILES
    for path in files:
        print(path.name)
        f = score(path, show)
        if stages:
            print(f"  stage A: {f['finished_in_nothing']} finished clauses in {f['nothing_messages_with_finished']}"
                  f" of {f['mentioning']} messages that finish nothing | labelled steps with a finished clause"
                  f" {f['labelled_with_finished']}/{f['labelled']}")
        print(f"  wrong completions {f['wrong_completions']} (in {f['wrong_messages']} messages)"
              f" | finishing found {f['found']}/{f['finishing']}, exact {f['finishing_right']}/{f['finishing']}"
              f" | finishing nothing left untouched {f['mentioning_right']}/{f['mentioning']}"
              f" | missed completions {f['missed_completions']} | exact {f['right']}/{f['cases']}")


if __name__ == "__main__":
    main(sys.argv[1:])
