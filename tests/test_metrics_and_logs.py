"""`--metrics-listen` and `--log-format json` end to end: a scripted workload, then a scrape of /metrics
that shows exactly the counts the workload made, and log lines that are JSON objects with the call's context."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import re
import threading
import urllib.request
from pathlib import Path

import grpc
import httpx
import pytest
from google.protobuf import duration_pb2
from prometheus_client.parser import text_string_to_metric_families

from taskmem.v1 import memory_pb2, task_pb2, wait_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.scripted_llm import scripted_llm
from tests.support.server_process import ServerProcess
from tests.support.webhook_receiver import WebhookReceiver
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

METRICS_PREFIX = "taskmem: metrics on "
ACTIONS = 7


def _metrics_url(server: ServerProcess) -> str:
    line = next(line for line in server.output if line.startswith(METRICS_PREFIX))
    return line[len(METRICS_PREFIX):].strip()


Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def _scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=HANG_GUARD_SECONDS) as response:
        text = response.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def _value(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


async def test_a_scrape_after_a_scripted_workload_shows_its_counts(tmp_path: Path) -> None:
    receiver = WebhookReceiver()
    receiver.start()
    with scripted_llm() as llm:
        llm.answer = lambda system, user: "you were deploying"
        server = ServerProcess(tmp_path / "taskmem.db", "--metrics-listen", "127.0.0.1:0", env={
            "TASKMEM_WEBHOOK_ALLOWED_HOSTS": f"127.0.0.1:{receiver.port}",
            "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": "127.0.0.1:9",
            "TASKMEM_LLM_BASE_URL": llm.base_url,
            "TASKMEM_LLM_MODEL": "small-local", "TASKMEM_LLM_RETRIES": "0",
            "TASKMEM_RUNNING_SUMMARY_EVERY_MESSAGES": "0", "TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1"})
        server.start()
        try:
            url = _metrics_url(server)
            async with grpc.aio.insecure_channel(server.address) as channel:
                tasks, state, waits = TaskServiceStub(channel), StateServiceStub(channel), WaitServiceStub(channel)
                receiver.secret = (await tasks.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
                task = (await tasks.CreateTask(pb.CreateTaskRequest(name="deploy", callback_url=receiver.url))).task
                for n in range(ACTIONS):
                    await tasks.RecordAction(pb.RecordActionRequest(task_id=task.id, summary=f"step {n}",
                                                                    status=task_pb2.ACTION_STATUS_SUCCEEDED))
                for _ in range(2):
                    with pytest.raises(grpc.aio.AioRpcError):
                        await tasks.GetTask(pb.GetTaskRequest(task_id="no such id!"))
                await state.QueryTask(spb.QueryTaskRequest(task_id=task.id, question="where was I?"))

                def model_down(system: str, user: str) -> str:
                    raise RuntimeError("the scripted model is down")
                llm.answer = model_down  # the next model call fails: counted as a failure
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await state.QueryTask(spb.QueryTaskRequest(task_id=task.id, question="where was I?"))
                await MemoryServiceStub(channel).AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[
                    mpb.NewMemoryEntry(task_id=task.id, type=memory_pb2.MEMORY_TYPE_DISCOVERY,
                                       summary="The registry needs a token")]))
                await waits.CreateWait(wpb.CreateWaitRequest(
                    criteria="never answers", target=wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(
                        url="http://127.0.0.1:9/health")),
                    poll_interval=duration_pb2.Duration(nanos=100_000_000)))
                stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(after_cursor=-1))
                events = (await tasks.ListEvents(pb.ListEventsRequest(page_size=500))).events

                def counted() -> Samples | None:  # the samples, once the background work is counted
                    samples = _scrape(url)  # webhook delivery and wait polls run in the background
                    done = (_value(samples, "taskmem_webhook_attempts_total", outcome="delivered") >= 1
                            and _value(samples, "taskmem_wait_probes_total", kind="http", outcome="error") >= 1
                            and _value(samples, "taskmem_subscribers") >= 1
                            and _value(samples, "taskmem_embedding_calls_total", outcome="ok") >= 1)
                    return samples if done else None

                samples = await eventually(counted, "a delivery, a probe error, a subscriber and an embedding call",
                                           interval=0.1)
                stream.cancel()
        finally:
            server.stop()
            receiver.stop()

    record = "/taskmem.v1.TaskService/RecordAction"
    assert _value(samples, "taskmem_rpcs_total", method=record, code="OK") == ACTIONS
    assert _value(samples, "taskmem_rpc_duration_seconds_count", method=record) == ACTIONS
    assert _value(samples, "taskmem_rpcs_total", method="/taskmem.v1.TaskService/GetTask",
                  code="INVALID_ARGUMENT") == 2
    assert _value(samples, "taskmem_events_appended_total") == len(events)  # every event, webhook rows add none
    assert _value(samples, "taskmem_writer_batch_size_count") >= 1 + ACTIONS / 512
    assert _value(samples, "taskmem_writer_commit_seconds_count") == _value(samples, "taskmem_writer_batch_size_count")
    assert _value(samples, "taskmem_webhook_attempts_total", outcome="delivered") == 1  # TASK_CREATED only
    assert _value(samples, "taskmem_model_calls_total", tier="utility", model="small-local", outcome="ok") == 1
    assert _value(samples, "taskmem_model_calls_total", tier="utility", model="small-local", outcome="error") == 1
    assert _value(samples, "taskmem_model_call_seconds_count", tier="utility", model="small-local") == 2
    assert _value(samples, "taskmem_embedding_calls_total", outcome="ok") >= 1
    assert _value(samples, "taskmem_embedding_seconds_count") >= 1
    assert ("taskmem_subscriber_lag_events", ()) in samples  # the slowest subscriber's backlog, in events
    assert _value(samples, "taskmem_query_answers_total", asked="utility", answered_by="utility") == 1
    assert _value(samples, "taskmem_waits", kind="http", status="waiting") == 1
    assert _value(samples, "taskmem_wait_probes_total", kind="http", outcome="error") >= 1
    assert _value(samples, "taskmem_subscribers") >= 1
    assert _value(samples, "taskmem_database_bytes") > 0


async def test_json_logs_are_one_object_per_line_with_the_calls_context(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", "--log-format", "json", "--log-level", "debug")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="logged"),
                                                      metadata=[("x-correlation-id", "cor-from-test")])
        await eventually(lambda: any("cor-from-test" in line for line in server.output), "the call's log line")
    finally:
        server.stop()
    lines = [json.loads(line) for line in server.output if line.startswith("{")]
    assert lines and all({"time", "level", "message", "logger"} <= set(line) for line in lines)
    call = next(line for line in lines if line.get("correlation_id") == "cor-from-test")
    assert call["method"] == "/taskmem.v1.TaskService/CreateTask"
    assert call["namespace"] == "default" and call["level"] == "debug" and call["duration_ms"] > 0


# --- issue 27: the metrics listener's bind rule, and debug logs that are taskmem's own ------------

def test_metrics_off_loopback_are_refused_without_insecure_even_with_api_keys(fresh_server: ServerProcess) -> None:
    """/metrics answers anyone (no key is checked), so API keys do not make it safe off loopback.
    192.0.2.1 (TEST-NET-1) is on no machine: the refusal must come before any bind is tried."""
    fresh_server.extra_args = ("--api-key", "k", "--metrics-listen", "192.0.2.1:0")
    with pytest.raises(RuntimeError, match="metrics_listen: 192.0.2.1:0 is not a loopback address"):
        fresh_server.start()


@pytest.mark.parametrize("named", [(), ("httpx",)])
async def test_debug_logs_are_taskmems_own_unless_a_library_logger_is_named(tmp_path: Path,
                                                                             named: tuple[str, ...]) -> None:
    """--log-level debug: no line from httpx (every URL a wait polls, token and all) or sse_starlette (every
    event streamed to a page), unless --debug-logger names it; taskmem's own debug lines stay."""
    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=target.serve_forever, daemon=True).start()
    token_url = f"http://127.0.0.1:{target.server_address[1]}/status?token=tok-SECRET-27"
    flags = [arg for name in named for arg in ("--debug-logger", name)]
    server = ServerProcess(tmp_path / "taskmem.db", "--log-level", "debug", "--http", "127.0.0.1:0", *flags,
                           env={"TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": f"127.0.0.1:{target.server_address[1]}",
                                "TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1"})
    server.start()
    try:
        web = next(line for line in server.output if line.startswith("taskmem: web view on ")).split()[-1]
        async with httpx.AsyncClient(timeout=HANG_GUARD_SECONDS) as web_client, \
                grpc.aio.insecure_channel(server.address) as channel:
            async with web_client.stream("GET", f"{web}api/events", headers={"x-taskmem-web": "1"}) as events:
                lines = events.aiter_lines()
                await anext(lines)  # the stream is open
                await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="streamed-task-27"))
                async for line in lines:
                    if "streamed-task-27" in line:
                        break
            wait = (await WaitServiceStub(channel).CreateWait(wpb.CreateWaitRequest(target=wait_pb2.WaitTarget(
                http=wait_pb2.HttpTarget(url=token_url, body_contains="ok")),
                poll_interval=duration_pb2.Duration(nanos=100_000_000)))).wait
            async def resolved() -> bool:
                got = await WaitServiceStub(channel).GetWait(wpb.GetWaitRequest(wait_id=wait.id))
                return got.wait.status == wait_pb2.WAIT_STATUS_RESOLVED

            await eventually(resolved, "the wait resolving", interval=0.1)
    finally:
        server.stop()
        target.shutdown()
    output = "".join(server.output)
    assert " DEBUG taskmem" in output  # taskmem's own debug lines
    assert not re.search(r" (DEBUG|INFO) sse_starlette[\w.]*: ", output) and "streamed-task-27" not in output
    assert not re.search(r" (DEBUG|INFO) httpcore[\w.]*: ", output)
    if named:
        assert "tok-SECRET-27" in output  # httpx's request line, asked for by name
    else:
        assert "tok-SECRET-27" not in output and not re.search(r" (DEBUG|INFO) httpx: ", output)
