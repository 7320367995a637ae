#!/usr/bin/env python3
"""run.py - the TPC-DS benchmark runner of Sluice (called by run.sh).

Generates the data with build/tpcds_gen (or takes a directory of .dat files),
loads it into build/sluice (CREATE from bench/tpcds/schema.sql, then one COPY
per table, timed), runs the 35 queries of bench/tpcds/queries N times each,
and reports per query the median time, the row count and whether the result
matches the reference answer in bench/tpcds/answers/sfSF/ (compared as sorted
multisets, numbers within 1e-9 relative).  With --peer it loads and runs the
same on DuckDB (/work/shared/tools/duckdb/duckdb-sql, or $DUCKDB_SQL) and
prints the ratio sluice/duckdb per query and their geometric mean.  The
results go to the "## TPC-DS" section of bench/RESULTS.md.

Sluice runs as one process fed statement by statement on stdin; a query that
fails is recorded and the run goes on; a query that crashes the process or
passes --timeout is recorded, and a new process reloads the data for the rest.
With --peer, each query runs on DuckDB right after its sluice runs, so that
both engines see about the same load on a shared machine.
With --check, the exit status is 1 unless every query gave the right answer
on the data the answers were made on (both pinned by sha256 in the answers'
MANIFEST); the failing queries are listed with the reason.
Only the Python standard library is used.
"""

import argparse
import datetime
import hashlib
import math
import os
import platform
import re
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCHEMA = os.path.join(HERE, 'schema.sql')
QUERIES = os.path.join(HERE, 'queries')
ANSWERS = os.path.join(HERE, 'answers')
RESULTS = os.path.join(REPO, 'bench', 'RESULTS.md')
DEFAULT_DUCKDB = '/work/shared/tools/duckdb/duckdb-sql'
DEFAULT_SEED = 19620718
REL_TOL = 1e-9


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ SQL text

def split_sql(text):
    """Splits a script on ';' outside quotes and comments (keep in sync with
    the splitter of duckdb-sql's run.mjs)."""
    parts, cur, i, n = [], [], 0, len(text)
    while i < n:
        c, d = text[i], text[i + 1:i + 2]
        if c in "'\"":
            j = i + 1
            while j < n and not (text[j] == c and text[j + 1:j + 2] != c):
                j += 2 if text[j] == c else 1
            cur.append(text[i:j + 1])
            i = j + 1
        elif c == '-' and d == '-':
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif c == '/' and d == '*':
            j = text.find('*/', i + 2)
            i = n if j < 0 else j + 2
        elif c == ';':
            stmt = ''.join(cur).strip()
            if stmt:
                parts.append(stmt + ';')
            cur, i = [], i + 1
        else:
            cur.append(c)
            i += 1
    if ''.join(cur).strip():
        parts.append(''.join(cur).strip() + ';')
    return parts


def schema_tables():
    """The CREATE statements of schema.sql as (table, statement), in file order."""
    with open(SCHEMA) as f:
        stmts = split_sql(f.read())
    out = []
    for s in stmts:
        m = re.match(r'\s*create\s+table\s+(\w+)', s, re.I)
        if m:
            out.append((m.group(1).lower(), s))
    return out


def query_files(subset):
    names = sorted(f[:-4] for f in os.listdir(QUERIES) if re.match(r'q\d+\.sql$', f))
    if subset:
        wanted = [q.strip() for q in subset.split(',') if q.strip()]
        wanted = ['q%02d' % int(q.lstrip('qQ')) for q in wanted]
        unknown = [q for q in wanted if q not in names]
        if unknown:
            sys.exit('run.sh: no such query: %s' % ', '.join(unknown))
        names = [q for q in names if q in wanted]
    out = []
    for q in names:
        with open(os.path.join(QUERIES, q + '.sql')) as f:
            out.append((q, split_sql(f.read())[0]))
    return out


def sf_name(sf):
    return 'sf%s' % ('%g' % sf)


# -------------------------------------------------------------------- data

def data_stamp(sf, seed, skew=0):
    return 'tpcds_gen --sf %g --seed %d%s\n' % (sf, seed, ' --skew %d' % skew if skew else '')


def gen_stamp(sf, seed, gen, skew=0):
    """The .stamp of a generated directory: the parameters and the generator's
    sha256, so that a rebuilt generator makes the data again."""
    return data_stamp(sf, seed, skew) + 'generator sha256 %s\n' % file_sha256(gen)


