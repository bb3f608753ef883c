"""Lazy exports: each package's table is its TYPE_CHECKING block, read from its source, and
``__all__`` must agree with it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from jsonrpc_mcp._lazy import lazy_names, read_table

PACKAGES = ["jsonrpc_mcp", "jsonrpc_mcp.server", "jsonrpc_mcp.jsonrpc"]


def test_the_table_is_read_from_the_type_checking_block() -> None:
    source = (
        "x = 1\n"
        "if TYPE_CHECKING:\n"
        "    from . import content\n"
        "    from .a import One, Two  # a comment\n"
        "    from .b.c import (\n"
        "        Three,\n"
        "        Four as Four,\n"
        "    )\n"
        "\n"
        "    import os\n"
        "__all__ = []\n"
        "if TYPE_CHECKING:\n"
        "    from .later import Ignored\n"
    )
    assert read_table(source) == {"content": ".", "One": ".a", "Two": ".a", "Three": ".b.c", "Four": ".b.c"}
    assert read_table("no block here\n") == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves_from_its_table(package: str) -> None:
    module = importlib.import_module(package)
    table = read_table(Path(module.__file__ or "").read_text(encoding="utf-8"))
    assert set(module.__all__) - {"__version__"} == set(table)
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_a_name_the_block_does_not_import_is_an_import_error(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("if TYPE_CHECKING:\n    from .a import One\n", encoding="utf-8")
    getattr_, _ = lazy_names({"__name__": "fake", "__all__": ["One", "Two"], "__file__": str(init)})
    with pytest.raises(ImportError, match="Two"):
        getattr_("One")


def test_an_unknown_name_is_an_attribute_error(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("", encoding="utf-8")
    getattr_, dir_ = lazy_names({"__name__": "fake", "__all__": [], "__file__": str(init)})
    with pytest.raises(AttributeError, match="nothing"):
        getattr_("nothing")
    assert [name for name in dir_() if not name.startswith("__")] == []
