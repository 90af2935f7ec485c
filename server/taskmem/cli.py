"""The `taskmem` command: `serve` runs the server; the other commands talk to one over gRPC."""

from __future__ import annotations

import argparse
import sys

from taskmem.config import ConfigError, add_serve_arguments, config_from_serve_arguments


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="taskmem", description="Persistent task memory for LLM agents.")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="run the gRPC server")
    add_serve_arguments(serve)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "serve":
        from taskmem.server import run

        try:
            config = config_from_serve_arguments(args)
        except ConfigError as error:
            print(f"taskmem: {error}", file=sys.stderr)
            return 2
        return run(config)
    return 2
