/*
 * arena.c - chunked bump allocator.  Invariant: `head` is the chunk being
 * filled; a request larger than a chunk gets a chunk of its own, linked behind
 * the head so the head's free space is not wasted.
 */
#include "common/arena.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/err.h"
#include "common/mem.h"

struct CmArenaChunk {
    CmArenaChunk *next; /* older chunk */
    size_t size;        /* usable bytes in data */
    size_t used;        /* bytes handed out */
    _Alignas(16) unsigned char data[];
};

/* Usable bytes of a chunk of the default size: the header is taken out of
 * chunk_size, so that the allocation is exactly chunk_size.  Allocators round
 * a request up to their size class: 16 KiB plus a 32-byte header is a 20 KiB
 * block in mimalloc, a fifth more than what the arena counts in n_bytes (and
 * what the memory manager was told). */
static size_t default_usable(const CmArena *arena)
{
    size_t hdr = sizeof(CmArenaChunk);
    return arena->chunk_size > 4 * hdr ? arena->chunk_size - hdr : arena->chunk_size;
}

void cm_arena_init(CmArena *arena, size_t chunk_size)
{
    arena->head = NULL;
    arena->chunk_size = chunk_size ? chunk_size : 64 * 1024;
    arena->n_bytes = 0;
    arena->res = NULL;
    arena->refusal = NULL;
    arena->held = 0;
    arena->reserved = 0;
    arena->spare = NULL;
    arena->spare_bytes = 0;
}

void cm_arena_reserve_through(CmArena *arena, CmMemRes *res, CmErr *refusal)
{
    arena->res = res;
    arena->refusal = refusal;
}

/* What an accounted arena must have reserved while it holds `held` bytes. */
static size_t to_reserve(size_t held)
{
    return held > CM_ARENA_FREE_BYTES ? held - CM_ARENA_FREE_BYTES : 0;
}

/* Accounts a chunk of `bytes` about to be allocated; false when refused. */
static bool account_take(CmArena *arena, size_t bytes)
{
    if (arena->res == NULL) {
        return true;
    }
    size_t want = to_reserve(arena->held + bytes);
    if (want > arena->reserved) {
        CmErr local;
        cm_err_init(&local);
        CmErr *err = arena->refusal != NULL ? arena->refusal : &local;
        if (cm_mem_need(arena->res, (int64_t)(want - arena->reserved), err) != CM_OK) {
            return false;
        }
        arena->reserved = want;
    }
    arena->held += bytes;
    return true;
}

/* Releases what an accounted arena reserved beyond what it holds now. */
static void account_trim(CmArena *arena)
{
    if (arena->res == NULL) {
        return;
    }
    size_t want = to_reserve(arena->held);
    if (arena->reserved > want) {
        cm_mem_shrink(arena->res, (int64_t)(arena->reserved - want));
        arena->reserved = want;
    }
}

/* Gives back what account_take counted for a chunk of `size` usable bytes
 * (the reservation itself shrinks in account_trim). */
static void account_give(CmArena *arena, size_t size)
{
    if (arena->res != NULL) {
        arena->held -= sizeof(CmArenaChunk) + size;
    }
}

static void chunk_free(CmArena *arena, CmArenaChunk *c)
{
    account_give(arena, c->size);
    cm_free(c);
}

void cm_arena_fini(CmArena *arena)
{
    for (int list = 0; list < 2; list++) {
        CmArenaChunk *c = list == 0 ? arena->head : arena->spare;
        while (c != NULL) {
            CmArenaChunk *next = c->next;
            chunk_free(arena, c);
            c = next;
        }
    }
    arena->head = NULL;
    arena->spare = NULL;
    arena->spare_bytes = 0;
    arena->n_bytes = 0;
    account_trim(arena);
}

