/*
 * test_index.c - unit tests for storage/index.c through the table that owns
 * the indexes: unique indexes refuse duplicates against earlier rows and
 * inside one batch and leave the table and index as they were; NULL keys never
 * collide; a plain index finds every row of a key across chunks and growth;
 * truncate forgets rows; multi-column keys with long strings; new_like and
 * drop; keys that fit the slots let the sealed chunks be evicted, others keep
 * them held.  Row counts are derived from CM_BATCH_CAP (CI also builds it as 3).
 * Table: k BIGINT, s VARCHAR, v INTEGER.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/mem.h"
#include "storage/blocks.h"
#include "storage/index.h"
#include "storage/table.h"

static CmErr err;
static StTable *table;
static CmType types[3];

static void setup(void)
{
    cm_err_init(&err);
    types[0] = cm_type_make(CM_T_INT64);
    types[1] = cm_type_varchar(-1, false);
    types[2] = cm_type_make(CM_T_INT32);
    StColumn cols[3] = {
        {.name = "k", .type = types[0]},
        {.name = "s", .type = types[1]},
        {.name = "v", .type = types[2]},
    };
    table = st_table_new("t", 3, cols, &err);
    cr_assert_not_null(table);
}

static void teardown(void)
{
    st_table_free(table);
}

TestSuite(st_index, .init = setup, .fini = teardown);

/* Appends n rows (n <= CM_BATCH_CAP): k = keys[i] (NULL when null_k[i] is set,
 * if null_k is given), s = a string naming keys[i] % 5 (long for odd values),
 * v = i.  Returns the append's status; err keeps the message. */
static CmStatus append(int n, const int64_t *keys, const bool *null_k)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 3, types, &err), CM_OK);
    for (int i = 0; i < n; i++) {
        char buf[64];
        int64_t m = keys[i] % 5;
        int len = snprintf(buf, sizeof buf, m % 2 ? "string number %d, long" : "s%d", (int)m);
        char *copy = cm_arena_strndup(&b.heap, buf, (size_t)len);
        ((int64_t *)b.cols[0].data)[i] = keys[i];
        ((CmStr *)b.cols[1].data)[i] = cm_str_make(copy, (uint32_t)len);
        ((int32_t *)b.cols[2].data)[i] = i;
        if (null_k != NULL && null_k[i]) {
            cm_vec_set_null(&b.cols[0], (uint32_t)i);
        }
    }
    b.n_rows = n;
    CmStatus st = st_table_append(table, &b, &err);
    cm_batch_fini(&b);
    return st;
}

/* Appends keys [from, to) in batches; every append must succeed. */
static void append_range(int64_t from, int64_t to, int64_t modulo)
{
    int64_t keys[CM_BATCH_CAP];
    while (from < to) {
        int n = 0;
        for (; n < CM_BATCH_CAP && from < to; n++, from++) {
            keys[n] = modulo ? from % modulo : from;
        }
        cr_assert_eq(append(n, keys, NULL), CM_OK, "%s", err.msg);
    }
}

/* Rows whose key (column k alone) equals `key`. */
static int64_t lookup_k(const StIndex *ix, int64_t key, int64_t *rows, int64_t cap)
{
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, types, &err), CM_OK);
    ((int64_t *)b.cols[0].data)[0] = key;
    int64_t n = st_index_lookup(ix, table, b.cols, 0, rows, cap);
    cm_batch_fini(&b);
    return n;
}

static const int k_col = 0;

Test(st_index, unique_refuses_a_key_of_earlier_rows)
{
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_PRIMARY, 1, &k_col, &err), CM_OK);
    append_range(0, 5 * CM_BATCH_CAP, 0);
    int64_t dup[1] = {3 * CM_BATCH_CAP + 1};
    cr_assert_eq(append(1, dup, NULL), CM_RUNTIME);
    char want[80];
    snprintf(want, sizeof want, "Duplicate key \"k: %d\" violates primary key constraint",
             3 * CM_BATCH_CAP + 1);
    cr_assert_str_eq(err.msg, want);
    cr_assert_eq(table->n_rows, 5 * CM_BATCH_CAP);
    /* the index is whole: every key is found once, a new key goes in */
    int64_t row;
    for (int64_t key = 0; key < 5 * CM_BATCH_CAP; key++) {
        cr_assert_eq(lookup_k(table->indexes[0], key, &row, 1), 1);
        cr_assert_eq(row, key);
    }
    cm_err_init(&err);
    int64_t fresh[1] = {-7};
    cr_assert_eq(append(1, fresh, NULL), CM_OK, "%s", err.msg);
    cr_assert_eq(lookup_k(table->indexes[0], -7, &row, 1), 1);
    cr_assert_eq(row, 5 * CM_BATCH_CAP);
}

