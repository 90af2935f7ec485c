"""taskmem_client: the async Python client of taskmem.

The generated messages and stubs are in taskmem.v1 (for example
`from taskmem.v1.task_service_pb2 import CreateTaskRequest`).
"""

from taskmem_client.calls import NO_RETRY, RETRYABLE_CODES, RetryPolicy
from taskmem_client.claims import CLAIM_NOT_HELD, ClaimedItem, LeaseKeeper
from taskmem_client.client import DEFAULT_ADDRESS, DEFAULT_TIMEOUT, TaskmemClient
from taskmem_client.errors import ERROR_DOMAIN, TaskmemError, error_info
from taskmem_client.events import RESUMABLE_CODES
from taskmem_client.person_waits import Answer

__all__ = [
    "Answer",
    "CLAIM_NOT_HELD",
    "ClaimedItem",
    "LeaseKeeper",
    "DEFAULT_ADDRESS",
    "DEFAULT_TIMEOUT",
    "ERROR_DOMAIN",
    "NO_RETRY",
    "RESUMABLE_CODES",
    "RETRYABLE_CODES",
    "RetryPolicy",
    "TaskmemClient",
    "TaskmemError",
    "error_info",
]
