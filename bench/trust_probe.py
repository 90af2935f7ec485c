"""Probe roles, task scopes, audit and revocation over every RPC and every front door.

Starts `taskmem serve` with a keys file (a reader, a writer and an admin of namespace alpha, a writer
scoped to the tasks it creates in alpha, an admin of namespace beta), the web view, `taskmem mcp --http`
and `taskmem a2a` in front of it. Each key gets a task with an action and a wait (tasks whose names carry
a marker), then:

- gRPC: every RPC of the four services (read from the contract's descriptors) with every key, on a task
  the key may use: allowed (no PERMISSION_DENIED/UNAUTHENTICATED) exactly where core/access.RPC_RULES
  says; the scoped key also on a task of its namespace it did not create, on beta's task and on a missing
  one: refused each time, and with the same answer (code, reason, message with the id blanked) — no
  existence oracle; alpha's unscoped keys on beta's task: never an answer carrying beta's data.
- the web view (/api/call, its open methods), MCP tools and A2A calls with every key: the same decisions.
- no leak: no successful answer to any key carries a marker of a task it may not see.
- audit: every event of every write that succeeded names the key it was made with and the agent sent.
- revocation: a key is removed from the file; the time until gRPC, the web view, MCP and A2A refuse it and
  its open SubscribeEvents stream ends, over --rounds rounds.

Prints the matrix (per front door and role: calls, allowed as expected, refused as expected, wrong) and
the revocation times; exits 1 if any decision, oracle, leak or audit check failed.

    .venv/bin/python bench/trust_probe.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib
import json
import os
import pkgutil
import statistics
import sys
import tempfile
import time
import urllib.error
import urllib.request
from importlib.resources import files
from pathlib import Path
from typing import Any

import grpc
import yaml
from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
from google.protobuf.message import Message

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import taskmem.v1  # noqa: E402
from taskmem.core.access import RPC_RULES, UNCLASSIFIED, Role, Rule, Target  # noqa: E402
from taskmem.v1 import task_pb2, task_service_pb2 as tpb, wait_pb2, wait_service_pb2 as wpb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub  # noqa: E402
from taskmem.web.gateway import OPEN_METHODS  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

KEYS: dict[str, dict[str, Any]] = {
    "reader": {"role": "reader", "namespaces": ["alpha"]},
    "writer": {"role": "writer", "namespaces": ["alpha"]},
    "admin": {"role": "admin", "namespaces": ["alpha"]},
    "scoped": {"role": "writer", "namespaces": ["alpha"], "tasks": {"created": True}},
    "beta": {"role": "admin", "namespaces": ["beta"]},
}
PROBED = ("reader", "writer", "admin", "scoped")
MISSING_TASK = "tsk_" + "0" * 24
# Every service module of the package, so a service added to the contract is probed too.
for _module in pkgutil.iter_modules(taskmem.v1.__path__):
    if _module.name.endswith("_service_pb2"):
        importlib.import_module(f"taskmem.v1.{_module.name}")


def method_descriptor(service: str, method: str) -> Any:
    return descriptor_pool.Default().FindServiceByName(f"taskmem.v1.{service}").methods_by_name[method]


def rule(name: str) -> Rule:
    return RPC_RULES.get(name, UNCLASSIFIED)
# Per-call deadline for unary calls, and how long a stream is read before it counts as open and allowed.
CALL_SECONDS, STREAM_SECONDS = 30.0, 0.5


def secret(key_id: str) -> str:
    return f"{key_id}-probe-secret"


def metadata(key_id: str, correlation: str = "") -> tuple[tuple[str, str], ...]:
    found = [("authorization", f"Bearer {secret(key_id)}"), ("x-taskmem-agent", f"probe-{key_id}")]
    return tuple(found + ([("x-correlation-id", correlation)] if correlation else []))


def write_keys(path: Path, keys: dict[str, dict[str, Any]]) -> None:
    staged = path.with_suffix(".tmp")
    staged.write_text(yaml.safe_dump({"keys": [{"id": k, "secret": secret(k), **v} for k, v in keys.items()]}))
    os.replace(staged, path)


class World:
    """The tasks, actions and waits each key owns, and the marker in each task's name."""

    def __init__(self) -> None:
        self.task: dict[str, str] = {}
        self.action: dict[str, str] = {}
        self.wait: dict[str, str] = {}

    @staticmethod
    def marker(owner: str) -> str:
        return f"MARKER-{owner.upper()}-TASK"

    async def seed(self, channel: grpc.aio.Channel) -> None:
        tasks, waits = TaskServiceStub(channel), WaitServiceStub(channel)
        for owner in ("writer", "scoped", "beta"):
            plan = [task_pb2.PlanItemSpec(id="s1", title="first step"), task_pb2.PlanItemSpec(id="s2", title="second")]
            task = (await tasks.CreateTask(tpb.CreateTaskRequest(name=self.marker(owner), plan=plan),
                                           metadata=metadata(owner))).task
            self.task[owner] = task.id
            await tasks.PostMessage(tpb.PostMessageRequest(task_id=task.id, content=f"{self.marker(owner)} says hi",
                                                           role=task_pb2.MESSAGE_ROLE_AGENT), metadata=metadata(owner))
            action = (await tasks.RecordAction(tpb.RecordActionRequest(
                task_id=task.id, type=task_pb2.ACTION_TYPE_TOOL, summary=self.marker(owner)),
                metadata=metadata(owner))).action
            self.action[owner] = action.id
            wait = (await waits.CreateWait(wpb.CreateWaitRequest(
                task_id=task.id, criteria=self.marker(owner),
                target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget())), metadata=metadata(owner))).wait
            self.wait[owner] = wait.id