Test(st_index, unique_refuses_a_duplicate_inside_one_batch)
{
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_UNIQUE, 1, &k_col, &err), CM_OK);
    int64_t first[1] = {100};
    cr_assert_eq(append(1, first, NULL), CM_OK);
    int n = CM_BATCH_CAP >= 3 ? 3 : CM_BATCH_CAP;
    int64_t keys[3] = {1, 2, 1};
    if (n < 3) {
        keys[1] = 1; /* CM_BATCH_CAP 2: the duplicate moves up */
    }
    cr_assert_eq(append(n, keys, NULL), CM_RUNTIME);
    cr_assert_str_eq(err.msg, "Duplicate key \"k: 1\" violates unique constraint");
    cr_assert_eq(table->n_rows, 1);
    int64_t row;
    cr_assert_eq(lookup_k(table->indexes[0], 1, &row, 1), 0, "the undone rows are forgotten");
    cm_err_init(&err);
    int64_t again[2] = {1, 2};
    cr_assert_eq(append(2, again, NULL), CM_OK, "%s", err.msg);
}

Test(st_index, null_keys_never_collide_nor_match)
{
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_UNIQUE, 1, &k_col, &err), CM_OK);
    int64_t keys[CM_BATCH_CAP];
    bool nulls[CM_BATCH_CAP];
    for (int i = 0; i < CM_BATCH_CAP; i++) {
        keys[i] = 0;
        nulls[i] = true;
    }
    for (int round = 0; round < 4; round++) {
        cr_assert_eq(append(CM_BATCH_CAP, keys, nulls), CM_OK, "%s", err.msg);
    }
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, types, &err), CM_OK);
    cm_vec_set_null(&b.cols[0], 0);
    int64_t row;
    cr_assert_eq(st_index_lookup(table->indexes[0], table, b.cols, 0, &row, 1), 0);
    cm_batch_fini(&b);
    cr_assert_eq(lookup_k(table->indexes[0], 0, &row, 1), 0);
}

Test(st_index, plain_index_finds_every_row_of_a_key)
{
    cr_assert_eq(st_table_add_index(table, "by_k", ST_INDEX_PLAIN, 1, &k_col, &err), CM_OK);
    int64_t n_rows = 40 * CM_BATCH_CAP + 1;
    append_range(0, n_rows, 7);
    int64_t rows[64 * CM_BATCH_CAP];
    for (int64_t key = 0; key < 7; key++) {
        int64_t want = n_rows / 7 + (key < n_rows % 7);
        int64_t n = lookup_k(table->indexes[0], key, rows, 64 * CM_BATCH_CAP);
        cr_assert_eq(n, want, "key %ld: %ld rows, want %ld", (long)key, (long)n, (long)want);
        for (int64_t i = 0; i < n; i++) {
            cr_assert_eq(rows[i] % 7, key);
        }
    }
    cr_assert_eq(lookup_k(table->indexes[0], 7, rows, 1), 0);
    /* lookups report the full count beyond cap */
    cr_assert_eq(lookup_k(table->indexes[0], 0, rows, 1), n_rows / 7 + (n_rows % 7 > 0));
}

Test(st_index, truncate_forgets_rows)
{
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_PRIMARY, 1, &k_col, &err), CM_OK);
    append_range(0, 3 * CM_BATCH_CAP, 0);
    st_table_truncate(table, CM_BATCH_CAP + 1);
    int64_t row;
    cr_assert_eq(lookup_k(table->indexes[0], CM_BATCH_CAP, &row, 1), 1);
    cr_assert_eq(lookup_k(table->indexes[0], CM_BATCH_CAP + 1, &row, 1), 0);
    /* forgotten keys can come back, many times over (the slots are rebuilt) */
    for (int round = 0; round < 20; round++) {
        append_range(CM_BATCH_CAP + 1, 3 * CM_BATCH_CAP, 0);
        st_table_truncate(table, CM_BATCH_CAP + 1);
    }
    append_range(CM_BATCH_CAP + 1, 3 * CM_BATCH_CAP, 0);
    cr_assert_eq(lookup_k(table->indexes[0], 3 * CM_BATCH_CAP - 1, &row, 1), 1);
    cr_assert_eq(row, 3 * CM_BATCH_CAP - 1);
}

