#!/usr/bin/env python3
"""run.py - the seed workload scripts end to end: the Sluice versions beside this file on
Sluice and, with --duckdb, the originals (/work/shared/workloads) on DuckDB.

    bench/workloads/run.sh [--workloads wordcount,tc,...] [--sluice PATH] [--duckdb [PATH]]
                           [--originals DIR] [--scripts DIR] [--threads N] [--timeout SEC]
                           [--scratch DIR] [--not-full-size] [--check] [--json FILE] [--markdown FILE]

Each script runs whole (generation and job) in a fresh process with N threads (default 2), in a
scratch directory (terasort writes its sorted CSV there; deleted after the run).  Per run: completed,
the sum of the engine's --timer statement times, the peak RSS of the process (/usr/bin/time -f
%M), the first error, and the key figures: the first row of every result of the script, as
column=value, and the row count of results of more than one row.
The runner puts a `SELECT '@@result'` before each top-level SELECT of the script to find the
result sets in the output (a negligible statement; the script is otherwise run as it is).

Figures that do not depend on hash() values (SIZES below: the sizes the workloads' README states,
and the scripts' own consistency results) are checked on every completed run; --check makes a
mismatch, a crash, a timeout or a statement error exit 1.  The engines' generated data differ
(their hash() differ), so the other figures are reported, not compared: the comparison of
answers on the same input is bench/memory's (bench/workloads/README.md).
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = ["wordcount", "terasort", "pagerank", "tc", "kmeans", "kmeans_groupmin"]
MARK = "@@result"

# bench/memory's runner: the duckdb-sql finder, the stderr and /usr/bin/time parsers, the
# statement splitter, the MiB formatter
_spec = importlib.util.spec_from_file_location("memory_run", os.path.join(REPO, "bench", "memory", "run.py"))
mem = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mem)

# Figures that hold whatever hash() gives, at full size: (result set index, column) -> value
# (of the first row), from /work/shared/workloads/README.md and the scripts' comments.  TC's
# 50,000 edges hold unless fewer than 50,000 of its 60,000 candidate pairs are distinct
# non-loops (about 5 are not, for any decent hash).
SIZES = {
    "wordcount": {(0, "n_lines"): "2400000"},
    "terasort": {(0, "n_rows"): "10000000", (0, "n_bytes"): "1000000000",
                 (1, "n_rows"): "10000000", (1, "out_of_order"): "0"},
    "pagerank": {(0, "n_vertices"): "1000000", (1, "n"): "1000000", (3, "n"): "1000000"},
    "tc": {(0, "rows"): "11", (0, "total_pairs"): "50000"},
    "kmeans": {(1, "n_points"): "2000000"},
    "kmeans_groupmin": {(1, "n_points"): "2000000"},
}
# pairs of (result set, column) that must be equal within one run: the script's own validation
SAME = {
    "terasort": [((0, "checksum"), (1, "checksum"))],
}


def marked_script(path):
    """The script's statements, each top-level SELECT preceded by the marker statement."""
    load, _ = mem.parse_job(path)
    out = []
    for sql in load:
        body = "\n".join(l for l in sql.split("\n") if not l.strip().startswith("--")).lstrip()
        if body[:6].upper() == "SELECT":
            out.append("SELECT '%s' AS mark;" % MARK)
        out.append(sql)
    return "\n".join(out) + "\n"


def result_sets(stdout):
    """The result sets of a marked script's output (with a header line): [(columns, rows)]."""
    sets, cur = [], None
    lines = stdout.split("\n")
    for idx, l in enumerate(lines):
        if l == MARK and idx > 0 and lines[idx - 1] == "mark":
            if cur is not None:
                sets.append(cur)
            cur = []
            continue
        if cur is not None and l != "" and l != "mark":
            cur.append(l.split("\t"))
    if cur is not None:
        sets.append(cur)
    return [(s[0], s[1:]) for s in sets if s]


def key_figures(sets):
    """{(set index, column): value} of the first row of every result, and the row count of
    results of more than one row as (set index, "rows")."""
    figs = {}
    for set_idx, (cols, rows) in enumerate(sets):
        if len(rows) != 1:
            figs[(set_idx, "rows")] = str(len(rows))
        for c, v in zip(cols, rows[0] if rows else []):
            figs[(set_idx, c)] = v
    return figs


def check_figures(workload, figs, full_size):
    """Problems with the figures that do not depend on hash(): a list of strings."""
    problems = []
    if full_size:
        for k, want in SIZES.get(workload, {}).items():
            if figs.get(k) != want:
                problems.append("%s: %s, README says %s" % (k[1], figs.get(k), want))
    for a, b in SAME.get(workload, []):
        if figs.get(a) != figs.get(b):
            problems.append("%s %s against %s" % (a[1], figs.get(a), figs.get(b)))
    return problems


