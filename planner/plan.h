/*
 * plan.h - the logical plan: what the binder produces and the physical
 * planner cuts into stages.
 *
 * A PlNode is a relational operator with one child, or two for a join
 * (`child` is the probe side, `right` the build side).  Each node states its output: n_cols columns
 * with types and names.  Expressions are bound ExExpr trees over the child's output columns.  All
 * nodes live in the query arena.  A field that changes a node's rows must be in its fingerprint:
 * keep in sync with put_fields in cache.c.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/types.h"
#include "executor/expr.h"
#include "executor/ops.h"
#include "storage/table.h"

typedef enum PlKind {
    PL_GET,       /* scan of `table`, columns `col_ids` */
    PL_VALUES,    /* n_rows constant rows (`exprs`, row-major); n_cols may be 0 */
    PL_SERIES,    /* one BIGINT column: series_rows values from series_start by series_step */
    PL_CSV,       /* the records of delimited text files (`csv`: read_csv) */
    PL_FILTER,    /* rows of child where `pred` is true */
    PL_PROJECT,   /* `exprs` (n_cols) over the child */
    PL_AGGREGATE, /* group by child columns 0..n_keys-1, then `aggs` */
    PL_SORT,      /* order by `sort_keys` (child columns) */
    PL_LIMIT,     /* `limit` (-1: none) rows after `offset` */
    PL_JOIN,      /* `child` (probe) joined with `right` (build): see ExJoinType */
    PL_UNION,     /* the rows of every input in `inputs` (UNION ALL) */
    PL_WINDOW,    /* child's columns plus the value of window function `win` */
    PL_EXPAND,    /* child's rows once per grouping set (see ex_expand_new) */
    PL_UNNEST,    /* child's rows once per element of list column `unnest_col`, which
                     becomes the element (see ex_unnest_new) */
} PlKind;

/* What a read_csv scan reads (planner/bind/bind_csv.c), in the query arena. */
typedef struct PlCsv {
    int n_files;
    const char **files; /* in reading order */
    StCsvOptions opt;   /* the dialect; opt.n_cols fields fill the first columns */
    bool has_filename;  /* a last VARCHAR column holds each row's file */
    const char *prefix; /* what the sniffer took from files[0] when it is a pipe, or NULL */
    size_t n_prefix;
    double est_rows; /* from the files' sizes and the sample's bytes per line */
} PlCsv;

typedef struct PlNode PlNode;
struct PlNode {
    PlKind kind;
    int n_cols;
    CmType *types;
    const char **names;
    PlNode *child;
    /* GET */
    StTable *table;
    int *col_ids;
    const char *cache_name; /* the cache entry whose rows `table` holds (planner/cache.h), else
                               NULL; borrowed until the statement ends */
    int shared_id;          /* k: `table` holds the rows of the statement's shared subtree #k
                               (pl_cache_share), else 0 */
    /* VALUES */
    int n_rows;
    /* SERIES (generate_series, range) */
    int64_t series_start, series_step;
    uint64_t series_rows;
    CmType series_type; /* BIGINT, or TIMESTAMP (microseconds) */
    bool series_is_cal; /* TIMESTAMP by a step with months: series_cal added row by row */
    CmInterval series_cal;
    /* CSV */
    const PlCsv *csv;
    /* VALUES, PROJECT */
    ExExpr **exprs;
    /* FILTER */
    ExExpr *pred;
    /* AGGREGATE: output = keys then one column per aggregate */
    int n_keys;
    int n_aggs;
    ExAggSpec *aggs;
    int empty_set_key;    /* AGGREGATE with an empty grouping set: its set-number key, */
    int64_t empty_set_id; /* and the set's number (empty_set_key -1 when none) */
    bool is_side_tagged;  /* INTERSECT, EXCEPT: aggs[0] sums a tag that is 0 on the rows of the
                             union's first input and 1 on the second's, and only groups
                             with a first-input row are kept (binder.c) */
    /* SORT */
    int n_sort_keys;
    ExSortKey *sort_keys;
    /* LIMIT (SORT also carries a limit hint for top-N) */
    int64_t limit, offset;
    /* JOIN: output is child ++ right columns (INNER, LEFT, FULL), child columns
     * (SEMI, ANTI) or child columns + a BOOLEAN mark (MARK) */
    PlNode *right;
    ExJoinType join_type;
    int n_join_keys;
    int *left_keys;        /* child columns */
    int *right_keys;       /* right columns, same types as left_keys */
    ExExpr *residual;      /* over child ++ right columns, or NULL */
    uint64_t join_null_eq; /* bit k: key k matches NULL with NULL */
    bool join_mark_plain;  /* MARK without NULL for unknown (see ExJoinSpec) */
    /* WINDOW */
    ExWindowSpec *win;
    /* UNNEST */
    int unnest_col;
    /* EXPAND: masks[s] bit k = key k is in grouping set s */
    int n_sets;
    uint64_t *set_masks;
    int n_set_keys;
    int gid_col;
    /* UNION: inputs with this node's column types */
    int n_inputs;
    PlNode **inputs;
};

/* Estimated output rows, from column statistics where they reach and guessed
 * selectivities elsewhere (planner/optimizer/estimate.h; one-off: a caller asking
 * about many nodes of one plan uses a PlEst). */
double pl_estimate(const PlNode *n);

/* A guess at the share of rows a boolean condition keeps, from its form alone. */
double pl_selectivity(const ExExpr *e);

/* A node of `kind` with room for n_cols output columns; NULL on OOM. */
PlNode *pl_node_new(CmArena *a, PlKind kind, int n_cols);
/* A copy of the tree under n whose nodes and arrays are its own, so that the
 * passes that rewrite a plan in place (pl_prune) may rewrite it apart from n;
 * expressions, tables and read_csv specs are shared (nothing rewrites them in
 * place).  NULL on OOM. */
PlNode *pl_node_clone(CmArena *a, const PlNode *n);