def ensure_data(args, tables):
    """Returns the data directory, generating it with tpcds_gen when needed."""
    # another seed or skew gets a directory of its own, not the main data's
    other = ('-seed%d' % args.seed if args.seed != DEFAULT_SEED else '') + \
        ('-skew%d' % args.skew if args.skew else '')
    d = args.data or os.path.join(REPO, 'build', 'tpcds-data', sf_name(args.sf) + other)
    stamp = os.path.join(d, '.stamp')
    have = all(os.path.exists(os.path.join(d, t + '.dat')) for t in tables)
    if args.data and have:
        return d
    gen = args.gen or os.path.join(REPO, 'build', 'tpcds_gen')
    if not os.path.exists(gen):
        build_gen(gen)
    if (have and os.path.exists(stamp)
            and open(stamp).read() == gen_stamp(args.sf, args.seed, gen, args.skew)):
        return d
    log('generating SF %g into %s' % (args.sf, d))
    t0 = time.time()
    cmd = [gen, '--sf', '%g' % args.sf, '--out', d, '--seed', str(args.seed),
           '--skew', str(args.skew), '--threads', str(args.gen_threads)]
    subprocess.run(cmd, check=True)
    args.gen_seconds = time.time() - t0
    with open(stamp, 'w') as f:
        f.write(gen_stamp(args.sf, args.seed, gen, args.skew))
    return d


def build_gen(gen):
    build = os.path.dirname(gen)
    if not os.path.exists(os.path.join(build, 'CMakeCache.txt')):
        sys.exit('run.sh: %s is missing and %s is not a CMake build directory; run '
                 'scripts/setup.sh (or cmake -S . -B build) first' % (gen, build))
    log('building tpcds_gen in %s' % build)
    subprocess.run(['cmake', '--build', build, '--target', 'tpcds_gen', '-j2'], check=True)


def file_sha256(path):
    return file_facts(path)[2]


def file_facts(path):
    """(lines, bytes, sha256 hex) of a file, in one pass."""
    n, size, h = 0, 0, hashlib.sha256()
    with open(path, 'rb') as f:
        while True:
            chunk = f.read(1 << 22)
            if not chunk:
                return n, size, h.hexdigest()
            n += chunk.count(b'\n')
            size += len(chunk)
            h.update(chunk)


def data_manifest(d, tables):
    """table -> (rows, bytes, sha256) of the .dat files, which identify a data set."""
    return {t: file_facts(os.path.join(d, t + '.dat')) for t in tables}


# ------------------------------------------------------------------ sluice

def exit_text(code):
    """How a sluice process ended, for the report."""
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = 'signal %d' % -code
        return 'sluice killed by %s' % name
    return 'sluice exited (status %s) before the statement ended' % code


class Sluice:
    """One sluice process, fed statement by statement; a statement ends with
    the 'Run Time:' line that --timer prints after it (even after an error)."""

    def __init__(self, binary, threads, db=None):
        cmd = [binary, '--timer']
        if threads:
            cmd += ['--threads', str(threads)]
        if db:
            cmd += [db]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, bufsize=0)
        self.pending = b''

    def run(self, sql, timeout):
        """Returns (status, seconds, rows, message): status ok, error, timeout or crash."""
        try:
            self.proc.stdin.write(sql.encode() + b'\n')
        except (BrokenPipeError, OSError):
            return 'crash', None, [], exit_text(self.proc.wait())
        lines, deadline = [], time.time() + timeout
        while True:
            line = self._line(deadline)
            if line is None:
                return self._lost(deadline)
            if line.startswith('Run Time: real '):
                return self._result(lines, float(line.split()[3]))
            lines.append(line)

    def _line(self, deadline):
        while b'\n' not in self.pending:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
            if not chunk:
                return None
            self.pending += chunk
        line, self.pending = self.pending.split(b'\n', 1)
        return line.decode('utf-8', 'replace')

    def _lost(self, deadline):
        if time.time() >= deadline:
            self.close()
            return 'timeout', None, [], 'timed out'
        self.proc.wait()
        return 'crash', None, [], exit_text(self.proc.returncode)

    @staticmethod
    def _result(lines, seconds):
        for i, line in enumerate(lines):
            if line.startswith('Error: '):
                return 'error', seconds, lines[:i], line[len('Error: '):]
        return 'ok', seconds, lines, ''

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def sluice_load(args, d, creates):
    """Starts sluice and loads the data; returns (process, {table: seconds or error}).
    A statement that kills sluice or times out is skipped in a fresh process.
    With --db the data goes into that directory database once, and every process
    (the first one included) reopens it instead of loading."""
    if args.db and args.db_loads is not None:
        return sluice_reopen(args, d), args.db_loads
    if args.db and args.reuse_db and os.path.exists(os.path.join(args.db, 'MANIFEST')):
        return reuse_db(args, d, creates)
    if args.db:
        shutil.rmtree(args.db, ignore_errors=True)
    lost = {}
    while True:
        s = start_sluice(args)
        loads, bad = load_once(s, args, d, creates, lost)
        if bad is None:
            break
        lost[bad] = loads[bad]
        s.close()
    if args.db:
        s.close()
        args.db_loads = loads
        s = sluice_reopen(args, d)
    return s, loads


