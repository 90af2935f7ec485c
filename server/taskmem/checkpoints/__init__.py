"""CheckpointService's data plane (issue 39)."""
