"""Plan progress from messages, end to end: PostMessage marks finished steps COMPLETED (source INFERRED)."""

from __future__ import annotations

import subprocess
import sys

import grpc
from google.protobuf import field_mask_pb2, json_format

from taskmem.v1 import event_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess

PENDING, IN_PROGRESS, COMPLETED = (task_pb2.PLAN_ITEM_STATUS_PENDING, task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
                                   task_pb2.PLAN_ITEM_STATUS_COMPLETED)
INFERRED, EXPLICIT = task_pb2.PLAN_ITEM_STATUS_SOURCE_INFERRED, task_pb2.PLAN_ITEM_STATUS_SOURCE_EXPLICIT
AGENT = task_pb2.MESSAGE_ROLE_AGENT

# A deployment, each step depending on the one before.
DEPLOY = [("build", "Build Docker image"), ("push", "Push image to ghcr.io"), ("ssh", "SSH into server"),
          ("pull", "Pull image and run container")]


async def deploy_task(tasks: TaskServiceStub, **fields: object) -> str:
    plan = [task_pb2.PlanItemSpec(id=i, title=t, depends_on=[DEPLOY[n - 1][0]] if n else [])
            for n, (i, t) in enumerate(DEPLOY)]
    created = await tasks.CreateTask(pb.CreateTaskRequest(name="Deploy coursefolio", plan=plan,
                                                          **fields))  # type: ignore[arg-type]
    return created.task.id


async def say(tasks: TaskServiceStub, task_id: str, content: str, role: int = AGENT,
              kind: int = task_pb2.MESSAGE_KIND_PROGRESS) -> pb.PostMessageResponse:
    return await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=role, kind=kind,  # type: ignore[arg-type]
                                                         content=content))


async def items(tasks: TaskServiceStub, task_id: str) -> dict[str, task_pb2.PlanItem]:
    plan = (await tasks.GetPlan(pb.GetPlanRequest(task_id=task_id))).plan
    return {item.id: item for item in plan.items}


async def statuses(tasks: TaskServiceStub, task_id: str) -> dict[str, int]:
    return {item_id: item.status for item_id, item in (await items(tasks, task_id)).items()}


