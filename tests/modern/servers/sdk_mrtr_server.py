"""A server written with the official MCP Python SDK whose tool asks for input the 2026-07-28 way.

``book`` answers its first call with an ``InputRequiredResult`` (an ``elicitation/create`` input
request and a ``requestState``); the retry carrying the answer and the state gets the booking.
Run as ``python tests/modern/servers/sdk_mrtr_server.py`` (serves stdio until stdin closes).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-mrtr", version="6.0.0")
STATE = "sdk-state-1"


@server.tool()
async def book(city: str, ctx: Context) -> Any:
    """Book a trip to the city, asking who travels."""
    answer = (ctx.input_responses or {}).get("traveller")
    if answer is None or ctx.request_state != STATE:
        schema: Any = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        ask = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=f"Who travels to {city}?", requested_schema=schema)
        )
        return types.InputRequiredResult(input_requests={"traveller": ask}, request_state=STATE)
    name = answer.content["name"] if isinstance(answer, types.ElicitResult) and answer.content else "?"
    return f"booked {city} for {name}"


if __name__ == "__main__":
    server.run()