def reuse_db(args, d, creates):
    """--reuse-db: the --db directory as it is, once each table is found to hold
    its .dat file's rows; its loads are None (not timed here)."""
    s = sluice_reopen(args, d)
    for t, _ in creates:
        status, _, rows, msg = s.run('SELECT count(*) FROM %s;' % t, args.timeout)
        want = file_facts(os.path.join(d, t + '.dat'))[0]
        if status != 'ok' or rows != [str(want)]:
            sys.exit('run.py: --reuse-db: %s holds %s, not the %d rows of its .dat file%s'
                     % (t, rows, want, ': ' + msg if msg else ''))
    args.db_loads = {t: None for t, _ in creates}
    return s, args.db_loads


def start_sluice(args):
    """A sluice process with the --set settings applied."""
    s = Sluice(args.sluice, args.threads, args.db)
    for setting in args.set or []:
        name, _, value = setting.partition('=')
        status, _, _, msg = s.run("SET %s = '%s';" % (name, value), args.timeout)
        if status != 'ok':
            sys.exit('run.py: SET %s: %s' % (setting, msg))
    return s


def dir_bytes(path, suffix=''):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path)
               if f.endswith(suffix))


def sluice_reopen(args, d):
    """A new process on the --db directory; logs the time to open it and answer a
    first statement, and its size beside the .dat files'."""
    t0 = time.time()
    s = start_sluice(args)
    status, _, _, msg = s.run('SELECT 1;', args.timeout)
    log('sluice opened %s in %.3f s (%s%s); %.1f MB on disk, .dat files %.1f MB' %
        (args.db, time.time() - t0, status, ': ' + msg if msg else '',
         dir_bytes(args.db) / 1e6, dir_bytes(d, '.dat') / 1e6))
    return s


def load_once(s, args, d, creates, lost):
    """Runs the CREATEs and COPYs on s; returns (loads, table that killed s or None)."""
    loads = dict(lost)
    for t, stmt in creates:
        if t in lost:
            continue
        status, _, _, msg = s.run(stmt, args.timeout)
        if status != 'ok':
            loads[t] = 'CREATE %s: %s' % (status, msg)
            if status in ('crash', 'timeout'):
                return loads, t
    for t, _ in creates:
        if t in loads:
            continue
        sql = "COPY %s FROM '%s' (DELIMITER '|');" % (t, os.path.join(d, t + '.dat'))
        status, sec, _, msg = s.run(sql, args.timeout)
        loads[t] = sec if status == 'ok' else 'COPY %s: %s' % (status, msg)
        if status in ('crash', 'timeout'):
            return loads, t
    return loads, None


def sluice_queries(args, d, creates, queries, after=None):
    """Runs each query args.runs times, then after(q, sql) when given (the peer, so
    that both engines run a query under the same machine load); returns
    (loads, {q: QueryResult})."""
    s, loads = sluice_load(args, d, creates)
    results = {}
    for q, sql in queries:
        r = {'times': [], 'rows': None, 'status': 'ok', 'message': ''}
        for run in range(args.runs):
            status, sec, rows, msg = s.run(sql, args.timeout)
            if status != 'ok':
                r['status'], r['message'] = status, msg
                if status in ('crash', 'timeout'):
                    s, _ = sluice_load(args, d, creates)
                break
            r['times'].append(sec)
            if run == 0:
                r['rows'] = rows
        results[q] = r
        log('sluice %s: %s' % (q, summary(r)))
        if after:
            after(q, sql)
    s.close()
    return loads, results


def summary(r):
    if r['status'] != 'ok':
        return '%s: %s' % (r['status'], r['message'][:100])
    return '%d rows, median %.3f s' % (len(r['rows']), statistics.median(r['times']))


# ------------------------------------------------------------------ duckdb

def duckdb_tool(args):
    tool = os.environ.get('DUCKDB_SQL', DEFAULT_DUCKDB)
    if not os.path.exists(tool):
        return None
    return tool


