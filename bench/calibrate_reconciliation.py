"""Score structured-state reconciliation on the labelled pairs of tests/data/state_pairs*.yaml.

Embeds every pair with the built-in embedder (all-MiniLM-L6-v2 int8, no network, no LLM) and prints, per
set, the accuracy per expected outcome (merge, supersede, conflict, insert), overall, and the swallowed
count (a contradicting or replacing candidate merged away: the new value lost), for reconcile_candidates
with the thresholds configured for the model, on the calibration split, the held-out split (a fixed
quarter of the pairs, chosen by hash) and every other set. Every pair runs the real path:
prepare_candidates, then reconcile_candidates with the old item as the thread's state and the candidate
citing a message: the user's (with their words) or the agent's, as the pair says.

    .venv/bin/python bench/calibrate_reconciliation.py            # the table
    .venv/bin/python bench/calibrate_reconciliation.py --sweep    # grid search on the calibration split
    .venv/bin/python bench/calibrate_reconciliation.py --errors   # also list every misjudged pair
    .venv/bin/python bench/calibrate_reconciliation.py --pairs tests/data/new_set.yaml  # score another set
    .venv/bin/python bench/calibrate_reconciliation.py --errors-in "fresh3 (seen)"      # its misjudged pairs
    .venv/bin/python bench/calibrate_reconciliation.py --latency  # also the cost of one comparison
    .venv/bin/python bench/calibrate_reconciliation.py --band     # the uncertain band a model may adjudicate
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import itertools
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

from taskmem.config import reconciliation_thresholds  # noqa: E402
from taskmem.core.reconcile import (  # noqa: E402
    Adjudication,
    BatchMessage,
    Decision,
    ReconcileThresholds,
    prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.state_items import Candidate, StateItem, validate_item  # noqa: E402

PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs.yaml"
# Written after the rules were first fixed. Its failures were later read when the contrast rules
# (choice slot, identifiers, bare counts, changed values) were added, so it is no longer blind.
FRESH_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh.yaml"
# Written before those rules were run against it: measured once before and once after them
# (90.0 % -> 92.5 %), never used to change a rule.
FRESH2_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh2.yaml"
# Issue 11: written from new domains before its author read the rules; scored once before the
# rule changes of that issue (blind: merge 90.5, supersede 100, conflict 50.0, insert 59.1,
# overall 73.9 %), then used to change them (after: 95.2 / 100 / 87.5 / 95.5, 94.3 %): seen.
FRESH3_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh3.yaml"
# Issue 11: written after that tuning, scored once, no rule changed afterwards: the held-out figure
# (merge 81.8, supersede 100, conflict 72.7, insert 80.0, overall 83.3 %; the rules before issue 11
# scored 81.8 / 100 / 72.7 / 40.0, 73.8 % on it). Its misjudged pairs were listed once while the frame
# comparison (adjunct slots, rival sets, modality) was written, so it is seen now; after: 81.8 / 100 /
# 90.9 / 90.0, 90.5 %.
FRESH4_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh4.yaml"
# Issue 11 audit: written from new domains before its author read the rules or any misjudged pair,
# scored once (blind: merge 93.8, supersede 60.0, conflict 68.8, insert 87.5, overall 77.8 %); its
# supersede misses were then read and the retire-and-replace patterns added (after: 93.8 / 100 /
# 68.8 / 87.5, 87.3 %; no other set lost a pair), then its conflict misses for units as rival
# values, number + unit never a designator, before/during/after (93.8 / 100 / 87.5 / 87.5, 92.1 %): seen.
FRESH5_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh5.yaml"
# Issue 11 audit: written after the retire-and-replace patterns, scored without reading its misjudged
# pairs, before and after the unit rules (both: merge 87.5, supersede 81.2, conflict 43.8, insert
# 75.0, 71.9 %): held out then. The rules read off one set still do not carry to the next. Read as a
# dev set for the frame comparison (seen): 93.8 / 100 / 100 / 75.0, 92.2 %.
FRESH6_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh6.yaml"
# Issue 11 point 5, written blind by another engineer (no file under server/ or bench/ read) at the
# same time as fresh8. Scored once with the rules as they were (merge 85.0, supersede 90.0, conflict
# 15.0, insert 80.0, overall 67.5 %), then read and used to tune the frame comparison: seen. After it:
# 85.0 / 100 / 90.0 / 100, 93.8 %.
FRESH7_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh7.yaml"
# Written with fresh7, never opened by the engineer changing the rules while it was held out.
# Before the frame comparison: merge 85.0, supersede 85.0, conflict 40.0, insert 90.0, overall 75.0 %;
# after it, scored once: 85.0 / 95.0 / 55.0 / 95.0, 82.5 % (either order 78.3 %), under the goal
# (90 % overall, 85 % per class). Then its misjudged pairs were read for the property lexicon and the
# paraphrase signal (issue 11 point 5, second round): seen.
FRESH8_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh8.yaml"
# Issue 11 point 5, second round: written blind by another engineer while the property lexicon and the
# paraphrase signal were written, never opened by the engineer changing the rules: only its accuracy
# rows are printed (its pairs and misjudged pairs stay unread). Scored when it arrived: at the base of
# that round (26dcea9) merge 75.0, supersede 75.0, conflict 65.0, insert 95.0, overall 77.5 % (either
# order 78.3 %); with the first two changes of the round (final-object guard, attributive participles)
# 75.0 / 75.0 / 65.0 / 90.0, 76.2 % (either order 76.7 %). After the round (property lexicon, paraphrase
# signal, change language, levels and question kinds), scored once: 75.0 / 75.0 / 70.0 / 90.0, 77.5 %
# (either order 78.3 %): the general lexicons lifted every seen set but barely carried to this one, and
# the goal (90 % overall, 85 % per class) is not met on it.
FRESH9_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh9.yaml"
# Issue 11 point 5, third round: written blind on w24-pairs10 (sha256 07b9b6dd…) while another engineer
# trained a learned combiner over the rules' decisions, MiniLM vectors and word measures on the seen
# sets; never opened by them. Scored when it arrived, rules of the second round: merge 75.0, supersede
# 95.0, conflict 25.0, insert 60.0, overall 63.7 % (either order 53.3 %). With the combiner: 75 / 95 / 25
# / 65, 65.0 % (and fresh9 unchanged at 77.5 %), too little for 1,200 lines and a retrain after every
# rule change, so the combiner was not merged. Held out: only its accuracy rows may be printed.
FRESH10_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_fresh10.yaml"
# Issue 26: three sets of 80 pairs written blind on 2026-11-26 (sha256 7df5c3aa…, 21bf308f…, 328c7b01…) by an
# engineer who read nothing under server/, bench/ or tests/ but the earlier sets' header comments; each pair
# says who the candidate comes from (`said_by`) and, for the user, their words (`message`). All three were
# scored once on the landed rules before the redesign (blind): blind11 merge 70, supersede 0, conflict 55,
# insert 80, overall 51.2 %, swallowed 15; blind12 75 / 5 / 50 / 90, 55.0 %, swallowed 10; blind13 75 / 0 /
# 45 / 95, 53.8 %, swallowed 7. blind11 was then the dev set of the redesign (seen); blind12 and blind13 were
# held out, scored once after the last rule change (see test_reconcile_labelled_pairs for the figures).
BLIND11_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_blind11.yaml"
BLIND12_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_blind12.yaml"
BLIND13_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_blind13.yaml"
# A fourth set of 80, written blind the same way on 2026-11-26 after the redesign had landed (sha256 e61f4418…;
# genealogy, canning, tattooing, rafting, upholstery, aquariums, stamps, audio plugins, MkDocs, linting) and
# scored once on the landed rules: merge 40, supersede 65, conflict 50, insert 55, overall 52.5 %, swallowed 1.
# Held out: only its accuracy rows may be printed. Its errors, counted by rule without reading a pair: 25 of
# 38 are pairs no rule linked (similarity below merge): 10 conflicts, 6 supersedes and 11 merges inserted.
# Issue 26, round on what no rule links (developed on the seen sets, the held-out ones scored once after):
# no word-level signal told a restatement, change or contradiction in other words from a new item on the seen
# sets, so such a candidate stays an insert but, from rival_floor (0.45, the lowest score of a seen one), is
# put to the judge and names its possible rival in the write's response. Builtin outcomes are unchanged on
# every set; the --band ceiling (a perfect judge) rose on the held-out sets: fresh9 83.8 -> 93.8 %, fresh10
# 73.8 -> 82.5, blind12 87.5 -> 95.0, blind13 80.0 -> 91.2, blind14 62.5 -> 87.5 (band 32.5 -> 62.5 % of its
# pairs). Tried and removed: a user's message that says words only the old item holds and words only the
# candidate holds supersedes it (neutral on the seen sets; held out: blind12 merge 11 -> 9, blind13 insert
# 19 -> 18, blind14 merge 8 -> 7 and supersede 13 -> 14).
BLIND14_PAIRS_FILE = ROOT / "tests" / "data" / "state_pairs_blind14.yaml"
# The sets scored beside the calibration pairs: (label, file). Extra files come from --pairs.
EXTRA_SETS: tuple[tuple[str, Path], ...] = (
    ("fresh (seen)", FRESH_PAIRS_FILE),
    ("fresh2 (seen)", FRESH2_PAIRS_FILE),
    ("fresh3 (seen)", FRESH3_PAIRS_FILE),
    ("fresh4 (seen)", FRESH4_PAIRS_FILE),
    ("fresh5 (seen)", FRESH5_PAIRS_FILE),
    ("fresh6 (seen)", FRESH6_PAIRS_FILE),
    ("fresh7 (seen)", FRESH7_PAIRS_FILE),
    ("fresh8 (seen)", FRESH8_PAIRS_FILE),
    ("fresh9 (held out)", FRESH9_PAIRS_FILE),
    ("fresh10 (held out)", FRESH10_PAIRS_FILE),
    ("blind11 (seen)", BLIND11_PAIRS_FILE),
    ("blind12 (held out)", BLIND12_PAIRS_FILE),
    ("blind13 (held out)", BLIND13_PAIRS_FILE),
    ("blind14 (held out)", BLIND14_PAIRS_FILE),
)
OUTCOMES = ("merge", "supersede", "conflict", "insert")
HOLDOUT_SHARE = 4  # one pair in four (by hash) is held out


@dataclasses.dataclass(frozen=True)
class Pair:
    type_tag: str
    old: str
    new: str
    expect: str
    holdout: bool
    cosine: float = 0.0
    # Who the candidate comes from: "user" (its ref is the user's message `message`) or "agent" (recorded
    # from the agent's own work). Sets written before issue 26 have no such field: their candidates were
    # all taken as citing a user message, and their "conflict" meant that nobody asked for the change, which
    # is what an agent-recorded candidate is now; so there conflict pairs are "agent" and the rest "user".
    said_by: str = "user"
    message: str = ""


def load_pairs(path: Path = PAIRS_FILE) -> list[Pair]:
    """The labelled pairs; `holdout` is fixed by a hash of the pair, not chosen by hand."""
    raw = yaml.safe_load(path.read_text())["pairs"]
    pairs = []
    for entry in raw:
        key = f"{entry['type']}|{entry['old']}|{entry['new']}".encode()
        holdout = int(hashlib.sha256(key).hexdigest(), 16) % HOLDOUT_SHARE == 0
        said_by = entry.get("said_by") or ("agent" if entry["expect"] == "conflict" else "user")
        pairs.append(Pair(entry["type"], entry["old"], entry["new"], entry["expect"], holdout, said_by=said_by,
                          message=entry.get("message", "")))
    return pairs


def embed_pairs(pairs: Sequence[Pair], embed: Callable[[list[str]], np.ndarray]) -> list[Pair]:
    """The pairs with the cosine of old and new filled in (vectors are L2-normalised)."""
    old = embed([p.old for p in pairs])
    new = embed([p.new for p in pairs])
    cosines = (old * new).sum(axis=1)
    return [dataclasses.replace(p, cosine=float(c)) for p, c in zip(pairs, cosines, strict=True)]


def swap(pairs: Sequence[Pair]) -> list[Pair]:
    """The order-free pairs (merge, conflict, insert) with old and new swapped; the cosine is symmetric."""
    return [dataclasses.replace(p, old=p.new, new=p.old) for p in pairs if p.expect != "supersede"]


def judge(pair: Pair, thresholds: ReconcileThresholds) -> tuple[str, str]:
    """(outcome, rule) of reconcile_candidates for the pair's candidate against its old item."""
    decision = judge_decision(pair, thresholds)
    return decision.outcome.value, decision.rule