async def test_seed_deployment_messages_complete_steps_one_to_three_and_leave_step_four_next(
        tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    posted = [await say(tasks, task_id, text) for text in (
        "Step 1 done — image built as v1.2.3", "Step 2 done — pushed to ghcr.io",
        "Step 3 done — SSH connected to server")]
    assert [[i.id for i in p.inferred_items] for p in posted] == [["build"], ["push"], ["ssh"]]
    plan = await items(tasks, task_id)
    for item_id, reply in zip(("build", "push", "ssh"), posted):
        item = plan[item_id]
        assert (item.status, item.status_source) == (COMPLETED, INFERRED)
        assert item.status_message_id == reply.message.id and item.HasField("complete_time")
    assert (plan["pull"].status, plan["pull"].status_source) == (PENDING, task_pb2.PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED)
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert [i.id for i in progress.completed] == ["build", "push", "ssh"]
    assert not progress.HasField("current") and [i.id for i in progress.next] == ["pull"]
    assert "3/4" in progress.summary


async def test_seed_transcript_before_compaction_completes_only_the_step_it_says_is_finished(
        tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    tool = task_pb2.MESSAGE_ROLE_TOOL
    for role, text in [
            (AGENT, "Starting deployment. Step 1: Building Docker image..."),
            (tool, "exec → docker build -t coursefolio:v1.2.3 . → exit 0"),
            (AGENT, "Image built. Step 2: Pushing to registry..."),
            (tool, "exec → docker push ghcr.io/alex/coursefolio:v1.2.3 → exit 0"),
            (AGENT, "Pushed. Step 3: SSHing into server..."),
            (tool, "exec → ssh deploy@server → connected"),
            (AGENT, "Connected. Step 4: Pulling image...")]:
        await say(tasks, task_id, text, role=role, kind=task_pb2.MESSAGE_KIND_TEXT)
    # "Image built" matches step 1's title; "Pushed." and "Connected." name no step, and the
    # "Step N: …ing" clauses only start steps, so nothing else is guessed.
    assert await statuses(tasks, task_id) == {"build": COMPLETED, "push": PENDING, "ssh": PENDING, "pull": PENDING}


async def test_messages_that_mention_a_step_without_finishing_it_complete_nothing(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    await say(tasks, task_id, "Step 1 done")
    for text in ("Starting step 2", "Step 2 is failing: denied: permission_denied on ghcr.io",
                 "Will push after build", "Is step 2 done?", "Step 2 is not done yet", "Retrying step 2",
                 "Step 2 almost done", "Once step 2 is done I will SSH into the server",
                 "Pushing image to ghcr.io..."):
        reply = await say(tasks, task_id, text)
        assert not reply.inferred_items, text
    assert await statuses(tasks, task_id) == {"build": COMPLETED, "push": PENDING, "ssh": PENDING, "pull": PENDING}


async def test_a_step_whose_dependencies_are_not_completed_is_never_inferred(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    assert not (await say(tasks, task_id, "Step 3 done")).inferred_items
    assert await statuses(tasks, task_id) == {"build": PENDING, "push": PENDING, "ssh": PENDING, "pull": PENDING}
    # One message finishing a whole chain completes it in dependency order.
    reply = await say(tasks, task_id, "Steps 1-3 done.")
    assert [i.id for i in reply.inferred_items] == ["build", "push", "ssh"]
    assert (await statuses(tasks, task_id))["pull"] == PENDING


async def test_a_task_can_turn_inference_off_and_on_again(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks, plan_inference_disabled=True)
    assert (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).task.plan_inference_disabled
    assert not (await say(tasks, task_id, "Step 1 done")).inferred_items
    assert (await statuses(tasks, task_id))["build"] == PENDING
    updated = await tasks.UpdateTask(pb.UpdateTaskRequest(
        task=task_pb2.Task(id=task_id), update_mask=field_mask_pb2.FieldMask(paths=["plan_inference_disabled"])))
    assert not updated.task.plan_inference_disabled
    assert [i.id for i in (await say(tasks, task_id, "Step 1 done")).inferred_items] == ["build"]


async def test_an_explicit_status_always_wins_over_inference(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    await say(tasks, task_id, "Step 1 done")
    # A caller's update after an inference replaces it, and later messages do not undo the caller's word.
    undone = await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="build", status=PENDING))
    assert (undone.item.status, undone.item.status_source, undone.item.status_message_id) == (PENDING, EXPLICIT, "")
    assert not (await say(tasks, task_id, "Step 1 done, really")).inferred_items
    # A status a caller set first is never overridden either.
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="build", status=COMPLETED))
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="push", status=IN_PROGRESS))
    assert not (await say(tasks, task_id, "Step 2 done — pushed to ghcr.io")).inferred_items
    plan = await items(tasks, task_id)
    assert (plan["push"].status, plan["push"].status_source) == (IN_PROGRESS, EXPLICIT)


async def test_an_inferred_completion_emits_its_event_in_the_message_commit(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    reply = await say(tasks, task_id, "Step 1 done — image built as v1.2.3")
    listed = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], after_cursor=0))
    posted, updated = listed.events[-2:]
    assert (posted.type, updated.type) == (event_pb2.EVENT_TYPE_MESSAGE_POSTED, event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED)
    assert updated.cursor == posted.cursor + 1 and updated.correlation_id == posted.correlation_id
    payload = json_format.MessageToDict(updated.payload)
    assert payload["id"] == "build" and payload["status"] == "PLAN_ITEM_STATUS_COMPLETED"
    assert payload["status_source"] == "PLAN_ITEM_STATUS_SOURCE_INFERRED"
    assert payload["inference"] == {"message_id": reply.message.id, "matched_by": "step_number",
                                    "evidence": "Step 1 done"}


