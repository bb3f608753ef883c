"""A new revision is one file: the test-only ``rev_2099_01_01.py`` removes one more method and
changes one error code, and the server honours both with no edit anywhere else, whether the file
is dropped into the package (found by name) or handed to ``Server(revisions=...)``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import jsonrpc_mcp

HERE = Path(__file__).resolve().parent
PACKAGE = Path(jsonrpc_mcp.__file__).resolve().parent


def _probe(*args: str, pythonpath: Path | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    # the copy first when there is one; the checkout for the tests package
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (pythonpath, HERE.parents[1]) if p is not None)
    done = subprocess.run(
        [sys.executable, str(HERE / "new_revision_probe.py"), *args],
        capture_output=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _check(answers: dict[str, Any]) -> None:
    assert "2099-01-01" in answers["known"] or answers.get("given")
    old, new = answers["2026-07-28"], answers["2099-01-01"]
    # the method 2099-01-01 removed: -32601 there, served in 2026-07-28
    assert "result" in old["templates"], old["templates"]
    assert new["templates"]["error"]["code"] == -32601
    assert "2099-01-01" in new["templates"]["error"]["message"]
    # the changed code: a capability the client did not declare
    assert old["confirm"]["error"]["code"] == -32021
    assert new["confirm"]["error"]["code"] == -32099
    assert new["confirm"]["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_a_revision_handed_to_the_server_is_honoured() -> None:
    answers = _probe("--given")
    assert Path(answers["package"]).resolve().parent == PACKAGE
    answers["given"] = True
    _check(answers)
    assert "2099-01-01" in answers["discover"]["result"]["supportedVersions"]


@pytest.mark.skipif(sys.platform == "win32", reason="copies the package with POSIX paths")
def test_a_revision_file_dropped_into_the_package_is_found_and_honoured(tmp_path: Path) -> None:
    copy = tmp_path / "site" / "jsonrpc_mcp"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(HERE / "rev_2099_01_01.py", copy / "revisions" / "rev_2099_01_01.py")
    answers = _probe(pythonpath=tmp_path / "site")
    assert Path(answers["package"]).resolve().parent == copy.resolve()  # the copy, not the checkout
    _check(answers)
    assert "2099-01-01" in answers["discover"]["result"]["supportedVersions"]


def test_the_checkout_itself_has_no_such_revision() -> None:
    from jsonrpc_mcp.revisions import REVISIONS

    assert "2099-01-01" not in REVISIONS
