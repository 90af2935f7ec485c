"""The `taskmem` command: `serve` runs the server; the other commands talk to one over gRPC."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from taskmem.config import SERVE_EPILOG, ConfigError, add_serve_arguments, config_from_serve_arguments

T = TypeVar("T")


def build_parser() -> argparse.ArgumentParser:
    from taskmem.commands.connection import add_connection_arguments

    parser = argparse.ArgumentParser(prog="taskmem", description="Persistent task memory for LLM agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gRPC server", epilog=SERVE_EPILOG)
    add_serve_arguments(serve)

    tasks = commands.add_parser("tasks", help="list and show tasks").add_subparsers(dest="tasks_command", required=True)
    listing = tasks.add_parser("list", help="a table of tasks, most recently updated first")
    listing.add_argument("--status", dest="statuses", action="append", default=[], metavar="STATUS",
                         type=_argument_type(_comma_list("taskmem.commands.formatting", "parse_task_status")),
                         help="only tasks in this status, e.g. executing (repeatable, or comma-separated)")
    listing.add_argument("--limit", type=_argument_type(_positive_int), help="print at most N tasks")
    listing.add_argument("--awaiting-person", action="store_true",
                         help="only tasks waiting on a person's answer or authorisation (the task or one of its items)")
    add_connection_arguments(listing)
    show = tasks.add_parser("show", help="a task, its current plan and where it stands")
    show.add_argument("task_id", metavar="ID")
    show.add_argument("--json", action="store_true", help="print {task, plan, progress} as proto JSON")
    add_connection_arguments(show)
    usage = tasks.add_parser("usage", help="a task's model cost: the server's model calls by model and purpose,"
                                           " and the tokens its agents reported")
    usage.add_argument("task_id", metavar="ID")
    usage.add_argument("--json", action="store_true", help="print GetTaskUsageResponse as proto JSON")
    add_connection_arguments(usage)
    fork = tasks.add_parser("fork", help="fork a task as it stood just after one of its events into a new task"
                                         " (plan and state copied; transcript and actions shared by reference)")
    fork.add_argument("task_id", metavar="ID")
    fork.add_argument("--at", type=_argument_type(_positive_int), default=0, metavar="CURSOR",
                      help="the cursor of one of the task's events (taskmem state history lists them); default: now")
    fork.add_argument("--name", default="", help="the new task's name (default: the original's name + ' (fork)')")
    fork.add_argument("--json", action="store_true", help="print ForkTaskResponse as proto JSON")
    add_connection_arguments(fork)

    events = commands.add_parser("events", help="read the event log").add_subparsers(dest="events_command",
                                                                                    required=True)
    tail = events.add_parser("tail", help="print stored events; with --follow keep printing new ones")
    tail.add_argument("--task", dest="task_ids", action="append", default=[], metavar="ID",
                      help="only this task's events (repeatable)")
    tail.add_argument("--type", dest="types", action="append", default=[], metavar="TYPE",
                      type=_argument_type(_comma_list("taskmem.commands.formatting", "parse_event_type")),
                      help="only events of this type, e.g. action_recorded (repeatable, or comma-separated)")
    tail.add_argument("--after", type=int, default=0, metavar="CURSOR",
                      help="start after this cursor (default 0: from the beginning; with --follow, -1 means only new)")
    tail.add_argument("--follow", "-f", action="store_true", help="keep printing new events until Ctrl-C")
    add_connection_arguments(tail)

    state = commands.add_parser("state", help="render a task's state").add_subparsers(dest="state_command",
                                                                                      required=True)
    state_show = state.add_parser("show", help="the task-state YAML: plan, subtasks, decisions, errors")
    state_show.add_argument("task_id", metavar="ID")
    state_show.add_argument("--budget", type=_argument_type(_positive_int), default=1500, metavar="TOKENS",
                            help="at most this many tokens (default 1500)")
    state_show.add_argument("--as-of", type=_argument_type(_positive_int), metavar="CURSOR",
                            help="the state as it stood just after this event cursor (see `state history`)")
    add_connection_arguments(state_show)
    state_history = state.add_parser("history", help="the versions of a task's state, newest first: cursor, time,"
                                                     " what changed, who")
    state_history.add_argument("task_id", metavar="ID")
    state_history.add_argument("--limit", type=_argument_type(_positive_int), default=50, metavar="N",
                               help="at most this many versions (default 50)")
    add_connection_arguments(state_history)
    state_diff = state.add_parser("diff", help="a unified diff of a task's state YAML between two cursors")
    state_diff.add_argument("task_id", metavar="ID")
    state_diff.add_argument("--from", dest="from_cursor", type=int, required=True, metavar="CURSOR",
                            help="the older version's cursor (0: before the task existed)")
    state_diff.add_argument("--to", dest="to_cursor", type=int, default=0, metavar="CURSOR",
                            help="the newer version's cursor (default: now)")
    add_connection_arguments(state_diff)
    state_items = state.add_parser("items", help="the structured state: decisions, constraints, actions, "
                                                 "questions, risks, one line each")
    state_items.add_argument("task_id", metavar="ID")
    state_items.add_argument("--budget", type=_argument_type(_positive_int), default=1000, metavar="TOKENS",
                             help="at most this many tokens (default 1000)")
    state_items.add_argument("--max-items", type=_argument_type(_positive_int), default=0, metavar="N",
                             help="at most this many items (default: the server's limit)")
    add_connection_arguments(state_items)

    memory = commands.add_parser("memory", help="search the memory archive").add_subparsers(
        dest="memory_command", required=True)
    search = memory.add_parser("search", help="memory entries matching a query, best first")
    search.add_argument("query", metavar="QUERY", help='a question in plain words; text in double quotes is an'
                        ' exact phrase every full-text hit must hold (\'"climbing gym" Maria\')')
    search.add_argument("--mode", choices=("hybrid", "fulltext", "semantic"), default="hybrid",
                        help="how to match (default hybrid: full text and embeddings, fused)")
    search.add_argument("--task", dest="task_id", default="", metavar="ID", help="only this task's entries")
    search.add_argument("--limit", type=_argument_type(_positive_int), default=10, help="at most N hits (default 10)")
    add_connection_arguments(search)

    knowledge = commands.add_parser("knowledge", help="project knowledge (category, key, value), by category and key")
    knowledge.add_argument("text", metavar="TEXT", nargs="?", default="",
                           help="only entries whose key or value contains this (case-insensitive)")
    knowledge.add_argument("--category", choices=("convention", "architecture", "decision", "fact"), default="",
                           help="only this category")
    knowledge.add_argument("--limit", type=_argument_type(_positive_int), default=50, help="at most N (default 50)")
    add_connection_arguments(knowledge)

    export = commands.add_parser("export", help="write a task as a directory of files")
    export.add_argument("task_id", metavar="ID")
    export.add_argument("directory", metavar="DIR", type=Path, help="the directory to create; must not exist")
    add_connection_arguments(export)

    webhooks = commands.add_parser("webhooks", help="webhook deliveries to tasks' callback_url").add_subparsers(
        dest="webhooks_command", required=True)
    deliveries = webhooks.add_parser("list", help="deliveries in cursor order: state, attempts, last error,"
                                                  " next attempt")
    deliveries.add_argument("--task", dest="task_id", default="", metavar="ID", help="only this task's deliveries")
    deliveries.add_argument("--state", dest="states", action="append", default=[], metavar="STATE",
                            type=_argument_type(_comma_list("taskmem.commands.webhooks", "parse_delivery_state")),
                            help="only pending, delivered or dead_lettered (repeatable, or comma-separated)")
    deliveries.add_argument("--limit", type=_argument_type(_positive_int), help="print at most N deliveries")
    add_connection_arguments(deliveries)
    secret = webhooks.add_parser("secret", help="print the namespace's signing secret (whsec_...)")
    add_connection_arguments(secret)
    rotate = webhooks.add_parser("rotate-secret", help="replace the namespace's signing secret and print the new"
                                                       " one; the old one keeps signing beside it for the overlap")
    rotate.add_argument("--overlap", type=_argument_type(_non_negative_float), metavar="SECONDS",
                        help="how long the old secret still signs (0 stops it at once; at most 604800, 7 days;"
                             " default 86400, a day)")
    add_connection_arguments(rotate)

    from taskmem.commands.reembed import add_reembed_arguments

    reembed = commands.add_parser("reembed", help="embed every memory summary again with the configured model"
                                                  " (after changing embedding settings), with a progress bar")
    add_reembed_arguments(reembed)

    from taskmem.commands.migrate import add_migrate_arguments

    add_migrate_arguments(commands.add_parser("migrate", help="apply the schema migrations a database has not seen"
                                                             " (SQLite file or postgresql:// URL)"))

    from taskmem.commands.copy import add_copy_arguments

    add_copy_arguments(commands.add_parser("copy", help="copy an SQLite database into an empty PostgreSQL one"
                                                       " (row counts and checksums per table)"))

    from taskmem.mcp.command import add_mcp_arguments

    mcp = commands.add_parser("mcp", help="serve task memory as MCP tools (stdio, or streamable HTTP with --http)")
    add_mcp_arguments(mcp)

    from taskmem.a2a.command import add_a2a_arguments

    add_a2a_arguments(commands.add_parser("a2a", help="serve taskmem's tasks over A2A (JSON-RPC, HTTP+JSON, gRPC;"
                                                     " needs the a2a extra)"))
    return parser


def quiet_grpc_core_logging() -> None:
    """grpc C-core logs through absl, not Python logging, and until absl is set up it writes its INFO lines to
    stderr: a server printed "Got goaway [8]" each time a Node client closed its channel (Node's http2 ends a
    session with CANCEL). ERROR is grpc's documented default; an operator's GRPC_VERBOSITY wins. C-core reads it
    once, when grpc is first imported, so this runs before any command imports grpc."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def main(argv: list[str] | None = None) -> int:
    quiet_grpc_core_logging()
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "events" and args.after < 0 and not (args.follow and args.after == -1):
        parser.error("--after must be a cursor (0 or more), or -1 with --follow for only new events")
    if args.command == "reembed":
        from taskmem.commands.reembed import run_reembed

        return run_reembed(args)
    if args.command == "copy":
        from taskmem.commands.copy import run_copy

        return run_copy(args)
    if args.command == "migrate":
        from taskmem.commands.migrate import run_migrate

        return run_migrate(args)
    if args.command == "mcp":
        from taskmem.mcp.command import run_mcp

        return run_mcp(args)
    if args.command == "a2a":
        from taskmem.a2a.command import run_a2a

        return run_a2a(args)
    if args.command == "serve":
        from taskmem.server import run

        try:
            config = config_from_serve_arguments(args)
        except ConfigError as error:
            print(f"taskmem: {error}", file=sys.stderr)
            return 2
        return run(config)
    return run_client(args)


