"""DiffTaskState's text: a unified diff between two renderings of a task's state YAML. Pure."""

from __future__ import annotations

import difflib


def unified_state_diff(task_id: str, from_cursor: int, to_cursor: int, from_yaml: str, to_yaml: str) -> str:
    """The unified diff (3 lines of context) from one YAML to the other, headed "task@cursor"; empty when equal."""
    lines = difflib.unified_diff(from_yaml.splitlines(keepends=True), to_yaml.splitlines(keepends=True),
                                 f"{task_id}@{from_cursor}", f"{task_id}@{to_cursor}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
