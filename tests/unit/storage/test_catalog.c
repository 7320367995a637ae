/*
 * test_catalog.c - unit tests for storage/catalog.c: adding tables and views,
 * lookup (case-sensitive), drop, creation order after drops, and replacing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "storage/catalog.h"

static CmErr err;
static StCatalog *cat;

static void setup(void)
{
    cm_err_init(&err);
    cat = st_catalog_new();
    cr_assert_not_null(cat);
}

static void teardown(void)
{
    st_catalog_free(cat);
}

TestSuite(st_catalog, .init = setup, .fini = teardown);

static StTable *make_table(const char *name)
{
    StColumn col = {.name = "x", .type = cm_type_make(CM_T_INT64)};
    StTable *t = st_table_new(name, 1, &col, &err);
    cr_assert_not_null(t);
    return t;
}

static void add_table(const char *name)
{
    char sql[128];
    snprintf(sql, sizeof sql, "CREATE TABLE %s (x BIGINT)", name);
    cr_assert_eq(st_catalog_add_table(cat, make_table(name), sql, false, &err), CM_OK);
}

static void expect_order(const char *const *names, int n)
{
    cr_assert_eq(st_catalog_count(cat), n);
    for (int i = 0; i < n; i++) {
        cr_expect_str_eq(st_catalog_entry(cat, i)->name, names[i], "entry %d", i);
    }
}

Test(st_catalog, empty)
{
    cr_expect_eq(st_catalog_count(cat), 0);
    cr_expect_null(st_catalog_find(cat, "t"));
    cr_expect_not(st_catalog_drop(cat, "t"));
}

Test(st_catalog, add_and_find_table)
{
    StTable *t = make_table("orders");
    cr_assert_eq(st_catalog_add_table(cat, t, "CREATE TABLE orders (x BIGINT)", false, &err),
                 CM_OK);
    StEntry *e = st_catalog_find(cat, "orders");
    cr_assert_not_null(e);
    cr_expect_eq(e->kind, ST_ENTRY_TABLE);
    cr_expect_eq(e->table, t, "the catalog owns the table it was given");
    cr_expect_str_eq(e->name, "orders");
    cr_expect_str_eq(e->create_sql, "CREATE TABLE orders (x BIGINT)");
    cr_expect_null(e->view_sql);
}

Test(st_catalog, names_are_case_sensitive)
{
    add_table("lower");
    cr_expect_not_null(st_catalog_find(cat, "lower"));
    cr_expect_null(st_catalog_find(cat, "LOWER"));
    cr_expect_null(st_catalog_find(cat, "lowe"));
    cr_expect_null(st_catalog_find(cat, "lowerr"));
}

Test(st_catalog, creation_order_and_drop)
{
    static const char *all[] = {"a", "b", "c", "d", "e"};
    for (int i = 0; i < 5; i++) {
        add_table(all[i]);
    }
    expect_order(all, 5);
    cr_expect(st_catalog_drop(cat, "c"));
    static const char *after_c[] = {"a", "b", "d", "e"};
    expect_order(after_c, 4);
    cr_expect_null(st_catalog_find(cat, "c"));
    cr_expect_not(st_catalog_drop(cat, "c"), "dropping twice");
    cr_expect(st_catalog_drop(cat, "a"));
    cr_expect(st_catalog_drop(cat, "e"));
    static const char *left[] = {"b", "d"};
    expect_order(left, 2);
    /* A re-created name goes to the end. */
    add_table("a");
    static const char *readded[] = {"b", "d", "a"};
    expect_order(readded, 3);
    cr_expect_eq(st_catalog_find(cat, "d"), st_catalog_entry(cat, 1));
}

Test(st_catalog, many_entries_grow_the_array)
{
    char name[16];
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "t%03d", i);
        add_table(name);
    }
    cr_expect_eq(st_catalog_count(cat), 100);
    for (int i = 0; i < 100; i++) {
        snprintf(name, sizeof name, "t%03d", i);
        StEntry *e = st_catalog_find(cat, name);
        cr_assert_not_null(e, "%s", name);
        cr_expect_eq(e, st_catalog_entry(cat, i));
        cr_expect_str_eq(e->table->name, name);
    }
    for (int i = 0; i < 100; i += 2) {
        snprintf(name, sizeof name, "t%03d", i);
        cr_assert(st_catalog_drop(cat, name));
    }
    cr_expect_eq(st_catalog_count(cat), 50);
    for (int i = 0; i < 50; i++) {
        snprintf(name, sizeof name, "t%03d", 2 * i + 1);
        cr_expect_str_eq(st_catalog_entry(cat, i)->name, name);
    }
}

