#!/usr/bin/env bash
# README command 2: build and run every test (unit, SQL logic, CLI contract).
#   scripts/test.sh            the default build (build/), warnings as errors
#   scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --tiny     batches of 3 rows, to shake out batch-boundary bugs (build-tiny/)
#                              (these two skip the one-thread and tiny-shuffle SQL runs)
#   scripts/test.sh --tsan     ThreadSanitizer (build-tsan/), on the tests that run operators
#                              spilling, the shuffle store and the adaptive rules on 2 threads,
#                              and on the C API's example client (streams, two connections)
#                              (Criterion's forking runner does not start under TSan, so no
#                              unit tests)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
dir=build
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_WERROR=ON)
case "${1:-}" in
  --asan) dir=build-asan; flags=(-DCMAKE_BUILD_TYPE=Debug -DSLUICE_WERROR=ON -DSLUICE_SANITIZE=ON) ;;
  --tiny) dir=build-tiny; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_WERROR=ON -DSLUICE_BATCH_CAP=3) ;;
  --tsan) dir=build-tsan; flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSLUICE_WERROR=ON -DSLUICE_TSAN=ON) ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--asan|--tiny|--tsan]" >&2; exit 2 ;;
esac
cmake -S . -B "$dir" "${flags[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-report_signal_unsafe=0}
cd "$dir"
case "${1:-}" in
  --tsan)
    # A race report makes the process exit 66, which fails the test.  The SQL files run
    # here are the memory directory's (sql_small_memory_spill): every operator spilling on
    # two threads, where the scheduler, the shuffle store, the memory manager, the block
    # store and the spill files meet.  The rest of the suite at 16MB (sql_small_memory)
    # ran beside it until 2026-12-05: the same machinery without spilling, 6 minutes under
    # TSan, for a CI run that had grown past half an hour.
    ctest --output-on-failure -j2 \
          -R '^(sql_small_memory_spill|shuffle_store|adaptive|sort_spill|api_example)$' ;;
  --asan|--tiny)
    # The suite on one thread and with a squeezed shuffle store runs in the default
    # build; under the sanitizers and with 3-row batches it would add a quarter of an
    # hour to CI for little: the same operators run here on two threads and spilling.
    # The two sql_small_memory runs are the suite's files on two threads (here without
    # the directories sql_evict_on_unpin runs: tests/CMakeLists.txt), at a
    # limit where the large operators spill and the small ones do not; running it a
    # second time at the default limit took 6 minutes under ASan and 5 with 3-row
    # batches, of a CI run of 45.
    # memory_rss checks no RSS there (shadow memory is resident too), and its large
    # spilling queries took five minutes under ASan: sql_small_memory_spill runs the
    # same operators spilling on smaller data.  conformance_reopen (97 s under ASan)
    # adds the directory's save and load to the conformance files, which storage_persist
    # and sql_reopen run here; sql_directory (84 s with 3-row batches, a record per 3
    # rows of each column) and storage_persist (254 s with 3-row batches, of a timeout of
    # 300, on 2026-12-07: its loads and crash trials write a record per 3 rows) run in the
    # default build and under ASan.
    skip='sql_threads1|sql_tiny_shuffle|memory_rss'
    if [ "${1:-}" = --asan ]; then
      skip="$skip|conformance_reopen"
    else
      skip="$skip|sql_directory|storage_persist"
    fi
    ctest --output-on-failure -j2 -E "^($skip)\$" ;;
  *)
    ctest --output-on-failure -j2 ;;
esac
