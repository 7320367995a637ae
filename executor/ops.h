/*
 * ops.h - constructors of the physical operators, one file each in executor/.
 *
 * Every constructor builds an ExOp in the query arena from plan-time
 * parameters (expressions are bound ExExpr trees over the operator's input
 * columns).  NULL with err on OOM.  Operators and their roles:
 *   sources:   table scan (morsels of chunks), values (constant rows),
 *              series (integers, morsels of row numbers), CSV files (one task),
 *              shuffle read (a
 *              partition range per task)
 *   streaming: filter, project, hash aggregate (flushes at end of task), sort
 *              (flushes at end of task), limit
 *   sinks:     shuffle write (hash or gather), result (collects rows)
 */
#pragma once

#include <stdbool.h>

#include "executor/bloom.h"
#include "executor/expr.h"
#include "executor/op.h"
#include "executor/result.h"
#include "shuffle/shuffle.h"
#include "storage/csv.h"
#include "storage/table.h"

/* The range of the keys a hash join's build side holds, learned once its
 * shared table is built, for the scan that feeds the probe side to skip the
 * chunks none of whose keys can match (INNER and SEMI joins on one integer
 * key: a probe row with no partner is dropped anyway).  Written by the task
 * that builds the table, under the join's lock; every task's join local_init
 * builds the table or waits for it, and runs before the task's first pull, so
 * a scan in the same stage always finds it ready. */
typedef struct ExRangeFilter {
    bool ready;
    bool empty;    /* no build row has a non-NULL key: nothing matches */
    bool is_where; /* from the comparisons of a WHERE with constants (ready from the start),
                      not from a join's build side */
    int64_t min, max;
} ExRangeFilter;

/* ---- sources ---- */
ExOp *ex_scan_new(CmArena *a, StTable *table, int n_cols, const int *col_ids, CmErr *err);
bool ex_op_is_scan(const ExOp *op);
/* Makes the scan one task that reads the whole table, in chunk order. */
void ex_scan_set_whole(ExOp *scan);
/* Makes the scan skip chunks whose output column `col` has no non-NULL value
 * in rf's range once rf is ready; false if the scan already has its limit of
 * filters or the column's type has no zone map (ex_scan_zoned_type; a join's
 * filter, not rf->is_where: INTEGER, BIGINT or DATE only). */
bool ex_scan_add_range_filter(ExOp *scan, int col, ExRangeFilter *rf);
/* Whether chunks keep a zone map (min and max as int64) for columns of this
 * type: INTEGER, BIGINT, DATE, DECIMAL(p <= 18) (unscaled), TIME, TIMESTAMP. */
static inline bool ex_scan_zoned_type(uint8_t id)
{
    return id == CM_T_INT32 || id == CM_T_INT64 || id == CM_T_DATE || id == CM_T_DECIMAL ||
           id == CM_T_TIME || id == CM_T_TIMESTAMP;
}
/* When e compares a column of a zoned type with a non-NULL constant of its
 * type (=, <, <=, >, >=, the constant on either side; a DECIMAL of the same
 * scale), true with the column in *col and the closed range of its values e
 * keeps in [*lo, *hi] (*lo > *hi: none).  A chunk whose zone map has no
 * value in that range has no row e keeps. */
bool ex_zone_range(const ExExpr *e, int *col, int64_t *lo, int64_t *hi);
/* The conjuncts of a predicate: the arguments of a top-level AND, else the
 * predicate itself; *conj points into pred (or at the slot holding it). */
static inline int ex_conjuncts(const ExExpr *const *pred, const ExExpr *const **conj)
{
    if ((*pred)->kind == EX_E_AND) {
        *conj = (const ExExpr *const *)(*pred)->args;
        return (*pred)->n_args;
    }
    *conj = pred;
    return 1;
}
/* The WHERE range filter (is_where) the scan has on output column `col`, or NULL. */
ExRangeFilter *ex_scan_where_filter(ExOp *scan, int col);
/* n_rows rows of n_cols constant expressions (row-major: exprs[row * n_cols + col]);
 * n_cols may be 0 (one empty row for SELECT without FROM). */
