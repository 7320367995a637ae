/*
 * arena.h - bump allocator freed or reset only as a whole.
 *
 * Three standard lifetimes use it: the query arena (tokens, AST, plans,
 * constants), a state arena per operator state (hash tables, sort runs) and a
 * scratch arena per operator per worker, reset after each batch it emits.
 * An object in an arena must never point into memory that dies sooner.
 * Allocation is 16-byte aligned.  An arena is not thread-safe: one owner.
 *
 * An arena that holds values (the string heap of an expression node, where a
 * kernel such as repeat or lpad can make a string of any length) can count
 * against the memory limit: after cm_arena_reserve_through,
 * the bytes of its chunks beyond CM_ARENA_FREE_BYTES are reserved from a
 * consumer (common/mem.h) before they are allocated, with cm_mem_need since
 * values cannot spill, and released when reset or fini frees the chunks.  A
 * refused reservation makes the allocation return NULL, as the heap refusing
 * would.  The free allowance keeps the manager's lock off the common path:
 * almost every batch's strings fit in it.  Batch heaps (CmBatch.heap) are
 * not accounted: they hold copies of values that a scan, a kernel or an
 * operator's state already bounded, and the holders that keep batches count
 * their heaps themselves (ex_result, the hash join's build rows).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct CmArenaChunk CmArenaChunk;
struct CmMemRes;
struct CmErr;

/* Bytes of chunks an accounted arena may hold without a reservation. */
#define CM_ARENA_FREE_BYTES ((size_t)256 * 1024)

/* Bytes of default-size chunks a reset keeps for the next round (beside the
 * head): an arena reset per batch reuses its memory instead of giving it back
 * and taking it again, which under a tight limit (freed pages returned to the
 * system at once) is a page fault per 4 KiB per batch. */
#define CM_ARENA_SPARE_BYTES ((size_t)512 * 1024)

typedef struct CmArena {
    CmArenaChunk *head;   /* newest chunk; older ones linked behind it */
    size_t chunk_size;    /* default size of the next chunk, bytes */
    size_t n_bytes;       /* bytes handed out since the last reset */
    struct CmMemRes *res; /* accounted arenas: the consumer reserved from; else NULL */
    struct CmErr *refusal; /* where a refused reservation's message goes; may be NULL */
    size_t held;           /* accounted arenas: bytes of the chunks held now */
    size_t reserved;       /* accounted arenas: bytes reserved from res now */
    CmArenaChunk *spare;   /* empty default-size chunks kept by reset; still held */
    size_t spare_bytes;    /* their usable bytes, at most CM_ARENA_SPARE_BYTES */
} CmArena;

/* Prepares caller-provided storage; chunk_size 0 means 64 KiB. */
void cm_arena_init(CmArena *arena, size_t chunk_size);

/* Makes the arena accounted (see above): res is borrowed and must outlive it;
 * a refusal's message goes to *refusal when not NULL (the caller clears it).
 * Call on an empty arena. */
void cm_arena_reserve_through(CmArena *arena, struct CmMemRes *res, struct CmErr *refusal);

/* Frees every chunk. */
void cm_arena_fini(CmArena *arena);

/* Empties the arena: frees its chunks but the newest of default size, which
 * stays the head, and up to CM_ARENA_SPARE_BYTES of other default-size ones,
 * kept for the next allocations (counted as held while kept). */
void cm_arena_reset(CmArena *arena);

/* Makes mem (bytes long, from cm_malloc) the empty head chunk of an empty,
 * unaccounted arena, which owns it from then on: allocations that fit take
 * it before any chunk is made.  A caller that knows what an arena will hold
 * (a block read back) gives it memory it kept. */
void cm_arena_adopt(CmArena *arena, void *mem, size_t bytes);

/* Takes an unaccounted arena's only chunk out of it, emptying the arena: the
 * memory (for cm_free or cm_arena_adopt) and its bytes in *bytes; NULL, the
 * arena untouched, when it has none or more than one. */
void *cm_arena_disown(CmArena *arena, size_t *bytes);

/* In arena: n bytes, 16-byte aligned; NULL when the heap refuses. */
void *cm_arena_alloc(CmArena *arena, size_t n);

/* In arena: n zeroed bytes. */
void *cm_arena_zalloc(CmArena *arena, size_t n);

/* In arena: a NUL-terminated copy of s[0..n). */
char *cm_arena_strndup(CmArena *arena, const char *s, size_t n);

/* In arena: a copy of a NUL-terminated string. */
char *cm_arena_strdup(CmArena *arena, const char *s);

/* In arena: printf into a fresh string. */
char *cm_arena_printf(CmArena *arena, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
