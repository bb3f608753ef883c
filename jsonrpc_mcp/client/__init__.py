"""The MCP client."""

from ._dispatch import ProgressCallback
from ._tasks import TaskCancelled, TaskInputUnanswerable, ToolTask
from .client import Client, InputRequiredError, RejectedToolError, Subscription, UnsupportedProtocolVersion

__all__ = [
    "Client",
    "InputRequiredError",
    "ProgressCallback",
    "RejectedToolError",
    "Subscription",
    "TaskCancelled",
    "TaskInputUnanswerable",
    "ToolTask",
    "UnsupportedProtocolVersion",
]
