"""The plan-progress judge's questions on a labelled set, recorded or answered through a stand-in model endpoint.

    .venv/bin/python bench/plan_judge_replay.py FILE.yaml --record QUESTIONS.jsonl
    .venv/bin/python bench/plan_judge_replay.py FILE.yaml --answers ANSWERS.jsonl

Every "may be finished" question the rules leave on the set's messages is put to the model path the server
uses (taskmem.plan_judge.PlanJudge, a real ChatModel over HTTP) with a loopback stand-in endpoint
(tests/support/scripted_llm) instead of a model. --record: the stand-in logs each prompt and answers nothing
(every question stays asked); QUESTIONS.jsonl gets one line per question, {"id", "system", "prompt"}, and
no label. --answers: the stand-in replies to each question with the "answer" of its id in ANSWERS.jsonl (a
reply as a model would write it: {"answer": "finished" | "not_finished" | "unsure", "reason": …}, or one of
those words); the judge reads the replies as the server would, and the set is scored without and with them
(bench/score_plan_inference.py's three outcomes). The ids are "<set>#<case index>:<item id>".
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
import sys
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # tests.support, the stand-in

from score_plan_inference import load, report, score  # noqa: E402

from taskmem.core.plan_inference import progress_findings  # noqa: E402
from taskmem.core.plan_judge import JUDGE_SYSTEM, StepAsked, Verdict, judge_prompt  # noqa: E402
from taskmem.plan_judge import PlanJudge  # noqa: E402
from taskmem.providers.chat import ChatModel  # noqa: E402
from tests.support.scripted_llm import scripted_llm  # noqa: E402


def questions(path: pathlib.Path) -> list[tuple[str, StepAsked]]:
    plans, cases = load(path)
    asked = []
    for number, case in enumerate(cases):
        items = plans[case["plan"]]
        titles = tuple(item.title for item in items)
        ordinal = {item.id: item.ordinal for item in items}
        said_by = str(case.get("said_by") or case.get("role") or "agent")
        for finding in progress_findings(items, case["message"]):
            if not finding.certain:
                asked.append((f"{path.stem}#{number}:{finding.item_id}",
                              StepAsked(ordinal[finding.item_id], titles[ordinal[finding.item_id]], titles,
                                        case["message"], said_by, finding.evidence, finding.why)))
    return asked


def reply_text(answer: Any) -> str:
    """An answers-file entry as the model's reply: an object as JSON, a bare verdict word wrapped in one."""
    if isinstance(answer, dict):
        return json.dumps(answer)
    text = str(answer or "")
    if text.strip().lower().replace(" ", "_") in Verdict.__members__.values():
        return json.dumps({"answer": text.strip().lower().replace(" ", "_")})
    return text


async def run(path: pathlib.Path, record: pathlib.Path | None, answers: dict[str, Any]) -> dict[str, str]:
    asked = questions(path)
    verdicts: dict[str, str] = {}
    with scripted_llm() as llm:
        current = [""]
        llm.answer = lambda system, user: reply_text(answers.get(current[0], "")) if answers else ""
        judge = PlanJudge(ChatModel(llm.base_url, "stand-in", retries=0), timeout=10.0)
        lines = []
        for question_id, step in asked:
            current[0] = question_id
            [judgement] = await judge.judge("default", "", [step])
            if judgement is not None:
                verdicts[question_id] = judgement.verdict.value
            lines.append(json.dumps({"id": question_id, "system": JUDGE_SYSTEM, "prompt": judge_prompt(step)},
                                    ensure_ascii=False))
        if record is not None:
            assert len(llm.user_prompts) == len(asked) and all(
                json.loads(line)["prompt"] == prompt for line, prompt in zip(lines, llm.user_prompts))
            record.write_text("".join(line + "\n" for line in lines))
            print(f"{len(lines)} questions recorded to {record} (the stand-in answered none)")
    return verdicts


def main(argv: list[str]) -> None:
    logging.getLogger("taskmem.plan_judge").setLevel(logging.ERROR)  # an unanswered question is the point here
    path = pathlib.Path(argv[0])
    record = pathlib.Path(argv[argv.index("--record") + 1]) if "--record" in argv else None
    answers: dict[str, Any] = {}
    if "--answers" in argv:
        for line in pathlib.Path(argv[argv.index("--answers") + 1]).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                answers[row["id"]] = row.get("answer", row.get("reply", ""))
    verdicts = asyncio.run(run(path, record, answers))
    report(f"{path.name} (rules alone)", score(path))
    if answers:
        print(f"  the stand-in replied to {sum(1 for a in answers.values() if a)} questions;"
              f" {len(verdicts)} replies read as an answer")
        report(f"{path.name} (with the judge's answers)", score(path, judge=verdicts))


if __name__ == "__main__":
    main(sys.argv[1:])
