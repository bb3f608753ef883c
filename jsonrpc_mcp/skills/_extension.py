"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640) on a :class:`Server`.

Theory of operation
-------------------
:class:`Skills` is an :class:`Extension` holding :class:`Skill` objects (from skills directories on
disk, or made in memory). Added to a server (``server.add_extension(Skills("skills"))``) it does
three things:

* every file of every skill becomes a resource of the server (``skill://<skill-path>/<file>``), so
  ``resources/list`` lists them (SKILL.md named and described by its frontmatter, ``text/markdown``)
  and ``resources/read`` serves them, text as text, other bytes as a blob: the bytes its digest was
  made from;
* the extension's methods are answered: ``skills/list`` (paginated as the core lists are: the
  server's ``page_size``, opaque cursors, an entry never split), ``skills/get`` (``{skill: entry}``,
  -32602 for a URI that is no served skill's), and with ``directory_read`` (the default)
  ``resources/directory/read`` (a skill directory's direct children, folders as
  ``inode/directory``, -32602 for anything else). From 2026-07-28 on their results carry the
  caching hints of the core lists (the server's ``cache_ttl_ms`` and ``cache_scope``);
* the extension is declared under ``capabilities.extensions`` in the ``initialize`` and
  ``server/discover`` results, ``{}`` or ``{"directoryRead": true}`` (in both eras).

The methods are answered by the extension's middleware, ahead of the server's extension dispatch,
which refuses a method of an extension the client did not declare (-32021): skills are listed and
read by any client (SEP-2640 asks nothing of the client; the official suite's declares nothing).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..jsonrpc.errors import InvalidParams
from ..server._extensions import Extension
from ..server._methods import decode_cursor, encode_cursor
from ..server._registry import ResourceContent
from ..server._stateless import finish
from ._model import EXTENSION_ID, Skill, SkillError, SkillFile, load_directory

if TYPE_CHECKING:
    from ..revisions import Revision
    from ..server._pipeline import Call, CallNext
    from ..server._server import Server

__all__ = ["DIRECTORY_MIME_TYPE", "SKILLS_GET", "SKILLS_LIST", "DIRECTORY_READ", "Skills"]

SKILLS_LIST = "skills/list"
SKILLS_GET = "skills/get"
DIRECTORY_READ = "resources/directory/read"
DIRECTORY_MIME_TYPE = "inode/directory"


class Skills(Extension):
    """The skills extension: ``server.add_extension(Skills("path/to/skills"))`` serves every skill
    below that folder.

    ``sources``: skills directories (each sub-folder holding a ``SKILL.md`` is a skill), single
    skill directories, or :class:`Skill` objects. Everything is read and checked now (a bad skill
    raises :class:`SkillError`); :meth:`add` adds more later. ``directory_read``: also serve
    ``resources/directory/read`` (and declare ``directoryRead``).
    """

    id = EXTENSION_ID
    eras = frozenset({"handshake", "stateless"})

    def __init__(self, *sources: str | os.PathLike[str] | Skill, directory_read: bool = True) -> None:
        self.directory_read = directory_read
        self.server: Server | None = None
        self.middleware = self._answer
        self._skills: dict[str, Skill] = {}
        self._directories: dict[str, list[tuple[str, SkillFile | None]]] = {}
        self._handlers = self.methods()
        self.add(*sources)

    # -- the catalogue -----------------------------------------------------------------------------
    @property
    def skills(self) -> list[Skill]:
        """The served skills."""
        return list(self._skills.values())

    def add(self, *sources: str | os.PathLike[str] | Skill) -> list[Skill]:
        """Add skills (see the class docs); with a server attached their files become resources."""
        added: list[Skill] = []
        for source in sources:
            if isinstance(source, Skill):
                added.append(source)
            elif os.path.isfile(os.path.join(source, "SKILL.md")):
                added.append(Skill.from_directory(source))
            else:
                added.extend(load_directory(source))
        uris = [skill.uri for skill in added]
        for skill in added:
            if skill.uri in self._skills or uris.count(skill.uri) > 1:
                raise SkillError(f"skill {skill.path!r} is added twice")
        for skill in added:
            self._skills[skill.uri] = skill
            self._directories.update(skill.directories())
            if self.server is not None:
                self._register(self.server, skill)
        return added

    def get(self, uri: str) -> Skill | None:
        """The served skill whose SKILL.md has this URI."""
        return self._skills.get(uri)

    # -- the extension surface ---------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """The capability settings declared for the extension."""
        return {"directoryRead": True} if self.directory_read else {}

    def methods(self) -> dict[str, Any]:
        """Method name -> ``async (ctx, params) -> result``."""
        table: dict[str, Any] = {SKILLS_LIST: self.list_skills, SKILLS_GET: self.get_skill}
        if self.directory_read:
            table[DIRECTORY_READ] = self.read_directory
        return table

    def attach(self, server: Any) -> None:
        """(Called by ``server.add_extension``.) The skills' files become the server's resources."""
        if self.server is not None:
            raise SkillError("this Skills is already added to a server")
        self.server = server
        for skill in self._skills.values():
            self._register(server, skill)

    async def list_skills(self, ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``skills/list``: a page of the served skills' entries."""
        entries = [skill.entry() for skill in self._skills.values()]
        return self._page(params, entries, "skills")

    async def get_skill(self, ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``skills/get``: the entry of the skill whose SKILL.md has ``params.uri``; -32602 when none."""
        uri = _uri(params, SKILLS_GET)
        skill = self._skills.get(uri)
        if skill is None:
            raise InvalidParams(f"Invalid params: no skill has the URI {uri!r}", {"uri": uri})
        return {"skill": skill.entry()}

    async def read_directory(self, ctx: Any, params: dict[str, Any]) -> dict[str, Any]:
        """``resources/directory/read``: a page of the files and directories in ``params.uri``;
        -32602 when it is not a served directory."""
        uri = _uri(params, DIRECTORY_READ)
        children = self._directories.get(uri)
        if children is None:
            raise InvalidParams(
                f"Invalid params: {uri!r} is not a directory this server serves", {"uri": uri}
            )
        resources = [_child(child, file) for child, file in children]
        return self._page(params, resources, "resources")

    def _page(self, params: dict[str, Any], items: list[dict[str, Any]], key: str) -> dict[str, Any]:
        size = self.server.page_size if self.server is not None else 1000
        offset = decode_cursor(params.get("cursor"))
        if offset > len(items):
            raise InvalidParams(f"Invalid params: invalid cursor {params.get('cursor')!r}")
        result: dict[str, Any] = {key: items[offset : offset + size]}
        if offset + size < len(items):
            result["nextCursor"] = encode_cursor(offset + size)
        return result

    # -- on the server -----------------------------------------------------------------------------
    def _register(self, server: Server, skill: Skill) -> None:
        for file in skill.files:
            uri = skill.file_uri(file.path)
            is_skill_md = uri == skill.uri
            server.add_resource(
                uri,
                _reader(file),
                name=skill.name if is_skill_md else f"{skill.path}/{file.path}",
                description=skill.description
                if is_skill_md
                else f"{file.path}, a file of the {skill.name} skill",
                mime_type=file.mime_type,
                size=file.size,
            )

    async def _answer(self, call: Call, call_next: CallNext) -> Any:
        """The middleware: answers the extension's methods, for every client (see the module docs)."""
        handler = self._handlers.get(call.method)
        if handler is None:
            return await call_next(call)
        if call.era == "stateless":
            revision = call.revision
        else:
            revision = call.session.revision if call.session is not None else None
        if revision is None:
            return await call_next(call)  # (a request before initialize, or with a bad envelope)
        given = call.context.request.params
        if given is not None and type(given) is not dict:
            raise InvalidParams(f"Invalid params: {call.method} params must be an object")
        params = {k: v for k, v in call.params.items() if k != "_meta"}
        result = await handler(None, params)
        return self._finish(revision, result) if call.era == "stateless" else result

    def _finish(self, revision: Revision, result: dict[str, Any]) -> Any:
        server = self.server
        assert server is not None
        out = finish(server, revision, "", result)
        if out.get("resultType", "complete") == "complete":
            out.setdefault("ttlMs", server.cache_ttl_ms)
            out.setdefault("cacheScope", server.cache_scope)
        return out


def _uri(params: dict[str, Any], method: str) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise InvalidParams(f"Invalid params: {method} needs a string 'uri'")
    return uri


def _child(uri: str, file: SkillFile | None) -> dict[str, Any]:
    name = uri.rsplit("/", 1)[-1]
    if file is None:
        return {"uri": uri, "name": name, "mimeType": DIRECTORY_MIME_TYPE}
    return {"uri": uri, "name": name, "mimeType": file.mime_type, "size": file.size}


def _reader(file: SkillFile) -> Any:
    if file.text is not None:
        content = ResourceContent(text=file.text, mime_type=file.mime_type)
    else:
        content = ResourceContent(blob=file.data, mime_type=file.mime_type)

    async def read() -> ResourceContent:
        return content

    return read