ExOp *ex_values_new(CmArena *a, int n_rows, int n_cols, ExExpr **exprs, const CmType *types,
                    CmErr *err);
/* One column of `type` (BIGINT, or TIMESTAMP in microseconds): start, start +
 * step, ... for n_rows rows (the table functions generate_series and range),
 * split into morsels across tasks.  With `cal` (a TIMESTAMP series whose step
 * has months), each row is the one before plus *cal, as DuckDB adds it (the
 * day clamped at each step: Jan 31, Feb 28, Mar 28), in one task; step is
 * then unused. */
ExOp *ex_series_new(CmArena *a, CmType type, int64_t start, int64_t step, const CmInterval *cal,
                    uint64_t n_rows, CmErr *err);
/* The rows of a series from start by the calendar step *iv up to stop
 * (included or not), at most `cap`; false when a value leaves the TIMESTAMP
 * range before the series ends.  iv's parts are all >= 0 or all <= 0. */
bool ex_series_count_cal(int64_t start, int64_t stop, const CmInterval *iv, bool inclusive,
                         uint64_t cap, uint64_t *n_rows);
/* The records of files[0..n_files) in order, parsed with opt (borrowed until
 * the query ends) into n_cols columns of `types`; with has_filename the last
 * column is each row's path.  prefix (may be NULL) is read before files[0]'s
 * remaining bytes.  One task (the table functions read_csv, read_csv_auto). */
ExOp *ex_csv_scan_new(CmArena *a, int n_files, const char **files, const StCsvOptions *opt,
                      int n_cols, const CmType *types, const char **names, bool has_filename,
                      const char *prefix, size_t n_prefix, CmErr *err);
/* How many values a series from start toward stop by step has: stop included
 * or not; 0 when stop lies behind start or step is 0.  UINT64_MAX stands for
 * the 2^64 values of INT64_MIN..INT64_MAX by 1, which do not fit. */
uint64_t ex_series_count(int64_t start, int64_t stop, int64_t step, bool inclusive);
/* Reads shuffle `*shuffle` (resolved when the stage starts, so the producer may
 * be created later than the plan); one task per partition. */
ExOp *ex_shuffle_read_new(CmArena *a, ShShuffle **shuffle, int n_cols, const CmType *types,
                          CmErr *err);
/* Makes a shuffle read (not yet run) return the rows of map 0, then of map 1,
 * ...: the writing stage's task order, as a gather before a final LIMIT needs
 * (a LIMIT without ORDER BY over read_csv keeps the first rows of the file). */
void ex_shuffle_read_set_map_order(ExOp *op);
/* Reads partition i of each shuffle in turn (UNION ALL); all have the same
 * partition count and column types. */
ExOp *ex_shuffle_read_multi_new(CmArena *a, int n_inputs, ShShuffle ***inputs, int n_cols,
                                const CmType *types, CmErr *err);

/* What one task of a reading stage reads, set by the adaptive optimizer:
 * partitions [p0, p1) (coalescing), and of them only the blocks of maps
 * [m0, m1) on the source side and [b0, b1) on a partitioned join's build side
 * (a skew split; m1 or b1 < 0 means every map). */
typedef struct ExTaskRead {
    int p0, p1;
    int m0, m1;
    int b0, b1;
} ExTaskRead;

typedef struct ExReadRanges {
    int n_tasks;
    ExTaskRead *task; /* n_tasks entries; in the query arena */
} ExReadRanges;

/* True when an operator's output for a row does not depend on which other
 * rows its task sees (filter, projection, expand, partial aggregation,
 * broadcast or probe-side join work, shuffle write, result): a stage made only
 * of those may have a partition split across tasks.  Kinds that always
 * qualify set ExOpVt.row_independent; the aggregate and the join qualify only
 * for some specs and are checked here. */
bool ex_op_row_independent(const ExOp *op);
bool ex_hash_agg_is_partial(const ExOp *op);

/* Adaptive hooks (planner/aqe): ranges for a shuffle read (NULL: one partition
 * per task); the shuffles it reads (*n_inputs of them, borrowed). */
