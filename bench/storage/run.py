#!/usr/bin/env python3
"""run.py - the storage benchmark of Sluice (called by run.sh): directory
databases against DuckDB's database file, on the TPC-DS data of bench/tpcds.

Measured, in one run, and printed as the markdown of bench/RESULTS.md's
"Persistent storage" section:

1. load: CREATE + COPY of every table into a new directory database on
   --threads threads (each COPY committed: written, fsynced, the manifest
   swapped), beside DuckDB loading the same .dat files into its own file;
   the size on disk of both against the .dat files;
2. COPY on 1 thread against --threads: two more loads on 1 thread and one on
   --threads, alternating (the machine is shared), the best of each compared;
3. open: a new process that opens the directory and answers `SELECT 1`, then
   ones that answer TPC-DS q01 and q03 reading the chunks they need from
   the files (median of 5; wall time, process start included);
4. the TPC-DS subset on the reopened directory against an in-memory load, each
   query run twice in one process: the first run reads the chunks it needs
   from the files, the second finds them in memory;
5. bulk COPY against row-by-row INSERT of the same store_sales rows: INSERTs
   each committed on their own (autocommit, --insert-rows of them) and all in
   one BEGIN ... COMMIT.

The machinery (data generation, the sluice process fed on stdin, the DuckDB
loader) is bench/tpcds/run.py's, imported as a module.  Only the Python
standard library is used.  SF 10 under a 2 GB memory_limit is the TPC-DS
runner's: bench/tpcds/run.sh --sf 10 --db DIR --set memory_limit=2GB --check.
"""

import argparse
import importlib.util
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

_spec = importlib.util.spec_from_file_location(
    'tpcds_run', os.path.join(REPO, 'bench', 'tpcds', 'run.py'))
ds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ds)
log = ds.log


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--sf', type=float, default=1.0, help='TPC-DS scale factor (default 1)')
    p.add_argument('--threads', type=int, default=2, help='threads of the loads (default 2)')
    p.add_argument('--sluice', default=os.path.join(REPO, 'build', 'sluice'))
    p.add_argument('--work', help='directory for the databases (default: a new temp dir, '
                   'removed at the end)')
    p.add_argument('--insert-rows', type=int, default=300,
                   help='rows INSERTed one statement each, each committed (default 300)')
    p.add_argument('--txn-rows', type=int, default=20000,
                   help='rows COPYed, and INSERTed in one transaction (default 20000)')
    p.add_argument('--skip-queries', action='store_true', help='leave out part 4')
    p.add_argument('--timeout', type=float, default=1800)
    args = p.parse_args()
    # what ds.ensure_data and ds.sluice_load read
    args.data, args.gen, args.seed, args.gen_threads = None, None, 19620718, 2
    args.skew = 0  # the main data: bench/tpcds/run.py's --skew left at its default
    args.db, args.db_loads, args.set = None, None, []
    return args


def dir_mb(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)) / 1e6


def sluice_db_load(args, d, creates, db, threads):
    """Loads every table into a new directory database; (seconds per table, total)."""
    shutil.rmtree(db, ignore_errors=True)
    s = ds.Sluice(args.sluice, threads, db)
    loads = {}
    try:
        for t, stmt in creates:
            status, _, _, msg = s.run(stmt, args.timeout)
            if status != 'ok':
                sys.exit('run.py: CREATE %s: %s %s' % (t, status, msg))
        for t, _ in creates:
            sql = "COPY %s FROM '%s' (DELIMITER '|');" % (t, os.path.join(d, t + '.dat'))
            status, sec, _, msg = s.run(sql, args.timeout)
            if status != 'ok':
                sys.exit('run.py: COPY %s: %s %s' % (t, status, msg))
            loads[t] = sec
    finally:
        s.close()
    return loads, sum(loads.values())


def wall(cmd, stdin=None):
    t0 = time.time()
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('run.py: %s failed: %s' % (' '.join(cmd[:3]), (r.stdout + r.stderr)[-500:]))
    return time.time() - t0, r.stdout


