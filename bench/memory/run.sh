#!/usr/bin/env bash
# run.sh - the memory benchmark of Sluice: the seed workloads (/work/shared/workloads) on
# Sluice and on DuckDB, on the same CSV inputs, with default memory and with a quarter of
# Sluice's peak.  The work is done by run.py beside this file (python3, standard library
# only); its docstring and bench/memory/README.md describe the options.
#   bench/memory/run.sh [--scale S] [--scale-for W=S] [--workloads tc,...] [--check] ...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is needed (Debian package python3)" >&2
  exit 1
fi
exec python3 "$here/run.py" "$@"
