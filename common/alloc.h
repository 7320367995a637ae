/*
 * alloc.h - the one door to the heap.
 *
 * All heap memory goes through cm_malloc/cm_calloc/cm_realloc/cm_free, backed by
 * mimalloc (plain libc in sanitizer builds, where SLUICE_NO_MIMALLOC is set, so
 * that ASan sees every allocation).  In debug builds the environment variable
 * CM_FAULT_AFTER=N makes the N-th allocation fail, for fault-injection sweeps.
 * The functions return NULL on failure and never abort; callers turn NULL into
 * CM_OOM.  All functions are thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Owned: free with cm_free. NULL on failure. */
void *cm_malloc(size_t n);
void *cm_calloc(size_t count, size_t size);
void *cm_realloc(void *p, size_t n);
/* Gives back what other threads freed of the calling thread's heap.  With
 * mimalloc, memory freed by a thread other than the one that allocated it
 * waits in its owner's heap until the owner allocates again or collects; an
 * idle worker whose blocks the main thread evicts would keep it all. */
void cm_alloc_collect(void);
/* When the allocator gives freed memory back to the operating system.
 * KEEP: not while the process lives, unless a whole segment is free, so that
 * memory freed and allocated again (a statement's hash tables, the next
 * statement's) is not faulted in twice; the memory manager chooses it at the
 * default memory_limit.  DELAYED: after mimalloc's short delay (25 ms).
 * EAGER: at once, and the stash below keeps nothing (a delay of 2 ms cut the
 * spilling tests' faults at 16MB from 850,000 to 370,000, but two seed
 * workloads then went 0.1 MiB past limit + 10% + 32 MiB at a quarter of
 * their peak: resident memory is past the mark there, and what waits is
 * what the bound counts).  Under a memory_limit below the default the memory
 * manager switches between DELAYED and EAGER by resident memory
 * (cm_mem_release_is_eager, common/mem.h).  Big buffers (a MiB or more) have
 * mappings of their own and always go back at once (alloc.c). */
typedef enum CmAllocRelease {
    CM_ALLOC_KEEP = 0,
    CM_ALLOC_DELAYED = 1,
    CM_ALLOC_EAGER = 2
} CmAllocRelease;
void cm_alloc_set_release(CmAllocRelease how);
/* Freed big buffers' mappings are kept, up to `bytes` in all, for the next
 * big buffers to take, except under CM_ALLOC_EAGER (alloc.c, "Kept
 * mappings"); 0 (the start) keeps none.  Memory outside every reservation:
 * the memory manager sets it to a small share of the limit. */
void cm_alloc_set_keep_bytes(size_t bytes);
void cm_free(void *p);
/* Buffers to free whose pages are not wanted again soon (table chunks the
 * block store evicts for execution): the pages wholly inside them go back to
 * the operating system before they are freed, so that resident memory falls
 * as the reservation does, instead of after the allocator's delay (mimalloc
 * keeps freed small pages 25 ms, and gives them back only when the heap next
 * looks).  Only these pages: giving back every page freed meanwhile (the
 * decommit option set to "now") made the buffers that are used again, a
 * sort's, fault in twice (docs/memory.md).  They are gathered so that
 * neighbouring buffers go back in one system call: each call makes every CPU
 * running the process flush its TLB.  Big buffers have their own mappings
 * and are simply freed.  Zero-initialise; one thread's. */
#define CM_COLD_MAX 128
typedef struct CmColdFree {
    int n;
    void *p[CM_COLD_MAX];
} CmColdFree;
/* Adds p to the batch (freeing the batch first when it is full). */
void cm_cold_add(CmColdFree *c, void *p);
/* Gives back the batch's pages, then frees its buffers; c is empty after. */
void cm_cold_free(CmColdFree *c);

/* A stash per thread of a few freed buffers of at most CM_STASH_MAX_BYTES
 * (and 2 MiB in all: memory outside every reservation, kept while idle):
 * cm_stash_take returns one given back earlier by this thread with exactly
 * `bytes` bytes, or else cm_malloc(bytes); cm_stash_give keeps p (taken with
 * `bytes`) for the next take, or frees it when the stash is full.  For
 * buffers made and dropped over and over (a spill file's), whose pages the
 * allocator gives back at once under a memory limit, so that each new one
 * was faulted in again.  What a thread stashes is freed when it ends. */
#define CM_STASH_MAX_BYTES ((size_t)1 << 20)
void *cm_stash_take(size_t bytes);
void cm_stash_give(void *p, size_t bytes);

/* Fault injection, for sweeps over the out-of-memory paths (debug builds only;
 * in release builds arm returns false and the rest do nothing).  After
 * cm_alloc_fault_arm(nth, count), allocations are counted from 1 and those
 * numbered nth .. nth + count - 1 fail (count < 0: every one from nth on),
 * on whichever thread makes them, until cm_alloc_fault_disarm() (nth <= 0:
 * none fails, they are only counted).  allocs is
 * how many were asked for since the arm, hits how many of them failed.  With
 * CM_FAULT_TRACE set in the environment, each failure prints its call stack. */
bool cm_alloc_fault_arm(long nth, long count);
void cm_alloc_fault_disarm(void);
long cm_alloc_fault_allocs(void);
long cm_alloc_fault_hits(void);

/* Owned copy of a NUL-terminated string (or of its first n bytes). */
char *cm_strdup(const char *s);
char *cm_strndup(const char *s, size_t n);
