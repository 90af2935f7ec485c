"""The people-facing `taskmem` subcommands that talk to a running server over gRPC.

One module per job: `connection` (flags, channel, call metadata), `runner` (event loop,
Ctrl-C, RPC errors), `formatting` (how things look on a terminal), `tasks`, `events`,
`export` (gathers a task from the server) and `export_directory` (lays it out on disk).
"""
