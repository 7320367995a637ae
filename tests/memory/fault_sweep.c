/*
 * fault_sweep.c - the allocation-failure sweep: every statement of a set, run
 * again and again with its N-th allocation failing, must end in a clean
 * out-of-memory error (or, where the engine has a fallback, in the right
 * answer) and leave the database as it was and still usable.
 *
 * Usage: fault_sweep [--points N] [--case NAME] [--verbose]
 *
 * For each case: a fresh in-memory database runs the case's setup; the
 * statement runs once unharmed, counting its allocations (A) and noting its
 * output and the state the check query reads afterwards.  Then, for N in
 * 1..min(A, points) and `points` more spread evenly up to A, a fresh database
 * runs the setup and the statement with allocation N failing, twice: once
 * with that allocation alone failing, once with every allocation from N on
 * failing until the statement returns (its error paths must not allocate
 * their way into a crash).  Afterwards:
 *   - a failed statement reports the out-of-memory class, and the check query
 *     reads the state from before the statement (nothing half-done);
 *   - a statement that succeeded anyway gave the unharmed output, and the
 *     check reads the unharmed state after;
 *   - either way the database answers the check, so it is still usable.
 * Leaks are LeakSanitizer's to find: the ASan build runs this (ctest
 * fault_sweep).  The injector exists in debug builds only (common/alloc.h);
 * in a release build this program says so and exits 77 (skipped).
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/sluice.h"
#include "common/alloc.h"
#include "common/err.h"

typedef struct Case {
    const char *name;
    const char *setup; /* statements run before the sweep's arm */
    const char *stmt;  /* the statement swept */
    const char *check; /* a query that reads the state the statement may change */
} Case;

static char path_csv[256];

/* The cases: the large operators, the writes, and the front end. @CSV@ is the
 * path of a scratch CSV file. */
