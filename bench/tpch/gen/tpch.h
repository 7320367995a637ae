/*
 * tpch.h - the internals shared by the files of tpch_gen, the TPC-H data
 * generator of the Sluice benchmarks (bench/tpch/README.md has the rules).
 *
 * Written from the rules of the TPC-H specification (clause 4.2), not from
 * dbgen.  Every value is a pure function of (seed, stream, row, column)
 * through tpch_rand, so any range of rows can be generated alone and chunks
 * generated in parallel concatenate to the same bytes for any thread count.
 * A table is a sequence of units: rows, except for orders and lineitem, whose
 * unit is an order (an order and its 1..7 lines are drawn from the order's
 * index, so both files agree).  A table function appends units [first, end)
 * as '|'-terminated text to a GenBuf (the field writers of tpcds_gen's out.c).
 * TpchCtx is filled once and read-only afterwards: table functions may run
 * concurrently on disjoint unit ranges, each with its own GenBuf.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "bench/tpcds/gen/gen.h" /* GenBuf, the field writers, gen_jdn, gen_uniform */

/* Streams keep the draws of different tables apart. */
typedef enum TpchStream {
    TS_REGION = 1,
    TS_NATION,
    TS_SUPPLIER,
    TS_CUSTOMER,
    TS_PART,
    TS_PARTSUPP,
    TS_ORDER,
    TS_LINE,
} TpchStream;

typedef struct TpchCtx {
    double sf;
    uint64_t seed;
    int64_t n_supplier; /* SF x 10,000 */
    int64_t n_part;     /* SF x 200,000 */
    int64_t n_customer; /* SF x 150,000 */
    int64_t n_orders;   /* SF x 1,500,000 */
    int64_t start_date; /* 1992-01-01, Julian day */
    int64_t current_date;
    int64_t end_date;
    int n_complaints; /* supplier comments with "Customer ... Complaints" (SF x 5) */
} TpchCtx;

/* Fills g for sf (>= 0.01) and seed. */
void tpch_ctx_init(TpchCtx *g, double sf, uint64_t seed);

/* 64 uniform bits for column col of row in stream s. */
uint64_t tpch_rand(const TpchCtx *g, TpchStream s, uint64_t row, unsigned col);

/* A uniform integer in [lo, hi] for column col of row in stream s. */
static inline int64_t tpch_uniform(const TpchCtx *g, TpchStream s, uint64_t row, unsigned col,
                                   int64_t lo, int64_t hi)
{
    return gen_uniform(tpch_rand(g, s, row, col), lo, hi);
}

/* ---------------------------------------------------------------- text */

/* Writes a text field from the spec's sentence grammar, length uniform in
 * [min_len, max_len] (cut at max), drawn from r; out has room for max_len + 1. */
void tpch_text(char *out, int min_len, int max_len, uint64_t r);
/* A random v-string (letters, digits, ' ', ',', '.'), length in [min_len, max_len]. */
void tpch_vstring(char *out, int min_len, int max_len, uint64_t r);
/* The five distinct colour words of a p_name, space separated, into out[64]. */
void tpch_part_name(char *out, uint64_t r);

typedef struct TpchList {
    const char *const *v;
    int n;
} TpchList;

extern const TpchList tpch_segments, tpch_priorities, tpch_instructions, tpch_modes, tpch_type_s1,
    tpch_type_s2, tpch_type_s3, tpch_container_s1, tpch_container_s2, tpch_colors;

const char *tpch_pick(const TpchList *l, uint64_t r);

/* -------------------------------------------------------------- tables */

/* Derived values shared by part, partsupp and lineitem. */
int64_t tpch_retail_cents(int64_t partkey);
/* The i-th (0..3) supplier of a part (clause 4.2.3, PS_SUPPKEY). */
int64_t tpch_part_supp(const TpchCtx *g, int64_t partkey, int i);

typedef void (*TpchTableFn)(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end);

typedef struct TpchTable {
    const char *name; /* file name without .dat */
    TpchTableFn fn;
    int64_t chunk; /* units per parallel task */
} TpchTable;

#define TPCH_N_TABLES 8
extern const TpchTable TPCH_TABLES[TPCH_N_TABLES];

/* Units of table t (index into TPCH_TABLES). */
int64_t tpch_units(const TpchCtx *g, int t);
