"""The API reference (docs/reference/, built by ``make docs``): every public name has a docstring,
and the site builds with every warning an error, listing every public name.

The public modules are the ones the reference pages document (their ``::: module`` lines); a
module's public names are its ``__all__`` (for a module without one, the classes and functions it
defines). Of each public class, its own public methods and properties count too. Constants, type
aliases and dataclass fields are shown with their values and types, so they need no docstring.
The docstring check reads the live objects (the lazy names resolved), so it runs without mkdocs;
the build needs the docs extra (``make docs`` installs it) and skips, saying so, without it.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path
from types import ModuleType

import pytest

from tests import timeouts

REPO = Path(__file__).resolve().parent.parent
PAGES = sorted((REPO / "docs" / "reference").glob("*.md"))
DIRECTIVES = [m for page in PAGES for m in re.findall(r"^::: (\S+)$", page.read_text(encoding="utf-8"), re.M)]


def _is_module(path: str) -> bool:
    try:
        importlib.import_module(path)
    except ImportError:
        return False  # an object documented on its own (see docs/reference/trace.md)
    return True


MODULES = [path for path in DIRECTIVES if _is_module(path)]

# What the reference must cover at least: the packages whose __all__ is the public API.
REQUIRED = {
    "jsonrpc_mcp",
    "jsonrpc_mcp.server",
    "jsonrpc_mcp.server.tasks",
    "jsonrpc_mcp.client",
    "jsonrpc_mcp.http",
    "jsonrpc_mcp.jsonrpc",
    "jsonrpc_mcp.content",
    "jsonrpc_mcp.errors",
    "jsonrpc_mcp.telemetry",
    "jsonrpc_mcp.testing",
    "jsonrpc_mcp.wire",
    "jsonrpc_mcp.skills",
    "jsonrpc_mcp_conformance",
    "jsonrpc_mcp_conformance.trace",
}


def public_names(module: ModuleType) -> list[str]:
    """``__all__``, or else the classes and functions the module itself defines."""
    if hasattr(module, "__all__"):
        return list(module.__all__)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (inspect.isclass(value) or inspect.isfunction(value))
        and value.__module__ == module.__name__
    ]


def _own_docstring(obj: object) -> str | None:
    """The docstring written for ``obj`` (not one a dataclass or a named tuple made up)."""
    if isinstance(obj, type):
        doc = obj.__dict__.get("__doc__")
        made_up = dataclasses.is_dataclass(obj) or (issubclass(obj, tuple) and hasattr(obj, "_fields"))
        if isinstance(doc, str) and made_up and doc.startswith(f"{obj.__name__}("):
            return None
        return doc if isinstance(doc, str) else None
    doc = getattr(obj, "__doc__", None)
    return doc if isinstance(doc, str) else None


def _members(cls: type) -> list[tuple[str, object]]:
    """The public methods and properties ``cls`` defines itself (inherited ones count at their class)."""
    found: list[tuple[str, object]] = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod)):
            found.append((name, value.__func__))
        elif isinstance(value, property):
            found.append((name, value.fget))
        elif inspect.isfunction(value):
            found.append((name, value))
    return found


def undocumented(module_name: str) -> tuple[int, list[str]]:
    """How many public objects of the module were checked, and those without a docstring."""
    module = importlib.import_module(module_name)
    checked, missing = 1, [] if (module.__doc__ or "").strip() else [module_name]
    for name in public_names(module):
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue  # a submodule has its own page; a constant or an alias shows its value
        checked += 1
        if not (_own_docstring(obj) or "").strip():
            missing.append(f"{module_name}.{name}")
        if inspect.isclass(obj):
            for member, function in _members(obj):
                checked += 1
                if not (_own_docstring(function) or "").strip():
                    missing.append(f"{module_name}.{name}.{member}")
    return checked, missing


def test_the_reference_has_a_page_for_every_public_package() -> None:
    assert sorted(REQUIRED - set(MODULES)) == []
    assert len(MODULES) == len(set(MODULES))


@pytest.mark.parametrize("module_name", MODULES)
def test_every_public_name_has_a_docstring(module_name: str) -> None:
    _, missing = undocumented(module_name)
    assert missing == [], f"no docstring: {missing}"


def test_the_check_finds_a_missing_docstring() -> None:
    fake = ModuleType("fake_public")
    fake.__doc__ = "A module."

    @dataclasses.dataclass
    class Record:
        x: int

    class Documented:
        """Has one."""

        def method(self) -> None:
            pass

        @property
        def value(self) -> int:
            return 1

    def function() -> None:
        pass

    fake.__dict__.update(Record=Record, Documented=Documented, function=function, __all__=[
        "Record", "Documented", "function", "CONSTANT"
    ], CONSTANT=1)  # fmt: skip
    sys.modules["fake_public"] = fake
    try:
        checked, missing = undocumented("fake_public")
    finally:
        del sys.modules["fake_public"]
    assert checked == 6
    assert missing == [
        "fake_public.Record", "fake_public.Documented.method", "fake_public.Documented.value",
        "fake_public.function",
    ]  # fmt: skip


def _inventory(site: Path) -> set[str]:
    """The object names of the site's ``objects.inv`` (the Sphinx inventory mkdocstrings writes)."""
    data = (site / "objects.inv").read_bytes()
    header, _, body = data.partition(b"zlib.\n")
    assert header.startswith(b"# Sphinx inventory version 2"), header[:40]
    return {line.split(" ", 1)[0] for line in zlib.decompress(body).decode().splitlines()}


