#!/usr/bin/env python3
"""run.py - the memory benchmark of Sluice: the seed workloads beside DuckDB.

    bench/memory/run.sh [--scale S] [--scale-for W=S ...] [--workloads tc,pagerank,...]
                        [--data DIR] [--sluice PATH] [--duckdb PATH] [--threads N]
                        [--timeout SEC] [--no-quarter] [--check] [--json FILE] [--markdown FILE]

For each workload, DuckDB generates the inputs (bench/memory/gen/W.sql, the generation part
of /work/shared/workloads/W.sql) and writes them to CSV in DIR/sS (kept between runs).  Then
each engine, in a fresh process, loads the CSVs and runs the job (bench/memory/jobs/W.sql, or
W.sluice.sql for Sluice where its dialect needs a change): once with its default memory, and
once with memory_limit = 1/4 of Sluice's own peak RSS of the first run (`SET memory_limit` for
Sluice, --memory-limit for DuckDB).  Per run it records the wall time of the job part (the sum
of the engines' --timer times of the job statements, the load left out), the peak RSS of the
process (/usr/bin/time -f %M: it includes the loaded tables), the bytes Sluice spilled (the peak
temp space of the process, spill and shuffle files, from sluice_memory: EXPLAIN ANALYZE takes
queries only, and the work here is done by CREATE TABLE AS, INSERT and COPY), and whether it completed, with the first error message when it did not.

Job files: statements end with ';' at the end of a line; a `-- @job` line separates the load
from the job; a `-- @result` line marks the next statement as a result whose rows the engines
must agree on; @DIR@ (the data directory), @OUT@ (a scratch directory for output files) and the
workload's size parameters are substituted.

--check: exit 1 when a run crashed or timed out, or when the two engines' result rows differ
(numbers compared with a relative tolerance of 1e-6) in a run both completed.  A statement error
is recorded, not a check failure, so a known gap (an out-of-memory error under the quarter
limit, a function Sluice lacks) does not fail it.
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = ["tc", "pagerank", "terasort", "kmeans", "kmeans_groupmin", "wordcount"]
# which generation script makes each workload's inputs (kmeans variants share theirs)
GEN_OF = {"kmeans_groupmin": "kmeans"}
REL_TOL = 1e-6
ABS_TOL = 1e-9


def params(workload, scale):
    """The size parameters of a workload at a scale (1 = the sizes of the workloads' README)."""
    g = GEN_OF.get(workload, workload)
    if g == "tc":
        return {"V": max(10, round(25000 * scale)), "C": max(12, round(60000 * scale)),
                "E": max(10, round(50000 * scale))}
    if g == "pagerank":
        n = max(100, round(1000000 * scale))
        return {"N": n, "C": round(10.5 * n), "SQ": "%.6f" % (math.sqrt(n) - 1)}
    if g == "terasort":
        return {"R": max(100, round(10000000 * scale))}
    if g == "kmeans":
        return {"P": max(100, round(2000000 * scale))}
    if g == "wordcount":
        return {"L": max(100, round(2400000 * scale))}
    raise ValueError(workload)


def substitute(text, subst):
    for k, v in subst.items():
        text = text.replace("@%s@" % k, str(v))
    return text


def parse_job(path):
    """Returns (load statements, job statements as (sql, is_result))."""
    load, job = [], []
    in_job, is_result, cur = False, False, []
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s == "-- @job":
                in_job = True
                continue
            if s == "-- @result":
                is_result = True
                continue
            if s.startswith("--") and not cur:
                continue
            if not s and not cur:
                continue
            cur.append(line.rstrip("\n"))
            if s.endswith(";"):
                sql = "\n".join(cur)
                (job if in_job else load).append((sql, is_result) if in_job else sql)
                cur, is_result = [], False
    return load, job


MARK = "@@"


def build_script(engine, load, job, limit):
    out = []
    if engine == "sluice" and limit:
        out.append("SET memory_limit = '%s';" % limit)
    out.extend(load)
    out.append("SELECT '%sjob';" % MARK)
    for sql, is_result in job:
        if is_result:
            out.append("SELECT '%sbegin';" % MARK)
            out.append(sql)
            out.append("SELECT '%send';" % MARK)
        else:
            out.append(sql)
    out.append("SELECT '%sdone';" % MARK)
    if engine == "sluice":
        # EXPLAIN takes queries only, not the CTAS/INSERT/COPY that do the work here, so the
        # spill figure is the peak temp space of the process (spill and shuffle files)
        out.append("SELECT '%smem';" % MARK)
        out.append("SELECT what, bytes, peak_bytes FROM sluice_memory WHERE pool = 'temp';")
        out.append("SELECT '%send';" % MARK)
    n_pre = (1 if engine == "sluice" and limit else 0) + len(load) + 1
    return "\n".join(out) + "\n", n_pre


def parse_bytes(text):
    m = re.match(r"^\s*([0-9.]+)\s*([KMGT]?i?B)?\s*$", text, re.I)
    mult = {"": 1, "B": 1, "KB": 1000, "MB": 1000 ** 2, "GB": 1000 ** 3, "KIB": 1024,
            "MIB": 1024 ** 2, "GIB": 1024 ** 3}
    return int(float(m.group(1)) * mult[(m.group(2) or "").upper()])


def read_time_file(time_file):
    """(peak RSS in bytes or None, the exit note or None) from `/usr/bin/time -f %M -o FILE`."""
    rss, note = None, None
    try:
        with open(time_file) as f:
            lines = [l for l in f.read().split("\n") if l.strip()]
        rss = int(lines[-1]) * 1024
        for l in lines[:-1]:
            if "signal" in l or "status" in l:
                note = l.strip()
    except (OSError, ValueError, IndexError):
        pass
    return rss, note


def parse_stderr(err):
    """(statement times in s, error lines, other lines, timer lines before the first error) of
    an engine's stderr: Sluice's --timer prints "Run Time: real X ...", DuckDB's "time_ms<TAB>N";
    a failing statement prints its timer line after its error."""
    times, errors, other, n_before_error = [], [], [], None
    for l in err.split("\n"):
        m = re.match(r"^Run Time: real ([0-9.]+)", l)
        if m:
            times.append(float(m.group(1)))
            continue
        m = re.match(r"^time_ms\t([0-9.]+)", l)
        if m:
            times.append(float(m.group(1)) / 1000.0)
            continue
        if re.match(r"^(Error|error)\b", l):
            if not errors:
                n_before_error = len(times)
            errors.append(l.strip())
        elif l.strip():
            other.append(l.strip())
    return times, errors, other, n_before_error


def run_engine(engine, args, workload, scale, limit, datadir, job_file=None):
    """Runs one engine on one workload (its job file, or job_file); returns a dict of the
    measures."""
    sl = os.path.join(HERE, "jobs", workload + ".sluice.sql")
    if job_file is not None:
        pass
    elif engine == "sluice" and os.path.exists(sl):
        job_file = sl
    else:
        job_file = os.path.join(HERE, "jobs", workload + ".sql")
    load, job = parse_job(job_file)
    outdir = tempfile.mkdtemp(prefix="out-%s-%s-" % (workload, engine), dir=datadir)
    subst = dict(params(workload, scale), DIR=datadir, OUT=outdir)
    load = [substitute(s, subst) for s in load]
    job = [(substitute(s, subst), r) for s, r in job]
    script, n_pre = build_script(engine, load, job, limit)
    script_path = os.path.join(outdir, "script.sql")
    with open(script_path, "w") as f:
        f.write(script)
    time_file = os.path.join(outdir, "time.txt")
    if engine == "sluice":
        cmd = [args.sluice, "--threads", str(args.threads), "--mode", "tsv", "--timer", "-f", script_path]
    else:
        cmd = [args.duckdb, "--threads", str(args.threads), "--timer"]
        if limit:
            cmd += ["--memory-limit", limit]
        cmd.append(script_path)
    rec = {"workload": workload, "engine": engine, "scale": scale, "limit": limit or "default",
           "completed": False, "error": None, "time_s": None, "peak_rss_bytes": None,
           "spilled_bytes": None, "results": [], "exit": None}
    t0 = time.time()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", time_file] + cmd, cwd=outdir,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=args.timeout)
        out, err, rc = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        err = (e.stderr or b"").decode(errors="replace")
        rc = None
    rec["wall_s"] = round(time.time() - t0, 3)
    rec["exit"] = rc
    rec["peak_rss_bytes"], note = read_time_file(time_file)
    if note:
        rec["exit_note"] = note
    times, errors, other, n_before_error = parse_stderr(err)
    if errors:
        rec["failed_in"] = "load" if n_before_error < n_pre else "job"
    rec["time_s"] = round(sum(times[n_pre:]), 3)
    # stdout sections
    lines = out.split("\n")
    section, cur, mem, results = None, [], [], []
    saw_done = False
    for l in lines:
        if l.startswith(MARK):
            tag = l[len(MARK):].strip()
            if tag in ("begin", "mem"):
                section, cur = tag, []
            elif tag == "end":
                if section == "begin":
                    results.append(cur)
                else:
                    mem.extend(cur)
                section = None
            elif tag == "done":
                saw_done = True
            continue
        if section is not None:
            cur.append(l)
    rec["results"] = results
    if engine == "sluice":
        for l in mem:
            c = l.split("\t")
            if len(c) == 3:
                rec["spilled_bytes"] = int(c[2])
    if workload == "terasort" and saw_done:
        rec["results"] = [validate_terasort(os.path.join(outdir, "terasort_out.csv"), datadir)]
    if rc is None:
        rec["error"] = "timeout after %d s" % args.timeout
    elif rc < 0 or rc > 1 or not saw_done:
        rec["error"] = "crashed (exit %s%s)%s" % (rc, "; " + rec.get("exit_note", "") if rec.get("exit_note") else "",
                                                 (": " + (errors or other)[-1]) if errors or other else "")
        rec["crashed"] = True
    elif errors:
        rec["error"] = errors[0]
    rec["completed"] = rec["error"] is None
    if not rec["completed"]:
        rec["errors"] = errors[:5]
    shutil.rmtree(outdir, ignore_errors=True)
    return rec


def file_checksum(path, skip_header):
    """(rows, rows out of key order, sum of crc32 of the lines mod 2^61, keys) of a CSV file."""
    n, bad, s = 0, 0, 0
    prev = None
    with open(path, "rb") as f:
        if skip_header:
            f.readline()
        for line in f:
            line = line.rstrip(b"\r\n")
            key = line.split(b",", 1)[0]
            if prev is not None and key < prev:
                bad += 1
            prev = key
            s = (s + zlib.crc32(line)) % (1 << 61)
            n += 1
    return n, bad, s


_tera_in = {}


def validate_terasort(out_path, datadir):
    if not os.path.exists(out_path):
        return ["output file missing"]
    if datadir not in _tera_in:
        n, _, s = file_checksum(os.path.join(datadir, "tera_in.csv"), True)
        _tera_in[datadir] = (n, s)
    n_in, s_in = _tera_in[datadir]
    n, bad, s = file_checksum(out_path, False)
    return ["%d\t%d\t%s" % (n, bad, "same rows as input" if (n, s) == (n_in, s_in) else "rows differ from input")]


def generate(args, workload, scale, datadir):
    g = GEN_OF.get(workload, workload)
    stamp = os.path.join(datadir, g + ".done")
    if os.path.exists(stamp):
        return 0.0
    with open(os.path.join(HERE, "gen", g + ".sql")) as f:
        sql = substitute(f.read(), dict(params(workload, scale), DIR=datadir))
    t0 = time.time()
    p = subprocess.run([args.duckdb, "--threads", str(args.threads), "-c", sql],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode(errors="replace"))
        raise SystemExit("run.py: generating the %s inputs failed" % g)
    open(stamp, "w").close()
    return time.time() - t0


def same_value(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a.lower() in ("t", "true") and b.lower() in ("t", "true") or \
            a.lower() in ("f", "false") and b.lower() in ("f", "false")
    return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def compare(ra, rb):
    """None when the result sections agree, else a description of the first difference."""
    if len(ra) != len(rb):
        return "%d result sections against %d" % (len(ra), len(rb))
    for i, (sa, sb) in enumerate(zip(ra, rb)):
        sa = [r for r in sa if r != ""]
        sb = [r for r in sb if r != ""]
        if len(sa) != len(sb):
            return "result %d: %d rows against %d" % (i + 1, len(sa), len(sb))
        for j, (x, y) in enumerate(zip(sa, sb)):
            cx, cy = x.split("\t"), y.split("\t")
            if len(cx) != len(cy) or not all(same_value(u, v) for u, v in zip(cx, cy)):
                return "result %d row %d: %r against %r" % (i + 1, j + 1, x, y)
    return None


def mib(n):
    return "%.0f MiB" % (n / 1048576.0) if n is not None else "—"


def find_duckdb():
    """shared/tools/duckdb/duckdb-sql in the first directory above the repo that has it
    (the repo's parent for a checkout beside shared/, further up for a worktree)."""
    d = REPO
    while True:
        p = os.path.join(d, "shared", "tools", "duckdb", "duckdb-sql")
        if os.path.exists(p) or os.path.dirname(d) == d:
            return p
        d = os.path.dirname(d)


def main():
    ap = argparse.ArgumentParser(description="Sluice memory benchmark: seed workloads beside DuckDB")
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--scale-for", action="append", default=[], metavar="W=S")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "sluice-bench-memory"))
    ap.add_argument("--sluice", default=os.path.join(REPO, "build", "sluice"))
    ap.add_argument("--duckdb", default=find_duckdb())
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--no-quarter", action="store_true", help="only the default-memory runs")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json", help="write every record to this file")
    ap.add_argument("--markdown", help="write the table to this file")
    args = ap.parse_args()
    scales = {}
    for s in args.scale_for:
        w, v = s.split("=")
        scales[w] = float(v)
    wl = [w for w in args.workloads.split(",") if w]
    for w in wl:
        if w not in WORKLOADS:
            raise SystemExit("run.py: unknown workload %s (have %s)" % (w, ", ".join(WORKLOADS)))
    args.sluice = os.path.abspath(args.sluice)
    records, problems = [], []
    load0 = os.getloadavg()
    for w in wl:
        scale = scales.get(w, args.scale)
        datadir = os.path.join(os.path.abspath(args.data), "s%g" % scale)
        os.makedirs(datadir, exist_ok=True)
        gt = generate(args, w, scale, datadir)
        print("== %s (scale %g%s)" % (w, scale, ", generated in %.1f s" % gt if gt else ""), flush=True)
        limits = [None]
        pair = {}
        for limit_idx in range(2):
            if limit_idx == 1:
                base = pair.get((None, "sluice"))
                if args.no_quarter:
                    break
                if base is None or not base["completed"] or not base["peak_rss_bytes"]:
                    print("   quarter-limit run skipped: Sluice did not complete with default memory", flush=True)
                    break
                limit = "%dMiB" % max(1, base["peak_rss_bytes"] // 4 // 1048576)
            else:
                limit = None
            for engine in ("sluice", "duckdb"):
                rec = run_engine(engine, args, w, scale, limit, datadir)
                rec["loadavg"] = os.getloadavg()[0]
                pair[(limit, engine)] = rec
                records.append(rec)
                if args.json:  # after every run, so a long run that is stopped keeps what it measured
                    with open(args.json, "w") as f:
                        json.dump({"load_start": load0, "records": records}, f, indent=1)
                print("   %-6s %-8s %s  time %s s  rss %s  spilled %s%s" % (
                    engine, rec["limit"], "ok    " if rec["completed"] else "FAILED",
                    rec["time_s"], mib(rec["peak_rss_bytes"]),
                    mib(rec["spilled_bytes"]) if rec["spilled_bytes"] is not None else "—",
                    "" if rec["completed"] else "  " + (rec["error"] or "")), flush=True)
                if rec.get("crashed") or (rec["error"] or "").startswith("timeout"):
                    problems.append("%s %s %s: %s" % (w, engine, rec["limit"], rec["error"]))
            a, b = pair[(limit, "sluice")], pair[(limit, "duckdb")]
            if a["completed"] and b["completed"]:
                d = compare(a["results"], b["results"])
                a["matches_duckdb"] = d is None
                if d is not None:
                    a["difference"] = d
                    problems.append("%s %s: answers differ: %s" % (w, a["limit"], d))
                    print("   answers differ: " + d, flush=True)
                else:
                    print("   answers agree (%d result sets)" % len(a["results"]), flush=True)
    load1 = os.getloadavg()
    print("load average: %.1f at the start, %.1f at the end" % (load0[0], load1[0]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"load_start": load0, "load_end": load1, "records": records}, f, indent=1)
    table = markdown(records)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    print(table)
    if args.check and problems:
        print("check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


def markdown(records):
    rows = ["| workload | scale | memory | engine | completed | job time s | peak RSS | spilled | sluice/duckdb time | answers | load avg | error |",
            "|---|---:|---|---|---|---:|---:|---:|---:|---|---:|---|"]
    by = {(r["workload"], r["limit"], r["engine"]): r for r in records}
    for r in records:
        ratio = ""
        if r["engine"] == "sluice":
            d = by.get((r["workload"], r["limit"], "duckdb"))
            if d and r["completed"] and d["completed"] and d["time_s"]:
                ratio = "%.2f" % (r["time_s"] / d["time_s"])
        ans = {True: "agree", False: "DIFFER"}.get(r.get("matches_duckdb"), "")
        err = (r["error"] or "").replace("|", "\\|")
        if err and r.get("failed_in"):
            err = "(%s) %s" % (r["failed_in"], err)
        rows.append("| %s | %g | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %s |" % (
            r["workload"], r["scale"], r["limit"], r["engine"], "yes" if r["completed"] else "no",
            "%.2f" % r["time_s"] if r["completed"] else "—", mib(r["peak_rss_bytes"]),
            mib(r["spilled_bytes"]) if r["spilled_bytes"] is not None else "n/a", ratio, ans, r.get("loadavg", 0.0), err))
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.exit(main())
