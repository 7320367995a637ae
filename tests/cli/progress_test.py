#!/usr/bin/env python3
"""The progress bar: its sequence of readings, and where it is drawn.

1. Readings (SET debug_progress_log: every reading of each statement appended
   to a file, after a "# begin" line).  TPC-DS data from tpcds_gen are loaded
   with COPY, then TPC-DS queries, a CTAS and a COPY TO run, each with its own
   log (COPY FROM advances by the share of the file parsed).  For every
   statement: the readings never go down, all but the last are
   at most 99.9%, the last is exactly 100%; a query of several stages moves
   through values in between; the adaptive decisions reach the log as they are taken.
2. A pseudo-terminal: with progress_bar_time = 0 a slow statement draws the bar
   (" NN% ▕...▏ stage ...") with \\r and erases it with \\r ESC[K before the
   result; Ctrl+C still interrupts with the bar drawn; SET enable_progress_bar = false
   draws nothing; progress_bar_time
   above the statement's time draws nothing; with output piped nothing is drawn.

usage: progress_test.py SLUICE TPCDS_GEN [--sf SF] [--queries q03,q42|all]
       (CTest runs a handful of queries at SF 0.01; --sf 0.1 --queries all runs
       the whole subset)
"""
import argparse
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TPCDS = os.path.join(HERE, '..', '..', 'bench', 'tpcds')
ONE, CAP = 1000000000, 999000000
SLOW = 'select count(distinct a % 1000003) from (select range a from range(40000000)) t;'
BAR = re.compile(rb'\r *\d+% \xe2\x96\x95')  # "\r 45% ▕"
ERASE = b'\r\x1b[K'

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print('FAIL:', what)


def creates():
    """schema.sql's CREATE TABLE statements by table name."""
    text = open(os.path.join(TPCDS, 'schema.sql')).read()
    return {m.group(1): m.group(0) for m in
            re.finditer(r'create table (\w+)\s*\(.*?\n\);', text, re.S)}


def statements(log):
    """The readings of each statement in a log: a list of lists of ints."""
    out = []
    for line in open(log):
        if line.startswith('# begin'):
            out.append([])
        elif not line.startswith('#') and out:
            out[-1].append(int(line.split()[0]))
    return out


def check_log(log, name, is_multi_stage):
    stmts = statements(log) if os.path.exists(log) else []
    check(len(stmts) >= 1, '%s: no statement logged' % name)
    for idx, seq in enumerate(stmts):
        what = '%s (statement %d of its log)' % (name, idx + 1)
        check(len(seq) > 0 and seq[-1] == ONE, '%s: does not end at 100%%: %s' % (what, seq[-3:]))
        check(all(a <= b for a, b in zip(seq, seq[1:])), '%s: goes back: %s' % (what, seq))
        check(all(v <= CAP for v in seq[:-1]), '%s: 100%% before the end: %s' % (what, seq))
    if stmts and is_multi_stage:
        between = {v for v in stmts[0] if 0 < v < ONE}
        check(len(between) >= 2, '%s: no progress between 0 and 100%%: %s' % (name, stmts[0]))
    return stmts[0] if stmts else []


