/*
 * shuffle_int.h - the store's internals, shared by store.c (budget, flow
 * control, flushing, files), shuffle.c (shuffles, writers, statistics,
 * faults), reader.c and sort.c (sort on read).  Never included outside shuffle/.
 *
 * Locking: ShStore.lock guards every field marked "store lock" in every
 * struct below; it is the only lock of the module.  It is never held during
 * file I/O, compression or decoding: a thread claims a piece of work under the
 * lock (a partition buffer to flush, a split to sort), does it unlocked, and
 * publishes the result under the lock, then broadcasts ShStore.cond.
 * Who waits on ShStore.cond, and why it always ends: see store.c.
 */
#pragma once

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/mem.h"
#include "common/thread.h"
#include "shuffle/block.h"
#include "shuffle/shuffle.h"

/* A (map, attempt) with blocks in a split: enough to tell which maps a damaged
 * region held, and how many bytes each map needs in the sorted file. */
typedef struct ShPair {
    int32_t map_id;    /* the map task */
    int32_t attempt;   /* its attempt */
    int64_t first_off; /* offset of its first record in the split's data file */
    int64_t last_off;  /* offset of its last record */
    int64_t bytes;     /* record bytes (headers and padding included) */
} ShPair;

typedef enum ShSplitState {
    SH_SPLIT_RAW,     /* records in flush order in the .data file */
    SH_SPLIT_SORTING, /* a reader is writing the .sorted file */
    SH_SPLIT_SORTED,  /* records grouped by map id in the .sorted file, with an .index */
} ShSplitState;

/* One file of a partition.  All fields: store lock. */
typedef struct ShSplit {
    int64_t size;       /* bytes of committed records (the file may hold a torn tail) */
    bool sealed;        /* no more flushes append to it; its content is final */
    int state;          /* ShSplitState */
    int64_t damaged_at; /* -1; else records from this data-file offset on are unreadable
                           (0 for a sorted split or a missing file: all of it) */
    ShPair *pairs;      /* the (map, attempt)s in it; owned */
    int n_pairs;
    int cap_pairs;
    int32_t *slots; /* open-addressing index into pairs (+1; 0 empty); owned */
    int slot_mask;  /* slots has slot_mask + 1 entries (a power of two) */
} ShSplit;

/* Buffers flushed while readers held a snapshot of them, freed when unpinned. */
typedef struct ShRetired {
    ShBlock *head;          /* a detached buffer, linked by next */
    struct ShRetired *next; /* older retired buffers */
} ShRetired;

enum { SH_Q_NONE = -1, SH_Q_SMALL = 0, SH_Q_FULL = 1 };

/* One reduce partition.  All fields but sh and idx: store lock. */
typedef struct ShPart {
    ShShuffle *sh;        /* owner */
    int idx;              /* partition number */
    ShBlock *head, *tail; /* buffered blocks, push order */
    int64_t n_blocks;     /* blocks in the buffer */
    int64_t mem_bytes;    /* their bytes as counted against the budget */
    bool flushing;        /* a thread has detached the buffer and is writing it */
    int pins;             /* readers holding a snapshot of the buffer */
    ShRetired *retired;   /* flushed buffers waiting for pins to drop to 0 */
    ShSplit *splits;      /* n_splits; the last one is active unless sealed; owned */
    int n_splits;
    int cap_splits;
    int queue;                      /* SH_Q_*: flush queue holding this partition */
    struct ShPart *q_prev, *q_next; /* links in that queue */
    unsigned start_ticket;          /* spreads map-range readers over the splits */
    int64_t rows;                   /* committed rows */
    int64_t bytes;                  /* committed bytes */
} ShPart;

struct ShShuffle {
    ShStore *store;  /* the store it lives in */
    bool owns_store; /* a private store, freed with the shuffle */
    int id;          /* unique in the store: names the files */
    int n_maps, n_parts, n_cols;
    CmType *types;         /* n_cols; owned */
    ShPart *parts;         /* n_parts; owned */
    atomic_int *committed; /* per map: committed attempt or -1 (written under store lock) */
    /* store lock: */
    int *max_attempt;        /* per map: highest attempt opened, -1 */
    bool *was_committed;     /* per map: ever committed or invalidated (for map_reruns) */
    uint8_t *lost;           /* per map: committed blocks were found lost */
    int64_t *map_part_rows;  /* n_maps x n_parts: of the committed attempt */
    int64_t *map_part_bytes; /* n_maps x n_parts */
    int64_t *map_blocks;     /* per map: blocks of the committed attempt */
    ShShuffleStats stats;    /* rows, bytes_pushed, blocks: committed; the rest cumulative */
    int64_t paused_ns;       /* behind stats.paused_ms */
    bool freeing;            /* sh_shuffle_free has begun: nothing new is claimed */
    struct ShShuffle *next;  /* in the store's list */
};

