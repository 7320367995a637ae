/*
 * gen.h - the seeded generator of the differential test: a random database
 * (tables, DDL and INSERTs) and random deterministic SELECT queries over it.
 *
 * Everything is drawn from a DfRng (splitmix64), never from rand(), so a
 * (seed, stream) pair always yields the same text.  The generated SQL keeps to
 * the common ground of Sluice and SQLite listed in tests/diff/KNOWN_DIFFS.md:
 * strictly typed expressions (INTEGER, VARCHAR, boolean), lower-case data and
 * LIKE patterns, no unguarded division by a value that can be zero, small
 * integers so nothing overflows, ORDER BY ... LIMIT only over every output
 * column with explicit NULLS FIRST/LAST.  Strings returned by the generator are owned by
 * the caller's DfBuf.  Nothing here is thread-safe; nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ */
/* Growable string and PRNG                                                  */
/* ------------------------------------------------------------------------ */

/* A growable string, always NUL-terminated once something was added. */
typedef struct DfBuf {
    char *data; /* owned, NULL until the first append */
    size_t len; /* bytes used, without the NUL */
    size_t cap; /* bytes allocated */
} DfBuf;

/* Appends text; aborts the program when out of memory (a test tool). */
void df_buf_puts(DfBuf *b, const char *s);
void df_buf_printf(DfBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empties the string and keeps its memory. */
void df_buf_reset(DfBuf *b);
/* Frees the memory; the buffer is empty and reusable afterwards. */
void df_buf_fini(DfBuf *b);
/* The text, "" when nothing was added yet (borrowed until the next append). */
const char *df_buf_str(const DfBuf *b);

/* splitmix64: one 64-bit state, good enough and the same on every platform. */
typedef struct DfRng {
    uint64_t state; /* advanced by a golden-ratio step per draw */
} DfRng;

/* Seeds from (seed, stream); different streams give unrelated sequences. */
void df_rng_init(DfRng *rng, uint64_t seed, uint64_t stream);
uint64_t df_rng_next(DfRng *rng);
/* A uniform integer in [lo, hi] (inclusive). */
int df_rng_range(DfRng *rng, int lo, int hi);
/* True with the given probability in percent. */
bool df_rng_chance(DfRng *rng, int percent);

/* ------------------------------------------------------------------------ */
/* Schema and database                                                       */
/* ------------------------------------------------------------------------ */

/* Types of generated expressions; DF_DBL only appears as avg() output. */
typedef enum DfType {
    DF_INT,  /* INTEGER columns and integer arithmetic (BIGINT in Sluice) */
    DF_STR,  /* VARCHAR */
    DF_BOOL, /* comparisons; 0/1 in SQLite, true/false in Sluice */
    DF_DBL,  /* avg(): compared with a tolerance, never used as an operand */
} DfType;

#define DF_MAX_TABLES 4
#define DF_MAX_COLS 5
#define DF_NAME_CAP 16

typedef struct DfColumn {
    char name[DF_NAME_CAP]; /* e.g. "kq3": two letters and a digit, never a keyword */
    DfType type;            /* DF_INT or DF_STR */
} DfColumn;

typedef struct DfTable {
    char name[DF_NAME_CAP];     /* unique in the schema */
    int n_cols;                 /* 1..DF_MAX_COLS */
    DfColumn cols[DF_MAX_COLS]; /* at least one DF_INT */
    int n_rows;                 /* rows inserted */
} DfTable;

typedef struct DfSchema {
    int n_tables; /* 2..DF_MAX_TABLES */
    DfTable tables[DF_MAX_TABLES];
} DfSchema;

/* Draws a schema and its rows.  Appends to `script` the CREATE TABLE and
 * INSERT statements, each ended by ";\n", that both engines run. */
void df_gen_database(DfRng *rng, DfSchema *schema, DfBuf *script);

/* Workarounds for open Sluice bugs (KNOWN_DIFFS.md, "Open engine bugs"): each
 * flag keeps the generator away from one construct that fails too often to let
 * a run find anything else.  Remove a flag when its bug is fixed. */
#define DF_AVOID_SUB_IN_AGG_SELECT (1u << 0) /* subquery in a grouped select list or HAVING */
#define DF_AVOID_AGG_IN_LEFT (1u << 1)       /* aggregate left of IN (subquery) */
#define DF_AVOID_CORR_IN (1u << 2)           /* correlated [NOT] IN (subquery) */
#define DF_AVOID_OUTER2 (1u << 3)            /* a column of the query two levels out */
#define DF_AVOID_CORR_SET_OP (1u << 4)       /* a set operation in a correlated subquery */
#define DF_AVOID_EXISTS_AGG (1u << 5)        /* EXISTS over an aggregate without GROUP BY */
/* The flags on by default. */
/* Not supported yet (see KNOWN_DIFFS.md): columns two query levels out, set
 * operations in correlated subqueries, and (since binary-operator chains are
 * bound without recursion) a subquery of a grouped query that reads a GROUP BY
 * expression of it, such as `s.b + 1` under GROUP BY b + 1. */
#define DF_AVOID_DEFAULT (DF_AVOID_OUTER2 | DF_AVOID_CORR_SET_OP)

/* Appends one random deterministic SELECT over `schema` (no trailing ';'),
 * avoiding the constructs of the DF_AVOID_* flags in `avoid`.  Returns the
 * DF_AVOID_* flags of the constructs the query does use (an over-estimate:
 * a flag means the construct was written, not that it mattered), so a failure
 * can be told apart from the known bugs. */
unsigned df_gen_query(DfRng *rng, const DfSchema *schema, unsigned avoid, DfBuf *sql);