def contract() -> dict[str, descriptor_pb2.ServiceDescriptorProto]:
    data = files("taskmem.api").joinpath("contract_descriptors.binpb").read_bytes()
    found = descriptor_pb2.FileDescriptorSet.FromString(data)
    return {s.name: s for f in found.file if f.package == "taskmem.v1" for s in f.service}


def request_for(service: str, method: str, task_id: str, action_id: str, wait_id: str) -> Message:
    """A request naming the given task (action, wait) with plausible values in the fields most RPCs need; the
    gate decides before validation, so a field left wrong still shows how the key was treated."""
    descriptor = method_descriptor(service, method).input_type
    values: dict[str, Any] = {
        "task_id": task_id, "action_id": action_id, "wait_id": wait_id, "name": "probe", "goal": "probe",
        "text": "Use the probe", "content": "probe message", "role": "MESSAGE_ROLE_AGENT", "label": "probe",
        "summary": "probe", "query": "probe", "question": "where was I?", "category": "probe", "key": "probe",
        "agent_id": "probe-agent", "criteria": "probe", "item_id": "s1", "holder_id": "probe-holder",
        "error": "probe error", "path": "probe.txt", "pattern_type": "probe", "pattern_key": "probe",
        "uid": "d_000000000000", "lines": ["probe line"], "task_ids": [task_id],
        "status": "PLAN_ITEM_STATUS_COMPLETED" if method == "UpdatePlanItem" else None,
        "target": {"external": {}}, "task": {"id": task_id, "name": "probe renamed"},
        "update_mask": "name", "working_memory": {"agent_id": "probe-agent"},
        "entries": [{"type": "MEMORY_TYPE_DISCOVERY", "summary": "probe entry", "task_id": task_id}],
        "items": [{"type": "STATE_ITEM_TYPE_DECISION", "text": "probe item"}],
    }
    request = message_factory.GetMessageClass(descriptor)()
    for field in descriptor.fields:
        value = values.get(field.name)
        if value is None:
            continue
        try:
            json_format.ParseDict({field.name: value}, request, ignore_unknown_fields=True)
        except json_format.ParseError:
            continue  # a field of another shape here: left empty
    return request


def refused(code: grpc.StatusCode) -> bool:
    return code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED)


def expected_allowed(key_id: str, rule_name: str) -> bool:
    needed = rule(rule_name)
    role = Role[KEYS[key_id]["role"].upper()]
    return role >= needed.role and not ("tasks" in KEYS[key_id] and needed.target is Target.NAMESPACE)


