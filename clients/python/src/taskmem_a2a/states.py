"""A2A task states and taskmem task statuses, both ways (the table is in docs/a2a.md).

    A2A                            taskmem
    SUBMITTED                 <->  PENDING
    WORKING                   <->  PLANNING, EXECUTING, SYNTHESIZING (an A2A write sets EXECUTING)
    INPUT_REQUIRED            <-   INPUT_REQUIRED (a wait on a person of kind INPUT)
                               ->  PAUSED (an A2A write: UpdateTask cannot set INPUT_REQUIRED)
    AUTH_REQUIRED             <-   AUTH_REQUIRED (a wait on a person of kind AUTH)
                               ->  PAUSED (an A2A write; read back from the stored A2A task)
    COMPLETED                 <->  COMPLETED
    FAILED, REJECTED           ->  FAILED (REJECTED read back from the stored A2A task)
    CANCELED                  <->  CANCELLED
    (none)                    <-   ARCHIVED: not an A2A task any more (deleted)
"""

from __future__ import annotations

from a2a.types.a2a_pb2 import TaskState

from taskmem.v1 import task_pb2

S = task_pb2
TERMINAL_STATUSES = frozenset({S.TASK_STATUS_COMPLETED, S.TASK_STATUS_FAILED, S.TASK_STATUS_CANCELLED,
                               S.TASK_STATUS_ARCHIVED})
WORKING_STATUSES = frozenset({S.TASK_STATUS_PLANNING, S.TASK_STATUS_EXECUTING, S.TASK_STATUS_SYNTHESIZING})
# Entered and left only through waits on a person; from them UpdateTask may only pause, fail or cancel.
AWAITING_PERSON_STATUSES = frozenset({S.TASK_STATUS_INPUT_REQUIRED, S.TASK_STATUS_AUTH_REQUIRED})

_STATUS_OF_STATE: dict[int, int] = {
    TaskState.TASK_STATE_SUBMITTED: S.TASK_STATUS_PENDING,
    TaskState.TASK_STATE_WORKING: S.TASK_STATUS_EXECUTING,
    TaskState.TASK_STATE_INPUT_REQUIRED: S.TASK_STATUS_PAUSED,
    TaskState.TASK_STATE_AUTH_REQUIRED: S.TASK_STATUS_PAUSED,
    TaskState.TASK_STATE_COMPLETED: S.TASK_STATUS_COMPLETED,
    TaskState.TASK_STATE_FAILED: S.TASK_STATUS_FAILED,
    TaskState.TASK_STATE_REJECTED: S.TASK_STATUS_FAILED,
    TaskState.TASK_STATE_CANCELED: S.TASK_STATUS_CANCELLED,
}

_STATE_OF_STATUS: dict[int, int] = {
    S.TASK_STATUS_PENDING: TaskState.TASK_STATE_SUBMITTED,
    S.TASK_STATUS_PLANNING: TaskState.TASK_STATE_WORKING,
    S.TASK_STATUS_EXECUTING: TaskState.TASK_STATE_WORKING,
    S.TASK_STATUS_SYNTHESIZING: TaskState.TASK_STATE_WORKING,
    S.TASK_STATUS_PAUSED: TaskState.TASK_STATE_INPUT_REQUIRED,
    S.TASK_STATUS_INPUT_REQUIRED: TaskState.TASK_STATE_INPUT_REQUIRED,
    S.TASK_STATUS_AUTH_REQUIRED: TaskState.TASK_STATE_AUTH_REQUIRED,
    S.TASK_STATUS_COMPLETED: TaskState.TASK_STATE_COMPLETED,
    S.TASK_STATUS_FAILED: TaskState.TASK_STATE_FAILED,
    S.TASK_STATUS_CANCELLED: TaskState.TASK_STATE_CANCELED,
}


def taskmem_status(state: int) -> int:
    """The taskmem status an A2A state is stored as (UNSPECIFIED for an unspecified state)."""
    return _STATUS_OF_STATE.get(state, S.TASK_STATUS_UNSPECIFIED)


def a2a_state(status: int) -> int:
    """The A2A state a taskmem task shows: a task waiting on a person shows INPUT_REQUIRED or AUTH_REQUIRED
    (any other open wait, a timer or a CI hook, leaves it WORKING)."""
    return _STATE_OF_STATUS.get(status, TaskState.TASK_STATE_UNSPECIFIED)


def status_steps(current: int, target: int) -> list[int]:
    """The UpdateTask status changes that take a task from current to target along task.proto's
    lifecycle: [] when it is already there (or WORKING maps onto the phase it is in), two steps where
    taskmem has no direct move (PENDING or PAUSED -> COMPLETED goes through EXECUTING), and [] for a
    move the lifecycle forbids (out of a final status, back to PENDING from a working one, or out of waiting on
    a person other than to PAUSED, FAILED or CANCELLED: answering the wait moves it on)."""
    if target in (S.TASK_STATUS_UNSPECIFIED, current) or current in TERMINAL_STATUSES:
        return []
    if current in AWAITING_PERSON_STATUSES and target not in (S.TASK_STATUS_PAUSED, S.TASK_STATUS_FAILED,
                                                              S.TASK_STATUS_CANCELLED):
        return []
    if target == S.TASK_STATUS_EXECUTING and current in WORKING_STATUSES:
        return []
    if target == S.TASK_STATUS_PENDING and current != S.TASK_STATUS_PAUSED:
        return []
    if target == S.TASK_STATUS_COMPLETED and current not in (S.TASK_STATUS_EXECUTING, S.TASK_STATUS_SYNTHESIZING):
        return [S.TASK_STATUS_EXECUTING, S.TASK_STATUS_COMPLETED]
    return [target]
