"""Structured state items, their links to memory entries, running summaries, and the reads behind the task-state views."""
