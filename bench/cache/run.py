#!/usr/bin/env python3
"""run.py - bench/cache: the seed paper's matrix of cache levels and memory splits.

    bench/cache/run.sh [--scale S] [--workloads pagerank,tc,kmeans] [--limit SIZE | --limit-fraction F]
                       [--data DIR] [--sluice PATH] [--duckdb PATH] [--threads N] [--timeout SEC]
                       [--only CONFIG,...] [--repeat N] [--check] [--json FILE] [--markdown FILE]

Each workload (PageRank, transitive closure, K-means of /work/shared/workloads) runs its
iterations with its reused input cached at a level -- N (no cache: storageLevel NONE, the input
is computed again by every round), M (MEMORY_ONLY), M&S (MEMORY_AND_DISK), S (DISK_ONLY) --
under a static split of memory_limit -- _1 (storage 0.3, shuffle 0.6), _2 (0.4/0.5), _3
(0.6/0.2) -- the 12 configurations of the paper, then two more rows: `unified` and `auto`
(memory_mode unified and auto, storage 0.5 / shuffle 0.5, at M&S).  Times are normalized to
N_1's.

The inputs and the job SQL are bench/memory's (its gen/ scripts, run by DuckDB, and jobs/W.sql,
whose statements are reused with the reused input turned into a CACHE TABLE; see README.md).
memory_limit is --limit, or --limit-fraction (default 0.5) of the working set: the peak of
execution plus the peak of storage that sluice_memory reports after a calibration run without
a limit (unified, M&S).  Each configuration runs in a fresh Sluice process.

--repeat N: N rounds over the configurations (each round runs every one once, so a drift of
the machine's load reaches all alike); a configuration's time is the median of its N, and the
report shows their spread.  Differences of a few percent need it: one run to the next varies
by about 10% on a shared 2-core machine.

--check: exit 1 when a configuration crashed or timed out, or gave other answers than N_1 (a
statement error, such as an out-of-memory under a small split, is a recorded finding).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MEMORY = os.path.join(REPO, "bench", "memory")
sys.path.insert(0, MEMORY)
import run as membench  # noqa: E402  (bench/memory/run.py: params, generation, job parsing)

WORKLOADS = ["pagerank", "tc", "kmeans"]
LEVELS = [("N", "NONE"), ("M", "MEMORY_ONLY"), ("M&S", "MEMORY_AND_DISK"), ("S", "DISK_ONLY")]
SPLITS = [("_1", 0.3, 0.6), ("_2", 0.4, 0.5), ("_3", 0.6, 0.2)]
# The paper's figures (normalized to N_1) where it states them.
PAPER = {("pagerank", "M&S_1"): 0.70, ("tc", "S_1"): 0.58}
MARK = "@@"


def configs():
    """(name, memory_mode, storage, shuffle, level) in the report's order."""
    out = []
    for lv, level in LEVELS:
        for sp, s, e in SPLITS:
            out.append((lv + sp, "static", s, e, level))
    out.append(("unified", "unified", 0.5, 0.5, "MEMORY_AND_DISK"))
    out.append(("auto", "auto", 0.5, 0.5, "MEMORY_AND_DISK"))
    return out


def cached_job(workload):
    """bench/memory's job with its reused input cached at @LEVEL@ (the text of a job file)."""
    with open(os.path.join(MEMORY, "jobs", workload + ".sql")) as f:
        text = f.read()
    opts = "OPTIONS ('storageLevel' '@LEVEL@')"
    if workload == "pagerank":
        # the weighted edges every round joins: Spark's cached links RDD
        text = text.replace("CREATE TABLE edges_w AS\n", "CACHE TABLE edges_w %s AS\n" % opts, 1)
        # the WITH RECURSIVE form is another way to the same ranks, not an iteration over the cache
        text = text[:text.index("CREATE TABLE ranks_rec AS")].rstrip() + "\n"
    elif workload == "tc":
        # the edges each round joins on src (SparkTC caches its edges RDD)
        text = text.replace("-- @job\n", "-- @job\nCACHE TABLE edges_c %s AS SELECT src, dst FROM tc_edges;\n" % opts, 1)
        text = text.replace("JOIN tc_edges e", "JOIN edges_c e")
    elif workload == "kmeans":
        # the points every round reads twice (Spark's cached points RDD)
        text = text.replace("-- @job\n", "-- @job\nCACHE TABLE points_c %s AS SELECT * FROM points;\n" % opts, 1)
        text = text.replace("FROM points p ", "FROM points_c p ")
    else:
        raise ValueError(workload)
    return text


