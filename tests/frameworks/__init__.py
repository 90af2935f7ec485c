"""Agent frameworks on taskmem (issue 39): LangGraph and the OpenAI Agents SDK through their own interfaces."""
