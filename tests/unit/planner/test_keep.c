/*
 * test_keep.c - the keeper of partitioned forms (planner/keep.h): a key is
 * kept the second time a plan writes it, read from then on, dropped when its
 * table stops being current, when a statement reading it fails, and by least
 * recent use past the byte cap; what it does not keep it frees.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/vec.h"
#include "planner/keep.h"

static CmType int64_type;
static uint64_t current_version; /* the one version the fake catalog calls current */

static bool is_current(void *ctx, const char *name, uint64_t id, uint64_t version)
{
    (void)ctx;
    (void)name;
    (void)id;
    return version == current_version;
}

static void setup(void)
{
    int64_type = cm_type_make(CM_T_INT64);
    current_version = 1;
}

TestSuite(pl_keep, .init = setup);

static ShStore *store_new(void)
{
    CmErr err;
    cm_err_init(&err);
    ShStoreOptions o;
    sh_store_options_init(&o, NULL);
    snprintf(o.temp_directory, sizeof o.temp_directory, "/tmp");
    ShStore *st = sh_store_new_opts(&o, &err);
    cr_assert_not_null(st, "%s", err.msg);
    return st;
}

/* A shuffle of `rows` rows in two partitions, committed. */
static ShShuffle *shuffle_new(ShStore *st, int rows)
{
    CmErr err;
    cm_err_init(&err);
    ShShuffle *sh = sh_shuffle_new(st, 1, 2, 1, &int64_type, &err);
    cr_assert_not_null(sh);
    ShWriter *w = sh_writer_open(sh, 0, 0, &err);
    cr_assert_not_null(w);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &int64_type, &err), CM_OK);
    for (int done = 0; done < rows;) {
        cm_batch_reset(&b);
        int n = rows - done < CM_BATCH_CAP ? rows - done : CM_BATCH_CAP;
        for (int i = 0; i < n; i++) {
            /* values that do not compress: a form's bytes on disk are its payload */
            ((int64_t *)b.cols[0].data)[i] = (int64_t)((uint64_t)(done + i) * 0x9E3779B97F4A7C15u);
        }
        b.n_rows = n;
        cr_assert_eq(sh_writer_push(w, (done / n) % 2, &b, &err), CM_OK);
        done += n;
    }
    cm_batch_fini(&b);
    cr_assert_eq(sh_writer_close(w, &err), CM_OK);
    return sh;
}

static PlKeepKey key_of(uint64_t table, uint64_t version)
{
    PlKeepKey k;
    memset(&k, 0, sizeof k);
    k.table_id = table;
    k.version = version;
    k.n_cols = 1;
    k.n_keys = 1;
    k.n_parts = 2;
    return k;
}

/* One statement writing `key` (a fresh store and shuffle of `rows`), reading `used`. */
static void statement(PlKeep *k, bool ok, PlKeepKey *used, const PlKeepKey *key, int rows,
                      int64_t cap)
{
    ShStore *st = store_new();
    PlKeepWrote w = {.key = key, .table = "t", .what = "t (a; hash on a, 2 partitions)"};
    w.sh = key != NULL ? shuffle_new(st, rows) : NULL;
    pl_keep_done(k, ok, used ? 1 : 0, &used, key ? 1 : 0, &w, st, cap);
}

Test(pl_keep, kept_the_second_time_then_read)
{
    PlKeep *k = pl_keep_new(is_current, NULL);
    PlKeepKey key = key_of(7, 1);
    statement(k, true, NULL, &key, 5000, INT64_MAX);
    cr_assert_null(pl_keep_find(k, &key), "seen once: nothing kept");
    statement(k, true, NULL, &key, 5000, INT64_MAX);
    ShShuffle *sh = pl_keep_find(k, &key);
    cr_assert_not_null(sh, "seen twice: kept");
    cr_assert_eq(sh_shuffle_part_rows(sh, 0) + sh_shuffle_part_rows(sh, 1), 5000);
    PlKeepInfo info[4];
    cr_assert_eq(pl_keep_list(k, info, 4), 1);
    cr_assert_eq(info[0].rows, 5000);
    cr_assert_gt(info[0].disk_bytes, 0, "kept forms are on disk");
    cr_assert_eq(info[0].hits, 0);
    statement(k, true, &key, NULL, 0, INT64_MAX); /* a statement reading it */
    statement(k, true, &key, NULL, 0, INT64_MAX);
    cr_assert_eq(pl_keep_list(k, info, 4), 1);
    cr_assert_eq(info[0].hits, 2);
    /* another version of the table is another key */
    PlKeepKey other = key_of(7, 2);
    cr_assert_null(pl_keep_find(k, &other));
    pl_keep_free(k);
}