def build_script(load, job, limit, mode, storage, shuffle, sets=()):
    out = ["SET memory_limit = '%s';" % limit] if limit else []
    out += ["SET %s = '%s';" % tuple(s.split("=", 1)) for s in sets]
    # zero first, so that no order of the two SETs passes a sum of 1
    out += ["SET memory_mode = '%s';" % mode, "SET storage_fraction = 0;",
            "SET shuffle_fraction = %g;" % shuffle, "SET storage_fraction = %g;" % storage]
    n_pre = len(out) + len(load) + 1
    out += load
    out.append("SELECT '%sjob';" % MARK)
    for sql, is_result in job:
        if is_result:
            out += ["SELECT '%sbegin';" % MARK, sql, "SELECT '%send';" % MARK]
        else:
            out.append(sql)
    out.append("SELECT '%sdone';" % MARK)
    out.append("SELECT '%smem';" % MARK)
    # the pools' totals, temp space, and auto's last move (its `what` is the decision)
    out.append("SELECT pool, what, bytes, peak_bytes FROM sluice_memory WHERE pool = 'auto' OR "
               "(pool IN ('execution', 'storage', 'temp') AND what NOT LIKE '%: %');")
    out.append("SELECT '%send';" % MARK)
    return "\n".join(out) + "\n", n_pre


def run_config(args, workload, scale, datadir, limit, cfg):
    name, mode, storage, shuffle, level = cfg
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False, dir=datadir) as f:
        f.write(cached_job(workload))
        job_path = f.name
    load, job = membench.parse_job(job_path)
    os.unlink(job_path)
    subst = dict(membench.params(workload, scale), DIR=datadir, OUT=datadir, LEVEL=level)
    load = [membench.substitute(s, subst) for s in load]
    job = [(membench.substitute(s, subst), r) for s, r in job]
    script, n_pre = build_script(load, job, limit, mode, storage, shuffle, args.set)
    fd, script_path = tempfile.mkstemp(suffix=".sql", dir=datadir)
    with os.fdopen(fd, "w") as f:
        f.write(script)
    rec = {"workload": workload, "config": name, "mode": mode, "storage_fraction": storage,
           "shuffle_fraction": shuffle, "level": level, "scale": scale, "limit": limit,
           "completed": False, "error": None, "time_s": None, "results": [], "memory": {}}
    cmd = [args.sluice, "--threads", str(args.threads), "--mode", "tsv", "--timer", "-f", script_path]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=datadir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=args.timeout)
        out, err, rc = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, err, rc = (e.stdout or b"").decode(errors="replace"), (e.stderr or b"").decode(errors="replace"), None
    os.unlink(script_path)
    rec["wall_s"] = round(time.time() - t0, 3)
    times, errors = [], []
    for l in err.split("\n"):
        m = re.match(r"^Run Time: real ([0-9.]+)", l)
        if m:
            times.append(float(m.group(1)))
        elif re.match(r"^Error\b", l):
            errors.append(l.strip())
    rec["time_s"] = round(sum(times[n_pre:]), 3)
    section, cur, saw_done = None, [], False
    for l in out.split("\n"):
        if l.startswith(MARK):
            tag = l[len(MARK):].strip()
            if tag in ("begin", "mem"):
                section, cur = tag, []
            elif tag == "end":
                if section == "begin":
                    rec["results"].append(cur)
                else:
                    for row in cur:
                        c = row.split("\t")
                        if len(c) == 4:
                            rec["memory"]["%s %s" % (c[0], c[1])] = [int(c[2]), int(c[3])]
                section = None
            elif tag == "done":
                saw_done = True
            continue
        if section is not None:
            cur.append(l)
    if rc is None:
        rec["error"] = "timeout after %d s" % args.timeout
    elif rc < 0 or rc > 1 or not saw_done:
        rec["error"] = "crashed (exit %s)%s" % (rc, (": " + errors[-1]) if errors else "")
        rec["crashed"] = True
    elif errors:
        rec["error"] = errors[0]
    rec["completed"] = rec["error"] is None
    return rec


