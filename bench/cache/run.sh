#!/usr/bin/env bash
# run.sh - bench/cache: the seed paper's matrix (cache level N/M/M&S/S x storage/shuffle split
# _1/_2/_3, plus the unified and auto memory modes) on PageRank, transitive closure and K-means.
# The work is done by run.py beside this file (python3, standard library only); its docstring
# and bench/cache/README.md describe the options.
#   bench/cache/run.sh [--scale S] [--workloads pagerank,tc,kmeans] [--limit SIZE] [--check] ...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null; then
  echo "run.sh: python3 is needed (Debian package python3)" >&2
  exit 1
fi
exec python3 "$here/run.py" "$@"
