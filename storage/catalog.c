/*
 * catalog.c - a small array of entries; databases hold tens of tables, so a
 * linear search is the honest choice.
 */
#include "storage/catalog.h"

#include <string.h>

#include "common/alloc.h"

struct StCatalog {
    int n_entries, cap_entries;
    StEntry **entries; /* owned, creation order */
    bool in_txn;       /* a transaction is open (st_catalog_begin) */
    int n_saved;       /* of `saved` */
    StEntry **saved;   /* owned: the entries at BEGIN, copies whose tables are shared
                          (marked, and freed only by commit or rollback) */
};

StCatalog *st_catalog_new(void)
{
    return cm_calloc(1, sizeof(StCatalog));
}

/* Frees e's own memory, not its table. */
static void entry_free_meta(StEntry *e)
{
    if (e == NULL) {
        return;
    }
    for (int i = 0; i < e->n_view_cols; i++) {
        cm_free(e->view_cols[i]);
    }
    cm_free(e->view_cols);
    cm_free(e->view_sql);
    cm_free(e->index_table);
    cm_free(e->create_sql);
    cm_free(e->name);
    cm_free(e);
}

/* A table BEGIN saw (marked) outlives its entry until COMMIT or ROLLBACK. */
static void entry_free(StEntry *e)
{
    if (e != NULL) {
        st_table_release(e->table);
    }
    entry_free_meta(e);
}

void st_catalog_free(StCatalog *cat)
{
    if (cat == NULL) {
        return;
    }
    if (cat->in_txn) {
        st_catalog_rollback(cat); /* every table is then owned by one entry */
    }
    for (int i = 0; i < cat->n_entries; i++) {
        entry_free(cat->entries[i]);
    }
    cm_free(cat->entries);
    cm_free(cat);
}

StEntry *st_catalog_find(StCatalog *cat, const char *name)
{
    for (int i = 0; i < cat->n_entries; i++) {
        if (strcmp(cat->entries[i]->name, name) == 0) {
            return cat->entries[i];
        }
    }
    return NULL;
}

/* Appends e (owned, freed on failure), first dropping the entry named like it
 * when `replace`: room is made before, so the drop and the append cannot fail. */
static CmStatus add_entry(StCatalog *cat, StEntry *e, bool replace, CmErr *err)
{
    if (cat->n_entries == cat->cap_entries) {
        int cap = cat->cap_entries ? cat->cap_entries * 2 : 16;
        StEntry **grown = cm_realloc(cat->entries, sizeof(StEntry *) * (size_t)cap);
        if (grown == NULL) {
            entry_free(e);
            return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
        }
        cat->entries = grown;
        cat->cap_entries = cap;
    }
    if (replace) {
        st_catalog_drop(cat, e->name);
    }
    cat->entries[cat->n_entries++] = e;
    return CM_OK;
}

