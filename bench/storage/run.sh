#!/usr/bin/env bash
# run.sh - the storage benchmark of Sluice: directory databases beside DuckDB's file.
#   bench/storage/run.sh [--sf SF] [--threads T] [--work DIR] [--insert-rows N]
#                        [--txn-rows N] [--skip-queries]
# The work is done by run.py beside this file (python3, standard library only);
# bench/storage/README.md says what is measured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is needed (Debian package python3)" >&2
  exit 1
fi
exec python3 "$here/run.py" "$@"