def duckdb_script(tool, db, script, threads):
    """Runs a script on DuckDB; returns (stdout lines, per-statement results),
    a result being ('ok', ms) or ('error', message)."""
    cmd = [tool, '--db', db, '--timer']
    if threads:
        cmd += ['--threads', str(threads)]
    # Files, not pipes: duckdb-sql (node) exits before a pipe has taken more than
    # 64 KiB of its output, which cut long results short.
    with tempfile.TemporaryFile('w+') as out, tempfile.TemporaryFile('w+') as err:
        subprocess.run(cmd, input=script.encode(), stdout=out, stderr=err)
        out.seek(0)
        err.seek(0)
        out_lines, err_lines = out.read().splitlines(), err.read().splitlines()
    stmts = []
    for line in err_lines:
        if line.startswith('time_ms\t'):
            stmts.append(('ok', float(line.split('\t')[1])))
        elif line.startswith('error: '):
            stmts.append(('error', line[len('error: '):]))
    return out_lines, stmts


def duckdb_load(tool, db, d, creates, threads):
    """Creates and loads the tables into the DuckDB file db; {table: seconds or error}."""
    if os.path.exists(db):
        os.remove(db)
    copies = ["COPY %s FROM '%s' (DELIMITER '|', HEADER false, NULL '');"
              % (t, os.path.join(d, t + '.dat')) for t, _ in creates]
    script = '\n'.join([s for _, s in creates] + copies) + '\n'
    _, stmts = duckdb_script(tool, db, script, threads)
    loads = {}
    for (t, _), (status, val) in zip(creates, stmts[len(creates):]):
        loads[t] = val / 1000.0 if status == 'ok' else 'COPY error: ' + val
    for (t, _), (status, val) in zip(creates, stmts[:len(creates)]):
        if status != 'ok':
            loads[t] = 'CREATE error: ' + val
    return loads


MARK = "SELECT '@@tpcds %s %d';"


def duckdb_queries(tool, db, queries, runs, threads):
    """Runs each query runs times on DuckDB; {q: QueryResult} like sluice_queries."""
    script = ''.join(MARK % (q, k) + '\n' + sql + '\n' for q, sql in queries for k in range(runs))
    out, stmts = duckdb_script(tool, db, script, threads)
    rows, cur = {}, None
    for line in out:
        m = re.match(r'@@tpcds (q\d+) (\d+)$', line)
        if m:
            cur = (m.group(1), int(m.group(2)))
            rows[cur] = []
        elif cur:
            rows[cur].append(line)
    results, i = {}, 0
    for q, _ in queries:
        r = {'times': [], 'rows': rows.get((q, 0), []), 'status': 'ok', 'message': ''}
        for k in range(runs):
            status, val = stmts[i + 1] if i + 1 < len(stmts) else ('error', 'no result')
            i += 2
            if status == 'ok':
                r['times'].append(val / 1000.0)
            else:
                r['status'], r['message'] = 'error', val
        results[q] = r
        log('duckdb %s: %s' % (q, summary(r)))
    return results


# ----------------------------------------------------------------- answers

def number(field):
    try:
        v = float(field)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def sort_key(row):
    """Orders rows so that equal rows line up: numbers by value (rounded), text as is."""
    key = []
    for f in row:
        v = number(f)
        key.append((0, float('%.6g' % v), '') if v is not None else (1, 0.0, f))
    return key


def same_field(a, b):
    if a == b:
        return True
    x, y = number(a), number(b)
    if x is None or y is None:
        return a.rstrip(' ') == b.rstrip(' ')
    return abs(x - y) <= REL_TOL * max(abs(x), abs(y)) or abs(x - y) < 1e-12


def same_row(a, b):
    return len(a) == len(b) and all(same_field(x, y) for x, y in zip(a, b))


def same_rows(got, want):
    """Compares two results (lists of TSV lines) as multisets of rows."""
    a = sorted((line.split('\t') for line in got), key=sort_key)
    b = sorted((line.split('\t') for line in want), key=sort_key)
    if len(a) != len(b):
        return False
    if all(same_row(x, y) for x, y in zip(a, b)):
        return True
    unmatched = list(b)  # rounding put near-equal rows apart: match greedily
    for row in a:
        hit = next((i for i, r in enumerate(unmatched) if same_row(row, r)), None)
        if hit is None:
            return False
        unmatched.pop(hit)
    return True


def answer_dir(args):
    return args.answers or os.path.join(ANSWERS, sf_name(args.sf))


def read_answer(args, q):
    path = os.path.join(answer_dir(args), q + '.tsv')
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read().splitlines()