def run_one(engine, cmd_base, script_path, args, workload):
    rec = {"workload": workload, "engine": engine, "script": script_path, "completed": False,
           "error": None, "time_s": None, "peak_rss_bytes": None, "figures": {}}
    scratch = tempfile.mkdtemp(prefix="%s-%s-" % (workload, engine), dir=args.scratch)
    marked = os.path.join(scratch, "script.sql")
    with open(marked, "w") as f:
        f.write(marked_script(script_path))
    time_file = os.path.join(scratch, "time.txt")
    t0 = time.time()
    try:
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", time_file] + cmd_base + [marked],
                           cwd=scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=args.timeout)
        out, err, rc = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = (e.stdout or b"").decode(errors="replace"), (e.stderr or b"").decode(errors="replace"), None
    rec["wall_s"] = round(time.time() - t0, 3)
    rec["peak_rss_bytes"], note = mem.read_time_file(time_file)
    times, errors, other, _ = mem.parse_stderr(err)
    n_marks = out.count("\n" + MARK + "\n")
    rec["time_s"] = round(sum(times), 3)
    sets = result_sets(out)
    figs = key_figures(sets)
    rec["figures"] = {"%d.%s" % k: v for k, v in figs.items()}
    n_selects = marked_script(script_path).count("'%s'" % MARK)
    if rc is None:
        rec["error"] = "timeout after %d s" % args.timeout
    elif rc != 0 and not errors:
        rec["error"] = "crashed (exit %s%s)%s" % (rc, "; " + note if note else "",
                                                 ": " + other[-1] if other else "")
    elif errors:
        rec["error"] = errors[0]
    elif n_marks != n_selects:
        rec["error"] = "%d of %d results printed" % (n_marks, n_selects)
    rec["completed"] = rec["error"] is None
    if rec["completed"]:
        rec["problems"] = check_figures(workload, figs, args.full_size)
    shutil.rmtree(scratch, ignore_errors=True)
    return rec


def figures_text(rec):
    return ", ".join("%s=%s" % (k.split(".", 1)[1], v) for k, v in rec["figures"].items())


def markdown(records):
    rows = ["| script | engine | completed | time s | peak RSS | key figures | error or size check |",
            "|---|---|---|---:|---:|---|---|"]
    for r in records:
        note = (r["error"] or "").replace("|", "\\|")
        if r["completed"]:
            note = "; ".join(r["problems"]) or "sizes as stated"
        rows.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["engine"], "yes" if r["completed"] else "no",
            "%.2f" % r["time_s"] if r["time_s"] is not None else "—", mem.mib(r["peak_rss_bytes"]),
            figures_text(r), note))
    return "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Sluice: the seed workload scripts end to end")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--sluice", default=os.path.join(REPO, "build", "sluice"))
    ap.add_argument("--duckdb", nargs="?", const=mem.find_duckdb(), default=None,
                    help="also run the originals on DuckDB (default path: shared/tools/duckdb/duckdb-sql)")
    ap.add_argument("--originals", default=os.path.join(os.path.dirname(os.path.dirname(mem.find_duckdb())), "..", "workloads"),
                    help="the original scripts (default: shared/workloads)")
    ap.add_argument("--scripts", default=HERE, help="the Sluice versions (default: this directory)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--scratch", default=tempfile.gettempdir())
    ap.add_argument("--not-full-size", dest="full_size", action="store_false",
                    help="the scripts are scaled down: do not check the README's sizes")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    wl = [w for w in args.workloads.split(",") if w]
    for w in wl:
        if w not in WORKLOADS:
            raise SystemExit("run.py: unknown workload %s (have %s)" % (w, ", ".join(WORKLOADS)))
    args.sluice = os.path.abspath(args.sluice)
    engines = [("sluice", [args.sluice, "--threads", str(args.threads), "--timer", "--header",
                           "--mode", "tsv", "-f"], args.scripts)]
    if args.duckdb:
        engines.append(("duckdb", [args.duckdb, "--threads", str(args.threads), "--timer", "--header"],
                        os.path.abspath(args.originals)))
    records, failed = [], []
    load0 = os.getloadavg()[0]
    for w in wl:
        for engine, cmd, folder in engines:  # one at a time: the machine is small
            rec = run_one(engine, cmd, os.path.join(folder, w + ".sql"), args, w)
            rec["loadavg"] = os.getloadavg()[0]
            records.append(rec)
            print("%-16s %-6s %s  time %s s  rss %s  %s" % (
                w, engine, "ok    " if rec["completed"] else "FAILED", rec["time_s"],
                mem.mib(rec["peak_rss_bytes"]),
                figures_text(rec) if rec["completed"] else rec["error"]), flush=True)
            for p in rec.get("problems", []):
                print("    size check: " + p, flush=True)
            if not rec["completed"] or rec.get("problems"):
                failed.append("%s %s: %s" % (w, engine, rec["error"] or "; ".join(rec["problems"])))
            if args.json:
                with open(args.json, "w") as f:
                    json.dump({"load_start": load0, "records": records}, f, indent=1)
    print("load average: %.1f at the start, %.1f at the end" % (load0, os.getloadavg()[0]))
    table = markdown(records)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    print(table)
    if args.check and failed:
        print("check failed:\n  " + "\n  ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
