#!/usr/bin/env python3
"""Random UPDATEs and DELETEs through each of their paths, compared after each one.

An UPDATE or DELETE without FROM, RETURNING or a subquery runs in place
(executor/update.h: the chunks where a row matches are copied with the new
values, or without the rows deleted, shorter); with RETURNING (or a
subquery) it runs by row address (ExChanges: a plan yields the rows changed
and their addresses, and their chunks get copies the same way), and so does
an UPDATE with FROM (the target's scan in the join gives the addresses, one
match per row kept).  Each seed draws statements (UPDATEs of one to three
columns, of every type: integers, strings short and long, doubles, dates,
lists, NULLs; DELETEs; INSERTs that put rows back; WHERE of ranges, LIKE, IS
NULL, modulo, AND/OR/NOT, or none) and runs each on table t1 in place, on
t2, a copy, by address, on t3 as an UPDATE ... FROM (a join on id with the
table's ids, or a one-row table), and on t4 as a new table computed by a
query (CREATE OR REPLACE TABLE ... AS: the new values under CASE, or the
rows the WHERE does not pick); after each statement the four must hold the
same rows (EXCEPT ALL both ways), and at the end t1, t2 and t3 in the same
order.  A rolled back transaction of such
statements in between must change neither.  Even seeds run on a directory
database, in two processes (the second opens what the first committed: the
shorter chunks a DELETE leaves are saved and read back as they are).

usage: update_paths_test.py path/to/sluice [--seeds N] [--statements N]
"""
import argparse
import random
import shutil
import subprocess
import sys
import tempfile

SETS = {
    "a": ["a + 1", "NULL", "id % 7", "CASE WHEN a > 100 THEN NULL ELSE a * 2 END", "length(b)"],
    "b": ["'x' || b", "NULL", "repeat('long', id % 10) || a", "upper(b)"],
    "c": ["c * 2", "NULL", "a / 3.0", "c + id"],
    "d": ["d + 1", "NULL", "DATE '2021-06-01'"],
    "l": ["[a]", "NULL", "[id, a, NULL]", "l"],
    "id": ["id + 1000000", "-id"],  # a key: ids stay distinct (INSERTs take new ones)
}
SETUP = """CREATE TABLE t1(id INTEGER, a INTEGER, b VARCHAR, c DOUBLE, d DATE, l INTEGER[]);
INSERT INTO t1 SELECT i, CASE WHEN i % 13 = 0 THEN NULL ELSE i % 257 END,
  CASE WHEN i % 17 = 0 THEN NULL ELSE 'v' || i END, i * 0.75, DATE '2020-01-01' + i % 400,
  CASE WHEN i % 5 = 0 THEN NULL ELSE [i % 9] END FROM range(6000) r(i);
CREATE TABLE t2 AS SELECT * FROM t1;
CREATE TABLE t3 AS SELECT * FROM t1;
CREATE TABLE t4 AS SELECT * FROM t1;
CREATE UNIQUE INDEX t1_id ON t1(id);
CREATE UNIQUE INDEX t2_bid ON t2(b, id);
CREATE UNIQUE INDEX t3_id ON t3(id);
"""
# every third seed: a plain index too, which the statements on t1 cannot patch (they
# build t1's indexes from every row instead)
PLAIN = "CREATE INDEX t1_a ON t1(a);\n"
TYPES = {"id": "INTEGER", "a": "INTEGER", "b": "VARCHAR", "c": "DOUBLE", "d": "DATE",
         "l": "INTEGER[]"}
DIFF = "".join(
    f"SELECT 'diff', (SELECT count(*) FROM (SELECT * FROM t1 EXCEPT ALL SELECT * FROM {t})) + "
    f"(SELECT count(*) FROM (SELECT * FROM {t} EXCEPT ALL SELECT * FROM t1));\n"
    for t in ("t2", "t3", "t4"))
# the in-place and by-address paths keep every row in its place; the
# rebuilds need not (a join's output order is not the table's)
ORDER = "".join(
    f"SELECT 'order', (SELECT count(*) FROM t1) - (SELECT count(*) FROM {t}) + count(*) "
    "FROM (SELECT id, row_number() OVER () AS r FROM t1) x "
    f"JOIN (SELECT id, row_number() OVER () AS r FROM {t}) y USING (r) WHERE x.id <> y.id;\n"
    for t in ("t2", "t3"))


def where(rng):
    opts = [
        lambda: f"a < {rng.randint(-10, 300)}",
        lambda: f"id BETWEEN {rng.randint(0, 5000)} AND {rng.randint(0, 5000)}",
        lambda: f"b LIKE '%{rng.randint(0, 9)}%'",
        lambda: "a IS NULL",
        lambda: f"a % {rng.randint(2, 50)} = {rng.randint(0, 3)}",
        lambda: f"d > DATE '2020-01-01' + {rng.randint(0, 400)}",
        lambda: f"c >= {rng.randint(0, 3000)}.5",
        lambda: f"id = {rng.randint(0, 6000)}",
        lambda: f"{rng.randint(0, 5000)} > id",
    ]
    w = rng.choice(opts)()
    for _ in range(rng.randint(0, 2)):
        w = f"({w}) {rng.choice(['AND', 'OR', 'AND NOT'])} ({rng.choice(opts)()})"
    return w


