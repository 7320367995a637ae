#!/usr/bin/env bash
# run.sh - the TPC-H benchmark of Sluice: generate, load, run, compare, report.
#   bench/tpch/run.sh [--sf SF] [--data DIR] [--runs N] [--threads T] [--peer] [--check] [--db DIR]
# The work is done by run.py beside this file (python3, standard library only);
# bench/tpch/README.md describes the options and the outputs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is needed (Debian package python3)" >&2
  exit 1
fi
exec python3 "$here/run.py" "$@"