void ex_shuffle_read_set_ranges(ExOp *op, const ExReadRanges *ranges);
ShShuffle ***ex_shuffle_read_inputs(const ExOp *op, int *n_inputs);
/* The shuffle a shuffle write fills (its slot). */
ShShuffle **ex_shuffle_write_slot(const ExOp *op);
bool ex_op_is_shuffle_read(const ExOp *op);
bool ex_op_is_shuffle_write(const ExOp *op);
bool ex_op_is_hash_join(const ExOp *op);

/* ---- streaming ---- */
ExOp *ex_filter_new(CmArena *a, ExExpr *pred, int n_cols, const CmType *types, CmErr *err);
ExOp *ex_project_new(CmArena *a, int n_exprs, ExExpr **exprs, CmErr *err);
/* unnest: one output row per element of the LIST in column list_col (the
 * element in its place, the other columns repeated); no row for an empty or
 * NULL list.  types are the input's. */
ExOp *ex_unnest_new(CmArena *a, int list_col, int n_cols, const CmType *types, CmErr *err);

typedef enum ExAggFn {
    EX_AGG_COUNT_STAR,
    EX_AGG_COUNT,
    EX_AGG_SUM,
    EX_AGG_MIN,
    EX_AGG_MAX,
    EX_AGG_AVG,
    EX_AGG_SUM_COUNT,       /* final of COUNT: sums partial counts, empty sum is 0 */
    EX_AGG_SCALAR,          /* the one value of a scalar subquery: an error past one row */
    EX_AGG_FIRST,           /* the value of the first row the group met, NULL included (DuckDB's
                               first; partial state: the value and the rows seen) */
    EX_AGG_LAST,            /* ... of the last row */
    EX_AGG_ARG_MIN,         /* arg_min(x, y): x of the row with the least y (rows with a NULL x
                               or y skipped, the first of ties kept); y is the input column after
                               x, of type param.type; partial state: x and y (NULL: no rows) */
    EX_AGG_ARG_MAX,         /* ... the greatest y */
    EX_AGG_APPROX_DISTINCT, /* approx_count_distinct: BIGINT estimate of the distinct non-NULL
                               values, from storage/stats.h's HyperLogLog; partial state: the
                               registers (a VARCHAR of ST_HLL_REGS bytes) and the values seen */
    EX_AGG_BIT_AND,
    EX_AGG_BIT_OR,
    EX_AGG_BIT_XOR, /* an integer type: the bits of the non-NULL
                       values combined; partial state: the same */
    /* Holistic: they keep their group's values (ex_agg_is_holistic). */
    EX_AGG_STRING_AGG,    /* VARCHAR values joined by `param` (a string), in arrival order */
    EX_AGG_QUANTILE_CONT, /* DOUBLE values: the `param` (DOUBLE) quantile, interpolated */
    EX_AGG_QUANTILE_DISC, /* any type: the value at the `param` quantile */
    EX_AGG_MODE,          /* any type: the most frequent value (the least of ties) */
    EX_AGG_LIST,          /* a scalar type: the LIST of the values, in arrival order */
    EX_AGG_VAR_SAMP,
    EX_AGG_VAR_POP,
    EX_AGG_STDDEV_SAMP,
    EX_AGG_STDDEV_POP, /* DOUBLE */
} ExAggFn;

typedef enum ExAggMode {
    EX_AGG_SINGLE,  /* raw rows in, final values out */
    EX_AGG_PARTIAL, /* raw rows in, partial states out (avg: sum and count) */
    EX_AGG_FINAL,   /* partial states in, final values out */
} ExAggMode;

