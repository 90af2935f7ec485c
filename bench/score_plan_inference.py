"""Score plan-progress inference (taskmem.core.plan_inference) on labelled progress messages.

    .venv/bin/python bench/score_plan_inference.py [FILE.yaml ...] [--show-misses] [--stages] [--judge FILE.jsonl]
    .venv/bin/python bench/score_plan_inference.py --ablate [FILE.yaml ...]

Each file (default: every labelled set under tests/data/) holds plans and cases (a message and the
ids it says are finished). Three outcomes, printed per file:

- finished steps (labelled (message, step) pairs): **right** (completed), **asked** (a "may be finished"
  question about that step on that message), missed;
- **silently wrong**: (message, step) pairs completed that the label does not finish — the one error we do
  not accept (a resumed agent would skip unfinished work), and the messages that hold them;
- messages that finish nothing: **asked** (any question raised; should be ≤ 10 %) vs quiet.

--judge FILE.jsonl replays a judge's answers ({"id": "<file>#<case>:<item>", "answer": "finished" | "not_finished"
| "unsure"}) over the questions: a "finished" answer completes the step (wrong if the label disagrees), "not_finished"
dismisses it, anything else leaves it asked. --ablate empties each word list of core/plan_words in turn and prints,
over the files, how right / asked / silently wrong / asked-about-nothing move (a list that moves nothing is deleted).
--show-misses prints each case judged wrongly: never pass it for a set
that must stay unseen. --stages prints stage A's clause-level figures.
"""

from __future__ import annotations

import json
import pathlib
import re
import sys
from typing import Any

import yaml

from taskmem.core import plan_inference, plan_words
from taskmem.core.plan_inference import finished_clauses, progress_findings
from taskmem.core.plans import PlanItem

DATA = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data"
DEFAULT_FILES = sorted(DATA.glob("plan_progress_messages*.yaml"))


def load(path: pathlib.Path) -> tuple[dict[str, list[PlanItem]], list[dict[str, Any]]]:
    document = yaml.safe_load(path.read_text())
    plans = {name: [PlanItem(id=spec["id"], ordinal=n, title=spec["title"]) for n, spec in enumerate(specs)]
             for name, specs in document["plans"].items()}
    return plans, document["cases"]


def question_id(path: pathlib.Path, number: int, item_id: str) -> str:
    return f"{path.stem}#{number}:{item_id}"


def outcome(path: pathlib.Path, number: int, items: list[PlanItem], message: str,
            judge: dict[str, str] | None) -> tuple[set[str], set[str]]:
    """(completed, asked) for one message, after the judge's answers when there are any."""
    findings = progress_findings(items, message)
    completed = {f.item_id for f in findings if f.certain}
    asked = {f.item_id for f in findings if not f.certain}
    for item_id in sorted(asked) if judge is not None else ():
        answer = judge.get(question_id(path, number, item_id), "")
        if answer in ("finished", "not_finished"):
            asked.discard(item_id)
        if answer == "finished":
            completed.add(item_id)
    return completed, asked


def score(path: pathlib.Path, show_misses: bool = False, judge: dict[str, str] | None = None) -> dict[str, int]:
    plans, cases = load(path)
    f = dict.fromkeys(("cases", "steps", "right", "asked", "missed", "wrong", "wrong_messages", "finishing",
                       "finishing_found", "finishing_reached", "nothing", "nothing_asked", "nothing_quiet",
                       "asked_total", "finished_in_nothing", "labelled_with_finished"), 0)
    for number, case in enumerate(cases):
        items = plans[case["plan"]]
        completed, asked = outcome(path, number, items, case["message"], judge)
        expected = set(case["completes"])
        f["cases"] += 1
        f["asked_total"] += len(asked)
        wrong = completed - expected
        f["wrong"] += len(wrong)
        f["wrong_messages"] += bool(wrong)
        finished = len(finished_clauses(items, case["message"]))
        if expected:
            f["finishing"] += 1
            f["steps"] += len(expected)
            f["right"] += len(expected & completed)
            f["asked"] += len(expected & asked)
            f["missed"] += len(expected - completed - asked)
            f["finishing_found"] += expected <= completed
            f["finishing_reached"] += expected <= completed | asked
            f["labelled_with_finished"] += min(finished, len(expected))
        else:
            f["nothing"] += 1
            f["nothing_asked"] += bool(asked)
            f["nothing_quiet"] += not asked and not completed
            f["finished_in_nothing"] += finished
        if show_misses and (wrong or expected - completed or (asked and not expected)):
            print(f"  MISS {case['message']!r}: completed {sorted(completed)}, asked {sorted(asked)},"
                  f" labelled {sorted(expected)}")
    return f


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f} %" if b else "—"


def report(name: str, f: dict[str, int], stages: bool = False) -> None:
    print(name)
    if stages:
        print(f"  stage A: {f['finished_in_nothing']} finished clauses in messages that finish nothing"
              f" | labelled steps with a finished clause {f['labelled_with_finished']}/{f['steps']}")
    print(f"  finished steps {f['steps']}: right {f['right']}, asked {f['asked']}, missed {f['missed']}"
          f" (found or asked {pct(f['right'] + f['asked'], f['steps'])})"
          f" | silently wrong {f['wrong']} (in {f['wrong_messages']} messages)"
          f" | messages that finish nothing {f['nothing']}: asked {f['nothing_asked']} ({pct(f['nothing_asked'], f['nothing'])}),"
          f" quiet {f['nothing_quiet']} | questions {f['asked_total']}")


def totals(files: list[pathlib.Path]) -> dict[str, int]:
    figures = [score(path) for path in files]
    return {key: sum(f[key] for f in figures) for key in ("right", "asked", "wrong", "nothing_asked")}


def ablate(files: list[pathlib.Path]) -> None:
    base = totals(files)
    print(f"all lists: {base}")
    for name in sorted(n for n in vars(plan_words) if re.fullmatch(r"[A-Z_]+", n)):
        kept = getattr(plan_inference, name)
        setattr(plan_inference, name, type(kept)())
        try:
            moved = {key: value - base[key] for key, value in totals(files).items()}
        finally:
            setattr(plan_inference, name, kept)
        print(f"  without {name:16} ({len(kept):3} words): {moved if any(moved.values()) else 'no change'}")


def main(argv: list[str]) -> None:
    show, stages = "--show-misses" in argv, "--stages" in argv
    if "--ablate" in argv:
        ablate([pathlib.Path(a) for a in argv if not a.startswith("--")] or DEFAULT_FILES)
        return
    judge = None
    if "--judge" in argv:
        path = pathlib.Path(argv[argv.index("--judge") + 1])
        judge = {}
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                judge[row["id"]] = str(row.get("answer", "")).strip().lower()
        argv = [a for a in argv if a not in ("--judge", str(path))]
    files = [pathlib.Path(a) for a in argv if not a.startswith("--")] or DEFAULT_FILES
    total: dict[str, int] = {}
    for path in files:
        f = score(path, show, judge)
        report(path.name, f, stages)
        for key, value in f.items():
            total[key] = total.get(key, 0) + value
    if len(files) > 1:
        report("all", total)


if __name__ == "__main__":
    main(sys.argv[1:])
