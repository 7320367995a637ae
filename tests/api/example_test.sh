#!/usr/bin/env bash
# The C API as a client sees it: installs the build into a prefix inside the
# build directory (cmake --install), compiles docs/api_example.c with the flags
# pkg-config gives for the installed sluice.pc, runs it, and compares its
# output with example.expected.  Also checks that the binary and the header
# were installed.
#   example_test.sh BUILD_DIR SOURCE_DIR [CFLAGS]   (CFLAGS: a sanitized build's runtime)
set -euo pipefail
build=$1
src=$2
extra=${3:-}
prefix=$build/api_example/prefix
rm -rf "$build/api_example"
mkdir -p "$build/api_example"
cmake --install "$build" --prefix "$prefix" >/dev/null
test -x "$prefix/bin/sluice" || { echo "sluice binary not installed" >&2; exit 1; }
test -f "$prefix/include/sluice.h" || { echo "sluice.h not installed" >&2; exit 1; }
pcdir=$(dirname "$(find "$prefix" -name sluice.pc | head -1)")
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs sluice)
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir sluice)
# The example is a client: no flag of the build but the installed library's
# (and a sanitizer's runtime); the rpath finds it without LD_LIBRARY_PATH.
cc -std=c11 -Wall -Wextra -Werror $extra "$src/docs/api_example.c" $flags -Wl,-rpath,"$libdir" \
   -o "$build/api_example/api_example"
"$build/api_example/api_example" > "$build/api_example/out.txt"
diff -u "$src/tests/api/example.expected" "$build/api_example/out.txt"
echo "api example: ok"