def judge_decision(pair: Pair, thresholds: ReconcileThresholds, oracle: bool = False) -> Decision:
    """reconcile_candidates' decision for the pair's candidate against its old item; with `oracle`, the
    pair's label is given as a model's answer (an override), as a perfect adjudicator would answer."""
    batch = {"m1": BatchMessage(created_at=2, from_user=pair.said_by == "user", text=pair.message)}
    old = validate_item(Candidate(pair.type_tag, pair.old, refs=("m0",))).item
    assert old is not None
    prepared = prepare_candidates([Candidate(pair.type_tag, pair.new, refs=("m1",))], batch)
    if not prepared.items:
        return prepared.drops[0]

    def similarity(a: StateItem, b: StateItem) -> float:
        return pair.cosine

    target = None if pair.expect == "insert" else old.uid
    overrides = {0: Adjudication(pair.expect, target, "oracle")} if oracle else None
    return reconcile_candidates(prepared, [old], similarity, thresholds, overrides=overrides).decisions[-1]


def print_band(sets: dict[str, Sequence[Pair]], thresholds: ReconcileThresholds) -> None:
    """Per set: the pairs core/reconcile marks uncertain (each would cost one model answer), the
    builtin accuracy inside and outside the band, the misjudged pairs it holds, and the ceiling: the
    accuracy when every in-band pair gets its label as the model's answer, applied through
    reconcile_candidates' overrides (what a perfect adjudicator could reach)."""
    print(f"{'uncertain band':<42}{'in band':>14}  {'right inside':>14}  {'right outside':>15}  "
          f"{'errors held':>11}  {'builtin':>7}  {'ceiling':>7}")
    for label, pairs in sets.items():
        inside = outside = right_in = right_out = adjudicated = 0
        for pair in pairs:
            decision = judge_decision(pair, thresholds)
            right = decision.outcome.value == pair.expect
            if decision.uncertain:
                inside, right_in = inside + 1, right_in + right
                adjudicated += judge_decision(pair, thresholds, oracle=True).outcome.value == pair.expect
            else:
                outside, right_out = outside + 1, right_out + right
        total, wrong = inside + outside, inside + outside - right_in - right_out
        held = inside - right_in

        def share(part: int, whole: int) -> str:
            return f"{part / whole:6.1%} ({part:>3}/{whole:<3})" if whole else f"{'n/a':>14}"
        print(f"{label:<42}{share(inside, total)}  {share(right_in, inside)}  {share(right_out, outside):>15}  "
              f"{f'{held}/{wrong}':>11}  {(right_in + right_out) / total:7.1%}  "
              f"{(right_out + adjudicated) / total:7.1%}")


