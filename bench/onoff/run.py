#!/usr/bin/env python3
"""run.py - one setting on and off, query by query, in one Sluice process.

    bench/onoff/run.py --db DIR --queries DIR --setting NAME [--sf SF] [--runs N]
                       [--prelude SQL] [--only q01,q02] [--sluice PATH]

Opens the directory database DIR read-only, runs every query of the directory once to warm
it (a first read decodes the chunks from the files), then each query N times with the
setting true and N times false, in alternating order (true, false; false, true; ...) so that
a drift of the machine's load reaches both alike.  Prints the median seconds of each, their
ratio (on / off) and, for join_bloom_filter, what each filter dropped in an EXPLAIN ANALYZE
run (dropped/checked per probe side).  Only queries that differ by more than 10% or use a
filter are listed; the last line sums every query's medians.

The noise of a shared 2-core machine is about 10% on one query: read differences below that
as none.  --prelude runs first (for example "SET exchange_reuse = false;", so that a query
run several times in one process does not read a partitioned form an earlier run kept).
"""
import argparse
import glob
import os
import re
import statistics
import subprocess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--db', required=True)
    p.add_argument('--queries', required=True)
    p.add_argument('--setting', default='join_bloom_filter')
    p.add_argument('--sf', type=float, default=1.0, help="for TPC-H q11's FRACTION")
    p.add_argument('--runs', type=int, default=3)
    p.add_argument('--prelude', default='')
    p.add_argument('--only')
    p.add_argument('--sluice', default=os.path.join(REPO, 'build', 'sluice'))
    a = p.parse_args()
    only = a.only.split(',') if a.only else None
    qs = []
    for qf in sorted(glob.glob(os.path.join(a.queries, '*.sql'))):
        name = os.path.basename(qf)[:-4].lower()
        if only and name not in only:
            continue
        text = '\n'.join(l for l in open(qf).read().split('\n') if not l.startswith('--'))
        qs.append((name, text.strip().rstrip(';').replace('{{FRACTION}}', '%.10f' % (0.0001 / a.sf))))
    script = [a.prelude, '.timer on']
    for name, sql in qs:
        script += ["SELECT '@@W %s';" % name, sql + ';']
    for name, sql in qs:
        script += ["SELECT '@@E %s';" % name, 'EXPLAIN ANALYZE ' + sql + ';']
        for r in range(a.runs):
            for v in ('true', 'false') if r % 2 == 0 else ('false', 'true'):
                script += ['SET %s = %s;' % (a.setting, v), "SELECT '@@T %s %s';" % (name, v), sql + ';']
        script.append('RESET %s;' % a.setting)
    out = subprocess.run([a.sluice, '--threads', '2', '--readonly', a.db], input='\n'.join(script) + '\n',
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    cur, skip, times, drops = None, False, {}, {}
    for line in out.split('\n'):
        m = re.match(r'@@(\w) (\S+)(?: (\S+))?', line)
        if m:
            cur, skip = m.groups(), True
            continue
        if cur and cur[0] == 'E':
            d = re.search(r'bloom dropped=(\d+) of (\d+)', line)
            if d:
                drops.setdefault(cur[1], []).append('%s/%s' % d.groups())
        if cur and cur[0] == 'T' and line.startswith('Run Time'):
            if skip:  # the marker's own time
                skip = False
                continue
            times.setdefault((cur[1], cur[2]), []).append(float(line.split()[3]))
            cur = None
        elif line.startswith('Error'):
            print(line)
    sum_on = sum_off = 0
    print('| query | %s on s | off s | on / off | dropped / checked |' % a.setting)
    print('|---|---:|---:|---:|---|')
    for name, _ in qs:
        on = statistics.median(times.get((name, 'true'), [0]))
        off = statistics.median(times.get((name, 'false'), [0]))
        sum_on, sum_off = sum_on + on, sum_off + off
        d = ' '.join(drops.get(name, []))
        if d or abs(on - off) > 0.1 * max(off, 0.01):
            print('| %s | %.3f | %.3f | %.2f | %s |' % (name, on, off, on / off if off else 0, d))
    print('| all %d | %.2f | %.2f | %.2f | |' % (len(qs), sum_on, sum_off, sum_on / sum_off if sum_off else 0))


if __name__ == '__main__':
    main()
