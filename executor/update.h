/*
 * update.h - UPDATE and DELETE in place: new copies of the chunks that change.
 *
 * An UPDATE or DELETE need not build a new table of every row: in place (no
 * FROM, RETURNING or subquery: planner/session.c), each chunk of the table is
 * read for the columns of its WHERE only, and a chunk where some row matches gets a copy
 * with the new values (for a DELETE, a shorter copy of the rows left, or
 * none), which takes its place (st_table_swap_chunks, storage/table.h).  The
 * chunks it leaves alone stay the same blocks, so a directory database keeps
 * their records and an in-memory one copies nothing of them.  Every new chunk
 * is made before the first one is put in: an error (a failed conversion, a
 * NOT NULL column set to NULL, out of memory) leaves the table as it was.
 */
#pragma once

#include <stdatomic.h>
#include <stdint.h>

#include "common/err.h"
#include "common/thread.h"
#include "executor/expr.h"
#include "storage/table.h"

/* Updates t on pool's workers: `pred` (BOOLEAN, never NULL; NULL: every row)
 * over t's columns picks the rows, evaluated once per row; set[col] (t->n_cols
 * entries; NULL for a column not set) is the new value of a set column,
 * evaluated for the rows picked only (pl_bind_update_values).  `rekey` when a
 * column set is an index key: the indexes then follow the changed keys
 * (st_table_swap_chunks), and a duplicate key fails the UPDATE, nothing changed.
 * *changes counts the rows matched.  `interrupt` (may be NULL), once set,
 * stops it between chunks with CM_CANCELLED "interrupted", nothing changed. */
CmStatus ex_update_in_place(StTable *t, const ExExpr *pred, ExExpr *const *set, bool rekey,
                            CmPool *pool, const atomic_bool *interrupt, int64_t *changes,
                            CmErr *err);

/* DELETE in place, as ex_update_in_place picks rows: each chunk with a row
 * picked gives way to a copy of its other rows, shorter (or to none), and
 * the chunks after it move up (st_table_swap_chunks: the indexes turn cold,
 * rebuilt at the next append).  *changes counts the rows deleted. */
CmStatus ex_delete_in_place(StTable *t, const ExExpr *pred, CmPool *pool,
                            const atomic_bool *interrupt, int64_t *changes, CmErr *err);

/* UPDATE and DELETE by row address, for the statements whose WHERE or SET
 * needs a plan (a subquery) or that return rows (RETURNING): the plan
 * (pl_bind_changes) yields only the rows changed, in address order, each its
 * address (ST_ROW_ADDR) then those of t's columns in_plan (t->n_cols flags)
 * picks, in table order: an UPDATE's new values of the columns it sets (or
 * every column, for RETURNING: `written` then takes whole rows), a DELETE's
 * none (or every column, for RETURNING).
 * ex_changes_add takes its batches as they come: the rows of one chunk are
 * staged (an UPDATE's copied, with their strings), and when the next chunk's
 * begin, that chunk gets its copy, as in place: its other rows and the new
 * values (UPDATE, checked: NOT NULL, lengths), or its other rows only
 * (DELETE).  The rows taken also go to `written` (RETURNING; may be NULL).
 * ex_changes_apply puts the copies in (st_table_swap_chunks; nothing before
 * it changes t, so an error anywhere before leaves t as it was) and counts
 * the rows; `rekey` as for ex_update_in_place. */
typedef struct ExChanges ExChanges;
ExChanges *ex_changes_new(StTable *t, bool is_delete, bool rekey, const bool *in_plan,
                          StTable *written, CmErr *err);
CmStatus ex_changes_add(ExChanges *c, const CmBatch *b, CmErr *err);
CmStatus ex_changes_apply(ExChanges *c, int64_t *changes, CmErr *err);
void ex_changes_free(ExChanges *c);
