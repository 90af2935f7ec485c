"""`taskmem memory search QUERY` and `taskmem knowledge [TEXT]`: the memory archive and the project's knowledge,
as tables a person reads."""

from __future__ import annotations

from typing import TextIO

from taskmem.commands.connection import TaskClient
from taskmem.commands.formatting import display_time, one_line, render_table, short_enum_name
from taskmem.v1 import memory_pb2
from taskmem.v1 import memory_service_pb2 as pb

KNOWLEDGE_CATEGORIES = {name.removeprefix("KNOWLEDGE_CATEGORY_").lower(): value
                        for name, value in memory_pb2.KnowledgeCategory.items() if value}
SEARCH_MODES = {"fulltext": memory_pb2.SEARCH_MODE_FULLTEXT, "semantic": memory_pb2.SEARCH_MODE_SEMANTIC,
                "hybrid": memory_pb2.SEARCH_MODE_HYBRID}
TEXT_WIDTH = 100


async def search_memories(client: TaskClient, out: TextIO, query: str, *, mode: str, task_id: str,
                          limit: int) -> None:
    """Hits best first: score, the modes that found each, its type, task and time, then the snippet or summary."""
    request = pb.SearchMemoriesRequest(query=query, mode=SEARCH_MODES[mode], limit=limit,
                                       filter=memory_pb2.MemoryFilter(task_id=task_id))
    found = await client.memory.SearchMemories(request, **client.unary)
    if not found.hits:
        print("No memories match. (Project knowledge is looked up with `taskmem knowledge TEXT`.)", file=out)
        return
    # Scores differ by mode (BM25 of a small archive is tiny, fusion scores are ~1/60): significant digits.
    rows = [[f"{hit.score:.3g}", "+".join(short_enum_name(memory_pb2.SearchMode, m, "SEARCH_MODE_")
                                          for m in hit.found_by),
             short_enum_name(memory_pb2.MemoryType, hit.entry.type, "MEMORY_TYPE_"), hit.entry.task_id or "-",
             display_time(hit.entry.create_time), one_line(hit.snippet or hit.entry.summary, TEXT_WIDTH)]
            for hit in found.hits]
    for line in render_table(["SCORE", "FOUND BY", "TYPE", "TASK", "CREATED", "TEXT"], rows):
        print(line, file=out)


async def list_knowledge(client: TaskClient, out: TextIO, text: str, *, category: str, limit: int) -> None:
    """Knowledge whose key or value contains `text` (all with none), by category then key."""
    request = pb.QueryKnowledgeRequest(text=text, page_size=limit,
                                       category=KNOWLEDGE_CATEGORIES[category] if category else 0)
    found = await client.memory.QueryKnowledge(request, **client.unary)
    if not found.knowledge:
        print("No knowledge matches.", file=out)
        return
    rows = [[short_enum_name(memory_pb2.KnowledgeCategory, entry.category, "KNOWLEDGE_CATEGORY_"), entry.key,
             one_line(entry.value, TEXT_WIDTH), f"{entry.confidence:.2f}", entry.source or "-",
             display_time(entry.update_time)] for entry in found.knowledge]
    for line in render_table(["CATEGORY", "KEY", "VALUE", "CONFIDENCE", "SOURCE", "UPDATED"], rows):
        print(line, file=out)