Test(st_catalog, views_with_and_without_columns)
{
    const char *cols[] = {"a", "b"};
    char select_sql[] = "SELECT 1, 2";
    cr_assert_eq(st_catalog_add_view(cat, "v1", select_sql, 2, cols,
                                     "CREATE VIEW v1(a, b) AS SELECT 1, 2", false, &err),
                 CM_OK);
    cr_assert_eq(st_catalog_add_view(cat, "v2", "SELECT x FROM t", 0, NULL,
                                     "CREATE VIEW v2 AS SELECT x FROM t", false, &err),
                 CM_OK);
    select_sql[0] = 'X'; /* the catalog keeps its own copy */
    StEntry *v1 = st_catalog_find(cat, "v1");
    cr_assert_not_null(v1);
    cr_expect_eq(v1->kind, ST_ENTRY_VIEW);
    cr_expect_null(v1->table);
    cr_expect_str_eq(v1->view_sql, "SELECT 1, 2");
    cr_expect_str_eq(v1->create_sql, "CREATE VIEW v1(a, b) AS SELECT 1, 2");
    cr_assert_eq(v1->n_view_cols, 2);
    cr_expect_str_eq(v1->view_cols[0], "a");
    cr_expect_str_eq(v1->view_cols[1], "b");
    cr_expect_neq((const void *)v1->view_cols[0], (const void *)cols[0]);
    StEntry *v2 = st_catalog_find(cat, "v2");
    cr_assert_not_null(v2);
    cr_expect_eq(v2->n_view_cols, 0);
    cr_expect_null(v2->view_cols);
    cr_expect_str_eq(v2->view_sql, "SELECT x FROM t");
}

Test(st_catalog, tables_and_views_share_one_namespace_order)
{
    add_table("t1");
    cr_assert_eq(st_catalog_add_view(cat, "v", "SELECT 1", 0, NULL, "CREATE VIEW v AS SELECT 1",
                                     false, &err),
                 CM_OK);
    add_table("t2");
    static const char *names[] = {"t1", "v", "t2"};
    expect_order(names, 3);
    cr_expect_eq(st_catalog_entry(cat, 1)->kind, ST_ENTRY_VIEW);
    cr_expect(st_catalog_drop(cat, "v"));
    static const char *rest[] = {"t1", "t2"};
    expect_order(rest, 2);
}

Test(st_catalog, dropped_table_data_is_freed_with_the_entry)
{
    /* Under ASan this checks the table (with data) is freed exactly once. */
    StTable *t = make_table("big");
    CmType ty = cm_type_make(CM_T_INT64);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &ty, &err), CM_OK);
    b.n_rows = CM_BATCH_CAP;
    for (int i = 0; i < CM_BATCH_CAP; i++) {
        ((int64_t *)b.cols[0].data)[i] = i;
    }
    for (int k = 0; k < 5; k++) {
        cr_assert_eq(st_table_append(t, &b, &err), CM_OK);
    }
    cm_batch_fini(&b);
    cr_assert_eq(st_catalog_add_table(cat, t, "CREATE TABLE big (x BIGINT)", false, &err), CM_OK);
    cr_expect_eq(st_catalog_find(cat, "big")->table->n_rows, 5 * CM_BATCH_CAP);
    cr_expect(st_catalog_drop(cat, "big"));
    cr_expect_eq(st_catalog_count(cat), 0);
}

/* CREATE OR REPLACE: the old entry goes in the same step as the new one comes,
 * and the new one takes the end of the creation order. */
Test(st_catalog, add_with_replace)
{
    add_table("a");
    add_table("b");
    StTable *t = make_table("a");
    cr_assert_eq(st_catalog_add_table(cat, t, "CREATE OR REPLACE TABLE a (x BIGINT)", true, &err),
                 CM_OK);
    const char *const names[] = {"b", "a"};
    expect_order(names, 2);
    cr_expect_eq(st_catalog_find(cat, "a")->table, t);
    /* replacing a name nobody holds just adds */
    cr_assert_eq(
        st_catalog_add_table(cat, make_table("c"), "CREATE TABLE c (x BIGINT)", true, &err), CM_OK);
    cr_expect_eq(st_catalog_count(cat), 3);
}

/* ---- transactions ---- */

/* Appends rows from..from+n-1 to t (one BIGINT column); the append's status. */
static CmStatus append_range(StTable *t, int64_t from, int n)
{
    CmType ty = cm_type_make(CM_T_INT64);
    CmBatch b;
    cr_assert_eq(cm_batch_init(&b, 1, &ty, &err), CM_OK);
    CmStatus st = CM_OK;
    for (int done = 0; done < n && st == CM_OK;) {
        b.n_rows = n - done < CM_BATCH_CAP ? n - done : CM_BATCH_CAP;
        for (int i = 0; i < b.n_rows; i++) {
            ((int64_t *)b.cols[0].data)[i] = from + done + i;
        }
        st = st_table_append(t, &b, &err);
        done += b.n_rows;
    }
    cm_batch_fini(&b);
    return st;
}