def _needs_mkdocs() -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None:
        pytest.skip("the docs extra is not installed: `make docs` installs it (CI runs it before the tests)")


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeouts.LONG_RUN,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )


def test_a_broken_link_fails_the_build_and_a_link_outside_docs_works(tmp_path: Path) -> None:
    _needs_mkdocs()
    root = tmp_path / "repo"
    shutil.copytree(REPO / "docs", root / "docs")
    shutil.copy(REPO / "mkdocs.yml", root)
    for name in ("README.md", "jsonrpc_mcp", "conformance"):
        (root / name).symlink_to(REPO / name)
    page = root / "docs" / "zz-links.md"
    page.write_text(
        "# Links\n\n[the README](../README.md#middleware), [a module](../jsonrpc_mcp/wire.py),\n"
        "[types](types.md)\n\n```\n[in a code block](../no-such-file.md)\n```\n",
        encoding="utf-8",
    )
    done = _build(root, root / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    html = (root / "site" / "zz-links.html").read_text(encoding="utf-8")
    # as written: from site/zz-links.html, ../README.md is the checkout's README, as on GitHub
    assert 'href="../README.md#middleware"' in html and 'href="../jsonrpc_mcp/wire.py"' in html
    assert 'href="types.html"' in html and "zz-links.html" in (root / "site" / "index.html").read_text()

    page.write_text("# Links\n\n[gone](../no-such-file.md), [missing](no-such-page.md)\n", encoding="utf-8")
    done = _build(root, root / "site")
    assert done.returncode != 0
    assert "links to '../no-such-file.md', which does not exist" in done.stderr
    assert "'no-such-page.md', but the target is not found" in done.stderr


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole site, built once for the tests that read it."""
    _needs_mkdocs()
    built = tmp_path_factory.mktemp("site") / "site"
    done = _build(REPO, built)
    assert done.returncode == 0, done.stderr[-4000:]
    return built


def test_the_learn_pages_frames_are_shown_whole_at_1280_px(site: Path, tmp_path: Path) -> None:
    from tests.apps import host as apps_host
    from tests.browser import chromium

    binary = chromium()
    with (
        (tmp_path / "chromium.log").open("wb") as log,
        apps_host.chromium(binary, tmp_path / "p", log) as browser,
    ):
        metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        browser.open((site / "learn.html").as_uri())
        browser.call("Emulation.setDeviceMetricsOverride", metrics)
        deadline = time.monotonic() + 60
        while browser.evaluate("document.readyState") != "complete":
            assert time.monotonic() < deadline, "learn.html did not load"
            time.sleep(0.05)
        blocks = """[...document.querySelectorAll('div.highlight:not([class*="language-"]) pre > code')]"""
        total = browser.evaluate(f"{blocks}.length")
        cut = browser.evaluate(f"{blocks}.filter(c => c.scrollWidth > c.clientWidth + 1).length")
        widest = browser.evaluate(f"Math.max(...{blocks}.map(c => c.textContent.split('\\n')[0].length))")
        browser.screenshot(tmp_path / "learn.png")
    assert total >= 7 and widest > 200  # the page's trace blocks, long frames among them
    assert cut == 0  # none scrolls: every frame can be read whole


def test_the_site_builds_strictly_and_lists_every_public_name(site: Path) -> None:
    assert (site / "index.html").is_file() and (site / "reference" / "index.html").is_file()
    names = _inventory(site)
    absent = []
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name in public_names(module):
            obj = getattr(module, name)
            # where it is defined, for a name documented from its home module (see docs/reference/trace.md)
            home = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', '')}"
            if not name.startswith("__") and f"{module_name}.{name}" not in names and home not in names:
                absent.append(f"{module_name}.{name}")
    assert absent == []
