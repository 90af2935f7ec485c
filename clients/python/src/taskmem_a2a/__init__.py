"""taskmem_a2a: taskmem as the task store of an a2a-sdk agent server (pip install 'taskmem-client[a2a]').

    client = TaskmemClient("127.0.0.1:50051", token=key)
    records = A2ATaskRecords(client)
    handler = DefaultRequestHandler(executor, TaskmemTaskStore(records), card,
                                    event_stream=TaskmemTaskEventStream(records),
                                    push_config_store=TaskmemPushNotificationConfigStore(records))

Every replica of the agent server built this way over one taskmem shares its tasks: a stream opened
on one replica sees what the others write. docs/a2a.md has the layout and the state table.
"""

from taskmem_a2a.event_stream import TaskmemTaskEventStream
from taskmem_a2a.push_configs import TaskmemPushNotificationConfigStore
from taskmem_a2a.records import A2ATaskRecords, owner_namespace
from taskmem_a2a.task_store import TaskmemTaskStore

__all__ = [
    "A2ATaskRecords",
    "TaskmemPushNotificationConfigStore",
    "TaskmemTaskEventStream",
    "TaskmemTaskStore",
    "owner_namespace",
]