class Manifest:
    """The MANIFEST of an answer directory: the data the answers were made on
    ({table: (rows, bytes, sha256)}) and the answers ({query: (rows, sha256)}).
    Lines: '# ...' comments, 'data TABLE ROWS BYTES SHA256', 'answer QUERY ROWS
    SHA256'.  A MANIFEST of the older format (rows and bytes only, no hashes)
    pins nothing: its data and answers are empty and `old` is set."""

    def __init__(self, path):
        self.data, self.answers, self.old = {}, {}, False
        for line in open(path):
            parts = line.split()
            if not parts or parts[0].startswith('#'):
                continue
            if parts[0] == 'data' and len(parts) == 5:
                self.data[parts[1]] = (int(parts[2]), int(parts[3]), parts[4])
            elif parts[0] == 'answer' and len(parts) == 4:
                self.answers[parts[1]] = (int(parts[2]), parts[3])
            else:
                self.old = True
        if self.old:
            self.data, self.answers = {}, {}


def read_manifest(args):
    """The Manifest of the answers, or None when there is none."""
    path = os.path.join(answer_dir(args), 'MANIFEST')
    return Manifest(path) if os.path.exists(path) else None


def write_manifest(path, stamp, data, answers):
    """Writes a MANIFEST: data {table: (rows, bytes, sha256)}, answers {query:
    (rows, sha256)}; stamp is the generator's command line (data_stamp)."""
    with open(path, 'w') as f:
        f.write('# %s' % stamp)
        f.write('# data TABLE ROWS BYTES SHA256: the .dat files the answers were made on\n')
        for t in sorted(data):
            f.write('data %s %d %d %s\n' % ((t,) + tuple(data[t])))
        f.write('# answer QUERY ROWS SHA256: the reference answers (qNN.tsv)\n')
        for q in sorted(answers):
            f.write('answer %s %d %s\n' % ((q,) + tuple(answers[q])))


def stale_tables(want, manifest):
    """The tables whose data differs from the data the answers were made on
    (all of them when the MANIFEST is missing or pins nothing)."""
    if want is None or not want.data:
        return sorted(manifest)
    return sorted(t for t in set(want.data) | set(manifest)
                  if want.data.get(t) != manifest.get(t))


def make_answers(args, tool, d, creates, queries, manifest):
    """Writes answers/sfSF/qNN.tsv from DuckDB and the MANIFEST of the data and
    of the answers."""
    out = answer_dir(args)
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'tpcds.duckdb')
        duckdb_load(tool, db, d, creates, args.threads)
        results = duckdb_queries(tool, db, queries, 1, args.threads)
    answers = {}
    for q, _ in queries:
        r = results[q]
        if r['status'] != 'ok':
            log('duckdb failed on %s: %s' % (q, r['message']))
            continue
        path = os.path.join(out, q + '.tsv')
        with open(path, 'w') as f:
            f.write(''.join(line + '\n' for line in r['rows']))
        answers[q] = (len(r['rows']), file_sha256(path))
    write_manifest(os.path.join(out, 'MANIFEST'), data_stamp(args.sf, args.seed, args.skew), manifest,
                   answers)
    print('answers for SF %g in %s:' % (args.sf, out))
    for q, _ in queries:
        print('%s\t%s' % (q, answers[q][0] if q in answers else 'FAILED'))
    return 0 if len(answers) == len(queries) and all(n for n, _ in answers.values()) else 1


def answer_problem(args, q, want):
    """Why the reference answer of q cannot be trusted, or None: missing, not
    pinned by the MANIFEST, or not the file the MANIFEST pinned."""
    path = os.path.join(answer_dir(args), q + '.tsv')
    if not os.path.exists(path):
        return 'no reference answer (%s)' % os.path.relpath(path, REPO)
    if want is None or q not in want.answers:
        return 'reference answer %s.tsv is not pinned by a sha256 in its MANIFEST' % q
    sha = file_sha256(path)
    if sha != want.answers[q][1]:
        return ('reference answer %s.tsv has sha256 %s..., its MANIFEST pins %s...'
                % (q, sha[:12], want.answers[q][1][:12]))
    return None


def check_answer(args, q, r, want, stale):
    """(verdict, reason): verdict 'yes', 'NO' (wrong answer), 'stale' (data
    differs from the answers'), 'bad ref' (the reference answer is missing or
    not the pinned file) or '-' (sluice gave no result); reason is None for
    'yes', else why the query does not count as correct."""
    if r['status'] != 'ok':
        return '-', '%s: %s' % (r['status'], r['message'])
    problem = answer_problem(args, q, want)
    if problem:
        return 'bad ref', problem
    if stale:
        return 'stale', ('stale reference data: the data differs from the data the answers '
                         'were made on (%s)' % ', '.join(stale[:5] + (['...'] if len(stale) > 5
                                                                        else [])))
    got = r['rows']
    rows = read_answer(args, q)
    if same_rows(got, rows):
        return 'yes', None
    return 'NO', 'wrong answer: %d rows, the reference has %d%s' % (
        len(got), len(rows), first_difference(got, rows))


