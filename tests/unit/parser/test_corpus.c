/*
 * test_corpus.c - parser unit tests (suite ps_parse) over the project's shared
 * SQL corpora: the TPC-DS queries and schema, and the SQL of the conformance
 * sqllogictest files.  The corpora live outside the repository, in $SLUICE_SHARED
 * (default /work/shared); each test skips with a message when they are absent.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_util.h"

/* "$SLUICE_SHARED/rel" (default /work/shared), in the test arena. */
static const char *shared_path(const char *rel)
{
    const char *root = getenv("SLUICE_SHARED");
    return cm_arena_printf(&test_arena, "%s/%s", root != NULL ? root : "/work/shared", rel);
}

/* The whole file, NUL-terminated, in the test arena; NULL when unreadable. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = cm_arena_alloc(&test_arena, (size_t)size + 1);
    size_t n = fread(data, 1, (size_t)size, f);
    fclose(f);
    data[n] = '\0';
    *len = n;
    return data;
}

/* Names in dir ending in `suffix`, sorted; skips the test when dir is absent. */
static int list_files(const char *dir, const char *suffix, char ***out)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        cr_skip_test("%s not found (set SLUICE_SHARED): skipped", dir);
    }
    int n = 0;
    char **names = cm_arena_alloc(&test_arena, 512 * sizeof(char *));
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL && n < 512) {
        size_t len = strlen(ent->d_name);
        size_t n_suffix = strlen(suffix);
        if (len > n_suffix && strcmp(ent->d_name + len - n_suffix, suffix) == 0) {
            names[n++] = cm_arena_printf(&test_arena, "%s/%s", dir, ent->d_name);
        }
    }
    closedir(d);
    for (int i = 1; i < n; i++) { /* insertion sort: a few dozen names */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *tmp = names[j];
            names[j] = names[j - 1];
            names[j - 1] = tmp;
        }
    }
    *out = names;
    return n;
}

/* Parses every statement of text; returns how many, failing on any error. */
static int parse_all(const char *what, const char *text, size_t len, PsStmt **stmts, int cap)
{
    size_t off = 0;
    int n = 0;
    while (off < len) {
        PsStmt *stmt = NULL;
        CmErr err;
        cm_err_init(&err);
        CmStatus rc = ps_parse_next(&test_arena, text, len, &off, &stmt, &err);
        if (rc != CM_OK) {
            int line = 0;
            int col = 0;
            ps_line_col(text, len, (size_t)err.off, &line, &col);
            cr_assert_fail("%s:%d:%d: %s", what, line, col, err.msg);
        }
        if (stmt != NULL && n < cap) {
            stmts[n++] = stmt;
        }
    }
    return n;
}

Test(ps_parse, tpcds_queries)
{
    char **files = NULL;
    int n_files = list_files(shared_path("tpcds/queries"), ".sql", &files);
    cr_assert_geq(n_files, 35);
    for (int idx = 0; idx < n_files; idx++) {
        size_t len = 0;
        char *text = read_file(files[idx], &len);
        cr_assert_not_null(text, "%s", files[idx]);
        PsStmt *stmts[4];
        int n = parse_all(files[idx], text, len, stmts, 4);
        cr_assert_eq(n, 1, "%s: %d statements", files[idx], n);
        cr_assert_eq(stmts[0]->kind, PS_ST_SELECT, "%s", files[idx]);
        cr_assert_gt(strlen(dump_stmt(&test_arena, stmts[0])), 20);
        /* the statement spans the file's text up to its ';' */
        const char *end = strrchr(text, ';');
        cr_assert_not_null(end);
        while (end > text && isspace((unsigned char)end[-1])) {
            end--;
        }
        cr_assert_eq(stmts[0]->src_off + stmts[0]->src_len, end - text, "%s", files[idx]);
    }
}

Test(ps_parse, tpcds_schema)
{
    size_t len = 0;
    char *text = read_file(shared_path("tpcds/schema.sql"), &len);
    if (text == NULL) {
        cr_skip_test("tpcds/schema.sql not found (set SLUICE_SHARED): skipped");
    }
    PsStmt *stmts[64];
    int n = parse_all("schema.sql", text, len, stmts, 64);
    cr_assert_eq(n, 25);
    int n_keys = 0;
    for (int idx = 0; idx < n; idx++) {
        cr_assert_eq(stmts[idx]->kind, PS_ST_CREATE_TABLE);
        cr_assert_gt(stmts[idx]->columns->n, 0);
        n_keys += stmts[idx]->primary_key != NULL;
        if (strcmp(stmts[idx]->name, "store_sales") == 0) {
            cr_assert_eq(stmts[idx]->columns->n, 23);
            cr_assert_str_eq(stmts[idx]->primary_key, "ss_item_sk,ss_ticket_number");
            const PsColumnDef *c = stmts[idx]->columns->items[0];
            cr_assert_str_eq(c->type->name, "integer");
        }
    }
    cr_assert_eq(n_keys, 24);
}

