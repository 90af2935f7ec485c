"""`taskmem mcp`: task memory as Model Context Protocol tools and resources.

Every tool is a thin translation onto the gRPC API: the MCP server is a gRPC client of a taskmem
server, either one given by --address or an embedded one it starts on a local SQLite file, so both
ways run the same code path.
"""