def first_difference(got, want):
    """', e.g. ...' naming a row of one side that the other lacks (sorted order)."""
    a = sorted((line.split('\t') for line in got), key=sort_key)
    b = sorted((line.split('\t') for line in want), key=sort_key)
    for x, y in zip(a, b):
        if not same_row(x, y):
            return '; first differing row: got %r, want %r' % ('\t'.join(x)[:80],
                                                               '\t'.join(y)[:80])
    return ''


# ------------------------------------------------------------------ report

def fmt_time(r):
    if r is None or r['status'] != 'ok' or not r['times']:
        return '-'
    return '%.3f' % statistics.median(r['times'])


def fmt_load(v):
    if v is None:
        return '-'
    return '%.3f' % v if isinstance(v, float) else 'error'


def ratio(r, p):
    if r['status'] != 'ok' or p is None or p['status'] != 'ok' or not p['times']:
        return None
    a, b = statistics.median(r['times']), statistics.median(p['times'])
    return max(a, 1e-4) / max(b, 1e-4)  # timers tick in ms: clamp 0 to 0.1 ms


def query_table(args, queries, results, peer, checks):
    head = '| query | rows | correct | sluice s |'
    line = '|---|---:|---|---:|'
    if peer:
        head += ' duckdb s | ratio |'
        line += '---:|---:|'
    rows = [head + ' note |', line + '---|']
    for q, _ in queries:
        r = results[q]
        p = peer[q] if peer else None
        n = str(len(r['rows'])) if r['status'] == 'ok' else '-'
        cells = [q, n, checks[q][0], fmt_time(r)]
        if peer:
            x = ratio(r, p) if checks[q][0] == 'yes' else None  # a wrong answer has no ratio
            cells += [fmt_time(p), '%.2f' % x if x is not None else '-']
        note = r['message'][:90].replace('|', '/') if r['status'] != 'ok' else ''
        rows.append('| ' + ' | '.join(cells) + ' | ' + note + ' |')
    return rows


def load_table(loads, peer_loads, manifest):
    head, line = '| table | rows | sluice s |', '|---|---:|---:|'
    if peer_loads:
        head, line = head + ' duckdb s |', line + '---:|'
    rows = [head, line]
    total, peer_total = 0.0, 0.0
    for t in sorted(loads):
        cells = [t, str(manifest[t][0]), fmt_load(loads[t])]
        total += loads[t] if isinstance(loads[t], float) else 0
        if peer_loads:
            v = peer_loads.get(t)
            cells.append(fmt_load(v))
            peer_total += v if isinstance(v, float) else 0
        rows.append('| ' + ' | '.join(cells) + ' |')
    cells = ['**total**', '', '%.3f' % total] + (['%.3f' % peer_total] if peer_loads else [])
    rows.append('| ' + ' | '.join(cells) + ' |')
    return rows


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def machine():
    mem = 0
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemTotal:'):
                mem = int(line.split()[1]) / (1024 * 1024)
    cpu = platform.processor() or platform.machine()
    try:
        with open('/proc/cpuinfo') as f:
            names = [ln.split(':', 1)[1].strip() for ln in f if ln.startswith('model name')]
            cpu = names[0] if names else cpu
    except OSError:
        pass
    return '%d cores (nproc), %.1f GiB memory, %s, Linux %s; load average %.1f at the end' % (
        os.cpu_count(), mem, cpu, platform.release(), os.getloadavg()[0])


