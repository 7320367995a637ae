/*
 * config.h - the settings of a database (`SET name = value`, `RESET name`).
 *
 * Each setting has a fixed name, a kind (integer, size in bytes, boolean,
 * ratio, text) and a default.  Sizes accept plain bytes or a unit: '64KB',
 * '256MB', '1GB' (powers of 1024).  A CmConfig is a plain struct owned by the
 * database and copied into each query when it starts, so a running query never
 * sees a setting change.  Not thread-safe: set between queries.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"

typedef struct CmConfig {
    int64_t threads;                 /* worker threads, >= 1 */
    int64_t memory_limit;            /* bytes the process may reserve (common/mem.h) */
    int64_t memory_mode;             /* CmMemMode: how the limit is split (docs/memory.md) */
    double storage_fraction;         /* share of memory_limit for storage (cached blocks, tables) */
    double shuffle_fraction;         /* share for execution (operators, the shuffle store) */
    char temp_directory[256];        /* where spilled and shuffled data go */
    int64_t max_temp_directory_size; /* bytes of temp files the process may hold */
    /* the shuffle store (shuffle/) */
    int64_t shuffle_partitions;      /* partitions of a hash exchange, >= 1 */
    int64_t shuffle_compression;     /* CM_COMPRESSION_*: codec of blocks on disk */
    int64_t shuffle_memory_limit;    /* bytes of pushed blocks held in memory */
    double shuffle_pause_ratio;      /* pushers block above this share of the limit */
    double shuffle_resume_ratio;     /* and resume below this one */
    int64_t shuffle_split_threshold; /* bytes after which a partition file is split */
    /* adaptive execution (planner/aqe/) */
    bool adaptive;                            /* re-plan between stages from runtime statistics */
    bool adaptive_coalesce;                   /* pack small partitions */
    int64_t adaptive_advisory_partition_size; /* bytes a coalesced partition aims at */
    int64_t adaptive_min_partition_size;      /* bytes below which partitions are merged */
    bool adaptive_broadcast;                  /* switch joins to broadcast from real sizes */
    int64_t broadcast_threshold;              /* bytes under which a join side is broadcast */
    bool adaptive_skew_join;                  /* split skewed partitions */
    bool join_bloom_filter;                   /* build keys' Bloom filter on the probe exchange */
    bool join_enumeration; /* order joins by cost over their graph (planner/optimizer/join_order.h)
                            */
    double skew_factor;                       /* skewed: > factor x median ... */
    int64_t skew_threshold;                   /* ... and > this many bytes */
    /* identical subplans of one statement computed once (docs/cache.md) */
    bool subplan_reuse;
    bool exchange_reuse; /* keep a table's partitioned form across statements (planner/keep.h) */
    /* bytes of a file one task of read_csv parses (executor/csv_scan.c) */
    int64_t read_csv_range_size;
    /* the shell's progress bar (executor/progress.h, docs/cli.md) */
    bool enable_progress_bar;
    int64_t progress_bar_time; /* ms a statement runs before the bar shows */
    /* test-only: every reading of the progress of each statement is appended
     * to this file ("" off), so that tests can check its sequence */
    char debug_progress_log[256];
    /* test-only: damage the first shuffle of each query after its map stage
     * (1 corrupt a block, 2 delete a file), to exercise lineage recovery */
    int64_t debug_shuffle_damage;
    /* test-only: every allocation of the adaptive rules fails, to show that
     * their errors reach the user */
    bool debug_aqe_oom;
} CmConfig;

enum {
    CM_COMPRESSION_ZSTD = 0,
    CM_COMPRESSION_NONE = 1,
    CM_COMPRESSION_LZ4 = 2,
    CM_COMPRESSION_AUTO = 3
};

/* Fills in the defaults (threads = number of cores). */
void cm_config_init(CmConfig *cfg);

/* Sets `name` (case-insensitive) from the text of its value (quotes already
 * removed).  CM_BIND for an unknown name, CM_RUNTIME for a bad value; the
 * message names the setting and what it accepts. */
CmStatus cm_config_set(CmConfig *cfg, const char *name, const char *value, CmErr *err);

/* Restores the default of `name`. */
CmStatus cm_config_reset(CmConfig *cfg, const char *name, CmErr *err);

/* Writes the current value of `name` as text into buf; false if unknown. */
bool cm_config_get(const CmConfig *cfg, const char *name, char *buf, int cap);

/* The name of the i-th setting (0-based, in a fixed order), NULL past the
 * last: to list them all with cm_config_get. */
const char *cm_config_name(int i);
/* The i-th setting's one-line description and the kind of value it takes
 * ("INTEGER", "SIZE" such as '64MB', "BOOLEAN", "DOUBLE", "VARCHAR", or the
 * words it accepts); NULL past the last. */
const char *cm_config_doc(int i);
const char *cm_config_type(int i);

/* The size under which a join side is broadcast: broadcast_threshold, but at
 * most a sixteenth of memory_limit, since a broadcast table cannot spill and
 * its decoded size is a few times its shuffled size. */
int64_t cm_config_broadcast_bytes(const CmConfig *cfg);
/* The same when the probe side is known to be BROADCAST_PROBE_RATIO times the
 * build side or more: then a broadcast spares a shuffle of the larger side,
 * which under a tight limit spills, and the table may take a quarter of
 * memory_limit (PageRank's ranks against its edges: at 51 MB its 250,000
 * rows are 14 MB with their index, and an eighth sent 2.5M edges through a
 * shuffle to disk every round).  The table is freed when its stage ends
 * (ex_stage_release), so it competes only with its own stage's operators;
 * held to the end of the query, as it was, it made the later stages spill.
 * Beside a probe side of
 * its own size the table is not worth that memory: a partitioned join moves
 * little more and spills instead of failing over to grace mode. */
#define BROADCAST_PROBE_RATIO 4.0
/* Beside a probe side BROADCAST_BIG_RATIO times larger or more, a build side
 * is broadcast up to BROADCAST_BIG_SCALE times broadcast_threshold (1 GB at
 * its default), at most a sixteenth of memory_limit: shuffling the probe side
 * costs more than one large shared table.  A threshold set low (0: no
 * broadcast) stays low.  TPC-H q5 at SF 10: 2.3M orders (36 MB) to be
 * joined with 60M lineitems were over the 32 MB threshold, and the lineitems
 * went through a 1.3 GB shuffle; broadcast, the query took half the time.
 * Not beside a probe side of the table's own order (q10's customers, 372 MB
 * as a table, against 1.1M joined orders). */
#define BROADCAST_BIG_RATIO 16.0
#define BROADCAST_BIG_SCALE 32
int64_t cm_config_broadcast_bytes_for(const CmConfig *cfg, double build_bytes, double probe_bytes);
/* The largest of them: the most any broadcast table may be planned at. */
int64_t cm_config_broadcast_bytes_max(const CmConfig *cfg);

/* Parses '64KB' / '1GB' / '123' into bytes; false on bad text. */
bool cm_parse_size(const char *text, int64_t *bytes);
