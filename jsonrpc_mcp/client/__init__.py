"""The MCP client."""

from .client import Client, UnsupportedProtocolVersion

__all__ = ["Client", "UnsupportedProtocolVersion"]