static const Case cases[] = {
    {"group_join",
     "CREATE TABLE t AS SELECT i AS a, 'v' || (i % 97) AS b FROM range(3000) g(i);"
     "CREATE TABLE u AS SELECT i AS a, i * 2 AS c FROM range(0, 3000, 3) g(i);",
     "SELECT t.a % 7 AS k, count(*), sum(u.c), max(t.b) FROM t JOIN u ON t.a = u.a "
     "GROUP BY 1 ORDER BY 1",
     "SELECT count(*) FROM t"},
    {"window_sort", "CREATE TABLE t AS SELECT i AS a, 'v' || (i % 31) AS b FROM range(2000) g(i);",
     "SELECT a, b, sum(a) OVER (PARTITION BY b ORDER BY a), row_number() OVER (ORDER BY b, a) "
     "FROM t ORDER BY b DESC, a LIMIT 50",
     "SELECT count(*) FROM t"},
    {"subqueries",
     "CREATE TABLE t AS SELECT i AS a, i % 10 AS g FROM range(500) r(i);"
     "CREATE TABLE s AS SELECT i AS a FROM range(0, 500, 7) r(i);",
     "SELECT g, (SELECT count(*) FROM s WHERE s.a < t.a), "
     "EXISTS (SELECT 1 FROM s WHERE s.a = t.a), t.a IN (SELECT a + 1 FROM s) "
     "FROM t WHERE g < 3 ORDER BY t.a LIMIT 40",
     "SELECT count(*) FROM s"},
    {"set_ops",
     "CREATE TABLE t AS SELECT i % 300 AS a FROM range(1200) r(i);"
     "CREATE TABLE s AS SELECT i AS a FROM range(0, 600, 2) r(i);",
     "SELECT count(*), sum(a) FROM (SELECT a FROM t INTERSECT SELECT a FROM s "
     "UNION SELECT a + 1000 FROM t EXCEPT SELECT a FROM s)",
     "SELECT count(*) FROM t"},
    {"string_agg",
     "CREATE TABLE t AS SELECT i AS a, i % 13 AS g, 'w' || i AS w FROM range(1000) r(i);",
     "SELECT g, string_agg(w, ',' ORDER BY a DESC), count(DISTINCT a % 5), median(a) "
     "FROM t GROUP BY g ORDER BY g",
     "SELECT count(*) FROM t"},
    {"ctas", "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b FROM range(2000) r(i);",
     "CREATE TABLE t2 AS SELECT a, b, a * 3 AS c FROM t WHERE a % 2 = 0",
     "SELECT count(*), sum(c), max(b) FROM t2"},
    {"replace",
     "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b FROM range(2000) r(i);"
     "CREATE TABLE t2 AS SELECT a FROM t WHERE a < 10;"
     "CREATE VIEW v AS SELECT 1 AS one;",
     "CREATE OR REPLACE TABLE t2 AS SELECT a, b FROM t WHERE a % 3 = 0",
     "SELECT count(*), sum(a), (SELECT count(*) FROM v) FROM t2"},
    {"replace_view",
     "CREATE TABLE t AS SELECT i AS a FROM range(100) r(i);"
     "CREATE VIEW v AS SELECT a FROM t WHERE a < 10;",
     "CREATE OR REPLACE VIEW v AS SELECT a, a * 2 AS b FROM t WHERE a % 3 = 0",
     "SELECT count(*), sum(a) FROM v"},
    {"insert",
     "CREATE TABLE t(a INTEGER PRIMARY KEY, b VARCHAR DEFAULT 'd');"
     "INSERT INTO t SELECT i, 'v' || i FROM range(1000) r(i);",
     "INSERT INTO t(a) SELECT i FROM range(1000, 2500) r(i)",
     "SELECT count(*), sum(a), count(DISTINCT b), min(b) FROM t"},
    {"begin",
     "CREATE TABLE t(a INTEGER PRIMARY KEY, b VARCHAR);"
     "INSERT INTO t SELECT i, 'v' || i FROM range(3000) r(i);"
     "CREATE INDEX t_b ON t(b); CREATE TABLE u(x INTEGER); CREATE VIEW v AS SELECT a FROM t;",
     "BEGIN", "SELECT count(*), sum(a), (SELECT count(*) FROM v), (SELECT count(*) FROM u) FROM t"},
    {"update", "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b FROM range(2000) r(i);",
     "UPDATE t SET b = b || 'x', a = a + 1 WHERE a % 3 = 0",
     "SELECT count(*), sum(a), max(b), sum(length(b)) FROM t"},
    {"delete", "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b FROM range(2000) r(i);",
     "DELETE FROM t WHERE a % 2 = 0 OR b LIKE '%7'", "SELECT count(*), sum(a), max(b) FROM t"},
    {"copy_from",
     "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b, i / 7.0 AS c FROM range(1500) r(i);"
     "COPY t TO '@CSV@' (HEADER true);"
     "CREATE TABLE u(a INTEGER, b VARCHAR, c DOUBLE);",
     "COPY u FROM '@CSV@' (HEADER true)", "SELECT count(*), sum(a), max(b), sum(c) FROM u"},
    {"copy_to", "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b FROM range(1500) r(i);",
     "COPY (SELECT a, b, a % 7 AS c FROM t ORDER BY b) TO '@CSV@' (HEADER true)",
     "SELECT count(*), sum(a), max(b) FROM t"},
    {"read_csv",
     "CREATE TABLE t AS SELECT i AS a, 'v' || i AS b, i / 7.0 AS c FROM range(1500) r(i);"
     "COPY t TO '@CSV@' (HEADER true);",
     "SELECT count(*), sum(a), max(b), sum(c) FROM read_csv('@CSV@')", "SELECT count(*) FROM t"},
    {"recursive", "CREATE TABLE e AS SELECT i AS s, (i * 7 + 3) % 200 AS d FROM range(200) r(i);",
     "WITH RECURSIVE r(n, k) AS (SELECT 0, 0 UNION SELECT e.d, r.k + 1 FROM r JOIN e ON e.s = r.n "
     "WHERE r.k < 30) SELECT count(*), max(k), sum(n) FROM r",
     "SELECT count(*) FROM e"},
    {"cache_table", "CREATE TABLE t AS SELECT i AS a, i % 17 AS g FROM range(3000) r(i);",
     "CACHE TABLE c OPTIONS ('storageLevel' 'MEMORY_AND_DISK') AS SELECT g, count(*) AS n, "
     "sum(a) AS s FROM t GROUP BY g",
     "SELECT count(*), sum(n), sum(s) FROM c"},
    {"unnest", "CREATE TABLE t AS SELECT i AS a, 'x y ' || i || ' z' AS line FROM range(800) r(i);",
     "SELECT w, count(*) FROM (SELECT unnest(string_split(line, ' ')) AS w FROM t) GROUP BY w "
     "ORDER BY 2 DESC, 1 LIMIT 10",
     "SELECT count(*) FROM t"},
    {"spill_sort",
     "SET memory_limit = '2MB';"
     "CREATE TABLE t AS SELECT i AS a, 'padding padding padding ' || (i * 7919 % 30011) AS b "
     "FROM range(30000) r(i);",
     "SELECT a, b, row_number() OVER (ORDER BY b, a) AS r FROM t ORDER BY b DESC, a LIMIT 5",
     "SELECT count(*) FROM t"},
    {"spill_group",
     "SET memory_limit = '2MB';"
     "CREATE TABLE t AS SELECT i AS a, 'some text to make the row wider ' || i AS b "
     "FROM range(40000) r(i);",
     "SELECT count(*), count(DISTINCT b), max(b) FROM (SELECT b, count(*) FROM t GROUP BY b)",
     "SELECT count(*) FROM t"},
};

