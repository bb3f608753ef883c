"""Lazy exports: each package's table (data in its code) agrees with its TYPE_CHECKING block and
its ``__all__``, and the package imports from a zip and from bytecode alone (no source to read)."""

from __future__ import annotations

import ast
import compileall
import importlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

import jsonrpc_mcp
from jsonrpc_mcp._lazy import lazy_names

PACKAGES = [
    "jsonrpc_mcp",
    "jsonrpc_mcp.server",
    "jsonrpc_mcp.jsonrpc",
    "jsonrpc_mcp.skills",
    "jsonrpc_mcp.apps",
    "jsonrpc_mcp.transports.http",
]


def type_checking_imports(source: str) -> dict[str, str]:
    """``name -> module`` (``"."`` for a submodule) of the relative ``from . import`` lines of the
    first ``if TYPE_CHECKING:`` block of ``source``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            return {
                alias.asname or alias.name: "." + (stmt.module or "")
                for stmt in node.body
                if isinstance(stmt, ast.ImportFrom) and stmt.level == 1
                for alias in stmt.names
            }
    return {}


def _source(module: ModuleType) -> str:
    return Path(module.__file__ or "").read_text(encoding="utf-8")


@pytest.mark.parametrize("package", PACKAGES)
def test_the_table_places_every_name_where_the_type_checking_block_imports_it(package: str) -> None:
    module = importlib.import_module(package)
    block = type_checking_imports(_source(module))
    assert set(module.__all__) - {"__version__"} == set(block)
    for name, home in block.items():
        # the package's __getattr__ goes through its table every time (the attribute may be cached)
        found = module.__getattr__(name)
        if home == ".":
            assert found is importlib.import_module(f"{package}.{name}")
        else:
            assert found is getattr(importlib.import_module(package + home), name), name


def test_a_name_is_imported_on_first_use_and_then_kept() -> None:
    namespace: dict[str, object] = {"__name__": "jsonrpc_mcp", "__all__": ["content", "Server"]}
    getattr_, dir_ = lazy_names(namespace, {".": ("content",), ".server._server": ("Server",)})
    from jsonrpc_mcp import content
    from jsonrpc_mcp.server._server import Server

    assert getattr_("content") is content and getattr_("Server") is Server
    assert namespace["content"] is content and namespace["Server"] is Server
    assert [name for name in dir_() if not name.startswith("__")] == ["Server", "content"]


def test_a_name_of_all_the_table_does_not_place_fails_the_import() -> None:
    with pytest.raises(ImportError, match="Two"):
        lazy_names({"__name__": "fake", "__all__": ["One", "Two"]}, {".a": ("One",)})


def test_an_unknown_name_is_an_attribute_error() -> None:
    getattr_, dir_ = lazy_names({"__name__": "fake", "__all__": []}, {".a": ("NotExported",)})
    for name in ("nothing", "NotExported", "__path__"):
        with pytest.raises(AttributeError, match=name):
            getattr_(name)
    assert [name for name in dir_() if not name.startswith("__")] == []


# -- without source: the package imported from a zip, and from bytecode alone ---------------------
PACKAGE_DIR = Path(jsonrpc_mcp.__file__).resolve().parent

# Imports the public names through every lazy table, then serves a tool in memory (which finds the
# revisions through the import system too) and reports where every module of the package came from.
PROBE = """
import json, sys

sys.path.insert(0, sys.argv[1])
import anyio

from jsonrpc_mcp import Client, NoCommonVersion, Server, UnsupportedProtocolVersion, content
from jsonrpc_mcp.jsonrpc import Endpoint, Peer
from jsonrpc_mcp.server import Context, Tool
from jsonrpc_mcp.skills import Skills, digest_of
from jsonrpc_mcp.testing import connect
from jsonrpc_mcp.transports.http import HttpClientStream, connect_http

server = Server("probe")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


async def main() -> dict:
    async with connect(server, timeout=30) as client:
        return await client.call_tool("add", {"a": 2, "b": 3})


result = anyio.run(main)
files = sorted({m.__file__ or "" for n, m in list(sys.modules.items()) if n.split(".")[0] == "jsonrpc_mcp"})
print(json.dumps({"result": result, "files": files}))
"""


def _probe(tmp_path: Path, location: Path) -> dict[str, object]:
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    # -I: no PYTHONPATH, no current directory, so only `location` can provide the package
    done = subprocess.run(
        [sys.executable, "-I", str(script), str(location)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _copy(destination: Path) -> Path:
    copy = destination / "jsonrpc_mcp"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def _check(report: dict[str, object], location: Path, suffix: str) -> None:
    answer = {"content": [{"type": "text", "text": '{"result":5}'}], "structuredContent": {"result": 5}}
    assert report["result"] == answer
    files = report["files"]
    assert isinstance(files, list) and len(files) > 20
    assert all(f.startswith(str(location)) and f.endswith(suffix) for f in files), files


def test_the_package_imports_and_serves_from_a_zip(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "tree")
    archive = tmp_path / "jsonrpc_mcp.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for path in sorted(copy.rglob("*")):
            zipped.write(path, path.relative_to(copy.parent).as_posix())
    _check(_probe(tmp_path, archive), archive, ".py")


def test_the_package_imports_and_serves_from_bytecode_alone(tmp_path: Path) -> None:
    copy = _copy(tmp_path / "compiled")
    # legacy=True: each module.pyc beside where module.py was, which the import system loads
    # without a source file (a __pycache__ entry is only a cache of a source file)
    assert compileall.compile_dir(copy, quiet=1, legacy=True)
    for source in copy.rglob("*.py"):
        source.unlink()
    assert not any(copy.rglob("*.py"))
    _check(_probe(tmp_path, copy.parent), copy.parent, ".pyc")