def open_times(args, db):
    out = {}
    q = dict(ds.query_files('q01,q03'))
    for name, sql in (('open + SELECT 1', 'SELECT 1'),
                      ('open + q01 (store_returns), first run', q['q01']),
                      ('open + q03 (store_sales), first run', q['q03'])):
        out[name] = statistics.median(
            wall([args.sluice, '--threads', str(args.threads), db, '-c', sql])[0]
            for _ in range(5))
    return out


def run_queries(s, queries, timeout):
    """Each query twice in process s: {q: (first seconds, second seconds)}."""
    out = {}
    for q, sql in queries:
        times = []
        for _ in range(2):
            status, sec, _, msg = s.run(sql, timeout)
            if status != 'ok':
                sys.exit('run.py: %s: %s %s' % (q, status, msg))
            times.append(sec)
        out[q] = tuple(times)
    return out


def geo(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')


def insert_bench(args, d, creates, work):
    """COPY of N store_sales rows, the same rows as INSERTs in one transaction, and
    the first --insert-rows of them as autocommitted INSERTs; rows per second."""
    create = dict(creates)['store_sales']
    rows = []
    with open(os.path.join(d, 'store_sales.dat')) as f:
        for line in f:
            rows.append(line.rstrip('\n').rstrip('|').split('|'))
            if len(rows) == args.txn_rows:
                break
    part = os.path.join(work, 'rows.dat')
    with open(part, 'w') as f:
        f.writelines('|'.join(r) + '|\n' for r in rows)
    # store_sales is integers and decimals only: the fields go in as they are
    values = ['INSERT INTO store_sales VALUES (%s);' % ', '.join(x if x else 'NULL' for x in r)
              for r in rows]
    res = {}

    def fresh(name):
        db = os.path.join(work, name)
        shutil.rmtree(db, ignore_errors=True)
        wall([args.sluice, db, '-c', create])
        return db

    db = fresh('copy_db')
    sec, _ = wall([args.sluice, '--threads', str(args.threads), db, '-c',
                   "COPY store_sales FROM '%s' (DELIMITER '|');" % part])
    res['COPY (one statement)'] = (len(rows), sec)
    db = fresh('txn_db')
    sec, _ = wall([args.sluice, '--threads', str(args.threads), db],
                  'BEGIN;\n' + '\n'.join(values) + '\nCOMMIT;\n')
    res['INSERT per row, one transaction'] = (len(rows), sec)
    db = fresh('auto_db')
    n = min(args.insert_rows, len(values))
    sec, _ = wall([args.sluice, '--threads', str(args.threads), db], '\n'.join(values[:n]) + '\n')
    res['INSERT per row, each committed'] = (n, sec)
    return res


def main():
    args = parse_args()
    if not os.path.exists(args.sluice):
        sys.exit('run.py: %s not found: build first (scripts/setup.sh)' % args.sluice)
    creates = ds.schema_tables()
    d = ds.ensure_data(args, [t for t, _ in creates])
    tool = ds.duckdb_tool(args)
    work = args.work or tempfile.mkdtemp(prefix='sluice_storage_')
    os.makedirs(work, exist_ok=True)
    try:
        report(args, d, creates, tool, work)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def report(args, d, creates, tool, work):
    dat_mb = sum(os.path.getsize(os.path.join(d, t + '.dat')) for t, _ in creates) / 1e6
    db = os.path.join(work, 'db')
    log('loading SF %g into a directory database, %d threads' % (args.sf, args.threads))
    loads, total = sluice_db_load(args, d, creates, db, args.threads)
    peer_total, duck_mb = None, None
    if tool:
        log('loading SF %g into a DuckDB file' % args.sf)
        duck = os.path.join(work, 'tpcds.duckdb')
        peer = ds.duckdb_load(tool, duck, d, creates, args.threads)
        peer_total = sum(v for v in peer.values() if isinstance(v, float))
        duck_mb = os.path.getsize(duck) / 1e6
        if os.path.exists(duck + '.wal'):
            duck_mb += os.path.getsize(duck + '.wal') / 1e6
        os.remove(duck)
    # The machine is shared: the 1-thread load and another --threads one alternate,
    # and the best of each is compared.
    log('loading on 1 thread, then again on %d, then on 1' % args.threads)
    _, total1 = sluice_db_load(args, d, creates, os.path.join(work, 'db1'), 1)
    again, total_again = sluice_db_load(args, d, creates, os.path.join(work, 'db2'), args.threads)
    _, total1_again = sluice_db_load(args, d, creates, os.path.join(work, 'db1'), 1)
    shutil.rmtree(os.path.join(work, 'db1'), ignore_errors=True)
    shutil.rmtree(os.path.join(work, 'db2'), ignore_errors=True)
    best, best1 = min(total, total_again), min(total1, total1_again)
    if total_again < total:
        loads = again
    db_mb = dir_mb(db)
    opens = open_times(args, db)
    print('### Load, size, open (SF %g, %d threads)\n' % (args.sf, args.threads))
    print('| | Sluice (directory) | DuckDB (file) | Sluice / DuckDB |')
    print('|---|---:|---:|---:|')
    if peer_total:
        print('| load: CREATE + COPY of %d tables, s | %.2f | %.2f | %.2f |'
              % (len(creates), total, peer_total, total / peer_total))
        print('| size on disk, MB (.dat files %.0f MB) | %.0f | %.0f | %.2f |'
              % (dat_mb, db_mb, duck_mb, db_mb / duck_mb))
    else:
        print('| load: CREATE + COPY of %d tables, s | %.2f | | |' % (len(creates), total))
        print('| size on disk, MB (.dat files %.0f MB) | %.0f | | |' % (dat_mb, db_mb))
    for name, sec in opens.items():
        print('| %s, ms (new process, median of 5) | %.0f | | |' % (name, sec * 1000))
    print('\nCOPY of every table (committed), the best of two loads each: on 1 thread '
          '%.2f s (%.2f, %.2f); on %d: %.2f s (%.2f, %.2f): **%.2fx**.\n'
          % (best1, total1, total1_again, args.threads, best, total, total_again, best1 / best))
    print('| table | rows | Sluice s |')
    print('|---|---:|---:|')
    for t, _ in creates:
        if loads[t] >= 0.05:
            rows = ds.file_facts(os.path.join(d, t + '.dat'))[0]
            print('| %s | %d | %.3f |' % (t, rows, loads[t]))
    if not args.skip_queries:
        queries = ds.query_files(None)
        log('the subset on the reopened directory')
        s = ds.Sluice(args.sluice, args.threads, db)
        on_disk = run_queries(s, queries, args.timeout)
        s.close()
        log('the subset in memory')
        s = ds.Sluice(args.sluice, args.threads, None)
        for t, stmt in creates:
            s.run(stmt, args.timeout)
            s.run("COPY %s FROM '%s' (DELIMITER '|');" % (t, os.path.join(d, t + '.dat')),
                  args.timeout)
        in_mem = run_queries(s, queries, args.timeout)
        s.close()
        first = [on_disk[q][0] / in_mem[q][1] for q, _ in queries]
        second = [on_disk[q][1] / in_mem[q][1] for q, _ in queries]
        print('\n### The TPC-DS subset on the reopened directory against in memory\n')
        print('| | directory, first run | directory, second run | in memory (second run) |')
        print('|---|---:|---:|---:|')
        print('| sum of %d queries, s | %.2f | %.2f | %.2f |' % (
            len(queries), sum(v[0] for v in on_disk.values()),
            sum(v[1] for v in on_disk.values()), sum(v[1] for v in in_mem.values())))
        print('| geometric mean of the ratio to in memory | %.2f | %.2f | 1 |'
              % (geo(first), geo(second)))
    log('COPY against INSERT')
    res = insert_bench(args, d, creates, work)
    copy_rate = res['COPY (one statement)'][0] / res['COPY (one statement)'][1]
    print('\n### Bulk COPY against row INSERT (store_sales rows, a directory database)\n')
    print('| how | rows | s (wall, process included) | rows/s | COPY is faster by |')
    print('|---|---:|---:|---:|---:|')
    for name, (n, sec) in res.items():
        rate = n / sec
        print('| %s | %d | %.2f | %.0f | %.0fx |' % (name, n, sec, rate, copy_rate / rate))


if __name__ == '__main__':
    main()