class Tally:
    def __init__(self) -> None:
        self.cells: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.failures: list[str] = []

    def decision(self, door: str, key_id: str, name: str, expected: bool, allowed: bool, detail: str) -> None:
        cell = self.cells[(door, key_id)]
        cell["calls"] += 1
        if expected == allowed:
            cell["allowed ok" if allowed else "refused ok"] += 1
        else:
            cell["wrong"] += 1
            self.failures.append(f"{door} {key_id} {name}: expected {'allowed' if expected else 'refused'},"
                                 f" got {detail}")

    def fail(self, what: str) -> None:
        self.failures.append(what)


async def call(channel: grpc.aio.Channel, service: str, method: str, request: Message, key_id: str,
               correlation: str) -> tuple[grpc.StatusCode, bytes, str]:
    """(code, the answer's bytes, details) of one RPC; a stream is read for STREAM_SECONDS."""
    descriptor = method_descriptor(service, method)
    path = f"/taskmem.v1.{service}/{method}"
    if descriptor.server_streaming:
        stream = channel.unary_stream(path, request_serializer=lambda m: m.SerializeToString())(
            request, metadata=metadata(key_id, correlation), timeout=STREAM_SECONDS)
        received = b""
        try:
            async for reply in stream:
                received += bytes(reply)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                return error.code(), received, error.details() or ""
        return grpc.StatusCode.OK, received, ""
    try:
        reply = await channel.unary_unary(path, request_serializer=lambda m: m.SerializeToString())(
            request, metadata=metadata(key_id, correlation), timeout=CALL_SECONDS)
        return grpc.StatusCode.OK, bytes(reply), ""
    except grpc.aio.AioRpcError as error:
        return error.code(), b"", error.details() or ""


def invisible_markers(key_id: str) -> list[bytes]:
    """Markers of tasks this key may not see."""
    if key_id == "scoped":
        return [World.marker("writer").encode(), World.marker("beta").encode()]
    return [World.marker("beta").encode()]


async def probe_grpc(channel: grpc.aio.Channel, world: World, tally: Tally) -> list[tuple[str, str, bool]]:
    """Every RPC with every key; returns (correlation id, key, whether it was a write that succeeded)."""
    writes: list[tuple[str, str, bool]] = []
    rpcs = [(service, method.name) for service, descriptor in sorted(contract().items()) for method in descriptor.method]
    for key_id in PROBED:
        owner = "scoped" if key_id == "scoped" else "writer"
        for service, method in rpcs:
            name = f"{service}/{method}"
            correlation = f"probe-{key_id}-{method}"
            request = request_for(service, method, world.task[owner], world.action[owner], world.wait[owner])
            code, body, details = await call(channel, service, method, request, key_id, correlation)
            tally.decision("grpc", key_id, name, expected_allowed(key_id, name), not refused(code),
                           f"{code.name} {details[:80]}")
            for marker in invisible_markers(key_id):
                if marker in body:
                    tally.fail(f"leak: {key_id} {name} answered with {marker.decode()}")
            if code == grpc.StatusCode.OK and rule(name).role >= Role.WRITER:
                writes.append((correlation, key_id, True))
    return writes


async def probe_oracle(channel: grpc.aio.Channel, world: World, tally: Tally) -> None:
    """The scoped key on another task of its namespace, beta's task and a missing one: one answer for all;
    alpha's unscoped keys on beta's task and a missing one: one answer (NOT_FOUND) and no beta data."""
    for name, rule in RPC_RULES.items():
        if rule.target not in (Target.TASK, Target.ACTION, Target.WAIT):
            continue
        service, method = name.split("/")
        for key_id, others in (("scoped", ("writer", "beta", "missing")), ("writer", ("beta", "missing")),
                               ("reader", ("beta", "missing"))):
            answers = set()
            for other in others:
                task = world.task.get(other, MISSING_TASK)
                action = world.action.get(other, "act_" + "0" * 24)
                wait = world.wait.get(other, "wai_" + "0" * 24)
                request = request_for(service, method, task, action, wait)
                code, body, details = await call(channel, service, method, request, key_id, "")
                for marker in invisible_markers(key_id):
                    if marker in body:
                        tally.fail(f"leak: {key_id} {name} on {other}'s task answered with {marker.decode()}")
                blank = details.replace(task, "<id>").replace(action, "<id>").replace(wait, "<id>")
                answers.add((code.name, blank))
                if key_id == "scoped" and code != grpc.StatusCode.PERMISSION_DENIED:
                    tally.fail(f"scoped {name} on {other}'s task: {code.name} {details[:80]}")
            cell = tally.cells[("oracle", key_id)]
            cell["calls"] += 1
            # An unscoped key's allowed RPC on another namespace's task answers as on a missing one.
            if len(answers) == 1:
                cell["same answer"] += 1
            elif key_id == "scoped" or expected_allowed(key_id, name):
                cell["wrong"] += 1
                tally.fail(f"oracle: {key_id} {name} answers differ: {sorted(answers)}")
            else:
                cell["same answer"] += 1


