#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/, clang, ASan+UBSan) and runs each for a while;
# any crash, leak, sanitizer report or timeout fails the run.  See docs/fuzzing.md.
#   scripts/fuzz.sh [SECONDS] [TARGET...]   SECONDS per target (default 60);
#                                           TARGETS: fuzz_sql fuzz_csv fuzz_block (default all)
# First every file in fuzz/regress/<target>/ (inputs of past findings) is replayed once.
# Seeds come from the repository's own files and are made again on every run in
# build-fuzz/corpus/<target>/seeds; what the fuzzer adds goes to build-fuzz/corpus/<target>/work
# and is kept between runs.  A finding is written to build-fuzz/findings/<target>/.
# Runs at nice 10, one target at a time, one process each (the machine is shared).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_sql fuzz_csv fuzz_block)
bash scripts/deps.sh
dir=build-fuzz
cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_FUZZ=ON \
      -DSLUICE_TESTS=OFF >/dev/null
nice -n 10 cmake --build "$dir" -j2 --target "${targets[@]}" gen_block_seeds >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# SQL: every statement and query of tests/sql, one file each.
seed_sql() {
  local out=$1
  find tests/sql -name '*.test' -print0 | sort -z | xargs -0 awk -v out="$out" '
    function flush() {
      if (sql != "") { n++; f = sprintf("%s/%s-%d", out, base, n); printf "%s", sql > f; close(f) }
      sql = ""; on = 0
    }
    FNR == 1 { flush(); base = FILENAME; gsub(/[^A-Za-z0-9]/, "_", base); n = 0 }
    /^(statement|query)/ { flush(); on = 1; next }
    /^----/ || /^$/ { flush(); next }
    on && !/^#/ { sql = sql $0 "\n" }
    END { flush() }'
}

# CSV: every CSV file under tests/, behind a few option headers (fuzz/fuzz_csv.c):
# default options with VARCHAR, INTEGER, DATE, DECIMAL fields; '|' with a header and NULL;
# tab with no quoting into BIGINT, DOUBLE, TIME, BOOLEAN.
seed_csv() {
  local out=$1 f i=0
  while IFS= read -r -d '' f; do
    i=$((i + 1))
    { printf '\x00\x03\x04\x25'; cat "$f"; } >"$out/csv-$i-a"
    { printf '\x31\x02\x40\x52'; cat "$f"; } >"$out/csv-$i-b"
    { printf '\x0a\x03\x21\x76'; cat "$f"; } >"$out/csv-$i-c"
  done < <(find tests -name '*.csv' -print0 | sort -z)
}

status=0
for t in "${targets[@]}"; do
  corpus=$dir/corpus/$t
  rm -rf "$corpus/seeds"
  mkdir -p "$corpus/seeds" "$corpus/work" "$dir/findings/$t"
  case $t in
    fuzz_sql) seed_sql "$corpus/seeds"; opts=(-max_len=4096 -dict=fuzz/sql.dict) ;;
    fuzz_csv) seed_csv "$corpus/seeds"; opts=(-max_len=8192) ;;
    fuzz_block) "$dir/fuzz/gen_block_seeds" "$corpus/seeds"; opts=(-max_len=65536) ;;
    *) echo "fuzz.sh: unknown target $t" >&2; exit 2 ;;
  esac
  common=(-timeout=10 -rss_limit_mb=2048 -artifact_prefix="$dir/findings/$t/")
  if compgen -G "fuzz/regress/$t/*" >/dev/null; then
    echo "== $t: replaying fuzz/regress/$t"
    if ! nice -n 10 "$dir/fuzz/$t" "${common[@]}" fuzz/regress/$t/* >"$dir/findings/$t/regress.log" 2>&1; then
      tail -40 "$dir/findings/$t/regress.log" >&2
      echo "fuzz.sh: $t fails on an input of fuzz/regress/$t" >&2
      status=1
      continue
    fi
  fi
  echo "== $t: fuzzing for ${secs}s"
  log=$dir/findings/$t/fuzz.log
  if nice -n 10 "$dir/fuzz/$t" "${common[@]}" "${opts[@]}" -max_total_time="$secs" -print_final_stats=1 \
       "$corpus/work" "$corpus/seeds" >"$log" 2>&1; then
    grep -E '^#[0-9]+.*(DONE|INITED)' "$log" | tail -2
    grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' "$log"
  else
    tail -60 "$log" >&2
    echo "fuzz.sh: $t found a bug; the input is in $dir/findings/$t/ (log: $log)" >&2
    status=1
  fi
done
exit $status
