"""Names a package exports but loads on first use (PEP 562), shared by the package and its
subpackages. Imports nothing itself (not even ``typing``): ``import jsonrpc_mcp`` stays cheap."""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING (see the module docstring)
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping
    from typing import Any


def lazy_names(
    namespace: dict[str, Any],
    homes: Mapping[str, str],
    *,
    default: str | None = None,
    modules: Collection[str] = (),
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose globals are ``namespace``.

    A name of its ``__all__`` is imported on first use from its home (a module relative to the
    package: ``homes[name]``, else ``default``), or is the submodule itself when in ``modules``;
    then it is kept in the package, so later lookups are plain attribute reads. Imported with
    ``__import__``, whose imports ``python -X importtime`` reports (``importlib.import_module``'s
    are missing from its figures)."""
    package: str = namespace["__name__"]
    exported = frozenset(namespace["__all__"])

    def __getattr__(name: str) -> Any:
        home = f".{name}" if name in modules else homes.get(name, default)
        if name not in exported or home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = package + home
        __import__(module)
        value = sys.modules[module] if name in modules else getattr(sys.modules[module], name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*exported, *(name for name in namespace if name.startswith("__"))})

    return __getattr__, __dir__