async def check_audit(channel: grpc.aio.Channel, writes: list[tuple[str, str, bool]], tally: Tally) -> int:
    """Every event of every successful write names its key and agent; returns how many events were checked."""
    by_correlation = {correlation: key_id for correlation, key_id, _ in writes}
    tasks = TaskServiceStub(channel)
    checked, token = 0, ""
    while True:
        page = await tasks.ListEvents(tpb.ListEventsRequest(page_size=500, page_token=token), metadata=metadata("admin"))
        for event in page.events:
            key_id = by_correlation.get(event.correlation_id)
            if key_id is None:
                continue
            checked += 1
            if (event.key_id, event.agent_id) != (key_id, f"probe-{key_id}"):
                tally.fail(f"audit: event {event.cursor} of {event.correlation_id} names"
                           f" {event.key_id!r}/{event.agent_id!r}")
            if secret(key_id) in json_format.MessageToJson(event):
                tally.fail(f"audit: event {event.cursor} carries a secret")
        token = page.next_page_token
        if not token:
            break
    tally.cells[("audit", "all")]["writes"] = len(by_correlation)
    tally.cells[("audit", "all")]["events checked"] = checked
    return checked


def web_call(url: str, service: str, method: str, body: dict[str, Any], key_id: str) -> tuple[int, bytes]:
    request = urllib.request.Request(f"{url}api/call/{service}/{method}", data=json.dumps(body).encode(),
                                     method="POST", headers={"x-taskmem-web": "1", "content-type": "application/json",
                                                             "authorization": f"Bearer {secret(key_id)}"})
    try:
        with urllib.request.urlopen(request, timeout=CALL_SECONDS) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


async def probe_web(url: str, world: World, tally: Tally) -> None:
    for key_id in PROBED:
        owner = "scoped" if key_id == "scoped" else "writer"
        for service, methods in OPEN_METHODS.items():
            for method in methods:
                request = request_for(service, method, world.task[owner], world.action[owner], world.wait[owner])
                body = json_format.MessageToDict(request, preserving_proto_field_name=True)
                status, answer = await asyncio.to_thread(web_call, url, service, method, body, key_id)
                name = f"{service}/{method}"
                tally.decision("web", key_id, name, expected_allowed(key_id, name), status not in (401, 403),
                               f"HTTP {status} {answer[:80]!r}")
                for marker in invisible_markers(key_id):
                    if marker in answer:
                        tally.fail(f"leak: web {key_id} {name} answered with {marker.decode()}")


# MCP tools probed: (tool, arguments given the key's task, the RPC rules whose strictest decides)
def mcp_calls(task_id: str) -> list[tuple[str, dict[str, Any], tuple[str, ...]]]:
    return [
        ("task_list", {}, ("TaskService/ListTasks",)),
        ("task_query", {"task_id": task_id}, ("TaskService/GetProgress",)),
        ("task_register", {"name": "probe via mcp"}, ("TaskService/CreateTask",)),
        ("task_note", {"task_id": task_id, "kind": "decision", "text": "probe decision via mcp"},
         ("StateService/AddDecision",)),
        ("knowledge_query", {}, ("MemoryService/QueryKnowledge",)),
        ("knowledge_upsert", {"category": "fact", "key": "probe", "value": "v"}, ("MemoryService/UpsertKnowledge",)),
    ]