Test(st_index, two_column_key_with_long_strings)
{
    int key_cols[2] = {1, 0};
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_UNIQUE, 2, key_cols, &err), CM_OK);
    int64_t keys[2] = {1, 6}; /* same k % 5, so the same string; different k */
    cr_assert_eq(append(2, keys, NULL), CM_OK, "%s", err.msg);
    int64_t dup[1] = {6};
    cr_assert_eq(append(1, dup, NULL), CM_RUNTIME);
    cr_assert_str_eq(err.msg,
                     "Duplicate key \"s: string number 1, long, k: 6\" violates unique constraint");
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, (CmType[]){types[1], types[0]}, &err), CM_OK);
    const char *text = "string number 1, long";
    ((CmStr *)b.cols[0].data)[0] = cm_str_make(text, (uint32_t)strlen(text));
    ((int64_t *)b.cols[1].data)[0] = 1;
    int64_t row;
    cr_assert_eq(st_index_lookup(table->indexes[0], table, b.cols, 0, &row, 1), 1);
    cr_assert_eq(row, 0);
    cm_batch_fini(&b);
}

Test(st_index, new_like_copies_indexes_and_drop_removes_one)
{
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_PRIMARY, 1, &k_col, &err), CM_OK);
    int v_col = 2;
    cr_assert_eq(st_table_add_index(table, "by_v", ST_INDEX_PLAIN, 1, &v_col, &err), CM_OK);
    append_range(0, 2 * CM_BATCH_CAP, 0);
    /* v repeats in every batch: a unique index over it cannot be built */
    cr_assert_eq(st_table_add_index(table, "u_v", ST_INDEX_UNIQUE, 1, &v_col, &err), CM_RUNTIME);
    cr_assert_eq(table->n_indexes, 2);
    cm_err_init(&err);
    StTable *copy = st_table_new_like(table, &err);
    cr_assert_not_null(copy);
    cr_assert_eq(copy->n_indexes, 2);
    cr_assert_eq(copy->n_rows, 0);
    cr_assert_eq(st_index_kind(copy->indexes[0]), ST_INDEX_PRIMARY);
    cr_assert_str_eq(st_index_name(copy->indexes[1]), "by_v");
    cr_assert(st_table_drop_index(copy, "by_v"));
    cr_assert_not(st_table_drop_index(copy, "by_v"));
    cr_assert_eq(copy->n_indexes, 1);
    st_table_free(copy);
}

/* Whether every sealed chunk of t is out of memory after evicting all. */
static bool sealed_chunks_evicted(const StTable *t)
{
    st_blocks_evict(INT64_MAX);
    bool all = true;
    for (int c = 0; c < t->n_chunks; c++) {
        if (t->chunks[c]->sealed) {
            all = all && t->chunks[c]->held == NULL && !st_block_resident(t->chunks[c]->block);
        }
    }
    return all;
}

/* Keys that fit the slots: the index never reads a sealed chunk again, so the
 * table lets them go; duplicates, lookups, growth and truncation work on
 * evicted chunks. */
