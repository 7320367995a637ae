#!/usr/bin/env python3
"""functions_doc_test.py - docs/functions.md against the engine's function registry.

Fails when a function of sluice_functions (kind and name) has no row in docs/functions.md,
when a row names a function the engine does not have as that kind, or when a row's example
does not give the result the row shows.  The rows are the lines `| `name` | description |
`example` | `result` |` under the headings `## Scalar functions`, `## Aggregate functions`,
`## Window functions` and `## Table functions`.  Examples run with one thread in a temporary
directory holding people.csv; a result is the CLI's rows, values joined by ", " and rows by
"; ".

Usage: python3 tests/cli/functions_doc_test.py /path/to/sluice /path/to/docs/functions.md
Prints one line per failure and a final "N passed, M failed"; exits 1 on any failure.
"""
import os
import re
import subprocess
import sys
import tempfile

KINDS = {"Scalar": "scalar", "Aggregate": "aggregate", "Window": "window", "Table": "table"}
ROW = re.compile(r"^\| `([a-z_0-9]+)` \| (.+?) \| `(.+?)` \| `(.*)` \|$")


def run(sluice, sql, cwd):
    p = subprocess.run([sluice, "--threads", "1", "-c", sql], capture_output=True, text=True,
                       cwd=cwd, timeout=60)
    if p.returncode != 0 or p.stderr:
        return None, p.stderr.strip().splitlines()[0] if p.stderr.strip() else "exit %d" % p.returncode
    lines = p.stdout.rstrip("\n").split("\n") if p.stdout else []
    return "; ".join(", ".join(line.split("\t")) for line in lines), None


def doc_rows(path):
    """(kind, name, example, result, line number) of every row; errors for malformed ones."""
    rows, errors, kind = [], [], None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("## "):
                kind = next((k for w, k in KINDS.items() if line[3:].startswith(w)), None)
                continue
            if not line.startswith("| `"):
                continue
            m = ROW.match(line)
            if kind is None or m is None:
                errors.append("%s:%d: not a function row under a kind's heading" % (path, n))
                continue
            rows.append((kind, m.group(1), m.group(3), m.group(4), n))
    return rows, errors


def main():
    if len(sys.argv) != 3:
        print("usage: %s SLUICE DOC" % sys.argv[0], file=sys.stderr)
        return 2
    sluice, doc = os.path.abspath(sys.argv[1]), sys.argv[2]
    failures, passed = [], 0
    with tempfile.TemporaryDirectory(prefix="sluice_fn_doc.") as tmp:
        with open(os.path.join(tmp, "people.csv"), "w") as f:
            f.write("id,name\n1,ann\n2,bob\n")
        listed, err = run(sluice, "SELECT function_type, function_name FROM sluice_functions", tmp)
        if listed is None:
            print("cannot read sluice_functions: %s" % err)
            return 1
        engine = {tuple(r.split(", ")) for r in listed.split("; ")}
        rows, failures = doc_rows(doc)
        documented = set()
        for kind, name, example, result, n in rows:
            if (kind, name) in documented:
                failures.append("%s:%d: %s function %s documented twice" % (doc, n, kind, name))
            documented.add((kind, name))
            if (kind, name) not in engine:
                failures.append("%s:%d: the engine has no %s function %s" % (doc, n, kind, name))
                continue
            if not re.search(r"\b%s\b" % re.escape(name), example, re.IGNORECASE):
                failures.append("%s:%d: the example of %s does not call it" % (doc, n, name))
                continue
            got, err = run(sluice, example, tmp)
            if got is None:
                failures.append("%s:%d: %s: %s" % (doc, n, example, err))
            elif got != result:
                failures.append("%s:%d: %s gives `%s`, not `%s`" % (doc, n, example, got, result))
            else:
                passed += 1
        for kind, name in sorted(engine - documented):
            failures.append("%s: %s function %s is not documented" % (doc, kind, name))
    for f in failures:
        print(f)
    print("%d passed, %d failed" % (passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