async def probe_mcp(url: str, world: World, tally: Tally) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    for key_id in PROBED:
        owner = "scoped" if key_id == "scoped" else "writer"
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {secret(key_id)}"}, timeout=60) as http:
            async with Client(streamable_http_client(url, http_client=http)) as client:
                for tool, arguments, rules in mcp_calls(world.task[owner]):
                    result = await client.call_tool(tool, arguments)
                    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
                    allowed = not (result.is_error and ("PERMISSION_DENIED" in text or "UNAUTHENTICATED" in text))
                    expected = all(expected_allowed(key_id, rule) for rule in rules)
                    tally.decision("mcp", key_id, tool, expected, allowed, text[:100])
                    for marker in invisible_markers(key_id):
                        if marker.decode() in text:
                            tally.fail(f"leak: mcp {key_id} {tool} answered with {marker.decode()}")


async def probe_a2a(url: str, world: World, tally: Tally) -> None:
    import httpx
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest, ListTasksRequest

    for key_id in PROBED:
        owner = "scoped" if key_id == "scoped" else "writer"
        client = await create_client(url, ClientConfig(streaming=False, httpx_client=httpx.AsyncClient(
            headers={"authorization": f"Bearer {secret(key_id)}"}, timeout=60)))
        calls: list[tuple[str, Any, bool]] = [
            ("get_task", lambda: client.get_task(GetTaskRequest(id=world.task[owner])),
             expected_allowed(key_id, "TaskService/GetTask")),
            ("get_task(another's)", lambda: client.get_task(GetTaskRequest(id=world.task["beta"])), False),
            ("list_tasks", lambda: client.list_tasks(ListTasksRequest()), expected_allowed(key_id, "TaskService/ListTasks")),
            ("cancel_task", lambda: client.cancel_task(CancelTaskRequest(id=world.task[owner])),
             expected_allowed(key_id, "TaskService/UpdateTask")),
        ]
        for name, run, expected in calls:
            try:
                answer = str(await run())
                allowed, detail = True, "ok"
            except Exception as error:  # the A2A SDK raises its own error types, each carrying taskmem's code
                answer, detail = "", f"{type(error).__name__}: {str(error)[:100]}"
                allowed = not any(word in detail for word in ("PERMISSION_DENIED", "UNAUTHENTICATED", "not found",
                                                              "NotFound"))
            tally.decision("a2a", key_id, name, expected, allowed, detail)
            for marker in invisible_markers(key_id):
                if marker.decode() in answer:
                    tally.fail(f"leak: a2a {key_id} {name} answered with {marker.decode()}")


async def revocation_round(address: str, web_url: str, mcp_url: str, a2a_url: str, keys_file: Path,
                           world: World) -> dict[str, float]:
    """Remove the reader's key with its stream open; seconds until each door refuses it; then put it back."""
    import httpx
    import httpx2
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import ListTasksRequest
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(task_ids=[world.task["writer"]], after_cursor=0),
                                       metadata=metadata("reader"))
        await stream.read()
        a2a = await create_client(a2a_url, ClientConfig(streaming=False, httpx_client=httpx.AsyncClient(
            headers={"authorization": f"Bearer {secret('reader')}"}, timeout=60)))
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {secret('reader')}"}, timeout=60) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http)) as mcp:
                async def grpc_refuses() -> bool:
                    try:
                        await tasks.ListTasks(tpb.ListTasksRequest(page_size=1), metadata=metadata("reader"))
                        return False
                    except grpc.aio.AioRpcError as error:
                        return error.code() == grpc.StatusCode.UNAUTHENTICATED

                async def web_refuses() -> bool:
                    status, _ = await asyncio.to_thread(web_call, web_url, "TaskService", "ListTasks", {}, "reader")
                    return status == 401

                async def mcp_refuses() -> bool:
                    result = await mcp.call_tool("task_list", {"limit": 1})
                    return bool(result.is_error) and "UNAUTHENTICATED" in result.content[0].text  # type: ignore[union-attr]

                async def a2a_refuses() -> bool:
                    try:
                        await a2a.list_tasks(ListTasksRequest())
                        return False
                    except Exception as error:  # the SDK's error carrying taskmem's UNAUTHENTICATED
                        return "UNAUTHENTICATED" in str(error)

                async def stream_ends() -> bool:
                    """Reads what the stream still replays (no pause between reads) until it ends."""
                    try:
                        while True:
                            await stream.read()
                    except grpc.aio.AioRpcError:
                        return True

                async def until(check: Any, started: float) -> float:
                    while not await check():
                        if time.perf_counter() - started > 30:
                            return float("inf")
                        await asyncio.sleep(0.01)
                    return time.perf_counter() - started

                write_keys(keys_file, {k: v for k, v in KEYS.items() if k != "reader"})
                started = time.perf_counter()
                doors = {"grpc": grpc_refuses, "web": web_refuses, "mcp": mcp_refuses, "a2a": a2a_refuses,
                         "stream ended": stream_ends}
                times = await asyncio.gather(*(until(check, started) for check in doors.values()))
        write_keys(keys_file, KEYS)
        while True:  # back in before the next round
            try:
                await tasks.ListTasks(tpb.ListTasksRequest(page_size=1), metadata=metadata("reader"))
                break
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.05)
    return dict(zip(doors, times))


