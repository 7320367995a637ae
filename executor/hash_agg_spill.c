/*
 * hash_agg_spill.c - how a SINGLE or FINAL hash aggregate keeps within
 * memory_limit (docs/architecture.md, "Aggregate spilling"; types in
 * hash_agg_int.h).
 *
 * From the first refused reservation on, the table takes no new groups: rows
 * of the groups it holds update them, the others go raw to one of SPILL_FANOUT
 * partition files of the current level, picked by SPILL_BITS bits of the key
 * hash from the top.  When even the updates are refused, the table is written
 * out as state rows (keys, partial states, one row per DISTINCT (group,
 * value)) and shrinks.  Invariant: all of a group's rows and states are in
 * the table or in its one partition of the current level.  At flush each
 * partition is aggregated alone, deepest level first, spilling on the next
 * bits when it still does not fit.  Files and buffers belong to one task's
 * table (AggLocal); nothing here is shared.
 */
#include <string.h>

#include "common/alloc.h"
#include "executor/hash_agg_int.h"
#include "shuffle/spill.h"

/* ---- spilling ------------------------------------------------------------------ */

/* The partition of hash h at spill level `depth`: SPILL_BITS bits, from the top. */
static int spill_part(uint64_t h, int depth)
{
    return (int)((h >> (64 - SPILL_BITS * (depth + 1))) & (SPILL_FANOUT - 1));
}

/* The state or raw file of partition `part` at level l->depth, made at first
 * use (b: a batch of its rows, for the raw layout).  Borrowed; NULL with err. */
static ShSpill *spill_file(AggLocal *l, const CmBatch *b, int part, bool is_state, CmErr *err)
{
    while (l->n_levels <= l->depth) {
        memset(&l->levels[l->n_levels], 0, sizeof(SpillLevel));
        l->n_levels++;
    }
    SpillLevel *lv = &l->levels[l->depth];
    ShSpill **f = is_state ? &lv->state[part] : &lv->raw[part];
    if (*f != NULL) {
        return *f;
    }
    if (!is_state && l->in_types == NULL) {
        l->in_types = cm_malloc(sizeof(CmType) * (size_t)(b->n_cols ? b->n_cols : 1));
        if (l->in_types == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory in hash aggregate");
            return NULL;
        }
        for (int c = 0; c < b->n_cols; c++) {
            l->in_types[c] = b->cols[c].type;
        }
        l->n_in_cols = b->n_cols;
    }
    *f = sh_spill_new(l->temp_dir, l->max_temp, err);
    return *f;
}

/* Appends the rows at positions pos[0..n) of b, whose key hashes are
 * hash[0..n), to their partitions at level l->depth. */
