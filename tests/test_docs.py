"""The docs are executable: every Python block in README.md runs, every JSON block parses."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [
    REPO / "README.md",
    *sorted((REPO / "docs").glob("*.md")),
    *sorted((REPO / "examples").glob("*/README.md")),
]
_BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def _blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for path in DOCS:
        for index, match in enumerate(_BLOCK.finditer(path.read_text(encoding="utf-8"))):
            if match.group(1) == language:
                found.append((f"{path.relative_to(REPO)}#{index}", match.group(2)))
    return found


@pytest.mark.parametrize(("where", "code"), _blocks("python"), ids=[w for w, _ in _blocks("python")])
def test_python_block_runs(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    # stdin is closed, so a block ending in server.run() serves nothing and exits at EOF; it runs in
    # an empty directory: a block must work wherever a reader runs it, not only in a checkout
    done = subprocess.run(
        [sys.executable, str(script)], stdin=subprocess.DEVNULL, capture_output=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, f"{where} failed:\n{done.stderr.decode(errors='replace')}"


@pytest.mark.parametrize(("where", "text"), _blocks("json"), ids=[w for w, _ in _blocks("json")])
def test_json_block_parses(where: str, text: str) -> None:
    orjson.loads(text)