Test(st_index, integer_key_lets_sealed_chunks_go)
{
    const int v_col = 2;
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_PRIMARY, 1, &k_col, &err), CM_OK);
    cr_assert_eq(st_table_add_index(table, "by_v", ST_INDEX_PLAIN, 1, &v_col, &err), CM_OK);
    cr_assert_not(st_index_reads_rows(table->indexes[0]));
    cr_assert_not(st_index_reads_rows(table->indexes[1]));
    append_range(0, 5 * CM_BATCH_CAP + 1, 0); /* grows the slots from themselves */
    cr_assert(sealed_chunks_evicted(table));
    int64_t dup[1] = {2 * CM_BATCH_CAP + 1};
    cr_assert_eq(append(1, dup, NULL), CM_RUNTIME);
    char want[80];
    snprintf(want, sizeof want, "Duplicate key \"k: %lld\"", (long long)dup[0]);
    cr_assert(strstr(err.msg, want) != NULL, "%s", err.msg);
    cm_err_init(&err);
    int64_t row = -1;
    cr_assert_eq(lookup_k(table->indexes[0], 3 * CM_BATCH_CAP + 2, &row, 1), 1);
    cr_assert_eq(row, 3 * CM_BATCH_CAP + 2);
    /* v = position in its append batch: one row per full batch, plus the last */
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &types[2], &err), CM_OK);
    ((int32_t *)b.cols[0].data)[0] = 0;
    int64_t rows[8];
    cr_assert_eq(st_index_lookup(table->indexes[1], table, b.cols, 0, rows, 8), 6);
    cm_batch_fini(&b);
    /* forget the rows from the middle of chunk 2 on: their keys go in again */
    st_table_truncate(table, 2 * CM_BATCH_CAP + CM_BATCH_CAP / 2);
    cr_assert(sealed_chunks_evicted(table));
    append_range(2 * CM_BATCH_CAP + CM_BATCH_CAP / 2, 4 * CM_BATCH_CAP, 0);
    int64_t old[1] = {1};
    cr_assert_eq(append(1, old, NULL), CM_RUNTIME);
    cr_assert_eq(lookup_k(table->indexes[0], 5 * CM_BATCH_CAP, &row, 1), 0);
    cr_assert(sealed_chunks_evicted(table));
}

/* Two INTEGER columns pack into one slot key: negative values and swapped
 * pairs stay distinct.  Rows: (i, 2i + 1). */
Test(st_index, two_integer_columns_pack_into_the_slot)
{
    CmType it[2] = {cm_type_make(CM_T_INT32), cm_type_make(CM_T_INT32)};
    StColumn cols[2] = {{.name = "a", .type = it[0]}, {.name = "b", .type = it[1]}};
    StTable *t = st_table_new("pairs", 2, cols, &err);
    cr_assert_not_null(t);
    const int key[2] = {0, 1};
    cr_assert_eq(st_table_add_index(t, NULL, ST_INDEX_PRIMARY, 2, key, &err), CM_OK);
    cr_assert_not(st_index_reads_rows(t->indexes[0]));
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 2, it, &err), CM_OK);
    for (int i = -CM_BATCH_CAP; i < 2 * CM_BATCH_CAP; i++) {
        ((int32_t *)b.cols[0].data)[b.n_rows] = i;
        ((int32_t *)b.cols[1].data)[b.n_rows] = 2 * i + 1;
        if (++b.n_rows == CM_BATCH_CAP) {
            cr_assert_eq(st_table_append(t, &b, &err), CM_OK, "%s", err.msg);
            cm_batch_reset(&b);
        }
    }
    cr_assert(sealed_chunks_evicted(t));
    const int32_t probes[4][3] = {{1, 3, 1}, {-3, -5, 1}, {3, 1, 0}, {-5, -3, 0}};
    for (int p = 0; p < 4; p++) {
        cm_batch_reset(&b);
        ((int32_t *)b.cols[0].data)[0] = probes[p][0];
        ((int32_t *)b.cols[1].data)[0] = probes[p][1];
        int64_t row;
        cr_assert_eq(st_index_lookup(t->indexes[0], t, b.cols, 0, &row, 1), probes[p][2],
                     "(%d, %d)", probes[p][0], probes[p][1]);
    }
    ((int32_t *)b.cols[0].data)[0] = -5;
    ((int32_t *)b.cols[1].data)[0] = -3;
    b.n_rows = 1;
    cr_assert_eq(st_table_append(t, &b, &err), CM_OK, "%s", err.msg); /* a new pair */
    cr_assert_eq(st_table_append(t, &b, &err), CM_RUNTIME);
    cr_assert(strstr(err.msg, "a: -5, b: -3") != NULL, "%s", err.msg);
    cm_batch_fini(&b);
    st_table_free(t);
}

/* A key that does not fit the slots is compared in the rows: the table keeps
 * its chunks in memory, and lets them go when that index is dropped. */
Test(st_index, string_key_keeps_the_chunks_held)
{
    const int s_col = 1;
    cr_assert_eq(st_table_add_index(table, NULL, ST_INDEX_PRIMARY, 1, &k_col, &err), CM_OK);
    cr_assert_eq(st_table_add_index(table, "by_s", ST_INDEX_PLAIN, 1, &s_col, &err), CM_OK);
    cr_assert(st_index_reads_rows(table->indexes[1]));
    append_range(0, 3 * CM_BATCH_CAP, 0);
    cr_assert_not(sealed_chunks_evicted(table));
    for (int c = 0; c < table->n_chunks; c++) {
        cr_assert_not_null(table->chunks[c]->held);
    }
    cr_assert(st_table_drop_index(table, "by_s"));
    cr_assert(sealed_chunks_evicted(table));
}

