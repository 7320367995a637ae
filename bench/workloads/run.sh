#!/usr/bin/env bash
# run.sh - the seed workload scripts end to end: the Sluice versions in this directory on
# Sluice and, with --duckdb, the originals (/work/shared/workloads) on DuckDB, one at a time.
# Reports per script: completed, time, peak RSS, key figures, and checks the sizes the
# workloads' README states.  The work is done by run.py beside this file (python3, standard
# library only, sharing bench/memory/run.py's helpers); its docstring and
# bench/workloads/README.md describe the options.
#   bench/workloads/run.sh [--workloads wordcount,tc,...] [--duckdb] [--check] [--json F] ...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is needed (Debian package python3)" >&2
  exit 1
fi
exec python3 "$here/run.py" "$@"
