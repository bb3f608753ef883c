#!/bin/sh
# Print the tables of a PDF as CSV, one block per page (needs camelot: pip install camelot-py).
set -eu
python3 - "$1" <<'PY'
import sys
import camelot
for number, table in enumerate(camelot.read_pdf(sys.argv[1], pages="all"), start=1):
    print(f"# table {number}, page {table.page}")
    print(table.df.to_csv(index=False, header=False), end="")
PY
