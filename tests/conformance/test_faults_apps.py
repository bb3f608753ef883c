"""The MCP Apps requirements (spec/mcp/apps.json, issue 25): examples/everything and examples/memory
pass them all in every revision they apply to, each apps fault of the fault server, wrapped around
either example, fails exactly its requirement, a server without apps skips them saying why, and the
vendored ext-apps JSON Schema is the npm package's."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import APPS_FAULTS, FAULTS, serve_with_faults
from jsonrpc_mcp_conformance.fixtures import default_spec_dir
from jsonrpc_mcp_conformance.match import match
from tests import timeouts

SPEC = load_spec()
APPS = {f.id for f in SPEC.fixtures if f.area == "apps"}
REVISIONS = ("2025-06-18", "2025-11-25", "2026-07-28")  # where definitions carry _meta
REPO = Path(__file__).resolve().parents[2]
EXAMPLES = {
    "everything": REPO / "examples" / "everything" / "server.py",
    "memory": REPO / "examples" / "memory" / "server.py",
}
SCHEMA_ID = "https://modelcontextprotocol.io/ext-apps/schema.json"

pytestmark = pytest.mark.anyio


@pytest.fixture(params=sorted(EXAMPLES))
def example(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Server:
    monkeypatch.setenv("JSONRPC_MCP_MEMORY_DIR", str(tmp_path))  # (memory's store, opened on first use)
    server = load_target(f"{EXAMPLES[request.param]}:create_server")
    assert isinstance(server, Server)
    return server


async def _run(server: Server, faults: list[str] | tuple[str, ...] = ()) -> Run:
    target = InProcessTarget(functools.partial(serve_with_faults, server, faults=faults))
    with anyio.fail_after(timeouts.RUN):
        return await check(target, timeout=3, only=["apps:*"], spec=SPEC)


def _failing(run: Run) -> set[tuple[str, str]]:
    return {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}


def test_the_apps_area_has_its_requirements_and_the_fault_server_its_faults() -> None:
    assert {
        "apps:negotiation:declared",
        "apps:negotiation:app-only-hidden",
        "apps:link:ui-scheme",
        "apps:link:resolves",
        "apps:resource:mime-type",
        "apps:meta:tool-shape",
        "apps:meta:resource-shape",
    } == APPS
    assert set(APPS_FAULTS) <= set(FAULTS)
    for fixture in SPEC.fixtures:
        if fixture.area == "apps":
            assert fixture.url("2026-07-28").startswith("https://github.com/modelcontextprotocol/ext-apps/")
            assert fixture.revisions == REVISIONS


async def test_both_examples_pass_every_apps_requirement_in_every_revision_it_applies_to(
    example: Server,
) -> None:
    run = await _run(example)
    applicable = [v for v in run.verdicts if v.revision in REVISIONS]
    assert {(v.id, v.revision, v.status) for v in applicable} == {
        (i, r, "pass") for i in APPS for r in REVISIONS
    }
    assert _failing(run) == set()


@pytest.mark.parametrize(
    ("fault", "fails"),
    [
        ("apps-undeclared", "apps:negotiation:declared"),
        ("apps-link-scheme", "apps:link:ui-scheme"),
        ("apps-dangling-link", "apps:link:resolves"),
        ("apps-wrong-mime", "apps:resource:mime-type"),
        ("apps-tool-meta-malformed", "apps:meta:tool-shape"),
        ("apps-resource-meta-malformed", "apps:meta:resource-shape"),
        ("apps-app-only-shown", "apps:negotiation:app-only-hidden"),
    ],
)
async def test_each_apps_fault_fails_exactly_its_requirement(example: Server, fault: str, fails: str) -> None:
    assert _failing(await _run(example, [fault])) == {(fails, r) for r in REVISIONS}


async def test_the_faults_say_what_is_wrong() -> None:
    server = load_target(f"{EXAMPLES['everything']}:create_server")
    run = await _run(server, ["apps-wrong-mime", "apps-tool-meta-malformed", "apps-undeclared"])
    problems = {v.id: " ".join(v.problems) for v in run.verdicts if v.revision == "2026-07-28"}
    assert '"text/html"' in problems["apps:resource:mime-type"]
    assert "is not of type 'array'" in problems["apps:meta:tool-shape"]  # the schema's own words
    assert "io.modelcontextprotocol/ui: missing" in problems["apps:negotiation:declared"]


async def test_a_server_without_apps_skips_the_apps_requirements_saying_why() -> None:
    server = Server("no-apps")

    @server.tool()
    def echo(text: str) -> str:
        """Echo."""
        return text

    server.add_resource("demo://x", lambda: "x")
    run = await _run(server)
    assert {v.status for v in run.verdicts} == {"skip"}
    noted = [v.note for v in run.verdicts if v.revision in REVISIONS]
    assert noted and all("no tool links to a view" in note for note in noted)


def test_the_vendored_schema_validates_what_the_extension_defines() -> None:
    ref = SCHEMA_ID + "#/$defs/"
    tool = {"$schema": {"$ref": ref + "McpUiToolMeta"}}
    resource = {"$schema": {"$ref": ref + "McpUiResourceMeta"}}
    assert match({"resourceUri": "ui://a/b", "visibility": ["app"]}, tool) == []
    assert match({"resourceUri": "ui://a/b", "visibility": ["agent"]}, tool) != []
    assert match({"resourceUri": "ui://a/b", "csp": {}}, tool) != []  # a resource's field on a tool
    assert match({"csp": {"connectDomains": ["https://a.example"]}, "prefersBorder": False}, resource) == []
    assert match({"permissions": {"camera": {}, "usb": {}}}, resource) != []
    unknown = match(1, {"$schema": {"$ref": "https://example.com/elsewhere.json"}})
    assert unknown and "no schema the harness ships" in unknown[0]  # nothing is fetched


def test_the_vendored_definitions_are_the_ext_apps_packages() -> None:
    vendored = json.loads((default_spec_dir() / "extensions" / "apps" / "schema.json").read_text("utf-8"))
    assert vendored["$id"] == SCHEMA_ID
    source = (default_spec_dir() / "extensions" / "apps" / "SOURCE.md").read_text("utf-8")
    assert "2.0.4" in source and all(f"`{name}`" in source for name in vendored["$defs"])
    cache = Path(os.environ.get("APPS_HOST_CACHE", REPO / ".cache" / "apps-host"))
    package = cache / "npm" / "node_modules" / "@modelcontextprotocol" / "ext-apps"
    if not (package / "package.json").is_file():
        pytest.skip(f"@modelcontextprotocol/ext-apps is not in {cache} (tests/apps/host.py install())")
    if json.loads((package / "package.json").read_text("utf-8"))["version"] != "2.0.4":
        pytest.skip("another ext-apps version is installed: compare with SOURCE.md by hand")
    published = json.loads((package / "dist" / "src" / "generated" / "schema.json").read_text("utf-8"))
    assert published["$id"] == vendored["$id"]
    assert {name: published["$defs"][name] for name in vendored["$defs"]} == vendored["$defs"]