static CmStatus route(AggLocal *l, const CmBatch *b, int n, const uint32_t *pos,
                      const uint64_t *hash, bool is_state, CmErr *err)
{
    int count[SPILL_FANOUT] = {0}, start[SPILL_FANOUT], fill[SPILL_FANOUT];
    for (int i = 0; i < n; i++) {
        int part = spill_part(hash[i], l->depth);
        l->route_part[i] = (uint8_t)part;
        count[part]++;
    }
    for (int part = 0, at = 0; part < SPILL_FANOUT; part++) {
        start[part] = fill[part] = at;
        at += count[part];
    }
    for (int i = 0; i < n; i++) {
        l->route_pos[fill[l->route_part[i]]++] = pos[i];
    }
    for (int part = 0; part < SPILL_FANOUT; part++) {
        if (count[part] == 0) {
            continue;
        }
        CmBatch view = *b;
        view.sel = &l->route_pos[start[part]];
        view.n_rows = count[part];
        ShSpill *f = spill_file(l, b, part, is_state, err);
        if (f == NULL || sh_spill_append(f, &view, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* Writes the DISTINCT values of aggregate a as state rows (keys, the value in
 * the aggregate's column, NULL elsewhere) to their groups' partitions. */
static CmStatus dump_seen(const HashAggSpec *x, AggLocal *l, int a, CmErr *err)
{
    const HashAggSpec *m = x->merge;
    CmBatch *b = &l->state_buf;
    const SeenSet *set = &l->seen[a];
    bool counts = counts_values(&x->aggs[a]);
    int row = 0;
    for (uint64_t i = 0; set->slots != NULL && i <= set->mask; i++) {
        const SeenEntry *e = &set->slots[i];
        /* A value counted n times goes out as n rows (read back, they count again). */
        for (int64_t k = 0; e->hash != 0 && k < (counts ? (int64_t)e->n : 1); k++) {
            if (row == 0) {
                cm_batch_reset(b);
            }
            ex_hash_agg_emit_keys(x, l, e->group, b, (uint32_t)row);
            for (int c = x->n_keys; c < m->n_state_cols; c++) {
                if (c != m->in_col[a]) {
                    cm_vec_set_null(&b->cols[c], (uint32_t)row);
                }
            }
            cm_vec_set_value(&b->cols[m->in_col[a]], (uint32_t)row, &e->value);
            if (keeps_nulls(&x->aggs[a])) {
                CmValue mark = {.type = cm_type_make(CM_T_INT32), .i = 1};
                cm_vec_set_value(&b->cols[m->in_col[a] + 1], (uint32_t)row, &mark);
            }
            l->miss_hash[row] = group_hash_of(x, l, e->group);
            l->hit_pos[row] = (uint32_t)row;
            row++;
            if (row == CM_BATCH_CAP && k + 1 < (counts ? (int64_t)e->n : 1)) {
                b->n_rows = row;
                if (route(l, b, row, l->hit_pos, l->miss_hash, true, err) != CM_OK) {
                    return err->code;
                }
                row = 0;
            }
        }
        if (row == CM_BATCH_CAP || (row > 0 && i == set->mask)) {
            b->n_rows = row;
            if (route(l, b, row, l->hit_pos, l->miss_hash, true, err) != CM_OK) {
                return err->code;
            }
            row = 0;
        }
    }
    return CM_OK;
}

/* Writes the table out as state rows to the partitions at level l->depth
 * and empties it (its memory stays reserved, for reuse). */
CmStatus ex_hash_agg_dump_table(const HashAggSpec *x, AggLocal *l, CmErr *err)
{
    CmBatch *b = &l->state_buf;
    for (int64_t g0 = 0; g0 < l->n_groups; g0 += CM_BATCH_CAP) {
        int n = l->n_groups - g0 < CM_BATCH_CAP ? (int)(l->n_groups - g0) : CM_BATCH_CAP;
        cm_batch_reset(b);
        for (int i = 0; i < n; i++) {
            ex_hash_agg_emit_group(x, l, g0 + i, b, (uint32_t)i, true);
            l->hit_pos[i] = (uint32_t)i;
            l->hit_hash[i] = group_hash_of(x, l, g0 + i);
        }
        b->n_rows = n;
        if (route(l, b, n, l->hit_pos, l->hit_hash, true, err) != CM_OK) {
            return err->code;
        }
    }
    for (int a = 0; a < x->n_aggs; a++) {
        if (keeps_values(&x->aggs[a]) && dump_seen(x, l, a, err) != CM_OK) {
            return err->code;
        }
    }
    ex_hash_agg_table_reset(x, l);
    return CM_OK;
}

/* The group of the row at position p with hash h, or -1 when the table has none. */
static int64_t probe(const HashAggSpec *x, AggLocal *l, const CmBatch *in, uint32_t p, uint64_t h)
{
    CM_ASSERT(l->direct == NULL); /* consume_slice left the direct index */
    uint32_t tag = (uint32_t)h;
    for (uint64_t idx = slot_home(h, l->mask);; idx = (idx + 1) & l->mask) {
        const Slot *slot = &l->slots[idx];
        if (slot->group == 0) {
            return -1;
        }
        if (slot->tag == tag && ex_hash_agg_key_matches(x, l, slot->group - 1, in, p)) {
            return slot->group - 1;
        }
    }
}

/* While spilling: rows of groups in the table update them; the others go to
 * their partitions as raw rows.  When the updates themselves are refused
 * memory, the table is written out first (and everything goes). */
static CmStatus spill_rows(const HashAggSpec *x, AggLocal *l, const CmBatch *in, bool is_state,
                           CmErr *err)
{
    if (l->n_groups > 0 && !ex_hash_agg_make_room(x, l, 0, in->n_rows, false, err)) {
        if (err->code != CM_OK || ex_hash_agg_dump_table(x, l, err) != CM_OK ||
            ex_hash_agg_table_shrink(x, l, err) != CM_OK) {
            return err->code;
        }
    }
    ex_hash_agg_hash_rows(x, l, in);
    int n_hit = 0, n_miss = 0;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        int64_t g = l->n_groups > 0 ? probe(x, l, in, p, l->row_hash[i]) : -1;
        if (g >= 0) {
            l->row_group[n_hit] = (uint32_t)g;
            l->hit_pos[n_hit++] = p;
        } else {
            l->miss_pos[n_miss] = p;
            l->miss_hash[n_miss++] = l->row_hash[i];
        }
    }
    if (n_hit > 0) {
        CmBatch view = *in;
        view.sel = l->hit_pos;
        view.n_rows = n_hit;
        locate_states(l, n_hit);
        for (int a = 0; a < x->n_aggs; a++) {
            if (ex_hash_agg_update_one(x, l, a, &view, err) != CM_OK) {
                return err->code;
            }
        }
    }
    return route(l, in, n_miss, l->miss_pos, l->miss_hash, is_state, err);
}

/* SINGLE, FINAL: aggregates `in` (laid out for x: the op's spec, or its merge
 * spec for state rows).  From the first refusal on, the table takes no new
 * groups (spill_rows).  Without keys (one group) or at the deepest level
 * spilling cannot help: then a refusal is an OOM. */
static CmStatus consume_slice(const HashAggSpec *x, AggLocal *l, const CmBatch *in, bool is_state,
                              CmErr *err)
{
    if (!l->spilling) {
        bool must = x->n_keys == 0 || l->depth >= SPILL_MAX_LEVELS || x->sorted_input || l->deep;
        /* A sorted-input table cannot split by hash, but its values can go to sorters. */
        bool adopt = x->sorted_input && !l->deep && ex_hash_agg_deep_fits(x);
        int64_t n_new = ex_hash_agg_max_new_groups(x, in);
        if (ex_hash_agg_make_room(x, l, n_new, in->n_rows, must && !adopt, err)) {
            return ex_hash_agg_absorb(x, l, in, err);
        }
        if (err->code != CM_OK) {
            return err->code;
        }
        if (adopt) {
            if (ex_hash_agg_deep_adopt(x, l, err) != CM_OK ||
                !ex_hash_agg_make_room(x, l, n_new, in->n_rows, true, err)) {
                return err->code;
            }
            return ex_hash_agg_absorb(x, l, in, err);
        }
        l->spilling = true;
        ex_hash_agg_direct_leave(x, l); /* probe() reads the slots */
    }
    return spill_rows(x, l, in, is_state, err);
}

CmStatus ex_hash_agg_consume(const HashAggSpec *x, AggLocal *l, const CmBatch *in, bool is_state,
                             CmErr *err)
{
    int64_t n_new = ex_hash_agg_max_new_groups(x, in);
    if (l->spilling || in->n_rows <= SLICE_ROWS ||
        ex_hash_agg_make_room(x, l, n_new, in->n_rows, false, err)) {
        return err->code != CM_OK ? err->code : consume_slice(x, l, in, is_state, err);
    }
    for (int at = 0; at < in->n_rows; at += SLICE_ROWS) {
        CmBatch view = *in;
        view.n_rows = in->n_rows - at < SLICE_ROWS ? in->n_rows - at : SLICE_ROWS;
        for (int i = 0; i < view.n_rows; i++) {
            l->slice_pos[i] = cm_batch_pos(in, at + i);
        }
        view.sel = l->slice_pos;
        if (consume_slice(x, l, &view, is_state, err) != CM_OK) {
            return err->code;
        }
    }
    return CM_OK;
}

/* The next spilled partition to aggregate, deepest level first (levels are
 * dropped as they run out); false when none is left. */
bool ex_hash_agg_next_partition(AggLocal *l, int *level, int *part)
{
    while (l->n_levels > 0) {
        SpillLevel *lv = &l->levels[l->n_levels - 1];
        while (lv->next < SPILL_FANOUT) {
            int p = lv->next++;
            if (lv->state[p] != NULL || lv->raw[p] != NULL) {
                *level = l->n_levels - 1;
                *part = p;
                return true;
            }
        }
        l->n_levels--;
    }
    return false;
}

/* Aggregates partition `part` of `level` into the emptied table: its state
 * rows merged, then its raw rows added; what does not fit spills a level
 * deeper.  Each file is freed once read. */
CmStatus ex_hash_agg_load_partition(ExOp *op, AggLocal *l, int level, int part, CmErr *err)
{
    const HashAggSpec *s = op->spec;
    SpillLevel *lv = &l->levels[level];
    l->loading[0] = lv->state[part];
    l->loading[1] = lv->raw[part];
    lv->state[part] = lv->raw[part] = NULL;
    l->depth = level + 1;
    l->spilling = false;
    /* The partition has at most its rows' groups, and partitions of one level
     * are about as large as each other: keep the arrays of the table just
     * emitted up to that size instead of growing them anew from the smallest. */
    int64_t rows = 0;
    for (int f = 0; f < 2; f++) {
        rows += l->loading[f] != NULL ? sh_spill_rows(l->loading[f]) : 0;
    }
    int64_t want = l->n_groups < rows ? l->n_groups : rows;
    if (ex_hash_agg_table_trim(s, l, want, err) != CM_OK) {
        return err->code;
    }
    /* Deep enough: the values go to sorters (hash_agg_deep.c), and the
     * groups must fit. */
    if (l->depth >= SPILL_DEEP_LEVEL && ex_hash_agg_deep_fits(s) &&
        ex_hash_agg_deep_begin(op, l, err) != CM_OK) {
        return err->code;
    }
    for (int f = 0; f < 2; f++) {
        ShSpill *file = l->loading[f];
        if (file == NULL) {
            continue;
        }
        if (sh_spill_rewind(file, err) != CM_OK) {
            return err->code;
        }
        ex_op_count_spill(op, sh_spill_bytes(file));
        if (f == 1 && !l->has_raw_buf) {
            if (cm_batch_init(&l->raw_buf, l->n_in_cols, l->in_types, err) != CM_OK) {
                return err->code;
            }
            l->has_raw_buf = true;
        }
        CmBatch *b = f == 0 ? &l->state_in : &l->raw_buf;
        for (;;) {
            bool eof = false;
            if (sh_spill_read(file, b, &eof, err) != CM_OK) {
                return err->code;
            }
            if (eof) {
                break;
            }
            if (ex_hash_agg_consume(f == 0 ? s->merge : s, l, b, f == 0, err) != CM_OK) {
                return err->code;
            }
        }
        sh_spill_free(file);
        l->loading[f] = NULL;
    }
    return CM_OK;
}