typedef struct ExAggSpec {
    ExAggFn fn;
    int arg;                 /* input column of the argument (SINGLE/PARTIAL), -1 for count(*) */
    CmType arg_type;         /* type of the argument column */
    CmType type;             /* final result type */
    bool distinct;           /* f(DISTINCT x): each value once per group (SINGLE mode only) */
    CmValue param;           /* the constant second argument: string_agg's separator (bytes in the
                                query arena), a quantile's fraction (DOUBLE); arg_min/arg_max: NULL,
                                of the second argument's type */
    int n_order;             /* string_agg, list: ORDER BY inside the call, 0 for none */
    struct ExSortKey *order; /* its keys over input columns (query arena); with keys the
                                input arrives sorted by (keys, order) (ex_hash_agg_new) */
    CmType *order_types;     /* the types of those columns */
    bool skip_nulls;         /* list with FILTER: its argument is CASE WHEN c THEN x END, whose
                                NULL may be a row filtered out, so NULLs are skipped */
} ExAggSpec;

/* The aggregates that need all of a group's values (string_agg, quantiles,
 * mode): like DISTINCT ones they run in SINGLE mode only, after an exchange of
 * the raw rows on the keys, and keep their values in the memory manager's
 * budget, spilling them as state rows. */
bool ex_agg_is_holistic(ExAggFn fn);
/* The function's name as EXPLAIN shows it ("count_star", "sum", ...): static. */
const char *ex_agg_fn_name(ExAggFn fn);

/* Groups by input columns `keys` and computes `aggs`.  Output: the keys, then
 * per aggregate its final value (SINGLE, FINAL) or its partial state columns
 * (PARTIAL: one column, two for AVG).  In FINAL mode the input is a PARTIAL
 * output: keys first, then the partial state columns in order. */
ExOp *ex_hash_agg_new(CmArena *a, ExAggMode mode, int n_keys, const int *keys,
                      const CmType *key_types, int n_aggs, const ExAggSpec *aggs, CmErr *err);
/* With GROUPING SETS, an empty set () yields a row even over no input (like
 * a global aggregate): the op (SINGLE or FINAL, run as one task) then emits one
 * group whose keys are NULL but key `gid_key`, which is `gid`. */
void ex_hash_agg_set_empty_set(ExOp *op, int gid_key, int64_t gid);
/* For INTERSECT and EXCEPT (a SINGLE op with keys): rows whose INTEGER or
 * BIGINT column `col` is not 0 never start a group; they update the group of
 * their keys when the table has one and are dropped otherwise (a spilling
 * table keeps them in its partitions, as ever).  The caller promises that
 * each task sees a group's rows with 0 there before the others, and that it
 * drops the groups without such a row, which then need never be held. */
void ex_hash_agg_set_find_only(ExOp *op, int col);

/* Output columns of one aggregate in PARTIAL mode, and their types (at most 3:
 * the variances carry count, mean and the sum of squared deviations). */
int ex_agg_partial_types(const ExAggSpec *agg, CmType *out);

typedef struct ExSortKey {
    int col;
    bool desc;
    bool nulls_first;
} ExSortKey;

/* Whether the first n keys of a and b are the same (column, direction, NULL order). */
static inline bool ex_sort_keys_equal(const ExSortKey *a, const ExSortKey *b, int n)
{
    for (int k = 0; k < n; k++) {
        if (a[k].col != b[k].col || a[k].desc != b[k].desc ||
            a[k].nulls_first != b[k].nulls_first) {
            return false;
        }
    }
    return true;
}

/* Sorts all rows its task sees; emits them at the end.  limit >= 0 keeps only
 * the first limit + offset rows (top-N). */
ExOp *ex_sort_new(CmArena *a, int n_keys, const ExSortKey *keys, int n_cols, const CmType *types,
                  int64_t limit, CmErr *err);
ExOp *ex_limit_new(CmArena *a, int64_t limit, int64_t offset, int n_cols, const CmType *types,
                   CmErr *err);

typedef enum ExJoinType {
    EX_JOIN_INNER, /* pairs that match */
    EX_JOIN_LEFT,  /* pairs, plus unmatched probe rows with NULL build columns */
    EX_JOIN_FULL,  /* LEFT, plus unmatched build rows with NULL probe columns */
    EX_JOIN_SEMI,  /* probe rows that match (probe columns only) */
    EX_JOIN_ANTI,  /* probe rows that do not match (probe columns only) */
    EX_JOIN_MARK,  /* every probe row plus a BOOLEAN: TRUE matched, FALSE not, NULL
                      unknown (x IN (...) with NULLs), for IN and NOT IN */
} ExJoinType;

