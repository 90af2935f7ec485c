"""Which item a claimer is handed (core/claims), with no database."""

from __future__ import annotations

import pytest

from taskmem.core.claims import DEFAULT_LEASE_US, Claim, ClaimFilter, check_holder, choose_item, lease_us
from taskmem.core.errors import ClaimNotHeld, FailedPrecondition, InvalidArgument
from taskmem.core.plans import ItemStatus, PlanItem


def item(item_id: str, *depends_on: str, status: ItemStatus = ItemStatus.PENDING, stage: str = "") -> PlanItem:
    return PlanItem(id=item_id, ordinal=0, title=item_id, status=status, depends_on=list(depends_on), stage=stage)


def test_the_first_pending_item_with_done_dependencies_and_no_holder_is_chosen() -> None:
    items = [item("a", status=ItemStatus.COMPLETED), item("b", "a"), item("c", "a"), item("d", "c")]
    chosen, remaining = choose_item(items, {"b": "agent-1"}, ClaimFilter())
    assert chosen is not None and chosen.id == "c"
    assert remaining == 2  # b (held) and d (waits on c)


def test_a_skipped_dependency_counts_as_done_and_a_failed_one_does_not() -> None:
    items = [item("a", status=ItemStatus.SKIPPED), item("b", status=ItemStatus.FAILED), item("c", "a", "b"), item("d", "a")]
    chosen, remaining = choose_item(items, {}, ClaimFilter())
    assert chosen is not None and chosen.id == "d" and remaining == 1


def test_nothing_ready_and_nothing_open_means_drained() -> None:
    assert choose_item([item("a", status=ItemStatus.COMPLETED)], {}, ClaimFilter()) == (None, 0)


def test_filters_limit_both_the_choice_and_the_count() -> None:
    items = [item("a", stage="build"), item("b", stage="test"), item("c", stage="test")]
    chosen, remaining = choose_item(items, {}, ClaimFilter(stages=frozenset({"test"})))
    assert chosen is not None and chosen.id == "b" and remaining == 1


def test_a_named_item_that_is_not_ready_says_why() -> None:
    items = [item("a"), item("b", "a"), item("c", status=ItemStatus.COMPLETED)]
    with pytest.raises(FailedPrecondition, match="held by 'x'") as held:
        choose_item(items, {"a": "x"}, ClaimFilter(item_id="a"))
    assert held.value.metadata["holder_id"] == "x"
    with pytest.raises(FailedPrecondition, match="waits on a"):
        choose_item(items, {}, ClaimFilter(item_id="b"))
    with pytest.raises(FailedPrecondition, match="not PENDING"):
        choose_item(items, {}, ClaimFilter(item_id="c"))


def test_only_the_holder_passes_the_holder_check_and_the_refusal_names_who_holds_it() -> None:
    claim = Claim("tsk", "a", "agent-2", 0, 10)
    assert check_holder("a", "agent-2", claim) is claim
    with pytest.raises(ClaimNotHeld) as refused:
        check_holder("a", "agent-1", claim)
    assert refused.value.metadata == {"holder_id": "agent-2"} and "held by 'agent-2'" in refused.value.message
    with pytest.raises(ClaimNotHeld, match="nobody holds it"):
        check_holder("a", "agent-1", None)


def test_a_lease_defaults_to_thirty_seconds_and_stays_within_a_second_and_an_hour() -> None:
    assert lease_us("lease", None) == DEFAULT_LEASE_US == 30_000_000
    assert lease_us("lease", 1_000_000) == 1_000_000
    for bad in (999_999, 3_600_000_001):
        with pytest.raises(InvalidArgument):
            lease_us("lease", bad)
