"""The ``complex`` benchmark tool for the pydantic-based peers (the official SDK and FastMCP).

The same schema as ``complex_schema.json``, spelled as pydantic models and ``Annotated`` fields, so
that each peer validates a call the way its users' tools are validated. Registered when
``MCPBENCH_COMPLEX=1``.
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

from pydantic import BaseModel, Field

WANTED = os.environ.get("MCPBENCH_COMPLEX") == "1"


class Item(BaseModel):
    id: int
    label: str
    weight: float | None = None


class Options(BaseModel):
    dry_run: bool | None = None
    depth: int | None = Field(default=None, ge=1)


async def complex_tool(
    name: Annotated[str, Field(min_length=1, max_length=64)],
    count: Annotated[int, Field(ge=0, le=1000)],
    items: list[Item],
    mode: Literal["fast", "safe", "slow"] | None = None,
    tags: Annotated[list[str], Field(max_length=16)] | None = None,
    options: Options | None = None,
) -> str:
    """A tool with a complex schema (the same as complex_schema.json), validated by pydantic."""
    return f"{name}:{count}:{len(items)}"
