"""The MCP client."""

from ._tasks import TaskCancelled, TaskInputUnanswerable, ToolTask
from .client import Client, InputRequiredError, RejectedToolError, Subscription, UnsupportedProtocolVersion

__all__ = [
    "Client",
    "InputRequiredError",
    "RejectedToolError",
    "Subscription",
    "TaskCancelled",
    "TaskInputUnanswerable",
    "ToolTask",
    "UnsupportedProtocolVersion",
]