def accuracy(pairs: Sequence[Pair], decide: Callable[[Pair], str]) -> dict[str, tuple[int, int]]:
    """Per expected outcome: (right, total)."""
    table = {outcome: [0, 0] for outcome in OUTCOMES}
    for pair in pairs:
        table[pair.expect][1] += 1
        table[pair.expect][0] += decide(pair) == pair.expect
    return {outcome: (right, total) for outcome, (right, total) in table.items()}


def swallowed(pairs: Sequence[Pair], decide: Callable[[Pair], str]) -> int:
    """Contradicting or replacing candidates (expected supersede or conflict) merged away: the new value lost."""
    return sum(1 for pair in pairs if pair.expect in ("supersede", "conflict") and decide(pair) == "merge")


def _row(name: str, scores: dict[str, tuple[int, int]], lost: int | None = None) -> str:
    cells = [f"{right / total:6.1%} ({right:>2}/{total:<2})" if total else "    n/a      " for right, total in
             (scores[o] for o in OUTCOMES)]
    right = sum(r for r, _ in scores.values())
    total = sum(t for _, t in scores.values())
    return f"{name:<42}" + "  ".join(cells) + f"  {right / total:6.1%}" + ("" if lost is None else f"  {lost:>9}")


def print_table(pairs: Sequence[Pair], thresholds: ReconcileThresholds, model: str,
                extra: dict[str, Sequence[Pair]] | None = None) -> None:
    splits = {"calibration": [p for p in pairs if not p.holdout], "held-out": [p for p in pairs if p.holdout],
              "all": list(pairs)}
    splits.update({label: list(chosen) for label, chosen in (extra or {}).items()})
    print(f"model {model}; {len(pairs)} pairs ({len(splits['held-out'])} held out); thresholds {thresholds}")
    print(f"{'':<42}" + "  ".join(f"{o:<13}" for o in OUTCOMES) + "  overall  swallowed")
    for split, chosen in splits.items():
        def decide(p: Pair) -> str:
            return judge(p, thresholds)[0]
        print(_row(f"reconcile_candidates, {split}", accuracy(chosen, decide), swallowed(chosen, decide)))


