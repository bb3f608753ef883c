"""The shape of the package, computed from its source with ``ast``: no import cycles, no import
pointing the wrong way, no module too large to read.

Runtime imports count wherever they are written (module level or inside a function); imports under
``if TYPE_CHECKING:`` do not (they never run). An edge to a package's ``__init__`` counts as an
edge to that package.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# each package and the folder its source lives in (the harness's is conformance/)
PACKAGES = {"jsonrpc_mcp": ROOT, "jsonrpc_mcp_conformance": ROOT / "conformance"}
MAX_LINES = 650  # "about 600"


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, base in PACKAGES.items():
        for path in sorted((base / package).rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()


def _type_checking_only(tree: ast.Module) -> set[int]:
    hidden: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            hidden.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return hidden


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join([*base, *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    for alias in node.names:
        full = f"{prefix}.{alias.name}"
        yield full if full in MODULES else prefix


def _known(name: str) -> str | None:
    while name not in MODULES:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name


def _edges(*, module_level_only: bool = False) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        hidden = _type_checking_only(tree)
        nodes = tree.body if module_level_only else list(ast.walk(tree))
        out: set[str] = set()
        for node in nodes:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in hidden:
                for target in _targets(name, path.name == "__init__.py", node):
                    known = _known(target)
                    if known is not None and known != name:
                        out.add(known)
        edges[name] = out
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module (or a self-loop)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_graph_is_computed_from_real_imports() -> None:
    edges = _edges()
    assert "jsonrpc_mcp.jsonrpc.codec" in edges["jsonrpc_mcp.jsonrpc.endpoint"]
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]  # the check can fail


def test_there_is_no_import_cycle() -> None:
    assert _cycles(_edges()) == []


def test_the_package_never_imports_the_harness() -> None:
    wrong = {(a, b) for a, bs in _edges().items() if _under(a, "jsonrpc_mcp") for b in bs}
    assert {(a, b) for a, b in wrong if _under(b, "jsonrpc_mcp_conformance")} == set()


def test_the_jsonrpc_layer_imports_no_mcp_module() -> None:
    allowed = ("jsonrpc_mcp.jsonrpc", "jsonrpc_mcp._lazy", "jsonrpc_mcp.transports.base")
    wrong = {
        (a, b)
        for a, bs in _edges().items()
        if _under(a, "jsonrpc_mcp.jsonrpc")
        for b in bs
        if not _under(b, *allowed)
    }
    assert wrong == set()


def test_transports_import_nothing_above_them() -> None:
    above = ("jsonrpc_mcp.server", "jsonrpc_mcp.http", "jsonrpc_mcp.client", "jsonrpc_mcp.cli")
    wrong = {
        (a, b)
        for a, bs in _edges().items()
        if _under(a, "jsonrpc_mcp.transports")
        for b in bs
        if _under(b, *above)
    }
    assert wrong == set()


def test_the_server_core_imports_no_transport_or_http_module_at_module_level() -> None:
    below = ("jsonrpc_mcp.transports", "jsonrpc_mcp.http", "jsonrpc_mcp.client", "jsonrpc_mcp.cli")
    edges = _edges(module_level_only=True)
    wrong = {
        (a, b) for a, bs in edges.items() if _under(a, "jsonrpc_mcp.server") for b in bs if _under(b, *below)
    }
    assert wrong == set()


def test_the_server_and_the_client_do_not_import_each_other() -> None:
    edges = _edges()
    wrong = {
        (a, b)
        for a, bs in edges.items()
        for b in bs
        if (_under(a, "jsonrpc_mcp.server") and _under(b, "jsonrpc_mcp.client"))
        or (_under(a, "jsonrpc_mcp.client") and _under(b, "jsonrpc_mcp.server"))
    }
    assert wrong == set()


def _re_exports_only(tree: ast.Module) -> bool:
    """A module whose code is nothing but imports and ``__all__`` (and names bound to imported
    names), a docstring aside: an alias of other modules' names, not a home of its own."""
    body = tree.body[1:] if ast.get_docstring(tree) is not None else tree.body
    return bool(body) and all(
        isinstance(node, (ast.Import, ast.ImportFrom))
        or (isinstance(node, ast.Assign) and isinstance(node.value, (ast.Name, ast.Attribute, ast.List)))
        for node in body
    )


def test_no_module_is_a_compatibility_alias() -> None:
    """Every name has one home: no module only re-exports others' names (a package's
    ``__init__``, which gathers its public names, aside)."""
    assert _re_exports_only(ast.parse('"""doc"""\nfrom .a import b as c\n__all__ = ["c"]\nd = c\n'))
    assert not _re_exports_only(ast.parse("from .a import b\n\n\ndef f() -> None: ...\n"))
    aliases = [
        name
        for name, path in MODULES.items()
        if path.name != "__init__.py" and _re_exports_only(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert aliases == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_too_long_to_read(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it by responsibility"
