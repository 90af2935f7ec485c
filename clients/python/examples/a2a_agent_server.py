"""An A2A agent server whose tasks live in taskmem: run several of these on one taskmem and any of
them serves any task (a stream opened on one sees what another writes).

    pip install 'taskmem-client[a2a]' 'a2a-sdk[http-server]' uvicorn
    python a2a_agent_server.py --taskmem 127.0.0.1:50051 --listen 127.0.0.1:9999

The agent: a message containing "ask" gets a draft artifact and a question back (INPUT_REQUIRED);
"steps N" works through N steps (a WORKING update each, 0.3 s apart) before it answers; any other
message gets an answer artifact and COMPLETED.
"""

from __future__ import annotations

import argparse
import asyncio
import socket

import uvicorn
from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, Part, TaskState
from starlette.applications import Starlette

from taskmem_a2a import A2ATaskRecords, TaskmemPushNotificationConfigStore, TaskmemTaskEventStream, TaskmemTaskStore
from taskmem_client import TaskmemClient


class DraftingAgent(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(new_task(context.task_id, context.context_id, TaskState.TASK_STATE_SUBMITTED,
                                                     history=[context.message] if context.message else []))
        await updater.start_work(updater.new_agent_message([Part(text=f"working on: {text}")]))
        if "ask" in text:
            await updater.add_artifact([Part(text=f"draft for {text}")], name="draft")
            await updater.requires_input(updater.new_agent_message([Part(text="Which format do you want?")]))
            return
        if text.startswith("steps "):
            for step in range(1, int(text.split()[1]) + 1):
                await asyncio.sleep(0.3)
                await updater.start_work(updater.new_agent_message([Part(text=f"step {step}")]))
        await updater.add_artifact([Part(text=f"answer to {text}")], name="answer")
        await updater.complete(updater.new_agent_message([Part(text=f"done: {text}")]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def agent_card(url: str) -> AgentCard:
    return AgentCard(
        name="drafting agent", description="Drafts, asks, answers; its tasks live in taskmem.", version="1.0.0",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url)],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"])


async def serve(taskmem: str, listen: str, token: str | None) -> None:
    host, port = listen.rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, int(port)))
    url = f"http://{host}:{sock.getsockname()[1]}/"
    async with TaskmemClient(taskmem, token=token) as client:
        records = A2ATaskRecords(client)
        card = agent_card(url)
        handler = DefaultRequestHandler(
            DraftingAgent(), TaskmemTaskStore(records), card, event_stream=TaskmemTaskEventStream(records),
            push_config_store=TaskmemPushNotificationConfigStore(records))
        app = Starlette(routes=[*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")])
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        print(f"a2a agent: serving on {url}", flush=True)
        await server.serve(sockets=[sock])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taskmem", default="127.0.0.1:50051", help="the taskmem server")
    parser.add_argument("--listen", default="127.0.0.1:9999", help="host:port to serve A2A on (port 0: any)")
    parser.add_argument("--token", default=None, help="taskmem API key")
    args = parser.parse_args()
    asyncio.run(serve(args.taskmem, args.listen, args.token))


if __name__ == "__main__":
    main()