def git_commit():
    try:
        rev = subprocess.run(['git', '-C', REPO, 'rev-parse', '--short', 'HEAD'],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(['git', '-C', REPO, 'status', '--porcelain', '-uno'],
                               capture_output=True, text=True).stdout.strip()
        return rev + ('+local changes' if dirty else '')
    except OSError:
        return 'unknown'


def sluice_build(args):
    """Which sluice ran: its path, version, the repo commit when it is the repo's
    binary, and --note."""
    path = os.path.abspath(args.sluice)
    try:
        version = subprocess.run([path, '--version'], capture_output=True,
                                 text=True).stdout.strip()
    except OSError:
        version = '?'
    text = '`%s` (%s)' % (os.path.relpath(path, REPO) if path.startswith(REPO + os.sep)
                          else path, version)
    if path.startswith(REPO + os.sep):
        text += ', repo at ' + git_commit()
    return text + ('; ' + args.note if args.note else '')


def failures(queries, checks, loads):
    """Every reason the run is not a clean pass: queries not answered correctly
    (with why) and tables that did not load."""
    out = ['%s: %s' % (q, checks[q][1]) for q, _ in queries if checks[q][0] != 'yes']
    out += ['load of %s: %s' % (t, v) for t, v in sorted(loads.items())
            if v is not None and not isinstance(v, float)]
    if not queries:
        out.append('no query selected')
    return out


def summary_lines(args, queries, results, peer, checks):
    n_ok = sum(1 for q, _ in queries if results[q]['status'] == 'ok')
    n_yes = sum(1 for q, _ in queries if checks[q][0] == 'yes')
    out = ['Sluice ran %d of %d queries; %d matched the reference answers.'
           % (n_ok, len(queries), n_yes)]
    if peer:
        # Only correct answers count: a fast wrong answer must not improve the mean.
        xs = [ratio(results[q], peer[q]) for q, _ in queries if checks[q][0] == 'yes']
        xs = [x for x in xs if x is not None]
        g = geomean(xs)
        if g is not None:
            out.append('Geometric mean of sluice/duckdb over %d/%d queries (those sluice '
                       'answered correctly and DuckDB ran): %.2f.' % (len(xs), len(queries), g))
        else:
            out.append('No geometric mean: no query was answered correctly by sluice and run '
                       'by DuckDB (0/%d).' % len(queries))
    return out


def render(args, d, queries, results, peer, checks, loads, peer_loads, manifest):
    cmd = 'bench/tpcds/run.sh ' + shlex.join(sys.argv[1:])
    lines = ['## TPC-DS', '',
             'Command: `%s` (%s)' % (cmd.strip(), datetime.date.today().isoformat()), '',
             'Machine: %s.' % machine(), '',
             'Sluice: %s.' % sluice_build(args), '',
             'Data: tpcds_gen SF %g, seed %d%s, in `%s`%s. Times are the median of %d runs '
             '(sluice `--timer`, DuckDB `duckdb-sql --timer`), in seconds.'
             % (args.sf, args.seed, ', skew %d' % args.skew if args.skew else '', d,
                ' (generated in %.1f s)' % args.gen_seconds if args.gen_seconds else '',
                args.runs), '']
    lines += summary_lines(args, queries, results, peer, checks) + ['']
    fails = failures(queries, checks, loads)
    if fails:
        lines += ['Not correct (%d):' % len(fails), ''] + ['- ' + f for f in fails] + ['']
    lines += ['### Queries', ''] + query_table(args, queries, results, peer, checks) + ['']
    lines += ['### Load', ''] + load_table(loads, peer_loads, manifest) + ['']
    return '\n'.join(lines)


def write_results(section, title='TPC-DS'):
    """Replaces the '## title' section of bench/RESULTS.md (appends it when absent)."""
    text = '# Sluice benchmark results\n'
    if os.path.exists(RESULTS):
        with open(RESULTS) as f:
            text = f.read()
    m = re.search(r'^## %s[^\n]*\n' % re.escape(title), text, re.M)
    if m:
        nxt = re.search(r'^## ', text[m.end():], re.M)
        end = m.end() + nxt.start() if nxt else len(text)
        text = text[:m.start()] + section + ('\n' if nxt else '') + text[end:]
    else:
        text = text.rstrip('\n') + '\n\n' + section
    with open(RESULTS, 'w') as f:
        f.write(text.rstrip('\n') + '\n')
    log('updated %s' % RESULTS)


# -------------------------------------------------------------------- main

def parse_args():
    p = argparse.ArgumentParser(prog='run.sh', description=__doc__.split('\n\n')[0])
    p.add_argument('--sf', type=float, default=1.0, help='scale factor (default 1)')
    p.add_argument('--data', help='directory of .dat files (generated there if missing)')
    p.add_argument('--runs', type=int, default=3, help='runs per query (default 3)')
    p.add_argument('--threads', type=int, help='threads for sluice, DuckDB and the generator')
    p.add_argument('--peer', action='store_true', help='also run DuckDB and print ratios')
    p.add_argument('--check', action='store_true',
                   help='one run per query, compare only; exit 1 unless every query gave the '
                        'right answer on the data the answers were made on; RESULTS.md '
                        'untouched')
    p.add_argument('--make-answers', action='store_true',
                   help='write answers/sfSF/ from DuckDB instead of running sluice')
    p.add_argument('--queries', help='comma-separated subset, e.g. q01,q03')
    p.add_argument('--answers', help='directory of the reference answers and their MANIFEST '
                                     '(default bench/tpcds/answers/sfSF)')
    p.add_argument('--timeout', type=float, default=600, help='seconds per statement')
    p.add_argument('--seed', type=int, default=DEFAULT_SEED, help='generator seed')
    p.add_argument('--skew', type=int, default=0, choices=range(0, 4),
                   help='tpcds_gen --skew: 1..3 skews the sales\' items, customers and dates '
                        '(the generator-independent check); 0 (default) uniform')
    p.add_argument('--sluice', default=os.path.join(REPO, 'build', 'sluice'))
    p.add_argument('--db', help='load into this directory database (emptied first), then '
                                'reopen it in a new process for the queries')
    p.add_argument('--reuse-db', action='store_true',
                   help='with --db: a directory that already holds the data (each table '
                        'with its .dat file\'s rows) is used as it is, not loaded again: '
                        'e.g. loaded without a limit, queried under --set memory_limit=2GB')
    p.add_argument('--gen', help='tpcds_gen binary (default build/tpcds_gen)')
    p.add_argument('--note', help='text added to the Sluice line of the report')
    p.add_argument('--no-results', action='store_true', help='do not update bench/RESULTS.md')
    p.add_argument('--set', action='append', metavar='NAME=VALUE',
                   help="a setting for every sluice process (SET NAME = 'VALUE'), e.g. "
                        "memory_limit=128MB; repeatable")
    args = p.parse_args()
    if args.check:
        args.runs = 1
    args.db_loads = None
    args.gen_threads = args.threads or os.cpu_count()
    args.gen_seconds = None
    return args


def run_engines(args, tool, d, creates, queries):
    """Loads DuckDB (when tool), then sluice, and runs each query on sluice and then
    on DuckDB; returns (loads, results, peer loads or None, peer results or None)."""
    if not tool:
        log('loading SF %g into sluice' % args.sf)
        return sluice_queries(args, d, creates, queries) + (None, None)
    peer = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'tpcds.duckdb')
        log('loading into DuckDB')
        peer_loads = duckdb_load(tool, db, d, creates, args.threads)

        def after(q, sql):
            peer.update(duckdb_queries(tool, db, [(q, sql)], args.runs, args.threads))

        log('loading SF %g into sluice' % args.sf)
        loads, results = sluice_queries(args, d, creates, queries, after)
    return loads, results, peer_loads, peer