Test(pl_keep, dropped_when_not_current_or_failed)
{
    PlKeep *k = pl_keep_new(is_current, NULL);
    PlKeepKey key = key_of(7, 1);
    statement(k, true, NULL, &key, 100, INT64_MAX);
    statement(k, true, NULL, &key, 100, INT64_MAX);
    cr_assert_not_null(pl_keep_find(k, &key));
    current_version = 2; /* the table was written */
    pl_keep_sweep(k);
    cr_assert_null(pl_keep_find(k, &key));
    PlKeepInfo info[4];
    cr_assert_eq(pl_keep_list(k, info, 4), 0);
    /* a statement that failed reading a kept form drops it */
    PlKeepKey now = key_of(7, 2);
    statement(k, true, NULL, &now, 100, INT64_MAX);
    statement(k, true, NULL, &now, 100, INT64_MAX);
    cr_assert_not_null(pl_keep_find(k, &now));
    statement(k, false, &now, NULL, 0, INT64_MAX);
    cr_assert_null(pl_keep_find(k, &now));
    /* nor does a failed statement keep what it wrote */
    statement(k, false, NULL, &now, 100, INT64_MAX);
    cr_assert_null(pl_keep_find(k, &now));
    /* a table that is not current is never seen */
    PlKeepKey stale = key_of(8, 1);
    statement(k, true, NULL, &stale, 100, INT64_MAX);
    statement(k, true, NULL, &stale, 100, INT64_MAX);
    cr_assert_null(pl_keep_find(k, &stale));
    pl_keep_free(k);
}

Test(pl_keep, the_byte_cap_evicts_least_recently_used)
{
    PlKeep *k = pl_keep_new(is_current, NULL);
    PlKeepKey a = key_of(1, 1), b = key_of(2, 1), c = key_of(3, 1);
    statement(k, true, NULL, &a, 4000, INT64_MAX);
    statement(k, true, NULL, &a, 4000, INT64_MAX);
    PlKeepInfo info[4];
    cr_assert_eq(pl_keep_list(k, info, 4), 1);
    int64_t cap = info[0].disk_bytes * 5 / 2; /* room for two forms of 4000 rows, not three */
    statement(k, true, NULL, &b, 4000, cap);
    statement(k, true, NULL, &b, 4000, cap);
    cr_assert_not_null(pl_keep_find(k, &a));
    cr_assert_not_null(pl_keep_find(k, &b));
    statement(k, true, &a, NULL, 0, cap); /* a is used: b is the least recent */
    statement(k, true, NULL, &c, 4000, cap);
    statement(k, true, NULL, &c, 4000, cap);
    cr_assert_not_null(pl_keep_find(k, &a));
    cr_assert_null(pl_keep_find(k, &b));
    cr_assert_not_null(pl_keep_find(k, &c));
    /* a form larger than the cap is never kept */
    PlKeepKey big = key_of(4, 1);
    statement(k, true, NULL, &big, 12000, cap);
    statement(k, true, NULL, &big, 12000, cap);
    cr_assert_null(pl_keep_find(k, &big));
    cr_assert_not_null(pl_keep_find(k, &c));
    pl_keep_clear(k);
    cr_assert_null(pl_keep_find(k, &a));
    cr_assert_null(pl_keep_find(k, &c));
    pl_keep_free(k);
}

Test(pl_keep, no_keeper_frees_everything)
{
    PlKeepKey key = key_of(7, 1);
    statement(NULL, true, NULL, &key, 100, INT64_MAX); /* LeakSanitizer checks the frees */
}