def print_matrix(tally: Tally) -> None:
    columns = ("calls", "allowed ok", "refused ok", "same answer", "wrong", "writes", "events checked")
    print(f"{'door':8} {'key':8} " + " ".join(f"{c:>14}" for c in columns))
    for (door, key_id), cell in sorted(tally.cells.items()):
        print(f"{door:8} {key_id:8} " + " ".join(f"{cell.get(c, 0):>14}" for c in columns))


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="revocation rounds")
    args = parser.parse_args()
    from tests.a2a.agent_process import AgentProcess
    from tests.support.mcp_process import McpHttpProcess

    root = Path(tempfile.mkdtemp(prefix="trust-probe-"))
    keys_file = root / "keys.yaml"
    write_keys(keys_file, KEYS)
    server = ServerProcess(root / "t.db", "--keys-file", str(keys_file), "--http", "127.0.0.1:0",
                           "--embedding-backend", "none")
    address = server.start()
    web_url = next(line for line in server.output if line.startswith("taskmem: web view on ")).split()[-1]
    mcp = McpHttpProcess("--address", address)
    a2a = AgentProcess(address, front_end=True)
    tally = Tally()
    try:
        mcp_url = mcp.start()
        a2a_url = a2a.start()
        world = World()
        async with grpc.aio.insecure_channel(address) as channel:
            await world.seed(channel)
            started = time.perf_counter()
            writes = await probe_grpc(channel, world, tally)
            await probe_oracle(channel, world, tally)
            await probe_web(web_url, world, tally)
            await probe_mcp(mcp_url, world, tally)
            await probe_a2a(a2a_url, world, tally)
            await check_audit(channel, writes, tally)
            probe_seconds = time.perf_counter() - started
        rounds = [await revocation_round(address, web_url, mcp_url, a2a_url, keys_file, world)
                  for _ in range(args.rounds)]
    finally:
        a2a.stop()
        mcp.stop()
        server.stop()
    print(f"trust probe: {len(contract())} services, {len(RPC_RULES)} RPCs in the rules table,"
          f" keys {', '.join(PROBED)} (alpha) and beta; probe took {probe_seconds:.1f} s")
    print_matrix(tally)
    print(f"revocation (seconds from the keys file's replacement to refusal; {args.rounds} rounds,"
          f" reload interval 0.2 s):")
    for door in rounds[0]:
        times = [r[door] for r in rounds]
        print(f"  {door:13} median {statistics.median(times):.3f}  max {max(times):.3f}")
    worst = max(max(r.values()) for r in rounds)
    print(f"  every door within 1 s in every round: {'yes' if worst <= 1.0 else 'NO'} (worst {worst:.3f} s)")
    print(f"failures: {len(tally.failures)}")
    for failure in tally.failures[:40]:
        print("  " + failure)
    return 1 if tally.failures or worst > 1.0 else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
