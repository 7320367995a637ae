#!/usr/bin/env python3
"""run.py - the TPC-H benchmark runner of Sluice (called by run.sh).

Generates the data with build/tpch_gen (or takes a directory of .dat files),
loads it into build/sluice and into DuckDB (/work/shared/tools/duckdb/duckdb-sql,
or $DUCKDB_SQL) from the same files, runs the 22 queries of bench/tpch/queries
N times each on both, and reports per query the median time, the row count,
and whether Sluice's rows match DuckDB's (sorted multisets, numbers within
1e-9 relative).  DuckDB's answer of the same run is the reference: there are
no stored answer files.  With --peer the report has DuckDB's times, the ratio
sluice/duckdb per query and their geometric mean over the queries Sluice
answered correctly; without it DuckDB runs each query once, for the answer.
The results go to the "## TPC-H" section of bench/RESULTS.md.

The machinery (the sluice process fed on stdin, crash and timeout handling,
the DuckDB loader, the comparison and the report tables) is bench/tpcds/run.py's,
imported as a module.  Only the Python standard library is used.
"""

import argparse
import datetime
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCHEMA = os.path.join(HERE, 'schema.sql')
QUERIES = os.path.join(HERE, 'queries')
DEFAULT_SEED = 19940422

_spec = importlib.util.spec_from_file_location(
    'tpcds_run', os.path.join(REPO, 'bench', 'tpcds', 'run.py'))
ds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ds)
log = ds.log


def schema_tables():
    """The CREATE statements of schema.sql as (table, statement), in file order."""
    with open(SCHEMA) as f:
        stmts = ds.split_sql(f.read())
    out = []
    for s in stmts:
        m = re.match(r'(?:\s*--[^\n]*\n)*\s*create\s+table\s+(\w+)', s, re.I)
        if m:
            out.append((m.group(1).lower(), s))
    return out


def query_text(text, sf):
    """The statement of a query file, with Q11's FRACTION = 0.0001 / SF."""
    return ds.split_sql(text.replace('{{FRACTION}}', '%.10f' % (0.0001 / sf)))[0]


def query_files(subset, sf):
    names = sorted(f[:-4] for f in os.listdir(QUERIES) if re.match(r'q\d+\.sql$', f))
    if subset:
        wanted = ['q%02d' % int(q.strip().lstrip('qQ')) for q in subset.split(',') if q.strip()]
        unknown = [q for q in wanted if q not in names]
        if unknown:
            sys.exit('run.sh: no such query: %s' % ', '.join(unknown))
        names = [q for q in names if q in wanted]
    out = []
    for q in names:
        with open(os.path.join(QUERIES, q + '.sql')) as f:
            out.append((q, query_text(f.read(), sf)))
    return out


def gen_stamp(args, gen):
    return 'tpch_gen --sf %g --seed %d\ngenerator sha256 %s\n' % (args.sf, args.seed,
                                                                 ds.file_sha256(gen))


def ensure_data(args, tables):
    """Returns the data directory, generating it with tpch_gen when needed (reused
    while its .stamp matches SF, seed and the generator binary)."""
    d = args.data or os.path.join(REPO, 'build', 'tpch-data', ds.sf_name(args.sf))
    stamp = os.path.join(d, '.stamp')
    have = all(os.path.exists(os.path.join(d, t + '.dat')) for t in tables)
    if args.data and have:
        return d
    gen = args.gen or os.path.join(REPO, 'build', 'tpch_gen')
    if not os.path.exists(gen):
        subprocess.run(['cmake', '--build', os.path.dirname(gen), '--target', 'tpch_gen',
                        '-j2'], check=True)
    if have and os.path.exists(stamp) and open(stamp).read() == gen_stamp(args, gen):
        return d
    log('generating SF %g into %s' % (args.sf, d))
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    subprocess.run([gen, '--sf', '%g' % args.sf, '--out', d, '--seed', str(args.seed),
                    '--threads', str(args.threads or os.cpu_count())], check=True)
    args.gen_seconds = time.time() - t0
    with open(stamp, 'w') as f:
        f.write(gen_stamp(args, gen))
    return d


def check_answer(r, p):
    """(verdict, reason) of sluice's result r against DuckDB's p: 'yes', 'NO'
    (wrong answer), '-' (sluice gave no result) or 'no ref' (DuckDB did not)."""
    if r['status'] != 'ok':
        return '-', '%s: %s' % (r['status'], r['message'])
    if p is None or p['status'] != 'ok':
        return 'no ref', 'no reference: DuckDB %s' % (p['message'] if p else 'did not run')
    if ds.same_rows(r['rows'], p['rows']):
        return 'yes', None
    return 'NO', 'wrong answer: %d rows, DuckDB has %d%s' % (
        len(r['rows']), len(p['rows']), ds.first_difference(r['rows'], p['rows']))


def run_engines(args, tool, d, creates, queries):
    """Loads DuckDB, then sluice; runs each query on sluice, then on DuckDB (so both
    see about the same machine load).  Returns (loads, results, peer loads, peer)."""
    peer = {}
    peer_runs = args.runs if args.peer else 1
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, 'tpch.duckdb')
        log('loading SF %g into DuckDB' % args.sf)
        peer_loads = ds.duckdb_load(tool, db, d, creates, args.threads)

        def after(q, sql):
            peer.update(ds.duckdb_queries(tool, db, [(q, sql)], peer_runs, args.threads))

        log('loading SF %g into sluice' % args.sf)
        loads, results = ds.sluice_queries(args, d, creates, queries, after)
    return loads, results, peer_loads, peer