def sweep(pairs: Sequence[Pair], base: ReconcileThresholds) -> ReconcileThresholds:
    """Grid search on the calibration split only; best = highest worst-class accuracy, then mean."""
    calibration = [p for p in pairs if not p.holdout]
    grid: dict[str, Sequence[float]] = {
        "merge": (0.6, 0.62, 0.64, 0.66, 0.68, 0.7, 0.72, 0.75),
        "conflict": (0.3, 0.35, 0.4, 0.45, 0.5, 0.55),
        "change_floor": (0.55, 0.6, 0.65, 0.7, 0.8),
    }
    best: tuple[tuple[float, float], ReconcileThresholds] | None = None
    for values in itertools.product(*grid.values()):
        candidate = dataclasses.replace(base, **dict(zip(grid, values, strict=True)))
        scores = accuracy(calibration, lambda p: judge(p, candidate)[0])
        rates = [right / total for right, total in scores.values()]
        key = (min(rates), sum(rates) / len(rates))
        if best is None or key > best[0]:
            best = (key, candidate)
    assert best is not None
    print(f"best on the calibration split: worst class {best[0][0]:.1%}, mean {best[0][1]:.1%}: {best[1]}")
    return best[1]


def print_latency(pairs: Sequence[Pair], thresholds: ReconcileThresholds,
                  embed: Callable[[list[str]], np.ndarray]) -> None:
    """What one comparison costs on a write: judge() (prepare + reconcile_candidates with every lexical
    check) per pair, each pair once, so the texts' caches are cold, beside embedding one text."""
    costs = []
    for pair in pairs:
        start = time.perf_counter()
        judge(pair, thresholds)
        costs.append(time.perf_counter() - start)
    texts = [p.new for p in pairs[:200]]
    start = time.perf_counter()
    for text in texts:
        embed([text])
    per_text = (time.perf_counter() - start) / len(texts)
    ms = np.array(costs) * 1000
    print(f"per pair (cold caches, {len(ms)} pairs): reconcile_candidates mean {ms.mean():.2f} ms, "
          f"p95 {np.percentile(ms, 95):.2f} ms, max {ms.max():.2f} ms; embedding one text {per_text * 1000:.2f} ms")


