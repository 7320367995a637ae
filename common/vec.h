/*
 * vec.h - the data unit: column vectors (CmVec) and batches (CmBatch).
 *
 * A vector holds up to CM_BATCH_CAP values of one type in a flat buffer, plus a
 * validity bitmap (bit set = valid; `validity == NULL` means no NULLs).  A
 * batch is a set of vectors with a row count and an optional selection vector
 * shared by every column: active row i (0 <= i < n_rows) lives at physical
 * position `sel ? sel[i] : i`.  A filter narrows `sel` instead of copying.
 * Variable-length bytes of the batch's strings live in `heap` (reset with the
 * batch) or in storage that outlives the batch (table data, shuffle blocks).
 * Vectors and batches are plain structs owned by one worker; not thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/arena.h"
#include "common/err.h"
#include "common/types.h"

#ifndef CM_BATCH_CAP
#define CM_BATCH_CAP 2048
#endif

#define CM_VALIDITY_WORDS ((CM_BATCH_CAP + 63) / 64)

typedef enum CmVecKind { CM_VEC_FLAT = 0, CM_VEC_CONST } CmVecKind;

typedef struct CmVec {
    CmType type;
    uint8_t kind;       /* CmVecKind; CONST: position 0 holds the value of every row */
    void *data;         /* CM_BATCH_CAP values of the physical type; owned (data_buf) or
                           borrowed from another vector (a column reference) */
    uint64_t *validity; /* NULL (all valid) or validity_buf */
    void *data_buf;     /* owned buffer behind data, or NULL when borrowing */
    uint64_t validity_buf[CM_VALIDITY_WORDS];
} CmVec;

struct CmBatch;

/* How a consumer may keep the memory a batch views past the producer's next
 * batch, instead of copying its rows: for a batch that views a table's sealed
 * chunk, which never changes while it is pinned.  pin() pins `obj` again once
 * it has checked that b still views exactly obj's columns (an operator may
 * pass on a batch it has changed); unpin() lets go of that pin. */
typedef struct CmKeeper {
    bool (*pin)(void *obj, const struct CmBatch *b);
    void (*unpin)(void *obj);
} CmKeeper;

/* A batch's keeper and the object it pins, or a kept pin (cm_batch_keep). */
typedef struct CmKeep {
    const CmKeeper *keeper; /* NULL: the batch's memory cannot be kept */
    void *obj;
} CmKeep;

typedef struct CmBatch {
    int n_rows;        /* active rows */
    int n_cols;
    CmVec *cols;       /* n_cols vectors; owned (cm_batch_init) */
    uint32_t *sel;     /* NULL, or n_rows physical positions (sel_buf or borrowed) */
    uint32_t *sel_buf; /* owned selection storage, CM_BATCH_CAP entries */
    CmArena heap;      /* string bytes written into this batch */
    CmKeep keep;       /* set by a producer whose vectors view memory a consumer may
                          keep (cm_batch_keep); cleared by cm_batch_reset */
} CmBatch;

/* Pins the memory b views, for as long as the caller keeps its rows in place
 * (the vectors of b, copied by reference, stay valid until cm_keep_drop):
 * false when b has no keeper, has a selection, or no longer views exactly
 * what its keeper pins. */
bool cm_batch_keep(const CmBatch *b, CmKeep *kept);
/* Lets go of a pin cm_batch_keep took; *kept is cleared.  A cleared one is fine. */
void cm_keep_drop(CmKeep *kept);

/* Allocates the vector's buffer for `type`. */
CmStatus cm_vec_init(CmVec *v, CmType type, CmErr *err);
void cm_vec_fini(CmVec *v);
/* Makes `v` a view of `src`'s data and validity (no copy); v must not own data. */
void cm_vec_reference(CmVec *v, const CmVec *src);

static inline bool cm_vec_is_null(const CmVec *v, uint32_t pos)
{
    return v->validity != NULL && !((v->validity[pos >> 6] >> (pos & 63)) & 1);
}

/* Marks pos NULL (allocating the bitmap as all-valid on first use). */
static inline void cm_vec_set_null(CmVec *v, uint32_t pos)
{
    if (v->validity == NULL) {
        for (int i = 0; i < CM_VALIDITY_WORDS; i++) {
            v->validity_buf[i] = ~(uint64_t)0;
        }
        v->validity = v->validity_buf;
    }
    v->validity[pos >> 6] &= ~((uint64_t)1 << (pos & 63));
}

static inline void cm_vec_set_valid(CmVec *v, uint32_t pos)
{
    if (v->validity != NULL) {
        v->validity[pos >> 6] |= (uint64_t)1 << (pos & 63);
    }
}

/* Drops the bitmap: every value valid. */
static inline void cm_vec_clear_nulls(CmVec *v)
{
    v->validity = NULL;
}

/* Batch with n_cols vectors of the given types, empty. */
CmStatus cm_batch_init(CmBatch *b, int n_cols, const CmType *types, CmErr *err);
void cm_batch_fini(CmBatch *b);
/* Bytes cm_batch_init_in needs for cap rows of these columns. */
size_t cm_batch_slab_bytes(int n_cols, const CmType *types, int cap);
/* Batch whose values live in `slab` (cm_batch_slab_bytes bytes, the
 * caller's, kept until cm_batch_fini), with room for `cap` rows (at most
 * CM_BATCH_CAP) and no selection storage: for a sink that stages rows it
 * appends (cm_batch_append_rows) in many small batches at once. */
CmStatus cm_batch_init_in(CmBatch *b, int n_cols, const CmType *types, char *slab, int cap,
                          CmErr *err);
/* Empties the batch for reuse: n_rows 0, no selection, no NULLs, heap reset. */
void cm_batch_reset(CmBatch *b);

static inline uint32_t cm_batch_pos(const CmBatch *b, int i)
{
    return b->sel ? b->sel[i] : (uint32_t)i;
}

/* Appends active row `i` of `src` as the next physical row of `dst` (dst has no
 * selection; same column types).  Strings longer than the inline size are copied
 * into dst->heap when `copy_strings`.  Row-at-a-time: for sinks that scatter. */
CmStatus cm_batch_append_row(CmBatch *dst, const CmBatch *src, int i, bool copy_strings,
                             CmErr *err);

/* Appends the rows at physical positions pos[0..n) of `src` to `dst` (no
 * selection; same column types; dst->n_rows + n <= CM_BATCH_CAP), a column at
 * a time.  Long strings are copied into dst->heap when `copy_strings`. */
CmStatus cm_batch_append_rows(CmBatch *dst, const CmBatch *src, const uint32_t *pos, int n,
                              bool copy_strings, CmErr *err);

/* Copies a string into `heap` and returns a CmStr over the copy. */
CmStr cm_str_copy(CmArena *heap, const CmStr *s, CmErr *err);

/* Copies a list of `elem`-typed elements (and a VARCHAR element's long bytes)
 * into `heap` and returns a CmList over the copy (OOM: sets err, returns *l). */
CmList cm_list_copy(CmArena *heap, const CmList *l, CmType elem, CmErr *err);

/* Same length, same NULL elements and the same element values, compared by
 * their bytes (strings by content). */
bool cm_list_eq(const CmList *a, const CmList *b, CmType elem);

/* Reads a value of column `col` at physical position `pos` into *out (strings
 * are borrowed). */
void cm_vec_get_value(const CmVec *v, uint32_t pos, CmValue *out);
/* Writes `val` (of the vector's type) at `pos`; strings are stored as given. */
void cm_vec_set_value(CmVec *v, uint32_t pos, const CmValue *val);
