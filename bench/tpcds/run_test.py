#!/usr/bin/env python3
"""run_test.py - checks that `run.sh --check` fails when it should (CTest
tpcds_runner, label bench).

No real engine and no generated data: a fake sluice (this file, run with
--as-sluice) answers the runner's statements the way build/sluice does (rows,
`Error: ...`, the `Run Time:` line of --timer), and per query, as FAKE_SLUICE
says ("q01=crash,q03=wrong"), gives the reference answer (ok), a wrong one
(wrong: its last row dropped), an error (error), dies by SIGSEGV (crash), or
hangs (hang); `load=TABLE` makes the COPY of TABLE fail.  The data are one-row
.dat files, the answers two small files pinned by a MANIFEST written with
run.py's own write_manifest.  Each case runs run.sh --check on q01 and q03 and
checks the exit status and the reason it prints.  Only the standard library.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run  # noqa: E402  (the runner under test)

ANSWERS = {'q01': ['AAAAAAAABAAAAAAA', 'AAAAAAAACAAAAAAA', 'AAAAAAAADAAAAAAA'],
           'q03': ['1998\t1\tamalgscholar #8\t12.50', '1998\t2\tamalgscholar #8\t7.25']}


# ------------------------------------------------------------- the fake sluice

def fake_sluice():
    if '--version' in sys.argv:
        print('sluice (fake for run_test.py)')
        return 0
    modes = dict(kv.split('=', 1) for kv in os.environ.get('FAKE_SLUICE', '').split(',') if kv)
    by_text = {sql: q for q, sql in run.query_files(None)}
    stmt = []
    for line in sys.stdin:
        stmt.append(line)
        if not line.rstrip().endswith(';'):
            continue
        sql, stmt = ''.join(stmt).strip(), []
        q = by_text.get(sql)
        mode = modes.get(q, 'ok') if q else 'ok'
        if sql.upper().startswith('COPY ') and sql.split()[1] == modes.get('load'):
            print('Error: cannot read %s (fake)' % sql.split()[1])
        elif q and mode == 'error':
            print('Error: fake failure in %s' % q)
        elif q and mode == 'crash':
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGSEGV)
        elif q and mode == 'hang':
            time.sleep(120)
        elif q:
            rows = ANSWERS[q][:-1] if mode == 'wrong' else ANSWERS[q]
            print('\n'.join(rows))
        print('Run Time: real 0.001 user 0.001 sys 0.000', flush=True)
    return 0


# ------------------------------------------------------------------ the cases

class Case:
    def __init__(self, tmp):
        self.tmp = tmp
        self.data = os.path.join(tmp, 'data')
        self.answers = os.path.join(tmp, 'answers')
        self.sluice = os.path.join(tmp, 'sluice')
        self.failed = 0

    def setup(self):
        """Fresh data, answers and MANIFEST."""
        for d in (self.data, self.answers):
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
        tables = [t for t, _ in run.schema_tables()]
        for t in tables:
            with open(os.path.join(self.data, t + '.dat'), 'w') as f:
                f.write('1|\n')
        pinned = {}
        for q, rows in ANSWERS.items():
            path = os.path.join(self.answers, q + '.tsv')
            with open(path, 'w') as f:
                f.write(''.join(r + '\n' for r in rows))
            pinned[q] = (len(rows), run.file_sha256(path))
        run.write_manifest(os.path.join(self.answers, 'MANIFEST'), 'fake data\n',
                           run.data_manifest(self.data, tables), pinned)
        with open(self.sluice, 'w') as f:
            f.write('#!/bin/sh\nexec "%s" "%s" --as-sluice "$@"\n'
                    % (sys.executable, os.path.abspath(__file__)))
        os.chmod(self.sluice, 0o755)

    def check(self, name, fake, want_rc, want_text, extra=()):
        cmd = [sys.executable, os.path.join(HERE, 'run.py'), '--check', '--no-results',
               '--queries', 'q01,q03', '--data', self.data, '--answers', self.answers,
               '--sluice', self.sluice, '--timeout', '2'] + list(extra)
        env = dict(os.environ, FAKE_SLUICE=fake)
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        ok = p.returncode == want_rc and all(t in out for t in want_text)
        print('%s: %s' % ('ok  ' if ok else 'FAIL', name))
        if not ok:
            self.failed += 1
            print('  exit %d (want %d); want %r in the output:\n%s'
                  % (p.returncode, want_rc, want_text, out))


def report_checks(t):
    """The geometric mean and ratios cover only correct answers, and say over
    how many queries."""
    queries = [('q01', ''), ('q03', '')]
    results = {q: {'status': 'ok', 'times': [1.0], 'rows': [], 'message': ''} for q, _ in queries}
    peer = {q: {'status': 'ok', 'times': [4.0 if q == 'q03' else 2.0]} for q, _ in queries}
    checks = {'q01': ('yes', None), 'q03': ('NO', 'wrong answer')}
    lines = run.summary_lines(None, queries, results, peer, checks)
    ok = any('over 1/2 queries' in ln and ': 0.50.' in ln for ln in lines)
    table = run.query_table(None, queries, results, peer, checks)
    ok = ok and '| 0.50 |' in table[2] and '| - |' in table[3]
    print('%s: geometric mean over the correct queries only' % ('ok  ' if ok else 'FAIL'))
    if not ok:
        t.failed += 1
        print('\n'.join(lines + table))


def main():
    if '--as-sluice' in sys.argv:
        return fake_sluice()
    with tempfile.TemporaryDirectory() as tmp:
        t = Case(tmp)
        t.setup()
        t.check('all correct passes', '', 0, ['all 2 queries correct'])
        t.check('a wrong answer fails', 'q03=wrong', 1,
                ['FAILED', 'q03: wrong answer: 1 rows, the reference has 2'])
        t.check('a query error fails', 'q01=error', 1, ['q01: error: fake failure in q01'])
        t.check('a crash (signal) fails, the next query still runs', 'q01=crash', 1,
                ['q01: crash: sluice killed by SIGSEGV', '1 of 2 queries not correct'])
        t.check('a timeout fails', 'q03=hang', 1, ['q03: timeout'], ['--timeout', '1'])
        t.check('a failed load fails', 'load=store_sales', 1, ['load of store_sales: COPY error'])
        with open(os.path.join(t.data, 'store_sales.dat'), 'a') as f:
            f.write('2|\n')
        t.check('data that changed since the answers (stale) fails', '', 1,
                ['q01: stale reference data', 'store_sales'])
        t.setup()
        with open(os.path.join(t.answers, 'q01.tsv'), 'a') as f:
            f.write('AAAAAAAAEAAAAAAA\n')
        t.check('an answer file not the one pinned fails', 'q01=wrong', 1,
                ['q01: reference answer q01.tsv has sha256'])
        t.setup()
        os.remove(os.path.join(t.answers, 'q03.tsv'))
        t.check('a missing answer fails', '', 1, ['q03: no reference answer'])
        t.setup()
        with open(os.path.join(t.answers, 'MANIFEST'), 'w') as f:
            f.write('# tpcds_gen --sf 1 --seed 19620718\ncall_center 1 3\n')
        t.check('a MANIFEST without hashes fails', '', 1, ['not pinned by a sha256'])
        report_checks(t)
        if t.failed:
            print('%d case(s) failed' % t.failed)
            return 1
        print('run.sh --check fails on errors, crashes, timeouts, wrong and stale answers')
        return 0


if __name__ == '__main__':
    sys.exit(main())
