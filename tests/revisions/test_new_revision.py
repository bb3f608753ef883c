"""A new revision is one file: the test-only ``rev_2099_01_01.py`` removes one more method, changes
three error codes and drops the routing headers, and the server honours each change with no edit
anywhere else, in memory and over HTTP, whether the file is dropped into the package (found by
name) or handed to ``Server(revisions=...)``."""

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
from tests import timeouts

HERE = Path(__file__).resolve().parent
PACKAGE = Path(jsonrpc_mcp.__file__).resolve().parent


def _probe(*args: str, pythonpath: Path | None = None) -> dict[str, Any]:
    env = dict(os.environ)
    # the copy first when there is one; the checkout for the tests package
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (pythonpath, HERE.parents[1]) if p is not None)
    done = subprocess.run(
        [sys.executable, str(HERE / "new_revision_probe.py"), *args],
        capture_output=True,
        timeout=timeouts.RUN,
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
    # a revision not served: the code of the latest served (2099-01-01 changed -32022 to -32097)
    assert answers["unsupported"]["error"]["code"] == -32097
    _check_http(answers["http"])


def _check_http(http: dict[str, Any]) -> None:
    """The same, POSTed to an McpHttpApp: each field of the revision read where its rule applies."""
    old, new = http["2026-07-28"], http["2099-01-01"]
    assert "result" in old["templates"] and old["templates"]["status"] == 200, old["templates"]
    assert (new["templates"]["error"]["code"], new["templates"]["status"]) == (-32601, 404)
    assert (old["confirm"]["error"]["code"], old["confirm"]["status"]) == (-32021, 400)
    assert (new["confirm"]["error"]["code"], new["confirm"]["status"]) == (-32099, 400)
    # has_routing_headers: required in 2026-07-28, absent from 2099-01-01
    assert (old["no_routing"]["error"]["code"], old["no_routing"]["status"]) == (-32020, 400)
    assert "Mcp-Method" in old["no_routing"]["error"]["message"]
    assert "result" in new["no_routing"] and new["no_routing"]["status"] == 200, new["no_routing"]
    # has_protocol_version_header (both) and header_mismatch_code (-32020, -32098)
    assert (old["version_mismatch"]["error"]["code"], old["version_mismatch"]["status"]) == (-32020, 400)
    assert (new["version_mismatch"]["error"]["code"], new["version_mismatch"]["status"]) == (-32098, 400)
    # unsupported_version_code, with the status the latest served revision gives it
    unsupported = http["unsupported"]
    assert (unsupported["error"]["code"], unsupported["status"]) == (-32097, 400)
    assert unsupported["error"]["data"]["requested"] == "1999-01-01"


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
