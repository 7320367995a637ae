#!/usr/bin/env python3
"""Differential corpus of scalar function calls: Sluice against DuckDB.

Every scalar function of `sluice_functions` is called with arguments drawn from
typed pools (NULLs, empty strings, Unicode, extremes, wrong types), on Sluice and
on DuckDB (../shared/tools/duckdb/duckdb-sql), and the answers are compared.

  corpus.py [--sluice build/sluice] [--duckdb PATH] [--write-test FILE] [--report FILE]

Two rounds per function and arity:
  1. one representative value of every kind in each argument position (sampled
     when there are too many combinations), to learn which kinds each engine takes;
  2. for the combinations of kinds that DuckDB accepts, more values of those kinds.

Every difference must be explained by a rule of EXPLAINED (explained.tsv, the
reason for each is in README.md); the script exits 1 when one is not.
--write-test writes the calls to a sqllogictest file with DuckDB's answers where
the engines agree (and `statement error` where both refuse the call), so that
CI checks them without DuckDB.  Deterministic: the same Sluice gives the same
file.
"""
import argparse
import csv
import itertools
import math
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

# One list of literals per kind; the first is the representative of round 1.
POOLS = {
    "int": ["7", "0", "-1", "1", "42", "2147483647", "-2147483648",
            "CAST(9223372036854775807 AS BIGINT)", "CAST(-9223372036854775807 AS BIGINT)", "3"],
    "double": ["2.5e0", "0.0e0", "-1.5e0", "1e300", "-1e-300", "0.1e0", "100.0e0", "1e0"],
    "decimal": ["3.14", "-0.005", "0.00", "12345.678"],
    "str": ["'abc'", "''", "'héllo'", "'東京'", "'A b  C'", "' x '", "'a,b,,c'", "'ǅ'",
            "'straße'", "'%_'", "'42'", "'2024-02-29'", "'a'", "'bb'", "'-'", "'ab|cd'"],
    "date": ["DATE '2024-02-29'", "DATE '1970-01-01'", "DATE '0001-01-01'",
             "DATE '9999-12-31'", "DATE '2023-12-31'"],
    "ts": ["TIMESTAMP '2024-02-29 13:45:30.123456'", "TIMESTAMP '1969-12-31 23:59:59'",
           "TIMESTAMP '2000-01-01 00:00:00'"],
    "bool": ["true", "false"],
    "null": ["NULL"],
    "list": ["[1, 2, NULL]", "[]", "['a', 'b']", "[3]"],
}
KINDS = list(POOLS)
ROUND1_MAX = 80     # kind combinations tried per function and arity
ROUND2_PER = 12     # calls per accepted kind combination
ROUND2_MAX = 60     # calls per function and arity in round 2
VARIADIC_MAX = 3    # arities tried for a function without a maximum

# Functions whose answer changes from run to run, or that change the session.
SKIP = {"random", "now", "current_date", "setseed", "version", "unnest", "string_split",
        "grouping", "hash"}


CRASH = "<crash>"


def run_sluice(binary, stmts):
    return run_chunked(binary + ["--mode", "tsv", "--nullvalue", "NULL", "--threads", "1"], stmts)


def run_duckdb(tool, stmts):
    return run_chunked([tool], stmts)


def run_chunked(cmd, stmts):
    """{id: text} of the calls that returned a row (CRASH for a call that
    killed the process); the others failed.  Runs in chunks, and a chunk that
    dies (exit status past 1: a signal, or a host that ran out of memory) is
    run again call by call to find the call that killed it."""
    out = {}
    for at in range(0, len(stmts), 400):
        chunk = stmts[at:at + 400]
        rc, got = run(cmd, chunk)
        if rc in (0, 1):
            out.update(got)
            continue
        for one in chunk:
            rc, got = run(cmd, [one])
            out.update(got)
            if rc not in (0, 1):
                out[one[0]] = CRASH
    return out


