#!/usr/bin/env python3
"""update.py - UPDATE and DELETE on a large table: Sluice in memory and on a
directory database beside DuckDB's file, in one run.

usage: bench/storage/update.py [--sluice BIN] [--data FILE] [--rounds N] [--work DIR]

The table is TPC-DS store_sales (SF 1 by default: 2,880,404 rows, 23 columns),
made by build/tpcds_gen when --data is not given.  Each statement runs on a
fresh copy of the loaded database, in a new process (directory and DuckDB
file), or in one process after one load (in memory, each statement on the
result of the ones before).  Times are the engines' own statement timers
(Sluice `.timer on`, DuckDB `--timer`), each commit included; `written` is the
bytes of the data files a directory statement added.  Every statement's
result (count and two sums afterwards) must be the same in the three.
Only the Python standard library is used.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DUCK = os.path.join(REPO, '..', 'shared', 'tools', 'duckdb', 'duckdb-sql')

# Shapes, not one query's constants: a few rows, scattered rows, a range of
# dates, every row, and statements with a subquery (which run by row address;
# until session 19 they rebuilt the table, the path every UPDATE took before
# session 17), an UPDATE with FROM and one of a primary key column (by
# address and in place since session 20; rebuilt before); then the
# same shapes of DELETE (in memory they run one after another, so each later
# one finds fewer rows; on the directory and in DuckDB each starts from the
# loaded table).
STATEMENTS = [
    ('one ticket (~10 rows)', "UPDATE store_sales SET ss_quantity = 0 WHERE ss_ticket_number = 1000"),
    ('one item (~160 rows, scattered)',
     "UPDATE store_sales SET ss_quantity = ss_quantity + 1 WHERE ss_item_sk = 7"),
    ('31 days of dates (~1%)',
     "UPDATE store_sales SET ss_list_price = ss_list_price + 1, ss_coupon_amt = NULL "
     "WHERE ss_sold_date_sk BETWEEN 2451000 AND 2451030"),
    ('every row', "UPDATE store_sales SET ss_quantity = ss_quantity + 1"),
    ('one ticket, through a subquery',
     "UPDATE store_sales SET ss_quantity = 5 WHERE ss_ticket_number = (SELECT 1000)"),
    ('20 items, IN (SELECT ...) (~3,200 rows)',
     "UPDATE store_sales SET ss_quantity = 1 WHERE ss_item_sk IN (SELECT i * 7 FROM range(1, 21) r(i))"),
    ('1000 tickets through FROM (~10,000 rows)',
     "UPDATE store_sales SET ss_quantity = ss_quantity + x.d FROM "
     "(SELECT i * 37 AS t, 1 AS d FROM range(1, 1001) r(i)) x WHERE ss_ticket_number = x.t"),
    ('a key column (the primary key\'s ticket), one ticket',
     "UPDATE store_sales SET ss_ticket_number = ss_ticket_number + 100000000 "
     "WHERE ss_ticket_number = 4000"),
    ('DELETE one ticket (~10 rows)', "DELETE FROM store_sales WHERE ss_ticket_number = 2000"),
    ('DELETE one item (~160 rows, scattered)', "DELETE FROM store_sales WHERE ss_item_sk = 9"),
    ('DELETE 31 days of dates (~1%)',
     "DELETE FROM store_sales WHERE ss_sold_date_sk BETWEEN 2451100 AND 2451130"),
    ('DELETE the first 1000 tickets (the head)',
     "DELETE FROM store_sales WHERE ss_ticket_number <= 1000"),
    ('DELETE one ticket, through a subquery',
     "DELETE FROM store_sales WHERE ss_ticket_number = (SELECT 3000)"),
    ('DELETE 20 items, IN (SELECT ...) (~3,200 rows)',
     "DELETE FROM store_sales WHERE ss_item_sk IN (SELECT i * 11 FROM range(1, 21) r(i))"),
]
CHECK = ("SELECT count(*), sum(ss_quantity), sum(ss_list_price), count(ss_coupon_amt), "
         "sum(ss_ticket_number) "
         "FROM store_sales")


def schema():
    text = open(os.path.join(REPO, '..', 'shared', 'tpcds', 'schema.sql')).read()
    m = re.search(r'create table store_sales\s*\(.*?\n\);', text, re.S | re.I)
    return m.group(0)


def sluice(binary, db, sql):
    args = [binary] + ([db] if db else [])
    p = subprocess.run(args, input='.timer on\n' + sql, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'sluice failed: {p.stderr[-500:]}')
    times = [float(x) for x in re.findall(r'Run Time: real ([0-9.]+)', p.stdout + p.stderr)]
    rows = [l for l in p.stdout.splitlines() if l and not l.startswith('Run Time')]
    return times, rows


def duck(db, sql):
    p = subprocess.run([DUCK, '--db', db, '--timer', '-c', sql], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f'duckdb failed: {p.stderr[-500:]}')
    out = p.stdout + p.stderr
    times = [float(x) / 1000 for x in re.findall(r'time_ms\t([0-9.]+)', out)]
    rows = [l for l in p.stdout.splitlines() if l and not l.startswith('time_ms')]
    return times, rows


def tbl_bytes(d):
    return {n: os.path.getsize(os.path.join(d, n)) for n in os.listdir(d) if n.endswith('.tbl')}


def fmt(xs):
    lo, hi = min(xs), max(xs)
    return f'{lo:.3f}' if hi - lo < 0.0005 else f'{lo:.3f}-{hi:.3f}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--sluice', default=os.path.join(REPO, 'build', 'sluice'))
    ap.add_argument('--data', help='store_sales.dat (default: made by build/tpcds_gen, SF 1)')
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--work', help='scratch directory (default: a new temp dir, removed)')
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix='sluice_update_')
    os.makedirs(work, exist_ok=True)
    data = a.data
    if data is None:
        data = os.path.join(work, 'store_sales.dat')
        subprocess.run([os.path.join(REPO, 'build', 'tpcds_gen'), '--sf', '1', '--out', work,
                        '--tables', 'store_sales'], check=True, capture_output=True)
    load = schema() + f"\nCOPY store_sales FROM '{data}' (DELIMITER '|');\n"
    sdir, dfile = os.path.join(work, 'db'), os.path.join(work, 'db.duckdb')
    sluice(a.sluice, sdir, load)
    duck(dfile, load)
    res = {name: {'mem': [], 'dir': [], 'duck': [], 'written': 0} for name, _ in STATEMENTS}
    answers = {}
    for _ in range(a.rounds):
        times, rows = sluice(a.sluice, None, load + ''.join(
            f'{sql};\n{CHECK};\n' for _, sql in STATEMENTS))
        times = times[-2 * len(STATEMENTS):]
        for i, (name, _) in enumerate(STATEMENTS):
            res[name]['mem'].append(times[2 * i])
        answers['mem'] = rows
        for name, sql in STATEMENTS:
            copy = os.path.join(work, 'copy')
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(sdir, copy)
            before = tbl_bytes(copy)
            t, rows = sluice(a.sluice, copy, f'{sql};\n{CHECK};\n')
            res[name]['dir'].append(t[0])
            after = tbl_bytes(copy)
            res[name]['written'] = sum(v for k, v in after.items() if k not in before)
            answers.setdefault(('dir', name), rows)
            shutil.copy(dfile, copy + '.duckdb')
            t, rows = duck(copy + '.duckdb', f'{sql};\n{CHECK};')
            res[name]['duck'].append(t[0])
            answers.setdefault(('duck', name), rows)
            for f in (copy + '.duckdb', copy + '.duckdb.wal'):  # a WAL left would be replayed
                if os.path.exists(f):
                    os.unlink(f)
    # each statement alone on the loaded table: the directory's answer and DuckDB's agree
    for name, _ in STATEMENTS:
        if answers[('dir', name)] != answers[('duck', name)]:
            sys.exit(f'{name}: Sluice {answers[("dir", name)]} but DuckDB {answers[("duck", name)]}')
    print(f'| statement (store_sales, {a.rounds} rounds) | Sluice in memory, s | Sluice directory, s '
          f'| DuckDB file, s | directory / DuckDB | written by the directory |')
    print('|---|---:|---:|---:|---:|---:|')
    for name, _ in STATEMENTS:
        r = res[name]
        ratio = statistics.median(r['dir']) / statistics.median(r['duck'])
        print(f"| {name} | {fmt(r['mem'])} | {fmt(r['dir'])} | {fmt(r['duck'])} | {ratio:.2f} "
              f"| {r['written'] / 1e6:.2f} MB |")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == '__main__':
    main()
