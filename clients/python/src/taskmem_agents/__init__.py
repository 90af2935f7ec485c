"""The OpenAI Agents SDK on taskmem: a Session kept in a task's transcript (TaskmemSession).

Install with `pip install 'taskmem-client[openai-agents]'`; see docs/frameworks.md.
"""

from taskmem_agents.session import TaskmemSession

__all__ = ["TaskmemSession"]
