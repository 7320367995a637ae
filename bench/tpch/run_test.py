#!/usr/bin/env python3
"""run_test.py - checks the parts of the TPC-H runner that are its own (CTest
tpch_runner, label bench; no engine, no data, well under a second): the verdict
of a query against DuckDB's answer, that a wrong answer counts neither as
correct nor in the geometric mean, the FRACTION of Q11 per SF, and that every
query file yields one statement.  The shared machinery (sluice process, crashes,
timeouts, loads) is tested by bench/tpcds/run_test.py."""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('tpch_run', os.path.join(HERE, 'run.py'))
run = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run)


def result(rows, status='ok', message='', times=(1.0,)):
    return {'rows': rows, 'status': status, 'message': message, 'times': list(times)}


def main():
    failed = []

    def expect(name, cond):
        print('%s: %s' % ('ok  ' if cond else 'FAIL', name))
        if not cond:
            failed.append(name)

    duck = result(['A\t1.50', 'B\t2.25'], times=(2.0,))
    expect('same rows in another order are correct',
           run.check_answer(result(['B\t2.25', 'A\t1.5']), duck)[0] == 'yes')
    verdict, reason = run.check_answer(result(['A\t1.50', 'B\t2.26']), duck)
    expect('a differing value is a wrong answer', verdict == 'NO' and '2.26' in reason)
    verdict, reason = run.check_answer(result(['A\t1.50']), duck)
    expect('a missing row is a wrong answer', verdict == 'NO' and '1 rows, DuckDB has 2' in reason)
    expect('a sluice error is no result',
           run.check_answer(result([], 'error', 'boom'), duck) == ('-', 'error: boom'))
    expect('a DuckDB error leaves no reference',
           run.check_answer(result(['A\t1.50']), result([], 'error', 'x'))[0] == 'no ref')

    queries = [('q01', ''), ('q02', '')]
    results = {'q01': result(['A\t1.50', 'B\t2.25']), 'q02': result(['x'])}
    peer = {'q01': duck, 'q02': result(['y'], times=(4.0,))}
    checks = {q: run.check_answer(results[q], peer[q]) for q, _ in queries}
    lines = run.ds.summary_lines(None, queries, results, peer, checks)
    expect('the geometric mean covers only the correct query',
           any('over 1/2 queries' in ln and ': 0.50.' in ln for ln in lines))

    q11 = dict(run.query_files('q11', 10))['q11']
    expect('Q11 FRACTION = 0.0001 / SF', '* 0.0000100000' in q11 and '{{' not in q11)
    texts = run.query_files(None, 1)
    expect('22 queries, one statement each',
           len(texts) == 22 and all(t.rstrip().endswith(';') and t.count(';') == 1
                                    for _, t in texts))
    expect('8 tables in schema.sql', [t for t, _ in run.schema_tables()] ==
           ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders',
            'lineitem'])
    # The load goes through bench/tpcds/run.py's sluice_load, which reads the
    # options it has (--db and what the first load leaves in db_loads).
    saved = sys.argv
    sys.argv = ['run.py', '--sf', '0.1', '--db', '/tmp/x']
    args = run.parse_args()
    sys.argv = saved
    expect('the shared loader finds --db and db_loads', args.db == '/tmp/x' and
           args.db_loads is None)
    if failed:
        print('%d case(s) failed' % len(failed))
        return 1
    print('the TPC-H runner judges answers against DuckDB as it should')
    return 0


if __name__ == '__main__':
    sys.exit(main())
