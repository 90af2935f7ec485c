"""Checkpoints of agent frameworks (issue 39)."""
