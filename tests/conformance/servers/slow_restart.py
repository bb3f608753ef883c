"""A stdio server slow to start on every start but the first: ``slow_restart.py COUNTER DELAY [SERVER]``.

The first start (``COUNTER`` absent or 0) serves at once; every later one sleeps ``DELAY`` seconds
before it serves, as a server does whose later starts are slowed (a loaded machine, a cold cache). It
then runs ``SERVER`` (default: ``examples/everything/server.py``) over stdio in this process.
"""

from __future__ import annotations

import runpy
import sys
import time
from pathlib import Path

EVERYTHING = Path(__file__).resolve().parents[3] / "examples" / "everything" / "server.py"


def main() -> None:
    counter, delay = Path(sys.argv[1]), float(sys.argv[2])
    server = sys.argv[3] if len(sys.argv) > 3 else str(EVERYTHING)
    starts = int(counter.read_text() or 0) if counter.exists() else 0
    counter.write_text(str(starts + 1))
    if starts:
        time.sleep(delay)
    sys.argv = [server]
    sys.path.insert(0, str(Path(server).resolve().parent))  # as "python SERVER" would
    runpy.run_path(server, run_name="__main__")


if __name__ == "__main__":
    main()
