#!/usr/bin/env bash
# Runs the test suite (or any command) beside CPU-bound processes, to show it passes on a busy machine:
# with two cores, four burners keep both saturated for the whole run, so every wait in the suite must be
# bounded per step (tests/timeouts.py) and no test may assert how long something took.
#
# Usage (from the repository's root):
#   tests/under_load.sh                       # make test beside four burners
#   make test-under-load                      # the same, through make (VENV= and PYTHON= are passed on)
#   tests/under_load.sh make test PYTEST_ARGS="tests/jsonrpc tests/transports --cov-fail-under=0"
#   BURNERS=8 tests/under_load.sh .venv/bin/python -m pytest -q tests/http
#
# BURNERS sets how many (default 4). The burners are stopped however the command ends (success, failure,
# Ctrl-C, SIGTERM), and the script exits with the command's status. On a slow machine, scale every
# test timeout with JSONRPC_MCP_TEST_TIMEOUT_SCALE (see tests/timeouts.py).
set -euo pipefail

if [ $# -eq 0 ]; then
    set -- make test
fi

burners=()
stop_burners() {
    if [ ${#burners[@]} -gt 0 ]; then
        kill "${burners[@]}" 2>/dev/null || true
        wait "${burners[@]}" 2>/dev/null || true
    fi
}
trap stop_burners EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

burner=$(command -v python3 || command -v python)
for _ in $(seq "${BURNERS:-4}"); do
    "$burner" -c 'while True: pass' &
    burners+=($!)
done
echo "under_load.sh: ${#burners[@]} CPU burners running (pids ${burners[*]}): $*" >&2
"$@"