/* What a flush reuses from one flush to the next: the compression context and
 * the write buffer.  Allocated anew per flush, the 1 MiB buffer was a first
 * touch of 256 pages each time under a tight limit (freed pages go back to the
 * system at once there): a fifth of PageRank's minor faults at a quarter of
 * its peak.  At most one per flush running at once; freed with the store. */
typedef struct ShCctx {
    ShCompressor *cctx;  /* of the store's codec; NULL when the store does not compress */
    unsigned char *buf;  /* WRITE_BUF_BYTES, made at first use */
    struct ShCctx *next; /* free list */
} ShCctx;

struct ShStore {
    ShStoreOptions opt;   /* as given; read-only */
    int64_t pause_bytes;  /* pause when used reaches this */
    int64_t resume_bytes; /* resume below this; also the flush watermark */
    int64_t flush_bytes;  /* a buffer this big is in the FULL queue */
    CmMutex lock;         /* the module's one lock */
    CmCond cond;          /* broadcast whenever a flush or sort ends, on unpause, on error */
    /* store lock: */
    int64_t used;      /* bytes of buffered blocks (all shuffles) */
    bool paused;       /* flow control state, with hysteresis */
    int in_flight;     /* flushes running now */
    ShPart *q_head[2]; /* flush queues: SMALL and FULL, oldest first */
    ShPart *q_tail[2];
    ShShuffle *shuffles; /* live shuffles */
    int next_id;         /* id of the next shuffle */
    ShCctx *cctx_free;   /* idle compression contexts */
    CmErr io_err;        /* first failed flush: pushers that must wait fail with it */
    char dir[512];       /* the query's directory, "" until made */
    ShStoreStats stats;  /* cumulative counters (used, peak_used kept live) */
    int64_t paused_ns;   /* behind stats.paused_ms */
    /* Execution memory (common/mem.h): `used` is mem.held + unreserved.  A push
     * the manager refuses is kept unreserved and pauses the store, which
     * flushes until its reservation is back within what was granted. */
    CmMemRes mem;
    int64_t unreserved;
    /* Flushed blocks kept for the next pushes to encode into (sh_store_spare_take),
     * still reserved in `mem` (not in `used`): under a memory_limit a freed
     * block's pages went back to the system, and each new block was faulted in
     * again, a fifth of PageRank's faults at a quarter of its peak.  At most
     * spare_cap bytes. */
    ShBlock *spare;
    int64_t spare_bytes, spare_cap;
    int n_spare;
    int64_t temp_charged; /* bytes counted against max_temp_directory_size (spill.h) */
};

/* ---- store.c ---- */

/* Lowers `used` by bytes, giving back the unreserved part first.  Lock held. */
void sh_store_release_locked(ShStore *st, int64_t bytes);
/* A kept block of at least `bytes` bytes and not much more (its reservation
 * given back: pushing it reserves again), or NULL.  Called without the lock. */
ShBlock *sh_store_spare_take(ShStore *st, int64_t bytes);

/* Appends blk (owned from now on) to p's buffer and applies flow control.
 * Called without the lock. */
CmStatus sh_store_push(ShStore *st, ShPart *p, ShBlock *blk, CmErr *err);
/* Writes p's whole buffer (waiting for a running flush of p first).  Lock held. */
CmStatus sh_store_flush_part_locked(ShStore *st, ShPart *p, CmErr *err);
/* Takes p out of its flush queue.  Lock held. */
void sh_store_dequeue(ShStore *st, ShPart *p);
/* Builds the path of a split file: kind "data", "sorted" or "index". */
void sh_split_path(const ShShuffle *sh, int part, int split, const char *kind, char *buf,
                   size_t cap);
/* Frees a linked list of blocks. */
void sh_blocks_free(ShBlock *b);
/* Frees the split's arrays. */
void sh_split_fini(ShSplit *s);

/* ---- shuffle.c ---- */

/* True when (map, attempt) is the committed attempt of map. */
static inline bool sh_visible(const ShShuffle *sh, int32_t map, int32_t attempt)
{
    return map >= 0 && map < sh->n_maps && atomic_load(&sh->committed[map]) == attempt;
}

/* Marks as lost every visible map with a record at data-file offset >= from in
 * s (all of s when from is 0); returns how many of them are in [m0, m1).
 * Lock held. */
int sh_mark_lost_locked(ShShuffle *sh, const ShSplit *s, int64_t from, int m0, int m1);

/* ---- sort.c ---- */

/* Sorts split si of p by map id.  Lock held, the split claimed (SORTING);
 * unlocks while working.  On return the split is SORTED (CM_OK), or RAW again:
 * with damaged_at set when a record was unreadable (CM_IO), or unchanged after
 * an I/O failure writing the sorted file (CM_IO, *fallback set: read it raw). */
CmStatus sh_sort_split_locked(ShStore *st, ShPart *p, int si, bool *fallback, CmErr *err);
/* Reads the index of a sorted split and finds the byte range of maps [m0, m1);
 * false when the index is missing or damaged. */
bool sh_sort_index_range(const ShShuffle *sh, int part, int si, int m0, int m1, int64_t *lo,
                         int64_t *hi);
