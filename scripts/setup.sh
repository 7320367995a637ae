#!/usr/bin/env bash
# README command 1: install what is missing, build (optimized, with debug info)
# into build/, and start sluice on the built-in demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
exec build/sluice --demo
