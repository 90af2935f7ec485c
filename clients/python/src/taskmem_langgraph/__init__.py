"""LangGraph on taskmem: a checkpointer (TaskmemSaver) and a long-term memory store (TaskmemStore).

Install with `pip install 'taskmem-client[langgraph]'`; see docs/frameworks.md.
"""

from taskmem_langgraph.checkpointer import TaskmemSaver
from taskmem_langgraph.store import TaskmemStore

__all__ = ["TaskmemSaver", "TaskmemStore"]
