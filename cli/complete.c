/*
 * complete.c - Tab completion in the REPL (see complete.h).
 *
 * At the first call for a word (state 0) the candidates are gathered once:
 * the keywords, the table names, and the columns of each table, read as the
 * result columns of `SELECT * FROM "name" LIMIT 0` (the API has no catalog
 * call for columns, and a query with LIMIT 0 reads no rows).  Later calls hand
 * out the matches one by one, as readline's generator protocol wants.
 */
#include "cli/complete.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <editline/readline.h>

#include "cli/progress.h"

/* The SQL words worth completing; upper case, completed in the case typed. */
static const char *const KEYWORDS[] = {
    "ALL",     "ANALYZE", "AND",     "AS",       "ASC",     "BETWEEN",   "BIGINT",    "BOOLEAN",
    "BY",      "CASE",    "CAST",    "COPY",     "COUNT",   "CREATE",    "CROSS",     "DATE",
    "DECIMAL", "DELETE",  "DESC",    "DISTINCT", "DOUBLE",  "DROP",      "ELSE",      "END",
    "EXCEPT",  "EXISTS",  "EXPLAIN", "FALSE",    "FIRST",   "FROM",      "FULL",      "GROUP",
    "HAVING",  "IN",      "INNER",   "INSERT",   "INTEGER", "INTERSECT", "INTO",      "IS",
    "JOIN",    "LAST",    "LEFT",    "LIKE",     "LIMIT",   "NOT",       "NULL",      "NULLS",
    "OFFSET",  "ON",      "OR",      "ORDER",    "OUTER",   "OVER",      "PARTITION", "RECURSIVE",
    "RIGHT",   "SELECT",  "SET",     "TABLE",    "THEN",    "TIME",      "TO",        "TRUE",
    "UNION",   "UPDATE",  "USING",   "VALUES",   "VARCHAR", "VIEW",      "WHEN",      "WHERE",
    "WITH",
};

static CliState *complete_st; /* borrowed; set by cli_complete_install */

/* The candidates for the word being completed. */
typedef struct CliCandidates {
    char **words; /* owned, each owned */
    int n_words;
    int cap;
    int next; /* the next candidate to offer */
} CliCandidates;

static CliCandidates candidates;

static void candidates_clear(void)
{
    for (int idx = 0; idx < candidates.n_words; idx++) {
        free(candidates.words[idx]);
    }
    free(candidates.words);
    memset(&candidates, 0, sizeof candidates);
}

/* Adds word when it starts with prefix (any case) and is not there yet. */
static void candidates_add(const char *word, const char *prefix, bool is_lower)
{
    if (strncasecmp(word, prefix, strlen(prefix)) != 0) {
        return;
    }
    for (int idx = 0; idx < candidates.n_words; idx++) {
        if (strcasecmp(candidates.words[idx], word) == 0) {
            return;
        }
    }
    if (candidates.n_words == candidates.cap) {
        int cap = candidates.cap ? candidates.cap * 2 : 32;
        char **words = realloc(candidates.words, (size_t)cap * sizeof *words);
        if (words == NULL) {
            return; /* completion only offers less */
        }
        candidates.words = words;
        candidates.cap = cap;
    }
    char *copy = strdup(word);
    if (copy == NULL) {
        return;
    }
    for (char *ch = copy; is_lower && *ch != '\0'; ch++) {
        *ch = (char)(*ch >= 'A' && *ch <= 'Z' ? *ch - 'A' + 'a' : *ch);
    }
    candidates.words[candidates.n_words++] = copy;
}

/* Adds the columns of table name that start with prefix. */
static void add_columns(const char *name, const char *prefix)
{
    size_t len = strlen(name);
    char *sql = malloc(len * 2 + 32);
    SluiceResult *res = NULL;
    SluiceError err;

    if (sql == NULL) {
        return;
    }
    size_t at = (size_t)sprintf(sql, "SELECT * FROM \"");
    for (const char *ch = name; *ch != '\0'; ch++) {
        if (*ch == '"') {
            sql[at++] = '"';
        }
        sql[at++] = *ch;
    }
    strcpy(sql + at, "\" LIMIT 0");
    memset(&err, 0, sizeof err);
    /* no bar over the line being edited, however low progress_bar_time is */
    sluice_set_progress_handler(complete_st->db, NULL, NULL);
    int rc = sluice_exec(complete_st->db, sql, &res, &err);
    cli_progress_install(complete_st);
    if (rc == 0 && res != NULL) {
        for (int col_idx = 0; col_idx < sluice_result_column_count(res); col_idx++) {
            candidates_add(sluice_result_column_name(res, col_idx), prefix, false);
        }
    }
    sluice_result_free(res);
    free(sql);
}

static void gather(const char *prefix)
{
    bool is_lower = prefix[0] >= 'a' && prefix[0] <= 'z';
    int n_tables = sluice_table_count(complete_st->db);
    char **tables = calloc((size_t)(n_tables > 0 ? n_tables : 1), sizeof *tables);

    candidates_clear();
    for (size_t idx = 0; idx < sizeof KEYWORDS / sizeof KEYWORDS[0]; idx++) {
        candidates_add(KEYWORDS[idx], prefix, is_lower);
    }
    if (tables == NULL) {
        return;
    }
    /* copied first: catalog names are borrowed only until the next statement */
    for (int table_idx = 0; table_idx < n_tables; table_idx++) {
        tables[table_idx] = strdup(sluice_table_name(complete_st->db, table_idx));
    }
    for (int table_idx = 0; table_idx < n_tables; table_idx++) {
        if (tables[table_idx] != NULL) {
            candidates_add(tables[table_idx], prefix, false);
            add_columns(tables[table_idx], prefix);
        }
        free(tables[table_idx]);
    }
    free(tables);
}

/* readline's generator: state 0 starts a new word. Returns an owned match or NULL. */
static char *next_match(const char *text, int state)
{
    if (state == 0) {
        gather(text);
    }
    if (candidates.next < candidates.n_words) {
        return strdup(candidates.words[candidates.next++]);
    }
    candidates_clear();
    return NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1; /* never fall back to file names */
    return rl_completion_matches(text, next_match);
}

void cli_complete_install(CliState *st)
{
    complete_st = st;
    rl_attempted_completion_function = complete;
    rl_basic_word_break_characters = " \t\n\"'`(),;.=<>+-*/|";
}
