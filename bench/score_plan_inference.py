"""Score plan-progress inference (taskmem.core.plan_inference) on labelled progress messages.

    .venv/bin/python bench/score_plan_inference.py [FILE.yaml ...] [--show-misses]

Each file (default: the tuning set and the held-out set under tests/data/) holds plans and
cases (a message and the ids it says are finished). A case is right when the claimed ids equal
the labelled ids exactly. Printed per file: cases right; finishing cases (label not empty) and
merely-mentioning cases (label empty) right; and, over (case, item) pairs, false completions
(an item claimed finished that the label does not finish) and missed completions.
"""

from __future__ import annotations

import pathlib
import sys
from typing import Any

import yaml

from taskmem.core.plan_inference import completion_claims
from taskmem.core.plans import PlanItem

DATA = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT_FILES = [DATA / "plan_progress_messages.yaml", DATA / "plan_progress_messages_fresh.yaml",
                 DATA / "plan_progress_messages_heldout.yaml", DATA / "plan_progress_messages_final.yaml"]


def load(path: pathlib.Path) -> tuple[dict[str, list[PlanItem]], list[dict[str, Any]]]:
    document = yaml.safe_load(path.read_text())
    plans = {name: [PlanItem(id=spec["id"], ordinal=n, title=spec["title"]) for n, spec in enumerate(specs)]
             for name, specs in document["plans"].items()}
    return plans, document["cases"]


def score(path: pathlib.Path, show_misses: bool) -> dict[str, int]:
    plans, cases = load(path)
    figures = dict(cases=len(cases), right=0, finishing=0, finishing_right=0, mentioning=0, mentioning_right=0,
                   false_completions=0, missed_completions=0)
    for case in cases:
        claimed = {c.item_id for c in completion_claims(plans[case["plan"]], case["message"])}
        expected = set(case["completes"])
        kind = "finishing" if expected else "mentioning"
        figures[kind] += 1
        figures["false_completions"] += len(claimed - expected)
        figures["missed_completions"] += len(expected - claimed)
        if claimed == expected:
            figures["right"] += 1
            figures[f"{kind}_right"] += 1
        elif show_misses:
            print(f"  MISS {case['message']!r}: claimed {sorted(claimed)}, labelled {sorted(expected)}")
    return figures


def main(argv: list[str]) -> None:
    show = "--show-misses" in argv
    files = [pathlib.Path(a) for a in argv if not a.startswith("--")] or [p for p in DEFAULT_FILES if p.exists()]
    for path in files:
        print(path.name)
        f = score(path, show)
        print(f"  exact {f['right']}/{f['cases']} ({100 * f['right'] / f['cases']:.1f} %)"
              f" | finishing {f['finishing_right']}/{f['finishing']}"
              f" | mentioning {f['mentioning_right']}/{f['mentioning']}"
              f" | false completions {f['false_completions']} | missed completions {f['missed_completions']}")


if __name__ == "__main__":
    main(sys.argv[1:])
