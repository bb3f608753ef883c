"""The client's side of the Skills extension (``io.modelcontextprotocol/skills``, SEP-2640)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["SkillsMixin"]


class SkillsMixin:
    """``skills/list``, ``skills/get`` and verified reads of skill files (a mixin of the Client)."""

    if TYPE_CHECKING:

        async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]: ...

        async def request(self, method: str, params: Any = None) -> Any: ...

        async def read_resource(self, uri: str) -> dict[str, Any]: ...

    async def list_skills(self) -> list[dict[str, Any]]:
        """Every skill entry of ``skills/list`` (following ``nextCursor`` to the end)."""
        return await self._list_all("skills/list", "skills")

    async def get_skill(self, uri: str) -> dict[str, Any]:
        """The entry of the skill whose SKILL.md is ``uri`` (``skills/get``; -32602 if none)."""
        result = await self.request("skills/get", {"uri": uri})
        return dict(result["skill"])

    async def read_skill_file(self, entry: dict[str, Any], uri: str | None = None) -> bytes:
        """Read a file of a skill (default: its SKILL.md) and verify it against ``entry``: size,
        digest, and for SKILL.md the frontmatter. A mismatch raises ``SkillVerificationError``."""
        from ..skills._client import verify_file

        target = uri if uri is not None else str(entry.get("uri"))
        return verify_file(entry, target, await self.read_resource(target))
