#!/usr/bin/env python3
"""Directory databases (storage/persist.h), driven through the sluice binary.

Checks: every column type, NULLs, long strings, defaults, keys and indexes
survive a reopen; ROLLBACK and failed statements leave the directory's files
unchanged; a second writer gets the lock error and --readonly shares and
refuses writes; a damaged, truncated or wrong-version file gives a clean
error naming the file; and a crash harness kills a writer with SIGKILL at
random instants (100 by default, drawn over the time the whole workload
takes; fewer, at least 10, when they pass --budget seconds) and checks that the reopened database is exactly the state
after some prefix of its statements (nothing lost that was acknowledged,
nothing partial) with no orphaned files.

usage: persist_test.py path/to/sluice [--trials N] [--seed S]
"""
import argparse
import hashlib
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("sluice")
ap.add_argument("--trials", type=int, default=100, help="crash harness trials")
ap.add_argument("--budget", type=float, default=90,
                help="seconds after which the harness stops, once it has run 10 trials "
                     "(a build with 3-row batches takes seconds a trial)")
ap.add_argument("--seed", type=int, default=None)
args = ap.parse_args()
SLUICE = args.sluice
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(db, sql, *flags, timeout=60):
    """Runs sql on db; returns (rc, stdout, stderr)."""
    argv = [SLUICE, *flags] + ([db] if db else [])
    p = subprocess.run(argv, input=sql, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def snapshot(db):
    """The database's files and their contents' hashes (the lock file left out)."""
    out = {}
    for name in sorted(os.listdir(db)):
        if name != "sluice.lock":
            with open(os.path.join(db, name), "rb") as f:
                out[name] = hashlib.sha1(f.read()).hexdigest()
    return out


TMP = tempfile.mkdtemp(prefix="sluice_persist_")

# ---- every type survives a reopen -------------------------------------------------

SETUP = """
CREATE TABLE t(
  id INTEGER PRIMARY KEY, b BOOLEAN, i BIGINT NOT NULL DEFAULT 42, d DOUBLE,
  m DECIMAL(12,3), w DECIMAL(30,4), s VARCHAR DEFAULT 'a default longer than twelve bytes',
  c CHAR(4), dt DATE, tm TIME, ts TIMESTAMP, iv INTERVAL, li INTEGER[], ls VARCHAR[],
  u VARCHAR UNIQUE);
INSERT INTO t VALUES
  (1, true, 10, 1.5, 123.456, 12345678901234567890.1234, 'short', 'ab', DATE '2024-02-29',
   TIME '12:34:56', TIMESTAMP '2024-02-29 12:34:56.789', INTERVAL '1 year 2 days',
   [1, 2, NULL], ['x', 'a string that is longer than twelve'], 'u1'),
  (2, NULL, 20, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
  (3, false, -5, -0.25, -1.000, -0.0001, repeat('long string ', 100), 'abcd', DATE '1969-12-31',
   TIME '00:00:00', TIMESTAMP '1900-01-01 00:00:00', INTERVAL '-3 hours', [], [], 'u3');
INSERT INTO t(id) VALUES (4);
CREATE TABLE big AS SELECT r AS k, r % 97 AS g, 'value ' || r AS v,
  CASE WHEN r % 5 = 0 THEN NULL ELSE r * 0.5 END AS h FROM range(20000) x(r);
CREATE INDEX big_g ON big(g);
CREATE UNIQUE INDEX big_k ON big(k);
CREATE VIEW bv(g, n) AS SELECT g, count(*) FROM big GROUP BY g;
CREATE TABLE empty(a INTEGER, b VARCHAR);
CREATE TABLE renamed(a INTEGER, b VARCHAR);
INSERT INTO renamed VALUES (1, 'one');
ALTER TABLE renamed RENAME COLUMN b TO bb;
ALTER TABLE renamed ADD COLUMN c INTEGER DEFAULT 9;
ALTER TABLE renamed RENAME TO renamed2;
CREATE TEMP TABLE scratch AS SELECT 1 AS a;
"""
QUERIES = """
SELECT * FROM t ORDER BY id;
SELECT count(*), sum(k), sum(g), count(h), sum(h), min(v), max(v) FROM big;
SELECT * FROM bv ORDER BY g LIMIT 5;
SELECT count(*) FROM empty;
SELECT * FROM renamed2;
SELECT table_name FROM information_schema.tables ORDER BY table_name;
SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 't';
"""

db = os.path.join(TMP, "types")
rc, before, err = run(db, SETUP + QUERIES)
check(rc == 0, f"setup runs: {err}")
rc, after, err = run(db, QUERIES)
check(rc == 0 and after == before.replace("scratch\n", ""),
      f"a reopened database answers as before:\n{before}\n---\n{after}\n{err}")
# Constraints and defaults still hold after the reopen.
rc, out, err = run(db, "INSERT INTO t(id) VALUES (1);")
check(rc != 0 and "Duplicate key" in err, f"the primary key holds after reopen: {err}")
rc, out, err = run(db, "INSERT INTO big VALUES (5, 1, 'x', 1);")
check(rc != 0 and "Duplicate key" in err, f"a unique index holds after reopen: {err}")
rc, out, err = run(db, "INSERT INTO t(id, u) VALUES (9, NULL); SELECT i, s FROM t WHERE id = 9;")
check(rc == 0 and out == "42\ta default longer than twelve bytes\n",
      f"defaults hold after reopen: {out} {err}")
rc, out, err = run(db, "SELECT count(*) FROM scratch;")
check(rc != 0, "a temporary table is not saved")
# Indexes restored cold still take part in later DDL, and their changes are saved.
rc, out, err = run(db, "CREATE UNIQUE INDEX big_v ON big(v); DROP INDEX big_g;")
check(rc == 0, f"indexes of a reopened table can be added and dropped: {err}")
rc, out, err = run(db, "INSERT INTO big VALUES (20000, 1, 'value 7', NULL);")
check(rc != 0 and "Duplicate" in err, f"an index added after a reopen holds the saved rows: {err}")
rc, out, err = run(db, "DROP INDEX big_v; CREATE INDEX big_g ON big(g); "
                       "INSERT INTO big VALUES (20000, 1, 'value 7', NULL); "
                       "DELETE FROM big WHERE k = 20000; SELECT count(*) FROM big;")
check(rc == 0 and out == "20000\n", f"the indexes are put back: {out} {err}")

# A saved table larger than memory_limit is read chunk by chunk: nothing is loaded at
# open, and chunks evicted are dropped and read back from the data file.
large = os.path.join(TMP, "large")
rc, out, err = run(large, "CREATE TABLE l AS SELECT r AS k, repeat('x', 40) || r AS s "
                          "FROM range(400000) x(r); SELECT sum(k), sum(length(s)) FROM l;")
check(rc == 0, f"a large table is saved: {err}")
expected = out
rc, out, err = run(large, "SET memory_limit = '6MB'; SELECT sum(k), sum(length(s)) FROM l; "
                          "SELECT sum(k), sum(length(s)) FROM l WHERE k >= 399000;")
check(rc == 0 and out.startswith(expected) and out.endswith("\t46000\n"),
      f"a saved table larger than memory_limit is read back: {out} {err}")

# ---- ROLLBACK and failed statements write nothing ----------------------------------

snap = snapshot(db)
rc, out, err = run(db, """
BEGIN; DELETE FROM big; ROLLBACK;
INSERT INTO t(id) VALUES (1);
INSERT INTO big SELECT * FROM big;
CREATE TABLE bad AS SELECT 1 / (r - 5) FROM range(10) x(r);
UPDATE big SET k = 0;
COPY big FROM '/nonexistent/file.csv';
SELECT count(*) FROM big;
""")
check(out.strip() == "20000", f"the failed statements changed nothing in memory: {out}")
check(snapshot(db) == snap, "ROLLBACK and failed statements leave the files unchanged")
rc, out, err = run(db, "SELECT count(*) FROM bad;")
check(rc != 0, "a failed CTAS leaves no table")
rc, out, err = run(db, "SELECT count(*) FROM big; SELECT count(*) FROM t;")
check(out == "20000\n5\n", f"reopened after the failures: {out} {err}")
# A statement that changes nothing writes nothing.
rc, out, err = run(db, "DROP TABLE IF EXISTS nothing; COPY big TO '%s';" %
                   os.path.join(TMP, "big.csv"))
check(rc == 0 and snapshot(db) == snap, f"a statement that changes nothing writes nothing {err}")

# ---- UPDATE and DELETE write only the chunks they change -------------------------------


def tbl_bytes(d, names):
    return sum(os.path.getsize(os.path.join(d, n)) for n in names if n.endswith(".tbl"))


upd = os.path.join(TMP, "upd")
rc, out, err = run(upd, "CREATE TABLE w AS SELECT i AS id, i * 3 AS v, 'name' || (i % 1000) AS s "
                        "FROM range(0, 200000) t(i);")
check(rc == 0, f"the update database is made: {err}")
W_STATE = "SELECT count(*), sum(v), sum(length(s)), min(v), max(id) FROM w;"


def changed_bytes(sql, expect):
    """Runs sql on upd; checks the reopened state, returns the bytes of the new data files."""
    before = snapshot(upd)
    old = tbl_bytes(upd, before)
    rc, out, err = run(upd, sql)
    check(rc == 0, f"{sql}: {err}")
    rc, out, err = run(upd, W_STATE)
    check(rc == 0 and out == expect, f"after {sql}: {out!r} {err}, expected {expect!r}")
    return tbl_bytes(upd, set(snapshot(upd)) - set(before)), old


new, old = changed_bytes("UPDATE w SET v = -1 WHERE id = 100000;",
                         "200000\t59999399999\t1378000\t-1\t199999\n")
check(new * 20 < old, f"UPDATE of one row writes one chunk: {new} bytes against {old}")
# In place (executor/update.h): the chunks an UPDATE did not touch stay the
# same blocks, so a second UPDATE in the same process writes only its own.
new, old = changed_bytes("UPDATE w SET v = v + 1 WHERE id = 5; UPDATE w SET v = v + 1 WHERE id = 150000;",
                         "200000\t59999400001\t1378000\t-1\t199999\n")
check(new * 10 < old, f"two UPDATEs in one process write their two chunks: {new} against {old}")
before = snapshot(upd)
rc, out, err = run(upd, "UPDATE w SET v = v / (id - 190000);")
check(rc != 0 and "division by zero" in err and snapshot(upd) == before,
      f"an UPDATE failing in a late chunk writes nothing: {rc} {err}")
new, old = changed_bytes("DELETE FROM w WHERE id >= 199000;",
                         "199000\t59400901501\t1371110\t-1\t198999\n")
check(new * 20 < old, f"DELETE of the last rows writes the tail: {new} bytes against {old}")
new, old = changed_bytes("BEGIN; UPDATE w SET v = v + 1 WHERE id < 10; "
                         "UPDATE w SET s = 'x' WHERE id = 150000; COMMIT;",
                         "199000\t59400901511\t1371106\t-1\t198999\n")
check(new * 10 < old, f"two UPDATEs in a transaction write their chunks: {new} against {old}")
before = snapshot(upd)
rc, out, err = run(upd, "BEGIN; UPDATE w SET v = 0 WHERE id < 5000; ROLLBACK;")
check(rc == 0 and snapshot(upd) == before, f"a rolled back UPDATE writes nothing: {err}")
new, old = changed_bytes("UPDATE w SET v = w.v + x.d FROM (SELECT 7 AS k, 2 AS d) x "
                         "WHERE w.id % 1000 = x.k;",
                         "199000\t59400901909\t1371106\t-1\t198999\n")
check(new > 0, f"an UPDATE through a join is right, its chunks compared by value: {new}")
new, old = changed_bytes("DELETE FROM w WHERE id < 3;",
                         "198997\t59400901897\t1371091\t-1\t198999\n")
check(new * 20 < old, f"DELETE of the first rows, in place, writes their chunk: {new} against {old}")
new, old = changed_bytes("DELETE FROM w WHERE id IN (SELECT 3);",
                         "198996\t59400901887\t1371086\t-1\t198999\n")
check(new * 20 < old, f"DELETE through a subquery, by address, writes its chunk: {new} against {old}")

# Chunks a commit wrote become saved blocks over their records (docs/storage.md,
# "Commit"): a DELETE later in the same process shares them instead of writing them again,
# and under memory pressure they are dropped and read back from the data file, never
# written to the temp file (whose extents of the chunks evicted before the commit are freed).
one = os.path.join(TMP, "one")
rc, out, err = run(one, "SET memory_limit = '8MB';"
                        "CREATE TABLE w AS SELECT i AS id, i * 3 AS v, 'name-' || CAST(i % 1000 AS VARCHAR) "
                        "|| '-' || CAST(i AS VARCHAR) AS s FROM range(0, 400000) t(i);"
                        "SELECT count(*), sum(v), sum(length(s)) FROM w;"
                        "SELECT count(*), sum(v), sum(length(s)) FROM w;"
                        "SELECT bytes FROM sluice_memory WHERE pool = 'storage' AND what = 'blocks on disk';"
                        "DELETE FROM w WHERE id >= 399000;"
                        "SELECT count(*), sum(v), sum(length(s)) FROM w;")
check(rc == 0 and out == "400000\t239999400000\t5844890\n" * 2 + "0\n" +
      "399000\t238800901500\t5830000\n",
      f"a table written in this process is read back from its data file: {out!r} {err}")
sizes = sorted(os.path.getsize(os.path.join(one, n)) for n in os.listdir(one) if n.endswith(".tbl"))
check(len(sizes) >= 2 and sizes[0] * 20 < sizes[-1],
      f"a DELETE of the last rows after a load in the same process writes the tail: {sizes}")
rc, out, err = run(one, "SELECT count(*), sum(v), sum(length(s)) FROM w;")
check(rc == 0 and out == "399000\t238800901500\t5830000\n", f"reopened: {out!r} {err}")

# ANALYZE's statistics are saved: an UPDATE in place leaves them an upper bound (stale),
# ANALYZE counts them again, and the next open reads the counted ones.
ana = os.path.join(TMP, "ana")
STATS = "SELECT stale, distinct_count < 2000 FROM sluice_column_stats WHERE column_name = 'v';"
rc, out, err = run(ana, "CREATE TABLE w AS SELECT i AS v FROM range(0, 5000) t(i);"
                        "UPDATE w SET v = 7 WHERE v < 4000;" + STATS + "ANALYZE w;" + STATS)
check(rc == 0 and out == "true\tfalse\nfalse\ttrue\n",
      f"ANALYZE counts again: {out!r} {err}")
rc, out, err = run(ana, STATS)
check(rc == 0 and out == "false\ttrue\n", f"ANALYZE's statistics are saved: {out!r} {err}")
rc, out, err = run(ana, "ANALYZE;", "--readonly")
check(rc == 0, f"ANALYZE on a read-only database counts in memory only: {err}")

# ---- compaction: an open rewrites the data files that are mostly dead copies -----------

cpt = os.path.join(TMP, "cpt")
CPT_STATE = "SELECT count(*), sum(v), sum(length(s)) FROM w;"
rc, out, err = run(cpt, "CREATE TABLE w AS SELECT i AS id, i * 3 AS v, 'name' || (i % 1000) AS s "
                        "FROM range(0, 400000) t(i); CREATE INDEX wv ON w(v);")
check(rc == 0, f"the compaction database is made: {err}")
first = tbl_bytes(cpt, snapshot(cpt))
# the first 62% of the rows change (their chunks, whatever a chunk's rows): their records
# move to a new file, and the first keeps 38% live
rc, out, err = run(cpt, "UPDATE w SET s = 'x' WHERE id < 250000;" + CPT_STATE)
state = out
check(rc == 0 and state.startswith("400000\t"), f"the UPDATE runs: {out!r} {err}")
two = snapshot(cpt)
check(sum(n.endswith(".tbl") for n in two) == 2, f"two data files after it: {sorted(two)}")
rc, out, err = run(cpt, "SELECT 1;", "--readonly")
check(rc == 0 and snapshot(cpt) == two, f"a read-only open rewrites nothing: {err}")
rc, out, err = run(cpt, CPT_STATE)
after = snapshot(cpt)
check(rc == 0 and out == state, f"after the compacting open the rows are the same: {out!r} {err}")
check(not set(n for n in two if n.endswith(".tbl")) <= set(after),
      f"the mostly dead file is gone: {sorted(two)} -> {sorted(after)}")
check(tbl_bytes(cpt, after) <= first * 1.05,
      f"the live records take the first load's bytes again: {tbl_bytes(cpt, after)} against {first}")
rc, out, err = run(cpt, CPT_STATE + "SELECT count(*) FROM w WHERE v = 300;")
check(rc == 0 and out == state + "1\n" and snapshot(cpt) == after,
      f"a second open finds nothing to rewrite, and the index still finds rows: {out!r} {err}")

# ---- transactions: COMMIT is one manifest swap; a kill inside one loses it whole -------


def generation(d):
    """The manifest's generation: one more per commit (docs/storage.md)."""
    with open(os.path.join(d, "MANIFEST"), "rb") as f:
        return struct.unpack_from("<Q", f.read(24), 16)[0]


txn = os.path.join(TMP, "txn")
rc, out, err = run(txn, "CREATE TABLE k(a INTEGER PRIMARY KEY, s VARCHAR); "
                        "INSERT INTO k SELECT r, 'v' || r FROM range(3000) x(r); "
                        "CREATE TABLE gone(x INTEGER);")
check(rc == 0, f"the transaction database is made: {err}")
gen = generation(txn)
rc, out, err = run(txn, """BEGIN;
INSERT INTO k SELECT r, 'w' || r FROM range(3000, 7000) x(r);
UPDATE k SET s = 'changed' WHERE a < 10;
DELETE FROM k WHERE a % 2 = 1;
CREATE TABLE made AS SELECT * FROM k WHERE a < 100;
DROP TABLE gone;
ALTER TABLE k RENAME COLUMN s TO label;
CREATE VIEW kv AS SELECT count(*) AS n FROM k;
COMMIT;""")
check(rc == 0 and generation(txn) == gen + 1, f"a COMMIT writes one manifest: {err}")
TXN_STATE = ("SELECT count(*), sum(a), sum(CASE WHEN label = 'changed' THEN 1 ELSE 0 END) FROM k; "
             "SELECT count(*) FROM made; SELECT n FROM kv; "
             "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('gone', 'more');")
rc, out, err = run(txn, TXN_STATE)
committed = "3500\t12246500\t5\n50\n3500\n0\n"
check(rc == 0 and out == committed, f"a committed transaction is there after a reopen: {out} {err}")

txn_snap = snapshot(txn)
child = subprocess.Popen([SLUICE, txn], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
child.stdin.write("BEGIN;\nDELETE FROM k;\nCREATE TABLE more(x INTEGER);\n"
                  "INSERT INTO more VALUES (1);\nDROP VIEW kv;\nDROP TABLE made;\n"
                  "SELECT 'inside', count(*) FROM k;\n")
child.stdin.flush()
check(child.stdout.readline().strip() == "inside\t0", "the transaction's writes are seen inside it")
child.send_signal(signal.SIGKILL)
child.wait()
check(snapshot(txn) == txn_snap, "a transaction killed before COMMIT wrote nothing")
rc, out, err = run(txn, TXN_STATE)
check(rc == 0 and out == committed, f"a transaction killed before COMMIT is gone: {out} {err}")
rc, out, err = run(txn, "BEGIN; DELETE FROM k; CREATE TABLE more(x INTEGER);")
check(rc == 0 and snapshot(txn) == txn_snap, f"a transaction left open at exit writes nothing: {err}")
rc, out, err = run(txn, "BEGIN; DELETE FROM k WHERE a < 50; ROLLBACK; INSERT INTO k VALUES (0, 'x');")
check(rc != 0 and "Duplicate key" in err and snapshot(txn) == txn_snap,
      f"ROLLBACK writes nothing and the keys it restored hold: {err}")
rc, out, err = run(txn, TXN_STATE)
check(rc == 0 and out == committed, f"after the rollback: {out} {err}")
rc, out, err = run(txn, "BEGIN; SELECT count(*) FROM k; COMMIT;", "--readonly")
check(rc == 0 and out == "3500\n", f"a read-only database runs read-only transactions: {out} {err}")

# ---- the lock, and --readonly -------------------------------------------------------

holder = subprocess.Popen([SLUICE, db], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
holder.stdin.write("SELECT 'ready';\n")
holder.stdin.flush()
check(holder.stdout.readline().strip() == "ready", "the first writer opens")
rc, out, err = run(db, "SELECT 1;")
check(rc != 0 and "in use" in err and db in err, f"a second writer gets the lock error: {err}")
rc, out, err = run(db, "SELECT 1;", "--readonly")
check(rc != 0 and "in use" in err and db in err, f"a reader is refused while a writer holds it: {err}")
holder.stdin.close()
holder.wait(timeout=30)

reader = subprocess.Popen([SLUICE, "--readonly", db], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
reader.stdin.write("SELECT 'ready';\n")
reader.stdin.flush()
check(reader.stdout.readline().strip() == "ready", "a reader opens")
rc, out, err = run(db, "SELECT count(*) FROM big;", "--readonly")
check(rc == 0 and out == "20000\n", f"readers share the database: {out} {err}")
rc, out, err = run(db, "SELECT 1;")
check(rc != 0 and "in use" in err, f"a writer is refused while a reader has it: {err}")
reader.stdin.close()
reader.wait(timeout=30)
rc, out, err = run(db, "DELETE FROM big; SELECT count(*) FROM big; CREATE TABLE x(a INTEGER);",
                   "--readonly")
check(rc != 0 and "read-only" in err and out == "20000\n",
      f"--readonly refuses writes: {out} {err}")
check(snapshot(db) == snap, "a read-only session writes nothing")
rc, out, err = run(os.path.join(TMP, "missing"), "SELECT 1;", "--readonly")
check(rc != 0 and "missing" in err, f"--readonly does not create a database: {err}")
os.makedirs(os.path.join(TMP, "foreign"))
open(os.path.join(TMP, "foreign", "notes.txt"), "w").close()
rc, out, err = run(os.path.join(TMP, "foreign"), "SELECT 1;")
check(rc != 0 and "not a Sluice database" in err, f"a foreign directory is refused: {err}")

# ---- damaged files ------------------------------------------------------------------


def damaged_copy(name, mutate):
    """A copy of db whose file `name` (or the largest data file; "newest": the last written,
    which holds the table's statistics) was mutated."""
    copy = os.path.join(TMP, "damaged_%d" % len(os.listdir(TMP)))
    shutil.copytree(db, copy)
    if name == "newest":
        name = max(f for f in os.listdir(copy) if f.endswith(".tbl"))
    if name is None:
        tbls = [f for f in os.listdir(copy) if f.endswith(".tbl")]
        name = max(tbls, key=lambda f: os.path.getsize(os.path.join(copy, f)))
    path = os.path.join(copy, name)
    with open(path, "rb") as f:
        data = bytearray(f.read())
    with open(path, "wb") as f:
        f.write(mutate(data))
    return copy, path


def flip(at):
    def m(data):
        data[at if at >= 0 else len(data) + at] ^= 0x40
        return data
    return m


def set_version(data):
    data[8:12] = (99).to_bytes(4, "little")
    return data


CASES = [
    ("a flipped byte in a table's statistics", "newest", flip(-100), "damaged"),
    ("a flipped record header", None, flip(20), "damaged"),
    ("a flipped byte in a record's payload", None, flip(16 + 56 + 40), "damaged"),
    ("a truncated data file", None, lambda d: d[: len(d) // 2], "truncated"),
    ("a flipped byte in MANIFEST", "MANIFEST", flip(-20), "MANIFEST"),
    ("a truncated MANIFEST", "MANIFEST", lambda d: d[:30], "MANIFEST"),
    ("a MANIFEST of another version", "MANIFEST", set_version, "version 99"),
    ("a data file of another version", None, set_version, "version 99"),
]
for what, name, mutate, word in CASES:
    copy, path = damaged_copy(name, mutate)
    rc, out, err = run(copy, "SELECT sum(k), max(v), sum(g), count(h) FROM big;")
    check(0 < rc < 128 and word in err and os.path.basename(path) in err and out == "",
          f"{what}: a clean error naming the file ({rc}): {err}")

# ---- the manifest's data files (docs/storage.md, "MANIFEST") --------------------------


def manifest_files(db):
    """The data files MANIFEST names, parsed as docs/storage.md describes it."""
    import struct
    data = open(os.path.join(db, "MANIFEST"), "rb").read()
    pos = 16 + 16

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string():
        nonlocal pos
        n = take("I")
        if n == 0xFFFFFFFF:
            return None
        pos += n
        return data[pos - n:pos]

    files = set()
    for _ in range(take("I")):
        kind = take("B")
        string(), string()
        if kind == 0:
            n_cols = take("I")
            types = []
            for _ in range(n_cols):
                string()
                tid = take("BBBBiB")[0]
                flags = take("B")
                if flags & 4 and take("B") == 0:
                    string() if tid == 6 else take("16s")
                types.append(tid)
            for _ in range(take("I")):
                string(), take("B")
                for _ in range(take("I")):
                    take("I")
            take("q")
            for _ in range(take("I")):
                files.add("%08d.tbl" % take("Q"))
                take("iqq")
                for _ in range(n_cols):
                    take("qqqq")  # min, max, NULLs, the bytes of the column's record
            take("B")
            stats_file = take("Q")
            take("iqq")
            if stats_file:
                files.add("%08d.tbl" % stats_file)
        elif kind == 1:
            string()
            for _ in range(take("I")):
                string()
        else:
            string()
    check(pos == len(data) - 8, "the manifest parses as documented")
    return files


def data_files(db):
    """The data files in directory db."""
    return {n for n in os.listdir(db) if n.endswith(".tbl")}


check(manifest_files(db) == data_files(db), "the manifest names exactly the data files there")

# An INSERT writes the changed tail only: the sealed chunks keep their records.
grown = os.path.join(TMP, "grown")
shutil.copytree(db, grown)
sizes = {n: os.path.getsize(os.path.join(grown, n)) for n in os.listdir(grown)}
rc, out, err = run(grown, "INSERT INTO big VALUES (-1, 1, 'new', 1); SELECT count(*) FROM big;")
new_bytes = sum(os.path.getsize(os.path.join(grown, n)) for n in os.listdir(grown)
                if n.endswith(".tbl") and n not in sizes)
check(rc == 0 and out == "20001\n" and 0 < new_bytes < max(sizes.values()) / 4,
      f"an INSERT writes its tail chunk, not the table: {new_bytes} bytes {err}")
rc, out, err = run(grown, "SELECT count(*), sum(k) FROM big;")
check(out == "20001\t199989999\n", f"the table reads back across its files: {out} {err}")
check(manifest_files(grown) == data_files(grown),
      "the manifest names exactly the data files there after an append")

# ---- column records: a scan reads only its columns (docs/storage.md, version 3) ------

cols = os.path.join(TMP, "columns")
rc, out, err = run(cols, "CREATE TABLE w AS SELECT r AS k, r % 97 AS g, "
                         "'a long value of text ' || r AS v, r * 0.5 AS d FROM range(100000) x(r);")
check(rc == 0, f"a table of four columns: {err}")
MEM = "SELECT bytes FROM sluice_memory() WHERE what = 'blocks in memory';"
rc, out, err = run(cols, "SELECT sum(g) FROM w; " + MEM)
one = out.split("\n")
rc, out, err = run(cols, "SELECT sum(g), max(v), sum(d), sum(k) FROM w; " + MEM)
every = out.split("\n")
check(one[0] == "4799685" and every[0] == "4799685\ta long value of text 99999\t2499975000.0\t"
      "4999950000", f"the answers: {one} {every} {err}")
# (9.5x at 2048-row chunks; 2.4x at 3-row ones, where each chunk's vectors weigh more
# than its values)
check(int(one[1]) * 2 < int(every[1]),
      f"after a reopen, a scan of one column of four loads that column: {one[1]} bytes in "
      f"memory against {every[1]} for all four")

# ---- a database of format version 2 (tests/storage/format2, written by the release
# before column records) opens, answers, and takes writes beside its old records ----

old = os.path.join(TMP, "format2")
shutil.copytree(os.path.join(os.path.dirname(os.path.abspath(__file__)), "format2"), old)
Q2 = ("SELECT count(*), sum(id), sum(price), count(note), min(d), max(name), sum(k) FROM t; "
      "SELECT * FROM small ORDER BY a;")
rc, out, err = run(old, Q2, "--nullvalue", "NULL")
if rc != 0 and "do not fit this build" in err:
    print("format2: skipped, this build's chunks are not 2048 rows:", err.strip())
else:
    check(out == "5000\t12497500\t2840341.25\t4285\t2020-01-01\tname-96\t12497537492500\n"
          "1\tone\n2\tNULL\nNULL\tthree\n", f"a version 2 database answers: {out} {err}")
    rc, out, err = run(old, "INSERT INTO t SELECT i, 'n' || i, 1.0, DATE '2021-01-01', NULL, i "
                            "FROM range(5000, 7000) r(i); UPDATE small SET b = 'two' WHERE a = 2;")
    check(rc == 0, f"a version 2 database takes writes: {err}")
    rc, out, err = run(old, "SELECT count(*), sum(id), count(note), max(d), sum(k) FROM t; "
                            "SELECT * FROM small ORDER BY a;", "--nullvalue", "NULL")
    check(out == "7000\t24496500\t4285\t2021-02-03\t12497549491500\n"
          "1\tone\n2\ttwo\nNULL\tthree\n", f"its old and new records read together: {out} {err}")
    with open(os.path.join(old, "MANIFEST"), "rb") as f:
        check(struct.unpack_from("<I", f.read(), 8)[0] == 3, "the commit wrote a version 3 manifest")
    check("00000001.tbl" in os.listdir(old), "the sealed chunks kept their version 2 records")

# ---- crash harness --------------------------------------------------------------------

# A load larger than memory writes each chunk once (docs/storage.md, "Loads larger than
# memory"): the chunks evicted before the commit go to a data file of the database, not to
# the temp file, and the commit keeps their records there.
WRITTEN = ("SELECT what, bytes > 0 FROM sluice_memory WHERE what LIKE 'blocks written to %' "
           "ORDER BY what;")
LOAD_SUM = "SELECT count(*), sum(v), sum(length(s)), min(s), max(s) FROM w;"
LOAD_WANT = "400000\t239999400000\t5844890\tname-0-0\tname-999-99999\n"
home = os.path.join(TMP, "home")
rc, out, err = run(home, "SET memory_limit = '8MB';"
                         "CREATE TABLE w AS SELECT i AS id, i * 3 AS v, 'name-' || CAST(i % 1000 AS "
                         "VARCHAR) || '-' || CAST(i AS VARCHAR) AS s FROM range(0, 400000) t(i);"
                         + WRITTEN + LOAD_SUM)
check(rc == 0 and out == "blocks written to data files\ttrue\n"
      "blocks written to the temp file\tfalse\n" + LOAD_WANT,
      f"a CTAS under a limit writes its evicted chunks to a data file: {out!r} {err}")
rc, out, err = run(home, LOAD_SUM)
check(rc == 0 and out == LOAD_WANT, f"the CTAS reopened: {out!r} {err}")
check(manifest_files(home) == data_files(home),
      f"the CTAS's files are all named by the manifest: {sorted(os.listdir(home))}")
csv_big = os.path.join(TMP, "big.csv")
with open(csv_big, "w") as f:
    for r in range(300000):
        f.write("%d,%d,name-%d\n" % (r, r * 3, r))
    f.write("oops,1,x\n")
before = snapshot(home)
rc, out, err = run(home, "SET memory_limit = '8MB'; COPY w FROM '%s';" % csv_big)
check(rc != 0 and "oops" in err, f"a COPY failing at its last line: {rc} {err}")
check(snapshot(home) == before,
      f"a COPY that failed under a limit leaves no file behind: {sorted(os.listdir(home))}")
rc, out, err = run(home, "SET memory_limit = '8MB'; BEGIN;"
                         "INSERT INTO w SELECT * FROM w; SELECT count(*) FROM w; ROLLBACK;"
                         "INSERT INTO w SELECT id, v, s FROM w WHERE id < 100000;" + WRITTEN +
                         "SELECT count(*), sum(v) FROM w;")
# (the rows an INSERT reads from its own table are held as a result first: those may go
# to the temp file)
check(rc == 0 and out.startswith("800000\nblocks written to data files\ttrue\n") and
      out.endswith("\n500000\t254999250000\n"),
      f"an INSERT rolled back, then one committed, under a limit: {out!r} {err}")
rc, out, err = run(home, "SELECT count(*), sum(v) FROM w;")
check(rc == 0 and out == "500000\t254999250000\n", f"reopened after them: {out!r} {err}")
check(manifest_files(home) == data_files(home),
      f"no file but those the manifest names: {sorted(os.listdir(home))}")

CSV = os.path.join(TMP, "rows.csv")
with open(CSV, "w") as f:
    for r in range(5000):
        f.write("%d,%s\n" % (r, "text %d" % (r * 7)))

CRASH_SETUP = """
CREATE TABLE a(x BIGINT, s VARCHAR);
CREATE TABLE b(x BIGINT, s VARCHAR);
CREATE TABLE c AS SELECT 0 AS y;
"""


def statement(i):
    """Statement i, changing one table (or the catalog)."""
    k = i % 6
    if k == 0:
        return ("INSERT INTO a SELECT r, 'a' || r FROM range(%d, %d) x(r);" %
                (i * 1000, i * 1000 + 4000))
    if k == 1:
        return "COPY b FROM '%s';" % CSV
    if k == 2:
        return "CREATE OR REPLACE TABLE c AS SELECT r * %d AS y FROM range(30000) x(r);" % i
    if k == 3:
        return "DELETE FROM a WHERE x %% 7 = %d;" % (i % 7)
    if k == 4:
        return ("DROP TABLE IF EXISTS d;" if i % 12 == 10 else
                "CREATE TABLE IF NOT EXISTS d AS SELECT * FROM b;")
    return "UPDATE b SET x = x + 1 WHERE x %% 3 = %d;" % (i % 3)


def workload(n):
    """n units: single statements, and transactions of three statements that
    commit (one manifest swap: never half seen) or roll back (nothing)."""
    out = []
    for i in range(1, n + 1):
        if i % 4 == 0:
            body = "\n".join(statement(i * 10 + j) for j in range(3))
            out.append("BEGIN;\n%s\n%s;" % (body, "ROLLBACK" if i % 8 == 4 else "COMMIT"))
        else:
            out.append(statement(i))
    return out


SIG = ("SELECT 'sig', (SELECT count(*) FROM a), (SELECT coalesce(sum(x), 0) FROM a), "
       "(SELECT count(*) FROM b), (SELECT coalesce(sum(x), 0) FROM b), "
       "(SELECT count(*) FROM c), (SELECT coalesce(sum(y), 0) FROM c), "
       "(SELECT count(*) FROM information_schema.tables WHERE table_name = 'd');")

N_STMTS = 60
stmts = workload(N_STMTS)
# The signature of the state after each prefix of the workload, computed in memory.
rc, out, err = run(None, CRASH_SETUP + SIG + "\n" + "\n".join(s + "\n" + SIG for s in stmts))
states = [line for line in out.splitlines() if line.startswith("sig")]
check(rc == 0 and len(states) == N_STMTS + 1, f"the reference run: {err}")

base = os.path.join(TMP, "crash_base")
run(base, CRASH_SETUP)
# The kill instants are drawn over the time the whole workload takes on a
# directory (measured once here), so that nearly every trial lands inside it.
d = os.path.join(TMP, "crash_timing")
shutil.copytree(base, d)
t_full = time.time()
rc, _, err = run(d, "\n".join(stmts))
t_full = time.time() - t_full
check(rc == 0, f"the workload on a directory: {err}")
shutil.rmtree(d)
rng = random.Random(args.seed)
n_mid = n_orphaned = 0
t0 = time.time()
n_trials = 0
for trial in range(args.trials):
    if trial >= 10 and time.time() - t0 > args.budget:
        break
    n_trials += 1
    d = os.path.join(TMP, "crash_%d" % trial)
    shutil.copytree(base, d)
    script = "".join("%s\nSELECT 'ack', %d;\n" % (s, i + 1) for i, s in enumerate(stmts))
    # Every other trial evicts each block as soon as it is unpinned: then every chunk
    # sealed before its commit is written to the database's data file first (persist.h).
    env = dict(os.environ, SLUICE_EVICT_ON_UNPIN="1") if trial % 2 else None
    child = subprocess.Popen([SLUICE, d], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env)
    child.stdin.write(script)
    child.stdin.close()
    time.sleep(rng.uniform(0.005, t_full))
    child.send_signal(signal.SIGKILL)
    child.wait()
    n_orphaned += any(n == "MANIFEST.tmp" or (n.endswith(".tbl") and n not in manifest_files(d))
                      for n in os.listdir(d))
    acked = 0
    for line in child.stdout.read().splitlines():
        if line.startswith("ack\t"):
            acked = int(line.split("\t")[1])
    child.wait()
    rc, out, err = run(d, SIG)
    sig = out.strip()
    ok = rc == 0 and sig in (states[acked], states[min(acked + 1, N_STMTS)])
    check(ok, f"trial {trial}: after {acked} acknowledged statements the state is one of them "
              f"({rc}): {sig!r} vs {states[acked]!r} {err}")
    n_mid += 0 < acked < N_STMTS
    names = os.listdir(d)
    check("MANIFEST.tmp" not in names and manifest_files(d) == data_files(d),
          f"trial {trial}: orphans are removed at open: {names}")
    shutil.rmtree(d)
print("crash harness: %d trials (%d killed mid-workload, %d left orphans) in %.1f s; "
      "the workload takes %.2f s" % (n_trials, n_mid, n_orphaned, time.time() - t0, t_full))

if failures:
    print("%d failure(s); files in %s" % (len(failures), TMP))
    sys.exit(1)
shutil.rmtree(TMP)
print("ok")
