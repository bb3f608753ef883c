"""The MCP client."""

from ._dispatch import ProgressCallback
from ._tasks import TaskCancelled, TaskInputUnanswerable, ToolTask
from .client import Client, InputRequiredError, NoCommonVersion, RejectedToolError, Subscription

__all__ = [
    "Client",
    "InputRequiredError",
    "NoCommonVersion",
    "ProgressCallback",
    "RejectedToolError",
    "Subscription",
    "TaskCancelled",
    "TaskInputUnanswerable",
    "ToolTask",
]