def statement(rng, n_inserts):
    """The statement for t1 (in place), t2 (by address), t3 (with FROM) and t4 (a query)."""
    kind = rng.random()
    if kind < 0.25:  # a narrow WHERE, mostly: deletes must not empty the table too soon
        w = f"id % {rng.randint(5, 40)} = {rng.randint(0, 4)}" if rng.random() < 0.5 else where(rng)
        by_addr = (f"DELETE FROM t2 WHERE {w} RETURNING 0" if rng.random() < 0.5 else
                   f"DELETE FROM t2 WHERE ({w}) AND id IN (SELECT id FROM t2)")
        kept = "CREATE OR REPLACE TABLE {t} AS SELECT * FROM {t} WHERE (" + w + ") IS NOT TRUE"
        return (f"DELETE FROM t1 WHERE {w}", by_addr,
                kept.format(t="t3") + ";\nCREATE UNIQUE INDEX t3_id ON t3(id)", kept.format(t="t4"))
    if kind < 0.35:
        lo = 10000 + 3000 * n_inserts[0]  # ids no row has had
        n_inserts[0] += 1
        s = (f"INSERT INTO {{t}} SELECT i, i % 257, 'n' || i, i * 0.5, DATE '2020-02-02', [i] "
             f"FROM range({lo}, {lo + rng.randint(1, 3000)}) r(i)")
        return s.format(t="t1"), s.format(t="t2"), s.format(t="t3"), s.format(t="t4")
    cols = rng.sample(sorted(SETS), rng.randint(1, 3))
    new = {c: rng.choice(SETS[c]) for c in cols}
    s = ", ".join(f"{c} = {new[c]}" for c in cols)
    w = "" if rng.random() < 0.1 else where(rng)
    by_addr = (f"UPDATE t2 SET {s}{' WHERE ' + w if w else ''} RETURNING 0" if rng.random() < 0.5
               else f"UPDATE t2 SET {s} WHERE {w or 'TRUE'} AND id = (SELECT id)")
    # each row matches twice, and must change once
    from_ = (f"UPDATE t3 SET {s} FROM (SELECT id AS id_ FROM t3 UNION ALL SELECT id FROM t3) o_ "
             f"WHERE t3.id = o_.id_"
             f"{' AND (' + w + ')' if w else ''}" if rng.random() < 0.5 else
             f"UPDATE t3 SET {s} FROM (SELECT 1 AS one_) o_{' WHERE ' + w if w else ''}")
    sel = ", ".join(
        c if c not in new else
        f"CAST(CASE WHEN ({w}) IS TRUE THEN {new[c]} ELSE {c} END AS {TYPES[c]}) AS {c}" if w else
        f"CAST({new[c]} AS {TYPES[c]}) AS {c}" for c in TYPES)
    return (f"UPDATE t1 SET {s}{' WHERE ' + w if w else ''}", by_addr, from_,
            f"CREATE OR REPLACE TABLE t4 AS SELECT {sel} FROM t4")


def run(sluice, sql, db):
    args = [sluice] + ([db] if db else []) + ["--threads", "2", "--mode", "tsv"]
    return subprocess.run(args, input=sql, capture_output=True, text=True, timeout=300)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sluice")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--statements", type=int, default=40)
    a = ap.parse_args()
    failures = 0
    for seed in range(1, a.seeds + 1):
        rng = random.Random(seed)
        parts = [SETUP + (PLAIN if seed % 3 == 0 else ""), ""]
        n_inserts = [0]
        for i in range(a.statements):
            s = statement(rng, n_inserts)
            if i % 10 == 5:  # undone: no table may change
                parts[i * 2 // a.statements] += "BEGIN;\n" + "".join(x + ";\n" for x in s) + "ROLLBACK;\n"
                s = statement(rng, n_inserts)
            parts[i * 2 // a.statements] += "".join(x + ";\n" for x in s) + DIFF
        parts[1] += ORDER
        db = tempfile.mkdtemp(prefix="update_paths") + "/db" if seed % 2 == 0 else None
        try:
            outs = [run(a.sluice, part, db) for part in (parts if db else ["".join(parts)])]
        finally:
            if db:
                shutil.rmtree(db[:-3], ignore_errors=True)
        p = outs[-1]
        p.returncode = max(o.returncode for o in outs)
        p.stdout = "".join(o.stdout for o in outs)
        p.stderr = "".join(o.stderr for o in outs)
        rows = [l.split("\t") for l in p.stdout.splitlines() if l.startswith(("diff", "order"))]
        bad = [(k, r) for k, r in enumerate(rows) if r[1] != "0"]
        n_diff = sum(r[0] == "diff" for r in rows)
        if p.returncode != 0 or bad or n_diff != 3 * a.statements or len(rows) != n_diff + 2:
            failures += 1
            print(f"FAIL seed {seed}: rc {p.returncode}, {n_diff} of {3 * a.statements} compared, "
                  f"different: {bad[:5]}, stderr: {p.stderr[-400:]!r}")
        else:
            print(f"seed {seed}: {a.statements} statements, the four paths the same"
                  + (" (a directory, reopened)" if db else ""))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