static bool verbose;

/* `s` with @CSV@ replaced by the scratch file's path, in buf. */
static const char *subst(const char *s, char *buf, size_t cap)
{
    size_t n = 0;
    for (const char *p = s; *p != '\0' && n + 1 < cap;) {
        if (strncmp(p, "@CSV@", 5) == 0) {
            n += (size_t)snprintf(buf + n, cap - n, "%s", path_csv);
            p += 5;
        } else {
            buf[n++] = *p++;
        }
    }
    buf[n < cap ? n : cap - 1] = '\0';
    return buf;
}

/* Appends printf-style text to *out (a cm_malloc'd string, grown). */
static void append(char **out, size_t *len, size_t *cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[512];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    size_t k = (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1;
    if (*len + k + 1 > *cap) {
        size_t c = (*cap ? *cap * 2 : 256) + k;
        char *p = cm_realloc(*out, c);
        if (p == NULL) {
            fprintf(stderr, "fault_sweep: out of memory\n");
            exit(1);
        }
        *out = p;
        *cap = c;
    }
    memcpy(*out + *len, tmp, k);
    *len += k;
    (*out)[*len] = '\0';
}

/* A result (or error) as text: rows of '|'-joined values; "ERR <message>". */
static char *as_text(int rc, SluiceResult *res, const SluiceError *err)
{
    char *out = NULL;
    size_t len = 0, cap = 0;
    if (rc != 0) {
        append(&out, &len, &cap, "ERR %s", err->message);
        return out;
    }
    append(&out, &len, &cap, "%s", "");
    for (int64_t r = 0; res != NULL && r < sluice_result_row_count(res); r++) {
        for (int c = 0; c < sluice_result_column_count(res); c++) {
            const char *v = sluice_result_text(res, r, c);
            append(&out, &len, &cap, "%s%s", c ? "|" : "", v ? v : "NULL");
        }
        append(&out, &len, &cap, "%s", "\n");
    }
    return out;
}

static char *query_text(SluiceDb *db, const char *sql)
{
    SluiceResult *res = NULL;
    SluiceError err;
    int rc = sluice_exec(db, sql, &res, &err);
    char *t = as_text(rc, res, &err);
    sluice_result_free(res);
    return t;
}

static SluiceDb *fresh(const Case *c)
{
    SluiceError err;
    SluiceDb *db = sluice_open(NULL, &err);
    if (db == NULL) {
        fprintf(stderr, "fault_sweep: open: %s\n", err.message);
        exit(1);
    }
    char sql[4096];
    if (sluice_set(db, "threads", "2", &err) != 0 ||
        sluice_exec(db, subst(c->setup, sql, sizeof sql), NULL, &err) != 0) {
        fprintf(stderr, "fault_sweep: %s: setup: %s\n", c->name, err.message);
        exit(1);
    }
    return db;
}

/* One run of case c with allocations nth.. (count of them) failing; returns
 * false (after saying why) when the run breaks the rules above. */
static bool run_armed(const Case *c, long nth, long count, const char *want_out, const char *before,
                      const char *after, long *hits)
{
    SluiceDb *db = fresh(c);
    char sql[4096];
    subst(c->stmt, sql, sizeof sql);
    SluiceResult *res = NULL;
    SluiceError err;
    cm_alloc_fault_arm(nth, count);
    int rc = sluice_exec(db, sql, &res, &err);
    *hits = cm_alloc_fault_hits();
    cm_alloc_fault_disarm();
    char *out = as_text(rc, res, &err);
    sluice_result_free(res);
    char *state = query_text(db, c->check);
    bool ok = true;
    const char *why = "";
    if (rc != 0 && err.code != CM_OOM) {
        ok = false;
        why = "failed, but not as out of memory";
    } else if (rc != 0 && strcmp(state, before) != 0) {
        ok = false;
        why = "failed, and the state is not the one from before";
    } else if (rc == 0 && strcmp(out, want_out) != 0) {
        ok = false;
        why = "succeeded with a different output";
    } else if (rc == 0 && strcmp(state, after) != 0) {
        ok = false;
        why = "succeeded, and the state is not the one after";
    }
    if (!ok || verbose) {
        fprintf(ok ? stdout : stderr, "%s %s: allocation %ld%s (%ld failed): %s\n",
                ok ? "ok" : "FAIL", c->name, nth, count < 0 ? " on" : " alone", *hits,
                ok ? (rc ? err.message : "succeeded") : why);
        if (!ok) {
            fprintf(stderr, "  statement: %s\n  error: %s\n  state: %.200s\n  wanted: %.200s\n",
                    sql, rc ? err.message : "(none)", state, rc ? before : after);
        }
    }
    cm_free(out);
    cm_free(state);
    sluice_close(db);
    return ok;
}

static int sweep(const Case *c, long points)
{
    /* the unharmed run: output, allocation count, state before and after */
    SluiceDb *db = fresh(c);
    char *before = query_text(db, c->check);
    char sql[4096];
    subst(c->stmt, sql, sizeof sql);
    SluiceResult *res = NULL;
    SluiceError err;
    cm_alloc_fault_arm(0, 0);
    int rc = sluice_exec(db, sql, &res, &err);
    long n_allocs = cm_alloc_fault_allocs();
    cm_alloc_fault_disarm();
    if (rc != 0) {
        fprintf(stderr, "fault_sweep: %s: the unharmed run failed: %s\n", c->name, err.message);
        exit(1);
    }
    char *want = as_text(rc, res, &err);
    sluice_result_free(res);
    char *after = query_text(db, c->check);
    sluice_close(db);

    int failures = 0, runs = 0, n_oom = 0;
    long step = n_allocs > points ? n_allocs / points : 1;
    for (long nth = 1; nth <= n_allocs; nth += nth < points ? 1 : step) {
        for (int mode = 0; mode < 2; mode++) {
            long hits = 0;
            failures += !run_armed(c, nth, mode ? -1 : 1, want, before, after, &hits);
            runs++;
            n_oom += hits > 0;
        }
        if (failures > 5) {
            break;
        }
    }
    printf("%-12s %7ld allocations, %4d runs, %4d with a failed allocation, %d broke\n", c->name,
           n_allocs, runs, n_oom, failures);
    cm_free(want);
    cm_free(before);
    cm_free(after);
    return failures;
}

int main(int argc, char **argv)
{
    long points = 40;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--points") == 0 && i + 1 < argc) {
            points = atol(argv[++i]);
        } else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "--verbose") == 0) {
            verbose = true;
        } else {
            fprintf(stderr, "usage: fault_sweep [--points N] [--case NAME] [--verbose]\n");
            return 2;
        }
    }
    if (!cm_alloc_fault_arm(0, 0)) {
        printf("fault_sweep: this build has no fault injector (a release build); skipped\n");
        return 77;
    }
    cm_alloc_fault_disarm();
    const char *tmp = getenv("TMPDIR");
    snprintf(path_csv, sizeof path_csv, "%s/fault_sweep_%d.csv", tmp ? tmp : "/tmp", (int)getpid());
    int failures = 0, matched = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (only == NULL || strcmp(only, cases[i].name) == 0) {
            matched++;
            failures += sweep(&cases[i], points);
        }
    }
    unlink(path_csv);
    if (matched == 0) {
        fprintf(stderr, "fault_sweep: no case named %s\n", only);
        return 2;
    }
    printf("%s\n", failures ? "FAILED" : "all clean");
    return failures ? 1 : 0;
}
