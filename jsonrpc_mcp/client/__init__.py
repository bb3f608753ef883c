"""The MCP client."""

from ._tasks import TaskCancelled, TaskInputUnanswerable, ToolTask
from .client import Client, InputRequiredError, NoCommonVersion, RejectedToolError, Subscription

__all__ = [
    "Client",
    "InputRequiredError",
    "NoCommonVersion",
    "RejectedToolError",
    "Subscription",
    "TaskCancelled",
    "TaskInputUnanswerable",
    "ToolTask",
]