def summarize(recs):
    """One record for a configuration's runs: the first failed one, else the first with the
    median of their times (and all of them in "times")."""
    bad = [r for r in recs if not r["completed"]]
    rec = dict(bad[0] if bad else recs[0])
    times = sorted(r["time_s"] for r in recs if r["completed"])
    rec["times"] = [r["time_s"] for r in recs]
    if not bad:
        n = len(times)
        rec["time_s"] = round(times[n // 2] if n % 2 else (times[n // 2 - 1] + times[n // 2]) / 2, 3)
    rec["matches_n1"] = (None if any(r.get("matches_n1") is None for r in recs)
                         else all(r["matches_n1"] for r in recs))
    return rec


def working_set(args, workload, scale, datadir):
    """Peak execution + peak storage (bytes) of a run without a limit."""
    rec = run_config(args, workload, scale, datadir, None,
                     ("calibration", "unified", 0.5, 0.5, "MEMORY_AND_DISK"))
    if not rec["completed"]:
        raise SystemExit("run.py: the calibration run of %s failed: %s" % (workload, rec["error"]))
    m = rec["memory"]
    return m["execution total"][1] + m["storage total"][1]


def main():
    ap = argparse.ArgumentParser(description="bench/cache: cache levels x memory splits")
    ap.add_argument("--scale", type=float, default=0.1)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--limit", help="memory_limit of every configuration (e.g. 64MB)")
    ap.add_argument("--limit-fraction", type=float, default=0.5,
                    help="without --limit: this share of the calibrated working set")
    ap.add_argument("--only", help="run these configurations only (names as in the report)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "sluice-bench-memory"))
    ap.add_argument("--sluice", default=os.path.join(REPO, "build", "sluice"))
    ap.add_argument("--duckdb", default=membench.find_duckdb(),
                    help="generates the inputs (default: shared/tools/duckdb/duckdb-sql above the repo)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a setting for every configuration (repeatable)")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds over the configurations; times are each one's median")
    ap.add_argument("--peer", action="store_true",
                    help="also run the job on DuckDB at the same memory_limit (the cached tables "
                         "made plain tables), for reference")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    args.sluice = os.path.abspath(args.sluice)
    wl = [w for w in args.workloads.split(",") if w]
    for w in wl:
        if w not in WORKLOADS:
            raise SystemExit("run.py: unknown workload %s (have %s)" % (w, ", ".join(WORKLOADS)))
    only = set(args.only.split(",")) if args.only else None
    records, problems = [], []
    load0 = os.getloadavg()[0]
    for w in wl:
        datadir = os.path.join(os.path.abspath(args.data), "s%g" % args.scale)
        os.makedirs(datadir, exist_ok=True)
        membench.generate(args, w, args.scale, datadir)
        if args.limit:
            limit = args.limit
        else:
            ws = working_set(args, w, args.scale, datadir)
            limit = "%dKB" % max(1024, int(ws * args.limit_fraction) // 1024)
            print("== %s (scale %g): working set %.1f MiB, memory_limit %s" % (
                w, args.scale, ws / 1048576.0, limit), flush=True)
        base = None
        cfgs = [c for c in configs() if only is None or c[0] in only or c[0] == "N_1"]
        runs = {c[0]: [] for c in cfgs}
        for rnd in range(max(1, args.repeat)):
            for cfg in cfgs:
                rec = run_config(args, w, args.scale, datadir, limit, cfg)
                rec["loadavg"] = os.getloadavg()[0]
                runs[cfg[0]].append(rec)
                if cfg[0] == "N_1" and base is None:
                    base = rec
                if base is not None and base["completed"] and rec["completed"]:
                    d = membench.compare(base["results"], rec["results"])
                    rec["matches_n1"] = d is None
                    if d is not None:
                        problems.append("%s %s: answers differ from N_1: %s" % (w, cfg[0], d))
                if rec.get("crashed") or (rec["error"] or "").startswith("timeout"):
                    problems.append("%s %s: %s" % (w, cfg[0], rec["error"]))
                auto = [k for k in rec["memory"] if k.startswith("auto ")]
                print("   %-8s %s  time %7.3f s%s  spilled %s%s%s" % (
                    cfg[0], "ok    " if rec["completed"] else "FAILED", rec["time_s"] or 0,
                    "  (round %d)" % (rnd + 1) if args.repeat > 1 else "",
                    membench.mib(rec["memory"].get("temp spill and shuffle files", [0, None])[1]),
                    ("  last auto move: " + auto[0][5:]) if auto else "",
                    "" if rec["completed"] else "  " + (rec["error"] or "")), flush=True)
        n1 = None
        for cfg in cfgs:
            rec = summarize(runs[cfg[0]])
            records.append(rec)
            if cfg[0] == "N_1":
                n1 = rec
            if n1 is not None and n1["completed"] and rec["completed"] and n1["time_s"]:
                rec["normalized"] = round(rec["time_s"] / n1["time_s"], 3)
            print("   %-8s median %s  norm %s" % (
                cfg[0], "%.3f s" % rec["time_s"] if rec["completed"] else "—",
                rec.get("normalized", "—")), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"load_start": load0, "records": records}, f, indent=1)
        if args.peer:
            rec = run_duckdb(args, w, args.scale, datadir, limit, n1)
            records.append(rec)
            print("   %-8s %s  time %7.3f s  norm %s%s" % (
                "duckdb", "ok    " if rec["completed"] else "FAILED", rec["time_s"] or 0,
                rec.get("normalized", "—"), "" if rec["completed"] else "  " + (rec["error"] or "")),
                flush=True)
            if rec.get("matches_n1") is False:
                problems.append("%s duckdb: answers differ from N_1" % w)
    table = markdown(records)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table)
    print(table)
    print("load average: %.1f at the start, %.1f at the end" % (load0, os.getloadavg()[0]))
    if args.check and problems:
        print("check failed:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    return 0


def duckdb_job(workload):
    """The cached job for DuckDB, which has no CACHE TABLE: each cached input a plain table."""
    text = cached_job(workload)
    return re.sub(r"CACHE TABLE (\w+) OPTIONS \('storageLevel' '@LEVEL@'\) AS", r"CREATE TABLE \1 AS", text)


def run_duckdb(args, workload, scale, datadir, limit, base):
    """DuckDB on the same job and inputs at the same memory_limit (in MiB), for reference."""
    fd, job_path = tempfile.mkstemp(suffix=".sql", dir=datadir)
    with os.fdopen(fd, "w") as f:
        f.write(duckdb_job(workload))
    mib_limit = None
    if limit:
        kb = int(limit[:-2]) if limit.endswith("KB") else None
        mib_limit = "%dMiB" % (kb // 1024) if kb is not None else limit
    try:
        r = membench.run_engine("duckdb", args, workload, scale, mib_limit, datadir, job_file=job_path)
    finally:
        os.unlink(job_path)
    rec = {"workload": workload, "config": "duckdb", "mode": "duckdb", "storage_fraction": None,
           "shuffle_fraction": None, "level": "—", "scale": scale, "limit": mib_limit,
           "completed": r["completed"], "error": r["error"], "time_s": r["time_s"],
           "results": r["results"], "memory": {}, "peak_rss_bytes": r["peak_rss_bytes"],
           "loadavg": os.getloadavg()[0]}
    if base is not None and base["completed"] and rec["completed"]:
        rec["normalized"] = round(rec["time_s"] / base["time_s"], 3) if base["time_s"] else None
        rec["matches_n1"] = membench.compare(base["results"], rec["results"]) is None
    return rec


def markdown(records):
    rows = ["| workload | config | mode | storage/shuffle | level | completed | job time s | vs N_1 | paper | spilled | answers | error |",
            "|---|---|---|---|---|---|---:|---:|---:|---:|---|---|"]
    spread = any(len(r.get("times", [])) > 1 for r in records)
    if spread:
        rows[0] = rows[0].replace("| job time s |", "| job time s (median) | runs |")
        rows[1] = rows[1].replace("|---:|---:|---:|---:|", "|---:|---|---:|---:|---:|", 1)
    for r in records:
        paper = PAPER.get((r["workload"], r["config"]))
        ans = {True: "= N_1", False: "DIFFER"}.get(r.get("matches_n1"), "")
        split = ("%g/%g" % (r["storage_fraction"], r["shuffle_fraction"])
                 if r["storage_fraction"] is not None else "—")
        runs = ""
        if spread:
            runs = " | " + ", ".join("%.2f" % t if t is not None else "—" for t in r.get("times", []))
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["workload"], r["config"], r["mode"], split,
            r["level"], "yes" if r["completed"] else "no",
            ("%.2f" % r["time_s"] if r["completed"] else "—") + runs,
            "%.2f" % r["normalized"] if r.get("normalized") is not None else "—",
            "%.2f" % paper if paper else "", membench.mib(r["memory"].get("temp spill and shuffle files", [0, None])[1]),
            ans, (r["error"] or "").replace("|", "\\|")))
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.exit(main())