/* Whether a key of rows [from, n) is found elsewhere in rows [0, n): a
 * brute-force st_index_check_unique.  (s is a function of k, so (k, s) keys
 * collide exactly where k keys do.) */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static bool brute_dup(const int64_t *k, const bool *is_null, int n, int from)
{
    /* each key times 2, plus 1 for a row checked: equal keys sort next to each other */
    int64_t *v = cm_malloc(sizeof(int64_t) * (size_t)(n + 1));
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (!is_null[i]) {
            v[m++] = k[i] * 2 + (i >= from);
        }
    }
    qsort(v, (size_t)m, sizeof(int64_t), cmp_i64);
    bool dup = false;
    for (int i = 1; i < m && !dup; i++) {
        dup = v[i] >> 1 == v[i - 1] >> 1 && ((v[i] & 1) || (v[i - 1] & 1));
    }
    cm_free(v);
    return dup;
}

/* st_index_check_unique against a brute force on random tables: keys of
 * [0, from) distinct, those after drawn from a small range (duplicates or
 * not), NULLs among them; a keyed index (k) and one that reads rows (k, s),
 * with memory_limit large (one set) and small (up to 8 partitions in spill files). */
Test(st_index, check_unique_matches_brute_force)
{
    srand(1234);
    int key_k[1] = {0}, key_ks[2] = {0, 1};
    StIndex *by_k = st_index_new(NULL, ST_INDEX_UNIQUE, 1, key_k, types, &err);
    StIndex *by_ks = st_index_new(NULL, ST_INDEX_PRIMARY, 2, key_ks, types, &err);
    cr_assert(by_k != NULL && by_ks != NULL);
    int64_t limit = cm_mem_limit();
    for (int trial = 0; trial < 24; trial++) {
        int n = 1 + rand() % 20000, from = rand() % (n + 1);
        int64_t *k = cm_malloc(sizeof(int64_t) * (size_t)n);
        bool *is_null = cm_calloc((size_t)n, sizeof(bool));
        /* new keys: drawn from a small range (0), from a large one (3), or
         * distinct among themselves and now and then an old row's (1) or
         * never (2) */
        int shape = trial % 4;
        int64_t range = shape == 0 ? 4 * (int64_t)n : (int64_t)n * 1000;
        for (int i = 0; i < n; i++) {
            k[i] = i < from ? (int64_t)i * 1000 + 7 : (rand() % range) * 7 + 7;
            if (i >= from && (shape == 1 || shape == 2)) {
                bool old = shape == 1 && from > 0 && rand() % 3000 == 0;
                k[i] = old ? (int64_t)(rand() % from) * 1000 + 7 : (int64_t)i * 1000 + 8;
            }
            is_null[i] = i >= from && rand() % 50 == 0;
        }
        st_table_truncate(table, 0);
        cm_err_init(&err); /* the last trial's duplicate */
        for (int at = 0; at < n; at += CM_BATCH_CAP) {
            int m = n - at < CM_BATCH_CAP ? n - at : CM_BATCH_CAP;
            cr_assert_eq(append(m, k + at, is_null + at), CM_OK, "%s", err.msg);
        }
        bool want = brute_dup(k, is_null, n, from);
        /* small: an eighth of 1 MB makes partitions of 4096 entries */
        cm_mem_set_limit(trial % 2 ? (int64_t)1 << 20 : limit);
        for (int w = 0; w < 2; w++) {
            cm_err_init(&err);
            CmStatus st = st_index_check_unique(w ? by_ks : by_k, table, from, &err);
            cr_assert(st == (want ? CM_RUNTIME : CM_OK), "trial %d (n %d, from %d) index %d: %s",
                      trial, n, from, w, err.msg);
            cr_assert(!want || strstr(err.msg, "Duplicate key \"k: ") != NULL, "%s", err.msg);
        }
        cm_mem_set_limit(limit);
        cm_free(k);
        cm_free(is_null);
    }
    st_index_free(by_k);
    st_index_free(by_ks);
}