async def test_tool_and_system_messages_never_complete_steps(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    for role in (task_pb2.MESSAGE_ROLE_TOOL, task_pb2.MESSAGE_ROLE_SYSTEM):
        assert not (await say(tasks, task_id, "Step 1 done", role=role)).inferred_items
    assert not (await say(tasks, task_id, "Step 1 done", kind=task_pb2.MESSAGE_KIND_STUCK)).inferred_items
    assert (await statuses(tasks, task_id))["build"] == PENDING


async def test_replanning_keeps_an_inferred_status_and_its_source(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    reply = await say(tasks, task_id, "Docker image built")
    assert [i.id for i in reply.inferred_items] == ["build"]
    replanned = await tasks.ReplacePlan(pb.ReplacePlanRequest(task_id=task_id, reason="add a check", items=[
        task_pb2.PlanItemSpec(id="build", title="Build Docker image"),
        task_pb2.PlanItemSpec(id="scan", title="Scan image for CVEs", depends_on=["build"])]))
    build = replanned.plan.items[0]
    assert (build.status, build.status_source, build.status_message_id) == (COMPLETED, INFERRED, reply.message.id)


async def test_a_message_to_a_standalone_thread_infers_nothing_and_is_stored(tasks: TaskServiceStub) -> None:
    reply = await tasks.PostMessage(pb.PostMessageRequest(thread_id="chat-1", role=AGENT, content="Step 1 done"))
    assert reply.message.thread_id == "chat-1" and not reply.inferred_items


async def test_the_taskmem_command_shows_which_statuses_were_inferred(tasks: TaskServiceStub, server: ServerProcess) -> None:
    task_id = await deploy_task(tasks)
    await say(tasks, task_id, "Step 1 done — image built as v1.2.3")
    run = [sys.executable, "-m", "taskmem"]
    shown = subprocess.run([*run, "tasks", "show", task_id, "--address", server.address], capture_output=True,
                           text=True, timeout=60)
    build_line = next(line for line in shown.stdout.splitlines() if " build " in line)
    assert "completed" in build_line and "(inferred from a message)" in build_line
    tail = subprocess.run([*run, "events", "tail", "--task", task_id, "--address", server.address], capture_output=True,
                          text=True, timeout=60)
    assert any('build completed (inferred from "Step 1 done")' in line for line in tail.stdout.splitlines())


async def test_a_retried_post_returns_the_first_inference_without_inferring_again(tasks: TaskServiceStub) -> None:
    task_id = await deploy_task(tasks)
    request = pb.PostMessageRequest(task_id=task_id, role=AGENT, content="Step 1 done", request_id="retry-1")
    first, again = await tasks.PostMessage(request), await tasks.PostMessage(request)
    assert first == again and [i.id for i in first.inferred_items] == ["build"]
    listed = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], after_cursor=0,
                                                         types=[event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED]))
    assert len(listed.events) == 1


# A release whose steps are finished in the words of the domain, not the titles' verbs.
RELEASE = [("guide", "Write the upgrade guide"), ("signoff", "Approve the API changes"),
           ("release", "Release version 3.0 to PyPI"), ("notes", "Send the release notes to customers")]


async def release_task(tasks: TaskServiceStub) -> str:
    plan = [task_pb2.PlanItemSpec(id=i, title=t) for i, t in RELEASE]
    return (await tasks.CreateTask(pb.CreateTaskRequest(name="Release 3.0", plan=plan))).task.id


async def test_steps_finished_in_their_own_terms_show_as_completed_with_their_evidence(
        tasks: TaskServiceStub) -> None:
    task_id = await release_task(tasks)
    posted = [await say(tasks, task_id, text) for text in (
        "The upgrade guide exists now, 6 pages", "API changes signed off by the core team",
        "Version 3.0 is live on PyPI")]
    assert [[i.id for i in p.inferred_items] for p in posted] == [["guide"], ["signoff"], ["release"]]
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert [i.id for i in progress.completed] == ["guide", "signoff", "release"]
    assert [i.id for i in progress.next] == ["notes"] and "3/4" in progress.summary
    listed = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], after_cursor=0,
                                                         types=[event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED]))
    payload = json_format.MessageToDict(listed.events[-1].payload)
    assert payload["id"] == "release" and payload["inference"] == {
        "message_id": posted[-1].message.id, "matched_by": "title", "evidence": "Version 3.0 is live on PyPI"}


async def test_partial_pending_and_other_things_complete_nothing_in_get_progress(tasks: TaskServiceStub) -> None:
    task_id = await release_task(tasks)
    for text in ("Release notes sent to 40 of 212 customers so far; the rest tonight",
                 "Version 3.0 uploaded to PyPI, but not yet visible in the index",
                 "Sent the release notes draft to legal", "Approved the API docs typo fix",
                 "Will the API changes be approved today?", "The release notes haven't gone out"):
        reply = await say(tasks, task_id, text)
        assert not reply.inferred_items, text
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert not progress.completed and "0/4" in progress.summary


