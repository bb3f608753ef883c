"""Transports: framing only. Each turns a byte stream into whole messages and back.

Import the concrete transport you need (``jsonrpc_mcp.transports.stdio``, ``.memory``, ``.http``);
this package does not import them eagerly, so a stdio server never loads what it does not use.
"""

from .base import FrameTooLarge, MessageStream

__all__ = ["FrameTooLarge", "MessageStream"]