void cm_arena_reset(CmArena *arena)
{
    CmArenaChunk *c = arena->head;
    if (c == NULL) {
        return;
    }
    /* Keep the newest chunk of default size if there is one: it is the most
     * likely to be big enough for the next round. */
    CmArenaChunk *keep = NULL;
    size_t usable = default_usable(arena);
    while (c != NULL) {
        CmArenaChunk *next = c->next;
        if (keep == NULL && c->size == usable) {
            keep = c;
        } else if (c->size == usable && arena->spare_bytes + usable <= CM_ARENA_SPARE_BYTES) {
            c->next = arena->spare;
            arena->spare = c;
            arena->spare_bytes += usable;
        } else {
            chunk_free(arena, c);
        }
        c = next;
    }
    if (keep != NULL) {
        keep->next = NULL;
        keep->used = 0;
    }
    arena->head = keep;
    arena->n_bytes = 0;
    account_trim(arena);
}

static CmArenaChunk *chunk_new(CmArena *arena, size_t size)
{
    if (!account_take(arena, sizeof(CmArenaChunk) + size)) {
        return NULL;
    }
    CmArenaChunk *c = cm_malloc(sizeof(CmArenaChunk) + size);
    if (c == NULL) {
        account_give(arena, size);
        account_trim(arena);
        return NULL;
    }
    c->next = NULL;
    c->size = size;
    c->used = 0;
    return c;
}

void cm_arena_adopt(CmArena *arena, void *mem, size_t bytes)
{
    CM_ASSERT(arena->head == NULL && arena->res == NULL && bytes > sizeof(CmArenaChunk));
    CmArenaChunk *c = mem;
    c->next = NULL;
    c->size = bytes - sizeof(CmArenaChunk);
    c->used = 0;
    arena->head = c;
}

void *cm_arena_disown(CmArena *arena, size_t *bytes)
{
    CmArenaChunk *c = arena->head;
    if (c == NULL || c->next != NULL || arena->res != NULL) {
        return NULL;
    }
    *bytes = sizeof(CmArenaChunk) + c->size;
    arena->head = NULL;
    arena->n_bytes = 0;
    return c;
}

void *cm_arena_alloc(CmArena *arena, size_t n)
{
    if (n > SIZE_MAX - 64) {
        return NULL; /* rounding up would wrap */
    }
    n = (n + 15) & ~(size_t)15;
    CmArenaChunk *h = arena->head;
    if (h != NULL && h->size - h->used >= n) {
        void *p = h->data + h->used;
        h->used += n;
        arena->n_bytes += n;
        return p;
    }
    if (n > arena->chunk_size / 4) {
        /* A big block gets its own chunk, behind the head. */
        CmArenaChunk *c = chunk_new(arena, n);
        if (c == NULL) {
            return NULL;
        }
        c->used = n;
        if (h != NULL) {
            c->next = h->next;
            h->next = c;
        } else {
            arena->head = c;
        }
        arena->n_bytes += n;
        return c->data;
    }
    CmArenaChunk *c = arena->spare;
    if (c != NULL) { /* a chunk kept by reset, already held */
        arena->spare = c->next;
        arena->spare_bytes -= c->size;
        c->used = 0;
    } else if ((c = chunk_new(arena, default_usable(arena))) == NULL) {
        return NULL;
    }
    c->next = h;
    arena->head = c;
    c->used = n;
    arena->n_bytes += n;
    return c->data;
}

void *cm_arena_zalloc(CmArena *arena, size_t n)
{
    void *p = cm_arena_alloc(arena, n);
    if (p != NULL) {
        memset(p, 0, n);
    }
    return p;
}

char *cm_arena_strndup(CmArena *arena, const char *s, size_t n)
{
    char *d = cm_arena_alloc(arena, n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

char *cm_arena_strdup(CmArena *arena, const char *s)
{
    return cm_arena_strndup(arena, s, strlen(s));
}

char *cm_arena_printf(CmArena *arena, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return NULL;
    }
    char *d = cm_arena_alloc(arena, (size_t)n + 1);
    if (d != NULL) {
        va_start(ap, fmt);
        vsnprintf(d, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return d;
}