# An office move: steps finished in the words of the work, not the titles' verbs.
OFFICE = [("lease", "Get the landlord's consent for the sublet"), ("crons", "Stop the legacy cron jobs"),
          ("boiler", "Replace the boiler"), ("desks", "Order the standing desks"), ("party", "Host the leaving party"),
          ("cards", "Send the change-of-address cards")]


async def office_task(tasks: TaskServiceStub) -> str:
    plan = [task_pb2.PlanItemSpec(id=i, title=t) for i, t in OFFICE]
    return (await tasks.CreateTask(pb.CreateTaskRequest(name="Office move", plan=plan))).task.id


async def test_steps_said_finished_in_the_words_of_their_work_are_completed(tasks: TaskServiceStub) -> None:
    task_id = await office_task(tasks)
    posted = [await say(tasks, task_id, text) for text in (
        "The landlord granted consent for the sublet", "Legacy cron jobs stopped", "New boiler is in",
        "The standing desks arrived this morning", "The leaving party went ahead, 90% turnout",
        "Change-of-address cards are all in the post")]
    assert [[i.id for i in p.inferred_items] for p in posted] == [
        ["lease"], ["crons"], ["boiler"], ["desks"], ["party"], ["cards"]]


async def test_a_step_handed_over_pending_partial_or_later_is_not_completed(tasks: TaskServiceStub) -> None:
    task_id = await office_task(tasks)
    for text in ("Consent request sent to the landlord for approval", "Boiler is in the van, fitting on Monday",
                 "One cron job stopped", "The leaving party is on Friday", "Standing desks ordered if the budget allows",
                 "Change-of-address cards arrived from the printer", "Desk order is in draft"):
        reply = await say(tasks, task_id, text)
        assert not reply.inferred_items, text
    assert set((await statuses(tasks, task_id)).values()) == {PENDING}


# A bathroom refit: steps said finished in the trade's words, none naming the title's object.
REFIT = [("tiles", "Order the bathroom tiles"), ("strip", "Strip out the old bath"), ("radiator", "Move the radiator"),
         ("certs", "Get the electrics certified")]


async def refit_task(tasks: TaskServiceStub) -> str:
    plan = [task_pb2.PlanItemSpec(id=i, title=t) for i, t in REFIT]
    return (await tasks.CreateTask(pb.CreateTaskRequest(name="Bathroom refit", plan=plan))).task.id


async def inference_of(tasks: TaskServiceStub, task_id: str) -> dict[str, str]:
    listed = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], after_cursor=0,
                                                         types=[event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED]))
    return json_format.MessageToDict(listed.events[-1].payload)["inference"]


async def test_a_step_whose_verb_alone_is_said_is_asked_about_not_completed(tasks: TaskServiceStub) -> None:
    task_id = await refit_task(tasks)
    reply = await say(tasks, task_id, "We've stripped out!")
    assert not reply.inferred_items and [q.item_id for q in reply.plan_item_questions] == ["strip"]
    assert (await inference_of(tasks, task_id))["question"] == "only the step's verb is said"


async def test_partial_or_precursor_reports_in_the_domains_words_complete_nothing(tasks: TaskServiceStub) -> None:
    task_id = await refit_task(tasks)
    for text in ("12 of the 30 boxes of tiles delivered so far", "Half the old tub is gone, the rest tomorrow",
                 "Electrician booked for Thursday to certify the wiring", "Is the old tub gone yet?",
                 "Tile samples arrived from the showroom"):
        reply = await say(tasks, task_id, text)
        assert not reply.inferred_items, text
    assert set((await statuses(tasks, task_id)).values()) == {PENDING}


# A pottery moving house.
STUDIO = [("m1", "Move the kiln to the new studio"), ("m2", "Put up the shelves"), ("m3", "Order the clay")]


async def studio_task(tasks: TaskServiceStub) -> str:
    plan = [task_pb2.PlanItemSpec(id=i, title=t) for i, t in STUDIO]
    return (await tasks.CreateTask(pb.CreateTaskRequest(name="Studio move", plan=plan))).task.id


async def test_a_thing_that_arrived_waits_elsewhere_or_is_only_drafted_completes_nothing(tasks: TaskServiceStub) -> None:
    task_id = await studio_task(tasks)
    for text in ("Shelves delivered", "The shelves are at the joiner", "Shelf brackets drafted, will put them up Monday"):
        reply = await say(tasks, task_id, text)
        assert not reply.inferred_items, text
    assert set((await statuses(tasks, task_id)).values()) == {PENDING}
