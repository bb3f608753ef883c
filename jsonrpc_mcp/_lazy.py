"""Names a package exports but loads on first use (PEP 562), shared by the package and its
subpackages. Imports nothing itself (not even ``typing``): ``import jsonrpc_mcp`` stays cheap.

Each lazy package writes where its names live twice: as its ``if TYPE_CHECKING:`` block of
``from .module import Name`` lines (what type checkers and readers see), and as the table it hands
to :func:`lazy_names` (what runs). The table is data in the module's code, so the package imports
the same from a zip or from bytecode alone as from source files; tests/test_lazy.py checks that
the block, the table and ``__all__`` agree.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING (see the module docstring)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def lazy_names(
    namespace: dict[str, Any], table: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``.

    ``table`` maps a module relative to the package (``".client"``; ``"."``: the name is a
    submodule itself) to the names of ``__all__`` loaded from it. A name is imported on first use,
    then kept in the package, so later lookups are plain attribute reads. Imported with
    ``__import__``, whose imports ``python -X importtime`` reports (``importlib.import_module``'s
    are missing from its figures). A name of ``__all__`` the table does not place (and the package
    does not define) is an ImportError at once."""
    package: str = namespace["__name__"]
    exported = frozenset(namespace["__all__"])
    homes = {name: home for home, names in table.items() for name in names}
    missing = sorted(name for name in exported if name not in homes and name not in namespace)
    if missing:
        raise ImportError(f"{package}: no lazy table entry for the __all__ names {missing}")

    def __getattr__(name: str) -> Any:
        if name not in exported or name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home = homes[name]
        if home == ".":
            __import__(f"{package}.{name}")
            value = sys.modules[f"{package}.{name}"]
        else:
            __import__(package + home)
            value = getattr(sys.modules[package + home], name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*exported, *(name for name in namespace if name.startswith("__"))})

    return __getattr__, __dir__
