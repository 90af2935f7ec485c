"""Plan validation (a DAG of known ids), carry-over across replans, and item status stamping."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskmem.core.errors import InvalidArgument, PlanCycle, PlanUnknownDependency
from taskmem.core.plans import ItemStatus, Plan, PlanItem, carry_over, set_item_status, validate_plan


def items(edges: dict[str, list[str]]) -> list[PlanItem]:
    return [PlanItem(id=i, ordinal=n, title=i, depends_on=deps) for n, (i, deps) in enumerate(edges.items())]


def test_a_dag_is_accepted() -> None:
    validate_plan(items({"a": [], "b": ["a"], "c": ["a", "b"]}))


def test_a_cycle_is_rejected_naming_an_item_on_it() -> None:
    with pytest.raises(PlanCycle) as raised:
        validate_plan(items({"a": ["c"], "b": ["a"], "c": ["b"], "d": []}))
    assert raised.value.metadata["item_id"] in {"a", "b", "c"}
    assert "->" in raised.value.message


def test_a_self_dependency_is_a_cycle() -> None:
    with pytest.raises(PlanCycle):
        validate_plan(items({"a": ["a"]}))


def test_an_unknown_dependency_names_the_item_and_its_field() -> None:
    with pytest.raises(PlanUnknownDependency) as raised:
        validate_plan(items({"a": [], "b": ["zzz"]}))
    assert raised.value.field == "plan[1].depends_on"
    assert raised.value.metadata["item_id"] == "b"


def test_duplicate_ids_are_rejected() -> None:
    plan = items({"a": []}) + [PlanItem(id="a", ordinal=1, title="again")]
    with pytest.raises(InvalidArgument) as raised:
        validate_plan(plan)
    assert raised.value.field == "plan[1].id"


@given(st.integers(min_value=2, max_value=40), st.data())
def test_any_chain_closed_into_a_ring_is_found(length: int, data: st.DataObject) -> None:
    ids = [f"s{i}" for i in range(length)]
    edges = {ids[i]: [ids[i - 1]] if i else [] for i in range(length)}
    validate_plan(items(edges))  # an open chain is fine
    closer = data.draw(st.integers(min_value=0, max_value=length - 2))
    edges[ids[closer]] = [*edges[ids[closer]], ids[-1]]
    with pytest.raises(PlanCycle):
        validate_plan(items(edges))


def test_replanning_carries_status_summary_issue_and_times_for_kept_ids() -> None:
    old = items({"build": [], "push": ["build"]})
    set_item_status(old[0], ItemStatus.IN_PROGRESS, 10)
    set_item_status(old[0], ItemStatus.COMPLETED, 25)
    old[0].summary, old[1].active_issue = "built v1.2.3", "registry down"
    new = carry_over(Plan("t", 1, old, 0), items({"build": [], "test": ["build"], "push": ["test"]}))
    build, test, push = new
    assert (build.status, build.summary, build.duration_us) == (ItemStatus.COMPLETED, "built v1.2.3", 15)
    assert test.status is ItemStatus.PENDING
    assert push.active_issue == "registry down" and push.depends_on == ["test"]


def test_item_times_are_stamped_by_status() -> None:
    item = PlanItem(id="a", ordinal=0, title="a")
    set_item_status(item, ItemStatus.IN_PROGRESS, 100)
    set_item_status(item, ItemStatus.FAILED, 160)
    assert (item.started_at, item.completed_at, item.duration_us) == (100, 160, 60)
    set_item_status(item, ItemStatus.IN_PROGRESS, 200)
    assert (item.started_at, item.completed_at, item.duration_us) == (200, None, None)
