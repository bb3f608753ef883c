"""The Tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663): long-running tool calls that
the client polls (``tasks/get``), answers (``tasks/update``) and cancels (``tasks/cancel``).

Mark a tool ``@server.tool(task="optional")`` (a task when the client declares the extension, an
ordinary call otherwise) or ``task="required"`` (-32021 for a client without it); see
:mod:`._extension` for the rules and :mod:`._runner` for how a task runs.
"""

from __future__ import annotations

from ._extension import TASKS, TasksExtension
from ._runner import TaskInputChannel, start_task
from ._store import InMemoryTaskStore, TaskStore, TaskStoreFull

__all__ = [
    "TASKS",
    "InMemoryTaskStore",
    "TaskInputChannel",
    "TaskStore",
    "TaskStoreFull",
    "TasksExtension",
    "start_task",
]