def run(cmd, stmts):
    script = "".join("SELECT '#%d', (%s);\n" % (i, sql) for i, sql in stmts)
    p = subprocess.run(cmd, input=script, capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        m = re.match(r"#(\d+)\t(.*)$", line)
        if m:
            out[int(m.group(1))] = m.group(2)
    return p.returncode, out


def norm(v):
    """Text that means the same in both engines' output."""
    v = re.sub(r"'([^',\[\]]*)'", r"\1", v) if v.startswith("[") else v
    low = v.lower()
    if low in ("nan",):
        return "nan"
    if low in ("inf", "infinity"):
        return "inf"
    if low in ("-inf", "-infinity"):
        return "-inf"
    return v


def same(a, b):
    a, b = norm(a), norm(b)
    if a == b:
        return True
    if a.startswith("[") and b.startswith("[") and a.endswith("]") and b.endswith("]"):
        xs, ys = a[1:-1].split(", "), b[1:-1].split(", ")
        return len(xs) == len(ys) and all(same(x, y) for x, y in zip(xs, ys))
    try:
        x, y = float(a), float(b)
    except ValueError:
        return False
    if math.isnan(x) or math.isnan(y):
        return False
    return x == y or abs(x - y) <= 1e-9 * max(abs(x), abs(y))


def slt_text(v):
    """A value as slt_runner prints it: (empty), and @ for each byte outside ASCII."""
    if v == "":
        return "(empty)"
    return "".join(chr(c) if 0x20 <= c <= 0x7E else "@" for c in v.encode())


def load_explained(path):
    rules = []
    with open(path, newline="") as f:
        for row in csv.reader(f, delimiter="\t"):
            if not row or row[0].startswith("#"):
                continue
            fn, pattern, outcome = row[0], row[1], row[2]  # row[3]: the reason
            rules.append((fn, re.compile(pattern), outcome))
    return rules


def explained(rules, fn, sql, outcome):
    for rfn, pat, rout in rules:
        if (rfn == "*" or rfn == fn) and (rout == "*" or rout == outcome) and pat.search(sql):
            return True
    return False


def functions(binary):
    q = ("SELECT function_name, min_args, coalesce(max_args, -1) FROM sluice_functions "
         "WHERE function_type = 'scalar' AND alias_of IS NULL ORDER BY 1")
    p = subprocess.run(binary + ["--mode", "tsv", "-c", q], capture_output=True, text=True,
                       check=True)
    fns = []
    for line in p.stdout.splitlines():
        name, lo, hi = line.split("\t")
        if name in SKIP:
            continue
        lo, hi = int(lo), int(hi)
        hi = lo + VARIADIC_MAX - 1 if hi < 0 else hi
        fns.append((name, lo, max(lo, hi)))
    return fns


def call(fn, args):
    return "%s(%s)" % (fn, ", ".join(args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sluice", default=os.path.join(REPO, "build", "sluice"))
    ap.add_argument("--duckdb", default=os.path.normpath(
        os.path.join(REPO, "..", "shared", "tools", "duckdb", "duckdb-sql")))
    ap.add_argument("--write-test")
    ap.add_argument("--report")
    args = ap.parse_args()
    sluice = [args.sluice]
    rng = random.Random(20261202)

    fns = functions(sluice)
    # Round 1: kinds.
    calls = []  # (fn, kinds, sql)
    for fn, lo, hi in fns:
        for n in range(lo, hi + 1):
            combos = list(itertools.product(KINDS, repeat=n))
            if len(combos) > ROUND1_MAX:
                combos = rng.sample(combos, ROUND1_MAX)
            for kinds in combos:
                calls.append((fn, kinds, call(fn, [POOLS[k][0] for k in kinds])))
    stmts = list(enumerate(c[2] for c in calls))
    d1, s1 = run_duckdb(args.duckdb, stmts), run_sluice(sluice, stmts)
    # Round 2: more values of the kinds DuckDB takes.
    seen = {c[2] for c in calls}
    per_fn = {}
    for i, (fn, kinds, sql) in enumerate(calls):
        if i in d1 and "null" not in kinds:
            per_fn.setdefault((fn, len(kinds)), []).append(kinds)
    for (fn, n), kind_lists in sorted(per_fn.items()):
        extra = []
        for kinds in kind_lists:
            pool = list(itertools.product(*[POOLS[k] for k in kinds]))
            rng.shuffle(pool)
            for vals in pool[:ROUND2_PER]:
                sql = call(fn, list(vals))
                if sql not in seen:
                    seen.add(sql)
                    extra.append((fn, kinds, sql))
        rng.shuffle(extra)
        calls.extend(extra[:ROUND2_MAX])
    stmts = list(enumerate(c[2] for c in calls))
    d, s = run_duckdb(args.duckdb, stmts), run_sluice(sluice, stmts)

    rules = load_explained(os.path.join(HERE, "explained.tsv"))
    records, report = [], []
    counts = {"agree": 0, "both_error": 0, "explained": 0, "unexplained": 0}
    for i, (fn, kinds, sql) in enumerate(calls):
        dv, sv = d.get(i), s.get(i)
        if dv == CRASH:
            counts.setdefault("duckdb_crash", 0)
            counts["duckdb_crash"] += 1
            print("duckdb crashed (not compared): %s" % sql, file=sys.stderr)
            continue
        if dv is None and sv is None:
            counts["both_error"] += 1
            records.append("statement error\nSELECT %s\n" % sql)
            continue
        if dv is not None and sv is not None and sv != CRASH and same(dv, sv):
            counts["agree"] += 1
            if norm(dv) == norm(sv) and "\t" not in sv and "\\" not in sv:
                records.append("query T\nSELECT %s\n----\n%s\n" % (sql, slt_text(sv)))
            continue
        outcome = ("sluice-error" if sv is None else "duckdb-error" if dv is None else "value")
        if sv == CRASH:
            outcome = "crash"
        elif explained(rules, fn, sql, outcome):
            counts["explained"] += 1
            continue
        counts["unexplained"] += 1
        report.append("%s\t%s\t%s\tduckdb=%s\tsluice=%s" % (outcome, fn, sql, dv, sv))

    summary = "%d calls of %d functions: %s" % (
        len(calls), len(fns), ", ".join("%s %d" % kv for kv in counts.items()))
    print(summary)
    for line in report:
        print(line)
    if args.report:
        with open(args.report, "w") as f:
            f.write(summary + "\n" + "\n".join(report) + "\n")
    if args.write_test:
        with open(args.write_test, "w") as f:
            f.write("# Generated by tests/diff/duckdb/corpus.py --write-test: scalar function calls\n"
                    "# on which Sluice and DuckDB agree (with the answer both gave), or which both refuse.\n"
                    "# Do not edit; run the script again (it needs DuckDB, see README.md).\n\n")
            f.write("\n".join(records))
    return 1 if counts["unexplained"] else 0


if __name__ == "__main__":
    sys.exit(main())
