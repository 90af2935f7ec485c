"""Plan-progress inference core: which items a message says are finished, and which claims may apply."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from taskmem.core.messages import Kind, Role
from taskmem.core.plan_inference import (MatchedBy, applicable_claims, completion_claims, reads_message,
                                         stem)
from taskmem.core.plans import ItemStatus, PlanItem, StatusSource

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"


def plan(*titles: str, chain: bool = False) -> list[PlanItem]:
    ids = [f"s{n + 1}" for n in range(len(titles))]
    return [PlanItem(id=ids[n], ordinal=n, title=t, depends_on=[ids[n - 1]] if chain and n else [])
            for n, t in enumerate(titles)]


DEPLOY = plan("Build Docker image", "Push image to registry", "SSH into server", "Pull image and run container")


def claimed(message: str, items: list[PlanItem] = DEPLOY) -> list[str]:
    return [c.item_id for c in completion_claims(items, message)]


@pytest.mark.parametrize("message, expected", [
    ("Step 2 done — pushed to ghcr.io", ["s2"]),
    ("steps 1-3 complete", ["s1", "s2", "s3"]),
    ("Steps 1, 2 and 4 are done", ["s1", "s2", "s4"]),
    ("Step two finished", ["s2"]),
    ("Done with the second step", ["s2"]),
    ("The last step is done", ["s4"]),
    ("Step 2/4 ✅", ["s2"]),
    ("[x] step 3", ["s3"]),
    ("Step 1 done; starting step 2", ["s1"]),
    ("Finished step 1 and started step 2", ["s1"]),
    ("Step 1 and step 2 done", ["s1", "s2"]),
    ("Step 3 done without errors", ["s3"]),
])
def test_a_finished_step_is_claimed_by_number_or_ordinal(message: str, expected: list[str]) -> None:
    assert claimed(message) == expected


@pytest.mark.parametrize("message", [
    "Starting step 2", "Step 2 is failing", "Will push after build", "Is step 2 done?", "Step 2 isn't done",
    "Step 2 not done yet", "Step 2 almost done", "Step 2 is 60% done", "Retrying step 2", "Skipping step 2",
    "Once step 2 is done, start step 3", "If step 2 is done, continue", "Step 2 will be done soon",
    "Working on step 2", "Step 2 blocked: registry down", "Step 2 started at 10:04", "Step 2 failed",
    "Waiting for step 2", "Step 2: pushing to registry...", "Next: step 2", "Step 2 unfinished",
    "Step 2 done with errors",
])
def test_a_step_mentioned_without_being_finished_is_not_claimed(message: str) -> None:
    assert claimed(message) == []


def test_an_out_of_plan_step_number_or_a_sub_step_claims_nothing() -> None:
    assert claimed("Step 9 done") == [] and claimed("Step 1.2 done") == []


def test_a_finished_clause_naming_no_step_is_matched_on_title_words() -> None:
    assert claimed("Docker image built") == ["s1"]
    assert claimed("Pushed the image to the registry") == ["s2"]
    # "Pushed." alone covers one of three title words: not enough to guess.
    assert claimed("Pushed.") == []


def test_a_past_tense_verb_matches_a_title_only_when_it_is_the_title_verb() -> None:
    assert claimed("Updated the Dockerfile to build the image faster") == []
    assert claimed("Checked the registry and the image is there") == []
    assert claimed("Image pushed to the registry") == ["s2"]
    assert claimed("Docker image: done") == ["s1"]


def test_two_titles_that_fit_equally_well_claim_neither() -> None:
    items = plan("Deploy the api service", "Deploy the web service")
    assert claimed("Deployed the service", items) == []
    assert claimed("Deployed the api service", items) == ["s1"]


def test_ids_with_digits_match_anywhere_and_plain_word_ids_only_as_the_first_word() -> None:
    items = [PlanItem(id="m2", ordinal=0, title="Apply migration"), PlanItem(id="tests", ordinal=1, title="Run them"),
             PlanItem(id="build", ordinal=2, title="Compile")]
    assert [(c.item_id, c.matched_by) for c in completion_claims(items, "finished m2 in 41s")] == [
        ("m2", MatchedBy.ITEM_ID)]
    assert claimed("tests: passed", items) == ["tests"]
    assert claimed("tests passed for the build", items) == ["tests"]


def test_the_evidence_quotes_the_clause_in_its_original_case() -> None:
    [claim] = completion_claims(DEPLOY, "Starting now. Step 1 DONE — image built as v1.2.3")
    assert claim.evidence == "Step 1 DONE" and claim.matched_by is MatchedBy.STEP_NUMBER
    [bare] = completion_claims(DEPLOY, "Step 4: completed")
    assert bare.evidence == "Step 4: completed"


def test_stems_meet_across_tenses() -> None:
    assert stem("built") == stem("build") and stem("pushed") == stem("push") == stem("pushing")
    assert stem("verified") == stem("verify") and stem("migration") == stem("migrate")


def test_only_agent_and_user_text_or_progress_messages_with_a_completion_word_are_read() -> None:
    assert reads_message(Role.AGENT, Kind.PROGRESS, "Step 1 done")
    assert reads_message(Role.USER, Kind.TEXT, "pushed it")
    assert not reads_message(Role.TOOL, Kind.TEXT, "Step 1 done")
    assert not reads_message(Role.SYSTEM, Kind.PROGRESS, "Step 1 done")
    assert not reads_message(Role.AGENT, Kind.WAIT, "Step 1 done")
    assert not reads_message(Role.AGENT, Kind.PROGRESS, "Starting step 1")


def test_claims_apply_only_when_dependencies_are_done_counting_the_same_message() -> None:
    items = plan("a", "b", "c", "d", chain=True)
    assert [c.item_id for c in applicable_claims(items, completion_claims(items, "Step 3 done"))] == []
    chain = applicable_claims(items, completion_claims(items, "Steps 1-3 done"))
    assert [c.item_id for c in chain] == ["s1", "s2", "s3"]
    items[0].status = ItemStatus.SKIPPED  # skipped counts as done for what depends on it
    assert [c.item_id for c in applicable_claims(items, completion_claims(items, "Step 2 done"))] == ["s2"]


def test_claims_never_touch_a_status_a_caller_set_or_an_item_already_finished() -> None:
    items = plan("a", "b", "c", "d")
    items[0].status, items[0].status_source = ItemStatus.PENDING, StatusSource.EXPLICIT
    items[1].status, items[1].status_source = ItemStatus.IN_PROGRESS, StatusSource.EXPLICIT
    items[2].status, items[2].status_source = ItemStatus.FAILED, StatusSource.EXPLICIT
    items[3].status, items[3].status_source = ItemStatus.COMPLETED, StatusSource.INFERRED
    assert applicable_claims(items, completion_claims(items, "Steps 1-4 done")) == []


@pytest.mark.parametrize("name", ["plan_progress_messages.yaml", "plan_progress_messages_fresh.yaml"])
def test_every_labelled_tuning_message_is_judged_as_labelled(name: str) -> None:
    """The sets the rules were tuned on (held-out sets are scored by bench/score_plan_inference.py)."""
    document = yaml.safe_load((DATA / name).read_text())
    plans = {name: [PlanItem(id=s["id"], ordinal=n, title=s["title"]) for n, s in enumerate(specs)]
             for name, specs in document["plans"].items()}
    wrong = [(case["message"], claimed(case["message"], plans[case["plan"]]), case["completes"])
             for case in document["cases"] if claimed(case["message"], plans[case["plan"]]) != case["completes"]]
    assert wrong == []
