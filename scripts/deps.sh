#!/usr/bin/env bash
# Installs the Debian packages Sluice builds and tests with, when missing.
# Every dependency comes from Debian 12; nothing is downloaded from elsewhere.
#   cmake, make, gcc, pkg-config   the build
#   lemon                          the parser generator (grammar.y -> C)
#   libmimalloc-dev                the allocator behind cm_malloc
#   liblz4-dev, libzstd-dev        block compression (shuffle, spill and evicted blocks)
#   libxxhash-dev                  block checksums, hashing
#   libpcre2-dev                   regular expressions (regexp_matches, regexp_replace, ...)
#   libedit-dev                    the REPL's line editing and history
#   libsqlite3-dev                 the differential tests compare against sqlite3
#   libcriterion-dev               unit tests
#   python3                        the TPC-DS benchmark runner (bench/tpcds/run.py)
#   chromium                       the stage timeline's test renders its HTML headless
#                                  (tests/cli/timeline_test.py)
#   clang, libclang-rt-14-dev      the fuzz targets (scripts/fuzz.sh): libFuzzer and the sanitizer
#                                  runtimes are in the -rt package, which clang only recommends
set -euo pipefail
packages=(cmake make gcc pkg-config lemon libmimalloc-dev liblz4-dev libzstd-dev libxxhash-dev
          libpcre2-dev libedit-dev libsqlite3-dev libcriterion-dev python3 chromium clang libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "Installing: ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