def run_readings(sluice, gen, sf, queries, tmp):
    data = os.path.join(tmp, 'data')
    subprocess.run([gen, '--sf', str(sf), '--out', data, '--threads', '2'], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    qdir = os.path.join(TPCDS, 'queries')
    names = sorted(f[:-4] for f in os.listdir(qdir) if f.endswith('.sql'))
    if queries != 'all':
        names = queries.split(',')
    texts = {q: open(os.path.join(qdir, q + '.sql')).read().strip() for q in names}
    tables = creates()
    used = [t for t in tables if any(re.search(r'\b%s\b' % t, x) for x in texts.values())]
    script = []
    logs = []  # (name, path, is_multi_stage)

    def logged(name, sql, multi):
        path = os.path.join(tmp, name + '.log')
        script.append("SET debug_progress_log = '%s';" % path)
        script.append(sql)
        logs.append((name, path, multi))

    for t in used:
        script.append(tables[t] + ';' if not tables[t].endswith(';') else tables[t])
        path = os.path.join(data, t + '.dat')
        # COPY FROM reads windows of 4 chunks of 128KB per worker (1 MiB on 2 threads):
        # a file of 2 MiB or more has readings between
        logged('copy_' + t, "COPY %s FROM '%s' (DELIMITER '|', HEADER false, NULL '');"
               % (t, path), os.path.getsize(path) > (2 << 20))
    for q in names:
        logged(q, texts[q], True)
    first = texts[names[0]].rstrip(';')
    logged('ctas', 'CREATE TABLE progress_ctas AS %s;' % first, True)
    logged('copy_to', "COPY (%s) TO '%s';" % (first, os.path.join(tmp, 'out.csv')), True)
    logged('copy_to_table', "COPY %s TO '%s';" % (used[0], os.path.join(tmp, 'out2.csv')), False)
    t0 = time.time()
    r = subprocess.run([sluice, '--threads', '2'], input='\n'.join(script) + '\n',
                       capture_output=True, text=True)
    print('%d statements in %.1f s' % (len(script), time.time() - t0))
    check(r.returncode == 0 and 'Error' not in r.stdout + r.stderr,
          'the script failed: %s' % (r.stdout + r.stderr)[-2000:])
    check('\r' not in r.stdout + r.stderr, 'piped output holds a \\r')
    decisions = [line.strip() for _, path, _ in logs if os.path.exists(path)
                 for line in open(path) if re.match(r'# stage \d+: ', line)]
    check(len(decisions) > 0, 'no adaptive decision reached the progress')
    print('adaptive decisions seen: %d, e.g. %s' % (len(decisions), decisions[:2]))
    for name, path, multi in logs:
        seq = check_log(path, name, multi)
        print('%-24s %3d readings, %s' % (name, len(seq), ' '.join(
            '%.1f' % (v / 1e7) for v in seq[:12]) + (' ...' if len(seq) > 12 else '')))


class Term:
    """sluice with stdin, stdout and stderr on one pty; out collects what it wrote."""

    def __init__(self, sluice, args):
        self.home = tempfile.mkdtemp()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ['HOME'] = self.home
            os.execv(sluice, [sluice, '--threads', '2'] + args)
        self.out = b''

    def read_until(self, needle, timeout=60):
        end = time.time() + timeout
        while needle not in self.out and time.time() < end:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if r:
                try:
                    chunk = os.read(self.fd, 65536)
                except OSError:
                    return False
                if not chunk:
                    return False
                self.out += chunk
        return needle in self.out

    def send(self, text):
        os.write(self.fd, text.encode())

    def close(self):
        try:
            self.send('.quit\n')
            self.read_until(b'\x00', 5)  # to its end
        finally:
            os.close(self.fd)
            os.waitpid(self.pid, 0)


def run_pty(sluice, tmp):
    # the REPL: bar drawn and erased, then the result
    t = Term(sluice, [])
    t.send('SET progress_bar_time = 0;\n.mode tsv\n' + SLOW + '\n')
    check(t.read_until(b'1000003\r\n'), 'repl: no result for the slow query')
    drawn = t.out
    check(BAR.search(drawn) is not None, 'repl: no bar with progress_bar_time = 0: %r'
          % drawn[-400:])
    check(b'stage ' in drawn, 'repl: the bar names no stage')
    last_bar = drawn.rfind(b'\xe2\x96\x95')
    check(drawn.find(ERASE, last_bar) < drawn.find(b'1000003\r\n'),
          'repl: the bar is not erased before the result')
    # Ctrl+C while the bar is drawn: the statement stops, the bar is erased before the error
    mark = len(t.out)
    t.send(SLOW + '\n')
    end = time.time() + 30
    while BAR.search(t.out, mark) is None and time.time() < end:
        t.read_until(b'never', 0.05)
    check(BAR.search(t.out, mark) is not None, 'repl: no bar before Ctrl+C')
    t.send('\x03')
    check(t.read_until(b'interrupted', 30), 'repl: Ctrl+C did not interrupt: %r' % t.out[mark:][-300:])
    after = t.out[mark:]
    at = after.find(b'interrupted')
    last_bar = after.rfind(b'\xe2\x96\x95', 0, at)
    check(0 <= after.find(ERASE, last_bar) < at, 'repl: the bar is not erased before the error')
    # off, and a delay longer than the statement
    for setting in ('SET enable_progress_bar = false;', 'SET progress_bar_time = 60000;'):
        mark = len(t.out)
        t.send(setting + '\n' + SLOW + '\n')
        check(t.read_until(b'1000003\r\n' + b'', 60) and t.out.count(b'1000003\r\n') >= 1,
              'repl: no result after %s' % setting)
        t.read_until(b'never', 0.5)
        check(BAR.search(t.out[mark:]) is None, 'repl: a bar after %s' % setting)
    t.close()
    # -f FILE on a terminal
    path = os.path.join(tmp, 'slow.sql')
    with open(path, 'w') as f:
        f.write('SET progress_bar_time = 0;\n' + SLOW + '\n')
    t = Term(sluice, ['-f', path])
    t.read_until(b'\x00', 60)
    check(BAR.search(t.out) is not None, '-f on a terminal: no bar: %r' % t.out[-300:])
    os.close(t.fd)
    os.waitpid(t.pid, 0)
    # piped: nothing
    r = subprocess.run([sluice, '--threads', '2', '-f', path], capture_output=True)
    check(r.returncode == 0 and b'1000003' in r.stdout, 'piped: the query failed')
    check(b'\r' not in r.stdout + r.stderr and b'\xe2\x96\x95' not in r.stdout + r.stderr,
          'piped: a bar was drawn: %r' % (r.stdout + r.stderr)[-300:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('sluice')
    ap.add_argument('gen')
    ap.add_argument('--sf', default='0.01')
    ap.add_argument('--queries', default='q03,q19,q42,q52,q62,q96,q98')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_readings(args.sluice, args.gen, args.sf, args.queries, tmp)
        run_pty(args.sluice, tmp)
    if failures:
        print('%d failure(s)' % len(failures))
        return 1
    print('progress: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