def builtin_embed() -> tuple[str, Callable[[list[str]], np.ndarray]]:
    from taskmem.providers.embeddings import BuiltinEmbedder

    embedder = BuiltinEmbedder()
    return embedder.model_name, embedder.embed_blocking


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweep", action="store_true", help="grid-search thresholds on the calibration split")
    parser.add_argument("--errors", action="store_true",
                        help="list the calibration pairs reconcile_candidates gets wrong (held-out ones stay unseen)")
    parser.add_argument("--pairs", action="append", default=[], type=Path, metavar="FILE",
                        help="also score this labelled set (repeatable), e.g. a new blind set")
    parser.add_argument("--swapped", action="store_true",
                        help="also score every merge, conflict and insert pair with old and new swapped "
                             "(those outcomes do not depend on the order; supersede does)")
    parser.add_argument("--latency", action="store_true",
                        help="also time one comparison per pair (cold caches) beside embedding one text")
    parser.add_argument("--band", action="store_true",
                        help="also print the uncertain band (Decision.uncertain) per set: pairs in it, builtin "
                             "accuracy inside and outside, and the ceiling a perfect adjudicator could reach")
    parser.add_argument("--errors-in", action="append", default=[], metavar="LABEL",
                        help="list the misjudged pairs of this extra set (its label as printed)")
    args = parser.parse_args(argv)
    model, embed = builtin_embed()
    pairs = embed_pairs(load_pairs(), embed)
    sets = [*EXTRA_SETS, *((f"{path.stem} (--pairs)", path) for path in args.pairs)]
    extra = {label: embed_pairs([dataclasses.replace(p, holdout=True) for p in load_pairs(path)], embed)
             for label, path in sets}
    if args.swapped:
        extra.update({f"{label} swapped": swap(chosen) for label, chosen in [("all", pairs), *extra.items()]})
    thresholds = reconciliation_thresholds(model)
    if args.latency:  # first, while every text is new to the caches
        print_latency([*pairs, *(p for label, chosen in extra.items() for p in chosen if "swapped" not in label)],
                      thresholds, embed)
    if args.sweep:
        thresholds = sweep(pairs, thresholds)
    print_table(pairs, thresholds, model, extra)
    if args.band:
        print_band({"calibration": [p for p in pairs if not p.holdout], "held-out": [p for p in pairs if p.holdout],
                    "all": pairs, **extra}, thresholds)
    listed = [p for p in pairs if not p.holdout] if args.errors else []
    listed += [p for label in args.errors_in for p in extra[label]]
    for pair in listed:
        outcome, rule = judge(pair, thresholds)
        if outcome != pair.expect:
            print(f"  {pair.type_tag}: want {pair.expect}, got {outcome} ({rule}, cos {pair.cosine:.2f})"
                  f"\n      old: {pair.old}\n      new: {pair.new}")


if __name__ == "__main__":
    main()


__all__: list[Any] = ["Pair", "accuracy", "embed_pairs", "judge", "judge_decision", "load_pairs", "main",
                      "print_band", "swallowed"]