/* A table with rows 0..n-1 and a unique index on them, in the catalog. */
static StTable *add_keyed(const char *name, int n)
{
    add_table(name);
    StTable *t = st_catalog_find(cat, name)->table;
    int key = 0;
    cr_assert_eq(st_table_add_index(t, NULL, ST_INDEX_UNIQUE, 1, &key, &err), CM_OK);
    cr_assert_eq(append_range(t, 0, n), CM_OK);
    return t;
}

/* ROLLBACK: the rows appended, a drop, a replace, a new table, a rename and
 * the index changes are undone; the index holds exactly the old keys. */
Test(st_catalog, rollback_restores_tables_and_indexes)
{
    StTable *a = add_keyed("a", 100);
    add_table("b");
    uint64_t version = a->version;
    cr_assert_eq(st_catalog_begin(cat, &err), CM_OK);
    cr_expect(st_catalog_in_txn(cat));
    cr_assert_eq(append_range(a, 100, 3 * CM_BATCH_CAP), CM_OK);
    int key = 0;
    cr_assert_eq(st_table_add_index(a, "extra", ST_INDEX_PLAIN, 1, &key, &err), CM_OK);
    cr_expect(st_catalog_drop(cat, "b"));
    add_table("c");
    cr_assert_eq(st_catalog_rename(cat, st_catalog_find(cat, "a"), "renamed", &err), CM_OK);
    cr_assert_eq(st_catalog_add_table(cat, make_table("renamed"), "CREATE TABLE renamed (x BIGINT)",
                                      true, &err),
                 CM_OK);
    st_catalog_rollback(cat);
    cr_expect_not(st_catalog_in_txn(cat));
    const char *const names[] = {"a", "b"};
    expect_order(names, 2);
    cr_assert_eq(st_catalog_find(cat, "a")->table, a);
    cr_expect_str_eq(a->name, "a");
    cr_expect_eq(a->n_rows, 100);
    cr_expect_eq(a->version, version);
    cr_expect_eq(a->n_indexes, 1);
    cr_expect_eq(append_range(a, 100, 1), CM_OK, "a key the rollback removed is free");
    cm_err_init(&err);
    cr_expect_eq(append_range(a, 5, 1), CM_RUNTIME, "an old key is still enforced");
    cr_expect_eq(a->n_rows, 101);
}

/* A dropped index comes back with the rows it had; a replaced table comes back whole. */
Test(st_catalog, rollback_restores_a_dropped_index_and_a_replaced_table)
{
    StTable *a = add_keyed("a", 3000);
    cr_assert_eq(st_catalog_add_index(cat, "ix", "a", "CREATE INDEX ix ON a(x)", &err), CM_OK);
    int key = 0;
    cr_assert_eq(st_table_add_index(a, "ix", ST_INDEX_PLAIN, 1, &key, &err), CM_OK);
    cr_assert_eq(st_catalog_begin(cat, &err), CM_OK);
    cr_expect(st_catalog_drop(cat, "ix"));
    cr_expect_eq(a->n_indexes, 1);
    cr_assert_eq(append_range(a, 3000, 500), CM_OK);
    StTable *b = make_table("a");
    StEntry *e = st_catalog_find(cat, "a");
    e->table = b; /* as UPDATE and DELETE replace a table */
    st_table_release(a);
    st_catalog_rollback(cat);
    cr_assert_eq(st_catalog_find(cat, "a")->table, a);
    cr_expect_not_null(st_catalog_find(cat, "ix"));
    cr_expect_eq(a->n_indexes, 2);
    cr_expect_eq(a->n_rows, 3000);
    cm_err_init(&err);
    cr_expect_eq(append_range(a, 2999, 1), CM_RUNTIME);
}

/* COMMIT keeps the changes and frees what was dropped or replaced (ASan). */
Test(st_catalog, commit_keeps_changes)
{
    StTable *a = add_keyed("a", 10);
    add_table("b");
    cr_assert_eq(st_catalog_begin(cat, &err), CM_OK);
    cr_assert_eq(append_range(a, 10, 5), CM_OK);
    cr_expect(st_catalog_drop(cat, "b"));
    add_table("c");
    st_catalog_commit(cat);
    const char *const names[] = {"a", "c"};
    expect_order(names, 2);
    cr_expect_eq(a->n_rows, 15);
    cr_expect_null(a->mark);
}

/* A catalog freed with a transaction open frees every table once (ASan). */
Test(st_catalog, free_with_an_open_transaction)
{
    add_keyed("a", 10);
    add_table("b");
    cr_assert_eq(st_catalog_begin(cat, &err), CM_OK);
    cr_expect(st_catalog_drop(cat, "b"));
    add_table("c");
}
