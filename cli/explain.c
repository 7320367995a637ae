/*
 * explain.c - statements under an EXPLAIN prefix (see explain.h).
 */
#include "cli/explain.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/exec.h"

int cli_explain_exec(CliState *st, const char *prefix, const char *sql, size_t len, size_t tok,
                     size_t *off, SluiceResult **res, SluiceError *err)
{
    size_t n_prefix = strlen(prefix);
    char *text = malloc(len + n_prefix + 1);
    if (text == NULL) {
        *res = NULL;
        snprintf(err->message, sizeof err->message, "out of memory");
        err->code = 1;
        err->offset = -1;
        err->line = 0;
        return err->code;
    }
    memcpy(text, sql, tok);
    memcpy(text + tok, prefix, n_prefix);
    memcpy(text + tok + n_prefix, sql + tok, len - tok);
    text[len + n_prefix] = '\0';
    size_t at = tok;
    int rc = sluice_exec_next(st->db, text, len + n_prefix, &at, res, err);
    free(text);
    *off = at >= tok + n_prefix ? at - n_prefix : len;
    if (rc != 0 && err->offset >= 0) {
        size_t bad = (size_t)err->offset;
        err->offset = (int64_t)(bad >= tok + n_prefix ? bad - n_prefix : tok);
    }
    return rc;
}

SluiceResult *cli_explain_plan(CliState *st, const char *sql, size_t len, size_t tok)
{
    SluiceResult *res = NULL;
    SluiceError err;
    size_t off = tok;

    memset(&err, 0, sizeof err);
    if (tok >= len || cli_explain_exec(st, "EXPLAIN ", sql, len, tok, &off, &res, &err) != 0) {
        return NULL;
    }
    return res;
}

void cli_explain_print(const SluiceResult *res, FILE *out)
{
    for (int64_t row = 0; row < sluice_result_row_count(res); row++) {
        const char *line = sluice_result_text(res, row, 0);
        fprintf(out, "%s\n", line != NULL ? line : "");
    }
}

bool cli_explain_write(CliState *st, const SluiceResult *res, const char *path)
{
    const char *html = sluice_result_row_count(res) == 1 ? sluice_result_text(res, 0, 0) : NULL;
    if (html == NULL) {
        cli_exec_error(st, ".timeline: the statement gave no timeline");
        return false;
    }
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        cli_exec_error(st, "cannot open '%s': %s", path, strerror(errno));
        return false;
    }
    bool ok = fputs(html, fp) >= 0;
    ok = fclose(fp) == 0 && ok;
    if (!ok) {
        cli_exec_error(st, "cannot write '%s': %s", path, strerror(errno));
    }
    return ok;
}
