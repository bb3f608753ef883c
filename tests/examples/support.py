"""Shared by the memory example's tests: load an example file as a module, and a fake clock."""

from __future__ import annotations

import importlib.util
import sys
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType

MEMORY_DIR = Path(__file__).resolve().parents[2] / "examples" / "memory"


def load_module(path: Path, name: str) -> ModuleType:
    """Import the file at ``path`` under ``name`` (the examples are files, not packages), its
    folder on ``sys.path`` as ``jsonrpc-mcp serve`` puts it (for its sibling modules)."""
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class FakeClock:
    """Deterministic clock: every call advances by ``step``."""

    def __init__(self, start: datetime, step: timedelta = timedelta(minutes=1)) -> None:
        self.current = start
        self.step = step

    def __call__(self) -> datetime:
        value = self.current
        self.current += self.step
        return value