def render(args, d, queries, results, peer, checks, loads, peer_loads, manifest):
    cmd = 'bench/tpch/run.sh ' + shlex.join(sys.argv[1:])
    shown = peer if args.peer else None
    lines = ['## TPC-H', '',
             'Command: `%s` (%s)' % (cmd.strip(), datetime.date.today().isoformat()), '',
             'Machine: %s.' % ds.machine(), '',
             'Sluice: %s.' % ds.sluice_build(args), '',
             'Data: tpch_gen SF %g, seed %d, in `%s`%s. Times are the median of %d runs '
             '(sluice `--timer`, DuckDB `duckdb-sql --timer`), in seconds. The reference '
             'answer of each query is DuckDB\'s on the same files.'
             % (args.sf, args.seed, d,
                ' (generated in %.1f s)' % args.gen_seconds if args.gen_seconds else '',
                args.runs), '']
    lines += ds.summary_lines(args, queries, results, shown, checks) + ['']
    fails = ds.failures(queries, checks, loads)
    if fails:
        lines += ['Not correct (%d):' % len(fails), ''] + ['- ' + f for f in fails] + ['']
    lines += ['### Queries', ''] + ds.query_table(args, queries, results, shown, checks) + ['']
    lines += ['### Load', ''] + ds.load_table(loads, peer_loads if args.peer else None,
                                              manifest) + ['']
    return '\n'.join(lines)


def parse_args():
    p = argparse.ArgumentParser(prog='run.sh', description=__doc__.split('\n\n')[0])
    p.add_argument('--sf', type=float, default=1.0, help='scale factor (default 1, >= 0.01)')
    p.add_argument('--data', help='directory of .dat files (generated there if missing)')
    p.add_argument('--runs', type=int, default=3, help='runs per query (default 3)')
    p.add_argument('--threads', type=int, help='threads for sluice, DuckDB and the generator')
    p.add_argument('--peer', action='store_true', help='report DuckDB times and ratios')
    p.add_argument('--check', action='store_true',
                   help='one run per query; exit 1 unless every answer matches DuckDB\'s; '
                        'RESULTS.md untouched')
    p.add_argument('--queries', help='comma-separated subset, e.g. q01,q03')
    p.add_argument('--timeout', type=float, default=600, help='seconds per statement')
    p.add_argument('--seed', type=int, default=DEFAULT_SEED, help='generator seed')
    p.add_argument('--sluice', default=os.path.join(REPO, 'build', 'sluice'))
    p.add_argument('--gen', help='tpch_gen binary (default build/tpch_gen)')
    p.add_argument('--note', help='text added to the Sluice line of the report')
    p.add_argument('--no-results', action='store_true', help='do not update bench/RESULTS.md')
    p.add_argument('--db', help='load into this directory database (emptied first), then '
                                'reopen it in a new process for the queries')
    p.add_argument('--reuse-db', action='store_true',
                   help='with --db: a directory that already holds the data (each table '
                        'with its .dat file\'s rows) is used as it is, not loaded again')
    # bench/tpcds/run.py's loader and query runner, which this one uses, read it
    p.add_argument('--set', action='append', metavar='NAME=VALUE',
                   help="a setting for every sluice process (SET NAME = 'VALUE'), e.g. "
                        "memory_limit=128MB; repeatable")
    args = p.parse_args()
    if args.check:
        args.runs = 1
    args.gen_seconds = None
    args.db_loads = None  # bench/tpcds/run.py's loader fills it on the first load into --db
    return args


def main():
    args = parse_args()
    creates = schema_tables()
    tables = [t for t, _ in creates]
    queries = query_files(args.queries, args.sf)
    tool = ds.duckdb_tool(args)
    if not tool:
        sys.exit('run.sh: DuckDB (%s or $DUCKDB_SQL) is needed for the reference answers'
                 % ds.DEFAULT_DUCKDB)
    if not os.path.exists(args.sluice):
        sys.exit('run.sh: %s not found; build it first' % args.sluice)
    d = ensure_data(args, tables)
    manifest = ds.data_manifest(d, tables)
    loads, results, peer_loads, peer = run_engines(args, tool, d, creates, queries)
    checks = {q: check_answer(results[q], peer.get(q)) for q, _ in queries}
    section = render(args, d, queries, results, peer, checks, loads, peer_loads, manifest)
    print(section)
    if not args.check and not args.no_results:
        ds.write_results(section, 'TPC-H')
    fails = ds.failures(queries, checks, loads)
    if args.check and fails:
        log('run.sh --check: FAILED, %d of %d queries not correct:' % (
            sum(1 for q, _ in queries if checks[q][0] != 'yes'), len(queries)))
        for f in fails:
            log('  ' + f)
        return 1
    if args.check:
        log('run.sh --check: all %d queries match DuckDB' % len(queries))
    return 0


if __name__ == '__main__':
    sys.exit(main())