/* ---- sqllogictest files --------------------------------------------------- */

/* SQL the suite uses that Sluice does not support: SQLite's x'..' blob literals. */
static bool is_known_gap(const char *sql)
{
    return strstr(sql, "x'") != NULL;
}

typedef struct SltStats {
    int n_records; /* statement ok / query records checked */
    int n_gaps;    /* known gaps that failed as expected */
    int n_failed;  /* unexpected failures */
} SltStats;

/* Parses one record's SQL: one statement, sometimes a few. */
static void check_record(const char *file, int line, const char *sql, SltStats *stats)
{
    size_t len = strlen(sql);
    size_t off = 0;
    int n_stmts = 0;
    CmStatus rc = CM_OK;
    CmErr err;
    cm_err_init(&err);
    while (rc == CM_OK && off < len) {
        PsStmt *stmt = NULL;
        rc = ps_parse_next(&test_arena, sql, len, &off, &stmt, &err);
        n_stmts += stmt != NULL;
    }
    stats->n_records++;
    if (rc == CM_OK && n_stmts > 0) {
        return;
    }
    if (is_known_gap(sql)) {
        stats->n_gaps++;
        return;
    }
    stats->n_failed++;
    cr_log_error("%s:%d: %s\n    %s", file, line, err.msg, sql);
}

/* Splits text into lines in place (dropping "\n" and a "\r" before it). */
static int split_lines(char *text, char ***out)
{
    int cap = 1024;
    int n = 0;
    char **lines = cm_arena_alloc(&test_arena, (size_t)cap * sizeof(char *));
    for (char *line = text; line != NULL && *line != '\0';) {
        char *next = strchr(line, '\n');
        if (next != NULL) {
            *next++ = '\0';
        }
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] == '\r') {
            line[len - 1] = '\0';
        }
        if (n == cap) {
            char **more = cm_arena_alloc(&test_arena, (size_t)cap * 2 * sizeof(char *));
            memcpy(more, lines, (size_t)n * sizeof(char *));
            lines = more;
            cap *= 2;
        }
        lines[n++] = line;
        line = next;
    }
    *out = lines;
    return n;
}

/* Walks a .test file: records "statement ok" and "query" not guarded by
 * "onlyif <db>" (another dialect); "statement error" bodies are not checked. */
static void check_slt_file(const char *path, SltStats *stats)
{
    size_t len = 0;
    char *text = read_file(path, &len);
    cr_assert_not_null(text, "%s", path);
    char **lines = NULL;
    int n_lines = split_lines(text, &lines);
    bool has_onlyif = false;
    for (int idx = 0; idx < n_lines; idx++) {
        const char *line = lines[idx];
        bool is_record = strncmp(line, "statement ok", 12) == 0 || strncmp(line, "query", 5) == 0;
        bool is_error = strncmp(line, "statement error", 15) == 0;
        if (strncmp(line, "onlyif", 6) == 0) {
            has_onlyif = true;
        } else if (*line == '\0') {
            has_onlyif = false;
        } else if (is_record || is_error) {
            int start = idx + 1;
            char *body = cm_arena_alloc(&test_arena, len + 1);
            body[0] = '\0';
            while (idx + 1 < n_lines && lines[idx + 1][0] != '\0' &&
                   strncmp(lines[idx + 1], "----", 4) != 0) {
                strcat(body, lines[++idx]);
                strcat(body, "\n");
            }
            if (is_record && !has_onlyif) {
                check_record(path, start + 1, body, stats);
            }
            has_onlyif = false;
        }
    }
}

Test(ps_parse, sqllogictest_statements)
{
    char **top = NULL;
    char **evidence = NULL;
    int n_top = list_files(shared_path("conformance/sqllogictest"), ".test", &top);
    int n_evidence =
        list_files(shared_path("conformance/sqllogictest/evidence"), ".test", &evidence);
    SltStats stats = {0, 0, 0};
    for (int idx = 0; idx < n_top; idx++) {
        check_slt_file(top[idx], &stats);
    }
    for (int idx = 0; idx < n_evidence; idx++) {
        check_slt_file(evidence[idx], &stats);
    }
    cr_log_info("sqllogictest: %d records, %d known gaps (SQLite blob literals), %d failed",
                stats.n_records, stats.n_gaps, stats.n_failed);
    cr_assert_gt(stats.n_records, 1000);
    cr_assert_eq(stats.n_failed, 0, "%d records did not parse (see the log)", stats.n_failed);
}