/* A conjunct of a nested loop's residual: probe column `probe_col` OP build
 * column `build_col`, both of one integer-like type (INTEGER, BIGINT, DATE,
 * TIME, TIMESTAMP, DECIMAL(p <= 18)). */
typedef enum ExBoundOp { EX_BOUND_LT, EX_BOUND_LE, EX_BOUND_GT, EX_BOUND_GE } ExBoundOp;
typedef struct ExJoinBound {
    int probe_col, build_col;
    ExBoundOp op;
} ExJoinBound;

/* True when e is `a OP b` (<, <=, >, >=) with operands of one type a range
 * join sorts on (the integer-like types above); *op is OP as written. */
bool ex_join_bound_op(const ExExpr *e, ExBoundOp *op);

typedef struct ExJoinSpec {
    ExJoinType type;
    ShShuffle **build; /* the build side's shuffle */
    bool partitioned;  /* task i builds from partition i; else from all (broadcast) */
    int n_keys;        /* equality keys; 0 = nested loop (every pair is a candidate) */
    int *probe_keys;   /* probe input columns */
    int *build_keys;   /* build input columns */
    int n_probe_cols;
    CmType *probe_types;
    int n_build_cols;
    CmType *build_types;
    ExExpr *residual;               /* over probe columns ++ build columns, or NULL */
    const char *const *build_names; /* the build columns' names for EXPLAIN, or NULL */
    uint64_t null_eq;               /* bit k: key k matches NULL with NULL (IS NOT DISTINCT FROM) */
    bool mark_plain;                /* MARK: TRUE or FALSE only (the caller works out unknowns) */
    const struct ExReadRanges *ranges; /* partitioned: task t builds from these, or NULL */
    /* A nested loop (INNER, LEFT, SEMI or ANTI) whose residual holds these
     * conjuncts: the build rows are sorted on the first's build column and
     * each probe row visits only the rows its bounds leave (a range join);
     * the residual still decides every pair.  0 to 2 of them. */
    int n_bounds;
    ExJoinBound bounds[2];
    ExRangeFilter *range_out; /* broadcast: where to publish the build keys' range, or NULL */
    /* The planner's estimates, for the adaptive broadcast rule (planner/aqe):
     * the probe side's bytes and a build row's width, in the same units
     * (pl_est_row_width); 0 when not known. */
    double probe_bytes_est, build_row_width;
} ExJoinSpec;

/* Adaptive hooks: the join's spec (read-only), the switch of a partitioned
 * join to broadcast (every task reads the whole build side into one shared
 * table), and the partition ranges of a coalesced partitioned join. */
const ExJoinSpec *ex_hash_join_spec(const ExOp *op);
void ex_hash_join_set_broadcast(ExOp *op);
void ex_hash_join_set_ranges(ExOp *op, const ExReadRanges *ranges);

/* Whether a build side of `rows` rows and `bytes` bytes (as shuffled) is small
 * enough to broadcast: its table (the rows, and the index's arrays and slots
 * per row) within the cap a broadcast build is held to at run time (twice
 * broadcast_bytes).  The planner asks with its estimates, the adaptive rule
 * with what the build stage wrote, so that neither chooses a broadcast that
 * the join then has to give up (hash_join.c: grace mode, every task reading
 * the whole build side). */
bool ex_hash_join_broadcastable(int64_t rows, double bytes, int64_t broadcast_bytes);

/* Hash join (nested loop when n_keys is 0) of the pipeline's rows (probe) with
 * the rows of a finished stage (build).  Output: probe ++ build columns (INNER,
 * LEFT, FULL), probe columns (SEMI, ANTI), probe columns + mark (MARK).  Keys
 * equal by SQL '=': a NULL key matches nothing.  FULL requires partitioned. */
ExOp *ex_hash_join_new(CmArena *a, const ExJoinSpec *spec, CmErr *err);

