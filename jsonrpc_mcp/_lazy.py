"""Names a package exports but loads on first use (PEP 562), shared by the package and its
subpackages. Imports nothing itself (not even ``typing``): ``import jsonrpc_mcp`` stays cheap.

The table of where each name lives is written once, as the package's ``if TYPE_CHECKING:`` block
of ``from .module import Name`` lines (which type checkers and readers see as plain imports): on
the first lookup of a lazy name, that block is read from the package's source. ``__all__`` lists
the same names and :func:`lazy_names` checks that the two agree, so neither can drift.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING (see the module docstring)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def read_table(source: str) -> dict[str, str]:
    """``name -> ".module"`` (or ``"."`` for a submodule, ``from . import name``) from the
    ``from .x import a, b`` lines of the first ``if TYPE_CHECKING:`` block of ``source``."""
    table: dict[str, str] = {}
    lines = source.splitlines()
    try:
        start = lines.index("if TYPE_CHECKING:") + 1
    except ValueError:
        return table
    statement = ""
    for line in lines[start:]:
        if line and not line[0].isspace():
            break  # the end of the block
        statement = f"{statement} {line.split('#', 1)[0].strip()}".strip()
        if not statement or statement.count("(") > statement.count(")"):
            continue  # a parenthesized import goes on
        if statement.startswith("from .") and " import " in statement:
            module, names = statement[5:].split(" import ", 1)
            for item in names.strip("() ").split(","):
                words = item.split()
                if words:
                    table[words[-1]] = module.strip()  # "A as A" exports A
        statement = ""
    return table


def lazy_names(namespace: dict[str, Any]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``.

    A name of its ``__all__`` is imported on first use from the module its ``TYPE_CHECKING`` block
    imports it from (a submodule itself for ``from . import name``); then it is kept in the
    package, so later lookups are plain attribute reads. Imported with ``__import__``, whose
    imports ``python -X importtime`` reports (``importlib.import_module``'s are missing from its
    figures)."""
    package: str = namespace["__name__"]
    exported = frozenset(namespace["__all__"])
    homes: dict[str, str] = {}

    def table() -> dict[str, str]:
        if not homes:
            with open(namespace["__file__"], encoding="utf-8") as file:
                homes.update(read_table(file.read()))
            missing = sorted(name for name in exported if name not in homes and name not in namespace)
            if missing:
                raise ImportError(
                    f"{package}: __all__ names {missing} its TYPE_CHECKING block does not import"
                )
        return homes

    def __getattr__(name: str) -> Any:
        if name not in exported or name.startswith("__"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home = table()[name]
        module = package if home == "." else package + home
        __import__(module if home != "." else f"{package}.{name}")
        value = sys.modules[f"{package}.{name}"] if home == "." else getattr(sys.modules[module], name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*exported, *(name for name in namespace if name.startswith("__"))})

    return __getattr__, __dir__
