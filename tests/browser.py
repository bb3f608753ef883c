"""Headless Chromium for the tests of the HTML pages (Debian's ``chromium``; ``.ci/run`` installs it):
the tests that need it skip, saying so, where there is none."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests import timeouts


def chromium() -> str:
    """The browser's path, or a skip of the calling test."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium: apt-get install chromium")


def browser(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the browser headless with its own profile folder (``--dump-dom URL``, ``--screenshot=...``)."""
    command = [binary, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeouts.LONG_RUN, check=False)
