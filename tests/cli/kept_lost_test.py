#!/usr/bin/env python3
"""A kept partitioned form whose file is lost (planner/keep.h, docs/cache.md): the statement
reading it still answers (the keeper drops the form and the statement runs again, exchanging
the table anew), the form is kept again afterwards, and the directory is gone at exit.

    python3 tests/cli/kept_lost_test.py build/sluice
"""
import glob
import os
import subprocess
import sys
import tempfile


def main():
    sluice = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="sluice-kept-lost-")
    p = subprocess.Popen([sluice, "--mode", "tsv"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, bufsize=1)

    def q(sql):
        p.stdin.write(sql + ";\nSELECT 'END-OF-STATEMENT';\n")
        p.stdin.flush()
        out = []
        while True:
            line = p.stdout.readline()
            if line == "":
                sys.exit("sluice exited early; output so far: %r" % out)
            if line.strip() == "END-OF-STATEMENT":
                return out
            out.append(line.rstrip("\n"))

    for s in ["SET temp_directory = '%s'" % tmp, "SET broadcast_threshold = '1KB'",
              "SET adaptive_broadcast = false", "SET shuffle_partitions = 4",
              "CREATE TABLE e AS SELECT i % 5000 AS src, i AS w FROM range(40000) t(i)",
              "CREATE TABLE r AS SELECT i AS id, i % 7 AS rank FROM range(5000) t(i)"]:
        assert q(s) == [], s
    query = "SELECT count(*), sum(rank * w) FROM e JOIN r ON r.id = e.src"
    answer = q(query)
    assert answer == ["40000\t2399200000"], answer
    assert q(query) == answer
    kept = "SELECT name, hits FROM sluice_cache ORDER BY name"
    forms = ["e (src, w; hash on src, 4 partitions)", "r (id, rank; hash on id, 4 partitions)"]
    assert q(kept) == [f + "\t0" for f in forms], q(kept)
    files = [f for f in glob.glob(os.path.join(tmp, "*", "*.data"))]
    assert files, "no kept files under %s" % tmp
    for f in files:
        if "-p1-" in f:
            os.unlink(f)
    # the read fails on the missing file; the statement runs again and answers
    assert q(query) == answer
    assert q(kept) == [], q(kept)
    assert q(query) == answer  # seen again, kept
    assert q(query) == answer  # read
    assert q(kept) == [f + "\t1" for f in forms], q(kept)
    p.stdin.close()
    assert p.wait() == 0
    left = glob.glob(os.path.join(tmp, "*"))
    assert left == [], "left behind: %r" % left
    os.rmdir(tmp)
    print("kept_lost: ok")


if __name__ == "__main__":
    main()