typedef enum ExWinFn {
    EX_WIN_ROW_NUMBER,
    EX_WIN_RANK,
    EX_WIN_DENSE_RANK,
    EX_WIN_PERCENT_RANK,
    EX_WIN_CUME_DIST,
    EX_WIN_COUNT_STAR,
    EX_WIN_COUNT,
    EX_WIN_SUM,
    EX_WIN_AVG,
    EX_WIN_MIN,
    EX_WIN_MAX,
    EX_WIN_FIRST_VALUE,
    EX_WIN_LAST_VALUE,
    EX_WIN_LAG,
    EX_WIN_LEAD,
} ExWinFn;

/* The function's SQL name ("row_number", "sum", ...). */
const char *ex_window_fn_name(ExWinFn fn);

typedef enum ExFrameBound {
    EX_FRAME_UNBOUNDED_PRECEDING,
    EX_FRAME_PRECEDING,
    EX_FRAME_CURRENT_ROW,
    EX_FRAME_FOLLOWING,
    EX_FRAME_UNBOUNDED_FOLLOWING,
} ExFrameBound;

typedef struct ExWindowSpec {
    ExWinFn fn;
    int arg; /* input column, -1 when none */
    CmType arg_type;
    CmType type; /* result type */
    int n_part;
    int *part; /* PARTITION BY input columns */
    int n_order;
    ExSortKey *order; /* ORDER BY input columns */
    bool rows;        /* ROWS frame (else RANGE: peers count as one) */
    ExFrameBound start, end;
    int64_t start_off, end_off; /* n of n PRECEDING / n FOLLOWING; LAG/LEAD offset in start_off */
    bool has_dflt;  /* LAG/LEAD: dflt is the value past the partition's ends (else NULL); */
    CmValue dflt;   /* a string's bytes live as long as the plan */
    bool presorted; /* the input arrives sorted by (part, order): a window after one on the
                       same keys in its stage (the planner); its sorter keeps the order */
} ExWindowSpec;

/* Evaluates one window function over the rows its task sees (the planner
 * sends each partition to one task) and emits them, sorted by partition and
 * order keys, with the function's value appended as the last column. */
ExOp *ex_window_new(CmArena *a, const ExWindowSpec *spec, int n_cols, const CmType *types,
                    CmErr *err);
/* The window's spec as the op keeps it (its own copy, in the plan's arena). */
ExWindowSpec *ex_window_spec(ExOp *op);

/* GROUPING SETS: every input row once per set, with the key columns [0,
 * n_set_keys) that the set does not group by replaced by NULL and column
 * `gid_col` set to the set's number.  masks[s] bit k: key k is in set s. */
ExOp *ex_expand_new(CmArena *a, int n_sets, const uint64_t *masks, int n_set_keys, int gid_col,
                    int n_cols, const CmType *types, CmErr *err);

/* ---- sinks ---- */
/* Hash-partitions rows on `keys` (n_keys 0 sends everything to partition 0)
 * into a shuffle it creates at stage start with `n_parts` partitions and one
 * map per task, stored into *shuffle (the readers' handle). */
ExOp *ex_shuffle_write_new(CmArena *a, ShShuffle **shuffle, int n_parts, int n_keys,
                           const int *keys, int n_cols, const CmType *types, CmErr *err);
/* A runtime join filter (executor/bloom.h) between two hash writers of more
 * than one partition whose keys pair up, value for value and type for type:
 * `build` writes a partitioned INNER or SEMI join's build side and puts its
 * keys into `bloom` (its words live from its stage's start to the plan's
 * end), `probe` writes the probe side in a later stage and drops the rows the
 * filter rules out. */
void ex_shuffle_write_bloom(ExOp *build, ExOp *probe, ExBloom *bloom);
/* A probe side's writer: the rows it asked its filter about and those it
 * dropped, for EXPLAIN ANALYZE (a writer stops asking a filter that drops
 * little: bloom.h); false for any other op. */
bool ex_shuffle_write_bloom_stats(const ExOp *op, long long *checked, long long *dropped);
/* Appends every row into `result` (rows of task order are kept per task). */
ExOp *ex_result_sink_new(CmArena *a, ExResult *result, int n_cols, const CmType *types, CmErr *err);
