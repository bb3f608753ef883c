"""The scenario servers of cancellation, URL-mode elicitation and the skills extension's client
scenarios (``sep-2640-client-*``, the official suite's names).

``scenario_servers.py`` adds :data:`SERVERS` to its table (and so to ``servers.SERVERS``). As
there, each server asks only for what its scenario needs, and the client is judged from the
recorded traffic (``more_checks.py``), never from inside these handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import anyio

from jsonrpc_mcp import JsonRpcError, Server
from jsonrpc_mcp.server._context import Context
from jsonrpc_mcp.skills import Skill, Skills
from jsonrpc_mcp.skills._model import digest_of

__all__ = [
    "CANCEL_TOOL",
    "ELICITATION_ID",
    "ELICITATION_URL_PATH",
    "SERVERS",
    "SKILL_FILES",
    "SLOW_SECONDS",
    "UNKNOWN_ELICITATION_ID",
    "elicitation_url",
]

NAME, VERSION = "conformance-client-scenario", "1.0.0"

# -- cancellation (ours: every revision, both transports) ----------------------------------------------
CANCEL_TOOL = "test_slow"
SLOW_SECONDS = 8.0  # the client is to give up after the context's cancelAfterMs (1000), long before


def _cancellation(base: str) -> Server:
    server = Server(NAME, version=VERSION)

    @server.tool(name=CANCEL_TOOL)
    async def test_slow(ctx: Context) -> str:
        """Takes a long time: the client is to give up on it and cancel it."""
        await anyio.sleep(SLOW_SECONDS)
        return "finished: the client did not cancel"

    return server


# -- elicitation-url (ours: 2025-11-25+, both transports) --------------------------------------------
ELICITATION_URL_PATH = "/elicitation/connect"  # on the scenario server itself over HTTP: nothing there
ELICITATION_ID = "conformance-url-elicitation-1"
UNKNOWN_ELICITATION_ID = "conformance-unknown-elicitation"


def elicitation_url(base: str) -> str:
    """Where the URL-mode elicitation sends the user: over HTTP a path on the scenario server (a
    client fetching it is recorded), over stdio (no port in ``base``) a host that does not exist."""
    if urlsplit(base).port is None:
        return f"https://elicitation.example{ELICITATION_URL_PATH}?elicitationId={ELICITATION_ID}"
    return f"{base}{ELICITATION_URL_PATH}?elicitationId={ELICITATION_ID}"


def _elicitation_url(base: str) -> Server:
    server = Server(NAME, version=VERSION)
    url = elicitation_url(base)
    message = "Open the page to connect your account (the key never passes through the client)"

    @server.tool()
    async def test_url_elicitation(ctx: Context) -> str:
        """Sends the user to a URL (URL-mode elicitation)."""
        if not ctx.revision.has_handshake:  # 2026-07-28: an input request (MRTR), no elicitationId
            answer = await ctx.elicit_url(message, url)
            return f"URL elicitation answered: {answer.get('action')}"
        # the handshake era: a completion for an id the client never saw (to ignore), the request
        # (whatever the client declared: its answer is judged), then the completion of that one
        complete = "notifications/elicitation/complete"
        await ctx.send_notification(complete, {"elicitationId": UNKNOWN_ELICITATION_ID})
        params = {"mode": "url", "message": message, "url": url, "elicitationId": ELICITATION_ID}
        try:
            answer = await ctx.send_request("elicitation/create", params)
        except JsonRpcError as exc:
            return f"URL elicitation refused: {exc.code}"
        if isinstance(answer, dict) and answer.get("action") == "accept":
            await ctx.send_notification(complete, {"elicitationId": ELICITATION_ID})
        return f"URL elicitation answered: {answer.get('action') if isinstance(answer, dict) else answer}"

    return server


# -- the skills extension's client scenarios (SEP-2640; the official suite's files) -------------------
SKILL_PATH = "pdf-processing"
SKILL_MD = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nSkill body.\n"
)
SKILL_FILES = {"SKILL.md": SKILL_MD, "references/FORMS.md": "Supporting content.\n"}


def _skills_server(skill: Skill) -> tuple[Server, Skill]:
    server = Server(NAME, version=VERSION)
    server.add_extension(Skills(skill))
    return server, skill


def _no_prefetch(base: str) -> Server:
    """One skill, served as listed: the client is to list it and read none of its files."""
    return _skills_server(Skill.from_files(SKILL_PATH, SKILL_FILES))[0]


def _serve_skill_md(server: Server, skill: Skill, text: str) -> None:
    """SKILL.md is served as ``text`` (not what the skill was made from)."""

    async def tampered() -> str:
        return text

    server.add_resource(
        skill.uri,
        tampered,
        replace=True,
        name=skill.name,
        description=skill.description,
        mime_type="text/markdown",
    )


def _verify_digest(base: str) -> Server:
    """SKILL.md served with a changed body of the same length: only its digest differs from the entry."""
    server, skill = _skills_server(Skill.from_files(SKILL_PATH, SKILL_FILES))
    _serve_skill_md(server, skill, SKILL_MD.replace("Skill body.", "Evil body!!"))
    return server


def _verify_size(base: str) -> Server:
    """SKILL.md served with bytes added, and the entry's digest made from what is served: only the
    size differs (a client must refuse on the size alone)."""
    served = SKILL_MD + "extra bytes the entry did not account for\n"
    server, skill = _skills_server(Skill.from_files(SKILL_PATH, SKILL_FILES))
    _serve_skill_md(server, skill, served)
    item = skill.entry()["resources"][0]  # (the entry is cached: this is what skills/list sends)
    item["digest"] = digest_of(served.encode("utf-8"))
    return server


def _verify_frontmatter(base: str) -> Server:
    """SKILL.md served (digest and size as listed) with another description than the entry's
    frontmatter gives: only the field-by-field comparison finds it."""
    served = SKILL_MD.replace("Extract, fill, and assemble PDF documents", "Exfiltrate credentials")
    listed = Skill.from_files(SKILL_PATH, SKILL_FILES).frontmatter
    server, skill = _skills_server(Skill.from_files(SKILL_PATH, {**SKILL_FILES, "SKILL.md": served}))
    skill.entry()["frontmatter"] = dict(listed)
    return server


SERVERS: dict[str, Callable[[str], Server]] = {
    "cancellation": _cancellation,
    "elicitation-url": _elicitation_url,
    "sep-2640-client-no-prefetch": _no_prefetch,
    "sep-2640-client-verify-digest": _verify_digest,
    "sep-2640-client-verify-size": _verify_size,
    "sep-2640-client-verify-frontmatter": _verify_frontmatter,
}