def run_client(args: argparse.Namespace) -> int:
    """Every command but serve: connect, run it, and turn how it ended into an exit status."""
    from taskmem.commands import events, export, memory, state, tasks, webhooks
    from taskmem.commands.connection import ServerOptions, connect
    from taskmem.commands.runner import run_client_command

    options = ServerOptions.from_arguments(args)
    out = sys.stdout
    follow = args.command == "events" and args.follow

    async def command() -> None:
        async with connect(options) as client:
            if args.command == "tasks" and args.tasks_command == "list":
                await tasks.list_tasks(client, out, statuses=_flatten(args.statuses), limit=args.limit,
                                       awaiting_person=args.awaiting_person)
            elif args.command == "tasks" and args.tasks_command == "show":
                await tasks.show_task(client, out, args.task_id, as_json=args.json)
            elif args.command == "tasks" and args.tasks_command == "usage":
                await tasks.show_usage(client, out, args.task_id, as_json=args.json)
            elif args.command == "tasks" and args.tasks_command == "fork":
                await tasks.fork_task(client, out, args.task_id, at_cursor=args.at, name=args.name,
                                      as_json=args.json)
            elif args.command == "events" and follow:
                await events.follow_events(client, out, task_ids=args.task_ids, types=_flatten(args.types),
                                           after_cursor=args.after)
            elif args.command == "events":
                await events.print_stored_events(client, out, task_ids=args.task_ids, types=_flatten(args.types),
                                                 after_cursor=args.after)
            elif args.command == "state" and args.state_command == "show":
                await state.show_task_state(client, out, sys.stderr, args.task_id, budget=args.budget,
                                            as_of_cursor=args.as_of)
            elif args.command == "state" and args.state_command == "history":
                await state.show_state_history(client, out, args.task_id, limit=args.limit)
            elif args.command == "state" and args.state_command == "diff":
                await state.show_state_diff(client, out, args.task_id, args.from_cursor, args.to_cursor)
            elif args.command == "state":
                await state.show_state_items(client, out, sys.stderr, args.task_id, budget=args.budget,
                                             max_items=args.max_items)
            elif args.command == "memory":
                await memory.search_memories(client, out, args.query, mode=args.mode, task_id=args.task_id,
                                             limit=args.limit)
            elif args.command == "knowledge":
                await memory.list_knowledge(client, out, args.text, category=args.category, limit=args.limit)
            elif args.command == "webhooks" and args.webhooks_command == "list":
                await webhooks.list_deliveries(client, out, task_id=args.task_id, states=_flatten(args.states),
                                               limit=args.limit)
            elif args.command == "webhooks" and args.webhooks_command == "rotate-secret":
                await webhooks.rotate_secret(client, out, sys.stderr, overlap_seconds=args.overlap)
            elif args.command == "webhooks":
                await webhooks.print_secret(client, out)
            elif args.command == "export":
                written = await export.export_task(client, args.task_id, args.directory)
                print(f"exported {args.task_id} to {written}", file=out)
            out.flush()

    return run_client_command(command, runs_until_stopped=follow)


def _argument_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    def convert(text: str) -> T:
        try:
            return parse(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    convert.__name__ = parse.__name__.removeprefix("_parse_")
    return convert


def _comma_list(module: str, parse_one: str) -> Callable[[str], list[int]]:
    """Parse "a,b" with `module.parse_one` per part; imported on first use to keep start-up light."""
    def parse(text: str) -> list[int]:
        import importlib

        parse_part = getattr(importlib.import_module(module), parse_one)
        return [parse_part(part) for part in text.split(",") if part.strip()]
    return parse


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(f"must be at least 1, not {value}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0:  # NaN too
        raise ValueError(f"must be a number of seconds, at least 0, not {text}")
    return value


def _flatten(groups: list[list[T]]) -> list[T]:
    return [value for group in groups for value in group]
