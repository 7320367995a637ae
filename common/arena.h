/*
 * arena.h - bump allocator freed or reset only as a whole.
 *
 * Three standard lifetimes use it: the query arena (tokens, AST, plans,
 * constants), a state arena per operator state (hash tables, sort runs) and a
 * scratch arena per operator per worker, reset after each batch it emits.
 * An object in an arena must never point into memory that dies sooner.
 * Allocation is 16-byte aligned.  An arena is not thread-safe: one owner.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct CmArenaChunk CmArenaChunk;

typedef struct CmArena {
    CmArenaChunk *head;   /* newest chunk; older ones linked behind it */
    size_t chunk_size;    /* default size of the next chunk, bytes */
    size_t n_bytes;       /* bytes handed out since the last reset */
} CmArena;

/* Prepares caller-provided storage; chunk_size 0 means 64 KiB. */
void cm_arena_init(CmArena *arena, size_t chunk_size);

/* Frees every chunk. */
void cm_arena_fini(CmArena *arena);

/* Frees all but the first chunk and makes it empty again. */
void cm_arena_reset(CmArena *arena);

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