def main():
    args = parse_args()
    creates = schema_tables()
    tables = [t for t, _ in creates]
    queries = query_files(args.queries)
    d = ensure_data(args, tables)
    manifest = data_manifest(d, tables)
    tool = duckdb_tool(args) if args.peer or args.make_answers else None
    if args.make_answers:
        if not tool:
            sys.exit('run.sh: --make-answers needs DuckDB (%s or $DUCKDB_SQL)' % DEFAULT_DUCKDB)
        return make_answers(args, tool, d, creates, queries, manifest)
    if not os.path.exists(args.sluice):
        sys.exit('run.sh: %s not found; build it first (scripts/setup.sh)' % args.sluice)
    want = read_manifest(args)
    if want is None or want.old:
        log('warning: %s/MANIFEST %s; no answer can be trusted' % (
            answer_dir(args), 'is missing' if want is None else 'has no sha256 (old format)'))
    stale = stale_tables(want, manifest)
    if stale:
        log('warning: the data in %s differs from the data the answers of %s were made on '
            '(%s); answers not compared' % (d, answer_dir(args), ', '.join(stale)))
    if args.peer and not tool:
        log('--peer skipped: DuckDB (%s or $DUCKDB_SQL) not found' % DEFAULT_DUCKDB)
    loads, results, peer_loads, peer = run_engines(args, tool if args.peer else None, d,
                                                   creates, queries)
    checks = {q: check_answer(args, q, results[q], want, stale) for q, _ in queries}
    section = render(args, d, queries, results, peer, checks, loads, peer_loads, manifest)
    print(section)
    if not args.check and not args.no_results:
        write_results(section)
    fails = failures(queries, checks, loads)
    if args.check and fails:
        log('run.sh --check: FAILED, %d of %d queries not correct:' % (
            sum(1 for q, _ in queries if checks[q][0] != 'yes'), len(queries)))
        for f in fails:
            log('  ' + f)
        return 1
    if args.check:
        log('run.sh --check: all %d queries correct' % len(queries))
    return 0


if __name__ == '__main__':
    sys.exit(main())
