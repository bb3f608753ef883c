"""The MCP client."""

from ._tasks import TaskCancelled, TaskInputUnanswerable, ToolTask
from .client import Client, InputRequiredError, Subscription, UnsupportedProtocolVersion

__all__ = [
    "Client",
    "InputRequiredError",
    "Subscription",
    "TaskCancelled",
    "TaskInputUnanswerable",
    "ToolTask",
    "UnsupportedProtocolVersion",
]