CmStatus st_catalog_add_table(StCatalog *cat, StTable *table, const char *create_sql, bool replace,
                              CmErr *err)
{
    StEntry *e = cm_calloc(1, sizeof *e);
    if (e == NULL) {
        st_table_free(table);
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    e->kind = ST_ENTRY_TABLE;
    e->table = table;
    e->name = cm_strdup(table->name);
    e->create_sql = cm_strdup(create_sql);
    if (e->name == NULL || e->create_sql == NULL) {
        entry_free(e);
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    return add_entry(cat, e, replace, err);
}

CmStatus st_catalog_add_view(StCatalog *cat, const char *name, const char *select_sql, int n_cols,
                             const char *const *cols, const char *create_sql, bool replace,
                             CmErr *err)
{
    StEntry *e = cm_calloc(1, sizeof *e);
    if (e == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    e->kind = ST_ENTRY_VIEW;
    e->name = cm_strdup(name);
    e->view_sql = cm_strdup(select_sql);
    e->create_sql = cm_strdup(create_sql);
    e->view_cols = n_cols > 0 ? cm_calloc((size_t)n_cols, sizeof(char *)) : NULL;
    bool ok = e->name && e->view_sql && e->create_sql && (n_cols == 0 || e->view_cols);
    for (int i = 0; ok && i < n_cols; i++) {
        e->view_cols[i] = cm_strdup(cols[i]);
        e->n_view_cols = i + 1;
        ok = e->view_cols[i] != NULL;
    }
    if (!ok) {
        entry_free(e);
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    return add_entry(cat, e, replace, err);
}

CmStatus st_catalog_add_index(StCatalog *cat, const char *name, const char *table,
                              const char *create_sql, CmErr *err)
{
    StEntry *e = cm_calloc(1, sizeof *e);
    if (e == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    e->kind = ST_ENTRY_INDEX;
    e->name = cm_strdup(name);
    e->index_table = cm_strdup(table);
    e->create_sql = cm_strdup(create_sql);
    if (e->name == NULL || e->index_table == NULL || e->create_sql == NULL) {
        entry_free(e);
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    return add_entry(cat, e, false, err);
}

static void remove_at(StCatalog *cat, int i)
{
    entry_free(cat->entries[i]);
    memmove(&cat->entries[i], &cat->entries[i + 1],
            sizeof(StEntry *) * (size_t)(cat->n_entries - i - 1));
    cat->n_entries--;
}

bool st_catalog_drop(StCatalog *cat, const char *name)
{
    for (int i = 0; i < cat->n_entries; i++) {
        if (strcmp(cat->entries[i]->name, name) != 0) {
            continue;
        }
        bool is_table = cat->entries[i]->kind == ST_ENTRY_TABLE;
        if (cat->entries[i]->kind == ST_ENTRY_INDEX) {
            StEntry *t = st_catalog_find(cat, cat->entries[i]->index_table);
            if (t != NULL && t->kind == ST_ENTRY_TABLE) {
                st_table_drop_index(t->table, name);
            }
        }
        remove_at(cat, i);
        for (int j = cat->n_entries - 1; is_table && j >= 0; j--) {
            const StEntry *x = cat->entries[j];
            if (x->kind == ST_ENTRY_INDEX && strcmp(x->index_table, name) == 0) {
                remove_at(cat, j);
            }
        }
        return true;
    }
    return false;
}

int st_catalog_count(const StCatalog *cat)
{
    return cat->n_entries;
}

StEntry *st_catalog_entry(StCatalog *cat, int idx)
{
    return cat->entries[idx];
}

CmStatus st_catalog_rename(StCatalog *cat, StEntry *e, const char *to, CmErr *err)
{
    char *name = cm_strdup(to), *table_name = cm_strdup(to);
    if (name == NULL || table_name == NULL) {
        cm_free(name);
        cm_free(table_name);
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    for (int i = 0; e->kind == ST_ENTRY_TABLE && i < cat->n_entries; i++) {
        StEntry *x = cat->entries[i];
        if (x->kind == ST_ENTRY_INDEX && strcmp(x->index_table, e->name) == 0) {
            char *moved = cm_strdup(to);
            if (moved == NULL) {
                cm_free(name);
                cm_free(table_name);
                return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
            }
            cm_free(x->index_table);
            x->index_table = moved;
        }
    }
    cm_free(e->name);
    e->name = name;
    if (e->kind == ST_ENTRY_TABLE) {
        cm_free(e->table->name);
        e->table->name = table_name;
    } else {
        cm_free(table_name);
    }
    return CM_OK;
}

CmStatus st_catalog_append_sql(StEntry *e, const char *stmt, CmErr *err)
{
    size_t a = strlen(e->create_sql), b = strlen(stmt);
    char *sql = cm_malloc(a + b + 3);
    if (sql == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory in the catalog");
    }
    memcpy(sql, e->create_sql, a);
    memcpy(sql + a, ";\n", 2);
    memcpy(sql + a + 2, stmt, b + 1);
    cm_free(e->create_sql);
    e->create_sql = sql;
    return CM_OK;
}

/* ---- transactions ------------------------------------------------------------------------ */

static char *dup_or_null(const char *s, bool *ok)
{
    char *d = s != NULL ? cm_strdup(s) : NULL;
    *ok = *ok && (s == NULL || d != NULL);
    return d;
}

/* A copy of e's names and texts sharing its table; NULL on OOM. */
static StEntry *entry_copy(const StEntry *e)
{
    StEntry *c = cm_calloc(1, sizeof *c);
    if (c == NULL) {
        return NULL;
    }
    bool ok = true;
    *c = *e;
    c->view_cols = NULL;
    c->n_view_cols = 0;
    c->name = dup_or_null(e->name, &ok);
    c->create_sql = dup_or_null(e->create_sql, &ok);
    c->view_sql = dup_or_null(e->view_sql, &ok);
    c->index_table = dup_or_null(e->index_table, &ok);
    if (ok && e->n_view_cols > 0) {
        ok = (c->view_cols = cm_calloc((size_t)e->n_view_cols, sizeof(char *))) != NULL;
        for (int i = 0; ok && i < e->n_view_cols; i++) {
            c->view_cols[i] = dup_or_null(e->view_cols[i], &ok);
            c->n_view_cols = i + 1;
        }
    }
    if (!ok) {
        entry_free_meta(c);
        return NULL;
    }
    return c;
}

/* Frees the saved copies (not their tables) and closes the transaction. */
static void end_txn(StCatalog *cat)
{
    for (int i = 0; i < cat->n_saved; i++) {
        entry_free_meta(cat->saved[i]);
    }
    cm_free(cat->saved);
    cat->saved = NULL;
    cat->n_saved = 0;
    cat->in_txn = false;
}

CmStatus st_catalog_begin(StCatalog *cat, CmErr *err)
{
    CM_ASSERT(!cat->in_txn);
    cat->saved = cm_calloc((size_t)cat->n_entries + 1, sizeof(StEntry *));
    bool ok = cat->saved != NULL;
    for (int i = 0; ok && i < cat->n_entries; i++) {
        StEntry *e = cat->entries[i];
        StEntry *c = entry_copy(e);
        ok = c != NULL && (e->table == NULL || st_table_mark(e->table, err) == CM_OK);
        if (c != NULL) {
            cat->saved[cat->n_saved++] = c;
        }
    }
    if (!ok) {
        for (int i = 0; i < cat->n_saved; i++) {
            if (cat->saved[i]->table != NULL) {
                st_table_unmark(cat->saved[i]->table); /* nothing when not marked yet */
            }
        }
        end_txn(cat);
        return cm_err_set(err, CM_OOM, -1, "out of memory starting a transaction");
    }
    cat->in_txn = true;
    return CM_OK;
}

bool st_catalog_in_txn(const StCatalog *cat)
{
    return cat->in_txn;
}

StCatalog *st_catalog_snapshot(const StCatalog *cat, CmErr *err)
{
    CM_ASSERT(cat->in_txn);
    StCatalog *snap = st_catalog_new();
    bool ok = snap != NULL &&
              (snap->entries = cm_calloc((size_t)cat->n_saved + 1, sizeof(StEntry *))) != NULL;
    if (ok) {
        snap->cap_entries = cat->n_saved + 1;
    }
    for (int i = 0; ok && i < cat->n_saved; i++) {
        StEntry *c = entry_copy(cat->saved[i]);
        ok = c != NULL;
        if (ok) {
            c->table = NULL; /* the live table is not the snapshot's to free */
            snap->entries[snap->n_entries++] = c;
        }
        if (ok && cat->saved[i]->table != NULL) {
            ok = (c->table = st_table_snapshot(cat->saved[i]->table, err)) != NULL;
        }
    }
    if (!ok) {
        st_catalog_free(snap);
        cm_err_set(err, CM_OOM, -1, "out of memory reading the committed catalog");
        return NULL;
    }
    return snap;
}

int st_catalog_committed_count(const StCatalog *cat)
{
    return cat->in_txn ? cat->n_saved : cat->n_entries;
}

StEntry *st_catalog_committed_entry(StCatalog *cat, int idx)
{
    return cat->in_txn ? cat->saved[idx] : cat->entries[idx];
}

static bool names_table(const StCatalog *cat, const StTable *t)
{
    for (int i = 0; i < cat->n_entries; i++) {
        if (cat->entries[i]->table == t) {
            return true;
        }
    }
    return false;
}

void st_catalog_commit(StCatalog *cat)
{
    CM_ASSERT(cat->in_txn);
    for (int i = 0; i < cat->n_saved; i++) {
        StTable *t = cat->saved[i]->table;
        if (t == NULL) {
            continue;
        }
        if (names_table(cat, t)) {
            st_table_unmark(t);
        } else {
            st_table_free(t); /* dropped or replaced in the transaction */
        }
    }
    end_txn(cat);
}

void st_catalog_rollback(StCatalog *cat)
{
    CM_ASSERT(cat->in_txn);
    for (int i = 0; i < cat->n_entries; i++) {
        entry_free(cat->entries[i]); /* frees only the tables made since BEGIN */
    }
    cm_free(cat->entries);
    cat->entries = cat->saved;
    cat->n_entries = cat->cap_entries = cat->n_saved;
    for (int i = 0; i < cat->n_entries; i++) {
        if (cat->entries[i]->table != NULL) {
            st_table_restore(cat->entries[i]->table);
        }
    }
    cat->saved = NULL;
    cat->n_saved = 0;
    cat->in_txn = false;
}
