"""The MCP client."""

from .client import Client, InputRequiredError, Subscription, UnsupportedProtocolVersion

__all__ = ["Client", "InputRequiredError", "Subscription", "UnsupportedProtocolVersion"]
