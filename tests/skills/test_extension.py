"""The skills extension on a Server, in memory, in both eras: the declaration, skills/list and
skills/get, resources/directory/read, the files as resources, and the client's verified reads."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from jsonrpc_mcp import Client, JsonRpcError, RegistrationError, Server
from jsonrpc_mcp.skills import EXTENSION_ID, Skill, Skills, SkillVerificationError, digest_of, verify_file
from jsonrpc_mcp.testing import connect

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
DEMO_MD = (
    "---\nname: demo\ndescription: A demo skill.\nmetadata:\n  owner: tests\n---\n\n# Demo\nSee ref/a.md.\n"
)


def make_server(*, page_size: int = 1000, directory_read: bool = True) -> tuple[Server, Skills]:
    server = Server("skills-test", page_size=page_size, cache_ttl_ms=5000)
    demo = Skill.from_files(
        "demo", {"SKILL.md": DEMO_MD, "ref/a.md": "alpha\n", "ref/deep/b.bin": b"\x00\xff"}
    )
    other = Skill.from_files(
        "acme/other", {"SKILL.md": "---\nname: other\ndescription: Another.\n---\nbody\n"}
    )
    skills = Skills(demo, other, directory_read=directory_read)
    server.add_extension(skills)
    return server, skills


@asynccontextmanager
async def client_of(server: Server, mode: str) -> AsyncIterator[Client]:
    async with connect(server, mode=mode) as client:
        yield client


@pytest.mark.parametrize("mode", MODES)
async def test_the_extension_is_declared_with_directory_read_beside_resources(mode: str) -> None:
    server, _ = make_server()
    async with client_of(server, mode) as client:
        capabilities = client.server_capabilities
    assert capabilities["extensions"] == {EXTENSION_ID: {"directoryRead": True}}
    assert "resources" in capabilities


async def test_without_directory_read_the_settings_are_empty_and_the_method_is_unknown() -> None:
    server, _ = make_server(directory_read=False)
    async with client_of(server, "2026-07-28") as client:
        assert client.server_capabilities["extensions"] == {EXTENSION_ID: {}}
        with pytest.raises(JsonRpcError) as caught:
            await client.request("resources/directory/read", {"uri": "skill://demo"})
    assert caught.value.code == -32601


@pytest.mark.parametrize("mode", MODES)
async def test_skills_list_pages_whole_entries_and_follows_its_cursor(mode: str) -> None:
    server, skills = make_server(page_size=1)
    async with client_of(server, mode) as client:
        first = await client.request("skills/list", {})
        assert len(first["skills"]) == 1 and isinstance(first["nextCursor"], str)
        second = await client.request("skills/list", {"cursor": first["nextCursor"]})
        assert "nextCursor" not in second
        assert await client.list_skills() == [s.entry() for s in skills.skills]
        with pytest.raises(JsonRpcError) as caught:
            await client.request("skills/list", {"cursor": "not-ours"})
    assert caught.value.code == -32602
    assert first["skills"][0] == {
        "uri": "skill://demo/SKILL.md",
        "frontmatter": {"name": "demo", "description": "A demo skill.", "metadata": {"owner": "tests"}},
        "resources": [
            {"uri": "skill://demo/SKILL.md", "digest": digest_of(DEMO_MD.encode()), "size": len(DEMO_MD)},
            {"uri": "skill://demo/ref/a.md", "digest": digest_of(b"alpha\n"), "size": 6},
            {"uri": "skill://demo/ref/deep/b.bin", "digest": digest_of(b"\x00\xff"), "size": 2},
        ],
    }


async def test_modern_results_carry_the_caching_hints_and_handshake_ones_do_not() -> None:
    server, _ = make_server()
    async with client_of(server, "2026-07-28") as client:
        listed = await client.request("skills/list", {})
        got = await client.request("skills/get", {"uri": "skill://demo/SKILL.md"})
    for result in (listed, got):
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (5000, "public", "complete")
    async with client_of(server, "legacy") as client:
        listed = await client.request("skills/list", {})
    assert "ttlMs" not in listed and "resultType" not in listed


@pytest.mark.parametrize("mode", MODES)
async def test_skills_get_returns_the_entry_alone_and_32602_for_an_unknown_uri(mode: str) -> None:
    server, skills = make_server()
    async with client_of(server, mode) as client:
        result = await client.request("skills/get", {"uri": "skill://acme/other/SKILL.md"})
        assert await client.get_skill("skill://demo/SKILL.md") == skills.skills[0].entry()
        with pytest.raises(JsonRpcError) as unknown:
            await client.get_skill("skill://nope/SKILL.md")
        with pytest.raises(JsonRpcError) as no_uri:
            await client.request("skills/get", {"uri": 7})
    assert result["skill"] == skills.skills[1].entry() and "nextCursor" not in result
    assert (unknown.value.code, unknown.value.data) == (-32602, {"uri": "skill://nope/SKILL.md"})
    assert no_uri.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_every_file_is_a_resource_and_skill_md_is_named_by_its_frontmatter(mode: str) -> None:
    server, _ = make_server()
    async with client_of(server, mode) as client:
        listed = {r["uri"]: r for r in await client.list_resources()}
        read = await client.read_resource("skill://demo/ref/deep/b.bin")
    assert listed["skill://demo/SKILL.md"] == {
        "uri": "skill://demo/SKILL.md",
        "name": "demo",
        "description": "A demo skill.",
        "mimeType": "text/markdown",
        "size": len(DEMO_MD),
    }
    assert set(listed) == {
        "skill://demo/SKILL.md",
        "skill://demo/ref/a.md",
        "skill://demo/ref/deep/b.bin",
        "skill://acme/other/SKILL.md",
    }
    assert read["contents"] == [
        {"uri": "skill://demo/ref/deep/b.bin", "mimeType": "application/octet-stream", "blob": "AP8="}
    ]


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_reads_every_file_verified(mode: str) -> None:
    server, _ = make_server()
    async with client_of(server, mode) as client:
        (entry, other) = await client.list_skills()
        got = [await client.read_skill_file(entry, item["uri"]) for item in entry["resources"]]
        assert await client.read_skill_file(other) == b"---\nname: other\ndescription: Another.\n---\nbody\n"
    assert got == [DEMO_MD.encode(), b"alpha\n", b"\x00\xff"]


@pytest.mark.parametrize(
    ("served", "says"),
    [
        (DEMO_MD + "extra", "bytes; its entry says"),
        (DEMO_MD.replace("Demo", "Evil"), "does not match its digest"),
    ],
)
async def test_the_client_refuses_a_file_that_does_not_match_its_entry(served: str, says: str) -> None:
    server, _ = make_server()

    async def tampered() -> str:
        return served

    server.add_resource("skill://demo/SKILL.md", tampered, replace=True)
    async with client_of(server, "2026-07-28") as client:
        entry = await client.get_skill("skill://demo/SKILL.md")
        with pytest.raises(SkillVerificationError, match=says):
            await client.read_skill_file(entry)
        with pytest.raises(SkillVerificationError, match="not in the manifest"):
            await client.read_skill_file(entry, "skill://acme/other/SKILL.md")


def test_a_skill_md_whose_frontmatter_differs_from_its_entry_is_refused() -> None:
    text = "---\nname: demo\ndescription: Exfiltrate credentials\n---\n"
    entry: dict[str, Any] = {
        "uri": "skill://demo/SKILL.md",
        "frontmatter": {"name": "demo", "description": "A demo skill."},
        "resources": [
            {"uri": "skill://demo/SKILL.md", "digest": digest_of(text.encode()), "size": len(text)}
        ],
    }
    result = {"contents": [{"uri": "skill://demo/SKILL.md", "text": text}]}
    with pytest.raises(SkillVerificationError, match="frontmatter"):
        verify_file(entry, "skill://demo/SKILL.md", result)
    entry["frontmatter"]["description"] = "Exfiltrate credentials"
    assert verify_file(entry, "skill://demo/SKILL.md", result) == text.encode()


@pytest.mark.parametrize("mode", MODES)
async def test_directory_read_lists_direct_children_with_folders_as_directories(mode: str) -> None:
    server, _ = make_server(page_size=1)
    async with client_of(server, mode) as client:
        pages = [await client.request("resources/directory/read", {"uri": "skill://demo"})]
        while "nextCursor" in pages[-1]:
            params = {"uri": "skill://demo", "cursor": pages[-1]["nextCursor"]}
            pages.append(await client.request("resources/directory/read", params))
        deep = await client.request("resources/directory/read", {"uri": "skill://demo/ref"})
        with pytest.raises(JsonRpcError) as not_a_directory:
            await client.request("resources/directory/read", {"uri": "skill://demo/SKILL.md"})
    assert [r for page in pages for r in page["resources"]] == [
        {
            "uri": "skill://demo/SKILL.md",
            "name": "SKILL.md",
            "mimeType": "text/markdown",
            "size": len(DEMO_MD),
        },
        {"uri": "skill://demo/ref", "name": "ref", "mimeType": "inode/directory"},
    ]
    assert [r["uri"] for r in deep["resources"]] == ["skill://demo/ref/a.md"]  # then, one per page:
    assert "nextCursor" in deep
    assert not_a_directory.value.code == -32602


async def test_skills_added_after_attaching_are_served() -> None:
    server, skills = make_server()
    skills.add(Skill.from_files("late", {"SKILL.md": "---\nname: late\ndescription: Added later.\n---\n"}))
    async with client_of(server, "legacy") as client:
        assert [e["uri"] for e in await client.list_skills()][-1] == "skill://late/SKILL.md"
        assert (await client.read_skill_file(await client.get_skill("skill://late/SKILL.md"))).startswith(
            b"---"
        )


async def test_a_handshake_request_before_initialize_is_refused() -> None:
    server, _ = make_server()
    async with connect(server, initialize=False) as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request("skills/list", {})
    assert caught.value.code == -32600


async def test_params_that_are_not_an_object_are_refused_with_32602() -> None:
    server, _ = make_server()
    async with client_of(server, "legacy") as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request("skills/list", ["not", "an", "object"])
        assert (await client.request("skills/list"))["skills"]  # (no params at all is fine)
    assert caught.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_declaring_the_extension_is_served_the_same(mode: str) -> None:
    server, skills = make_server()
    declared: dict[str, Any] = {"extensions": {EXTENSION_ID: {}}}
    async with connect(server, mode=mode, capabilities=declared) as client:
        assert await client.list_skills() == [s.entry() for s in skills.skills]


def test_one_skills_extension_serves_one_server() -> None:
    server, skills = make_server()
    with pytest.raises(RegistrationError):
        server.add_extension(skills)
    with pytest.raises(RegistrationError, match="already added"):
        Server("other").add_extension(skills)
