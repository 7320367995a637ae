/*
 * config.c - the settings table.  Adding a setting: a field in CmConfig, a row
 * in SETTINGS (keep in sync with config.h), and its default in cm_config_init.
 */
#include "common/config.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/statvfs.h>

#include "common/mem.h"
#include "common/thread.h"
#include "common/value.h"

typedef enum SettingKind {
    SET_INT,
    SET_SIZE,
    SET_TEXT,
    SET_BOOL,
    SET_RATIO,
    SET_CODEC,
    SET_MEM_MODE /* static | unified | auto, stored as CmMemMode */
} SettingKind;

typedef struct Setting {
    const char *name;
    SettingKind kind;
    size_t offset;    /* of the field in CmConfig */
    int64_t min, max; /* accepted range for INT and SIZE */
    const char *doc;  /* one line for sluice_settings() and docs/guide.md */
} Setting;

#define KB 1024LL

static const Setting SETTINGS[] = {
    {"threads", SET_INT, offsetof(CmConfig, threads), 1, 256,
     "worker threads that run a query's tasks (default: the cores of the machine)"},
    {"memory_limit", SET_SIZE, offsetof(CmConfig, memory_limit), 1 << 20, INT64_MAX,
     "hard limit on the memory of queries and tables together; past it operators spill and tables "
     "move to temp_directory (default: 80% of physical memory)"},
    {"memory_mode", SET_MEM_MODE, offsetof(CmConfig, memory_mode), 0, 2,
     "how execution and storage share memory_limit: static (fixed shares), unified (execution may "
     "evict storage down to storage_fraction) or auto (the boundary moves with spill and recompute "
     "costs)"},
    {"storage_fraction", SET_RATIO, offsetof(CmConfig, storage_fraction), 0, 1,
     "share of the pooled memory (memory_limit less a tenth) for storage (tables, cached "
     "results): the fixed share in static mode, the protected floor in unified mode"},
    {"shuffle_fraction", SET_RATIO, offsetof(CmConfig, shuffle_fraction), 0, 1,
     "share of the pooled memory (memory_limit less a tenth) for execution in static mode "
     "(storage_fraction + shuffle_fraction is at most 1)"},
    {"temp_directory", SET_TEXT, offsetof(CmConfig, temp_directory), 0, 0,
     "directory of spill files, shuffle files and evicted table blocks; empty: none, so "
     "memory_limit is then an error when reached"},
    {"max_temp_directory_size", SET_SIZE, offsetof(CmConfig, max_temp_directory_size), 1 << 20,
     INT64_MAX,
     "most bytes the temp files may hold (default: 90% of the free space of temp_directory)"},
    {"shuffle_partitions", SET_INT, offsetof(CmConfig, shuffle_partitions), 1, 65536,
     "partitions of a hash exchange, before the adaptive rules coalesce them"},
    {"shuffle_compression", SET_CODEC, offsetof(CmConfig, shuffle_compression), 0, 3,
     "codec of spill, shuffle and evicted-block files: auto (LZ4 when it saves time), none, lz4 or "
     "zstd"},
    {"shuffle_memory_limit", SET_SIZE, offsetof(CmConfig, shuffle_memory_limit), 4 * KB, INT64_MAX,
     "bytes of shuffle blocks a query keeps in memory before flushing them to files"},
    {"shuffle_pause_ratio", SET_RATIO, offsetof(CmConfig, shuffle_pause_ratio), 0, 1,
     "share of shuffle_memory_limit at which writers pause and flush"},
    {"shuffle_resume_ratio", SET_RATIO, offsetof(CmConfig, shuffle_resume_ratio), 0, 1,
     "share of shuffle_memory_limit at which paused writers go on"},
    {"shuffle_split_threshold", SET_SIZE, offsetof(CmConfig, shuffle_split_threshold), 4 * KB,
     INT64_MAX, "size at which a shuffle partition's file is sealed and a new one begun"},
    {"adaptive", SET_BOOL, offsetof(CmConfig, adaptive), 0, 1,
     "adaptive execution: rewrite the stages not yet run from the statistics of finished ones"},
    {"adaptive_coalesce", SET_BOOL, offsetof(CmConfig, adaptive_coalesce), 0, 1,
     "read small partitions of an exchange together, in fewer tasks"},
    {"adaptive_advisory_partition_size", SET_SIZE,
     offsetof(CmConfig, adaptive_advisory_partition_size), 1, INT64_MAX,
     "bytes a coalesced or split task aims to read"},
    {"adaptive_min_partition_size", SET_SIZE, offsetof(CmConfig, adaptive_min_partition_size), 1,
     INT64_MAX, "fewest bytes a coalesced task reads"},
    {"adaptive_broadcast", SET_BOOL, offsetof(CmConfig, adaptive_broadcast), 0, 1,
     "turn a partitioned join into a broadcast join when its build side turns out small"},
    {"broadcast_threshold", SET_SIZE, offsetof(CmConfig, broadcast_threshold), 0, INT64_MAX,
     "largest build side planned as a broadcast join (at most memory_limit / 16, or / 4 beside a "
     "probe side 4 times larger; beside one 16 times larger, 32 times this, at most "
     "memory_limit / 16)"},
    {"adaptive_skew_join", SET_BOOL, offsetof(CmConfig, adaptive_skew_join), 0, 1,
     "split a skewed partition of a join or aggregate input into several tasks"},
    {"join_bloom_filter", SET_BOOL, offsetof(CmConfig, join_bloom_filter), 0, 1,
     "before a partitioned join's probe side is exchanged, drop its rows whose keys a Bloom "
     "filter of the build side's keys rules out"},
    {"join_enumeration", SET_BOOL, offsetof(CmConfig, join_enumeration), 0, 1,
     "order the joins of a FROM clause of up to 12 tables by dynamic programming over their join "
     "graph when that order costs well under the greedy one (off: always greedy)"},
    {"skew_factor", SET_RATIO, offsetof(CmConfig, skew_factor), 1, 1000000,
     "a partition is skewed when this many times the median partition's size and past "
     "skew_threshold"},
    {"skew_threshold", SET_SIZE, offsetof(CmConfig, skew_threshold), 1, INT64_MAX,
     "bytes a partition must pass to count as skewed"},
    {"subplan_reuse", SET_BOOL, offsetof(CmConfig, subplan_reuse), 0, 1,
     "compute a subtree that occurs several times in a statement (a CTE used twice) once"},
    {"exchange_reuse", SET_BOOL, offsetof(CmConfig, exchange_reuse), 0, 1,
     "keep a table's hash-partitioned form on disk once two statements have exchanged it alike, "
     "and read it instead of exchanging it again"},
    {"read_csv_range_size", SET_SIZE, offsetof(CmConfig, read_csv_range_size), 1, INT64_MAX,
     "bytes of a CSV file one parsing task reads"},
    {"enable_progress_bar", SET_BOOL, offsetof(CmConfig, enable_progress_bar), 0, 1,
     "draw a progress bar on a terminal for statements that run past progress_bar_time"},
    {"progress_bar_time", SET_INT, offsetof(CmConfig, progress_bar_time), 0, INT32_MAX,
     "milliseconds a statement runs before its progress bar appears"},
    {"debug_progress_log", SET_TEXT, offsetof(CmConfig, debug_progress_log), 0, 0,
     "test only: a file each progress reading is appended to (empty: none)"},
    {"debug_shuffle_damage", SET_INT, offsetof(CmConfig, debug_shuffle_damage), 0, 2,
     "test only: corrupt (1) or delete (2) a shuffle block, to exercise recovery"},
    {"debug_aqe_oom", SET_BOOL, offsetof(CmConfig, debug_aqe_oom), 0, 1,
     "test only: every allocation of the adaptive rules fails"},
};

/* every SET_TEXT field has the size cm_config_set and cm_config_reset assume */
_Static_assert(sizeof((CmConfig *)0)->debug_progress_log == sizeof((CmConfig *)0)->temp_directory,
               "text settings share one size");

#define N_SETTINGS ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

static const Setting *find(const char *name)
{
    for (int i = 0; i < N_SETTINGS; i++) {
        if (strcasecmp(SETTINGS[i].name, name) == 0) {
            return &SETTINGS[i];
        }
    }
    return NULL;
}

/* 90% of the space free in `dir` now, as DuckDB's default; 1 TiB when unknown. */
static int64_t default_temp_size(const char *dir)
{
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0 || fs.f_frsize == 0) {
        return (int64_t)1 << 40;
    }
    int64_t free_bytes = (int64_t)fs.f_bavail * (int64_t)fs.f_frsize;
    int64_t v = free_bytes / 10 * 9;
    return v > (1 << 20) ? v : (1 << 20);
}

void cm_config_init(CmConfig *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = cm_cpu_count();
    cfg->memory_limit = cm_mem_default_limit();
    /* Spark's storageFraction (0.5) of a region that is the whole limit: the
     * unified split as it was before the modes (keep in sync with mem.c). */
    cfg->memory_mode = CM_MEM_UNIFIED;
    cfg->storage_fraction = 0.5;
    cfg->shuffle_fraction = 0.5;
    /* Shuffle store defaults: see docs/shuffle.md for the reasoning. */
    cfg->shuffle_partitions = 8;
    cfg->shuffle_compression = CM_COMPRESSION_AUTO;
    cfg->shuffle_memory_limit = 256 * KB * KB;
    cfg->shuffle_pause_ratio = 0.85;
    cfg->shuffle_resume_ratio = 0.70;
    cfg->shuffle_split_threshold = 256 * KB * KB;
    /* Adaptive defaults, scaled down from Spark's for one machine: see docs/aqe.md. */
    cfg->adaptive = true;
    cfg->adaptive_coalesce = true;
    cfg->adaptive_advisory_partition_size = 16 * KB * KB;
    cfg->adaptive_min_partition_size = 1 * KB * KB;
    cfg->adaptive_broadcast = true;
    cfg->join_enumeration = true;
    cfg->broadcast_threshold = 32 * KB * KB;
    cfg->adaptive_skew_join = true;
    cfg->join_bloom_filter = true;
    cfg->skew_factor = 5.0;
    cfg->skew_threshold = 64 * KB * KB;
    cfg->subplan_reuse = true;
    cfg->exchange_reuse = true;
    /* ranges of a few MiB: a task per thread and more on a large file, and
     * a small file stays one task (executor/csv_scan.c) */
    cfg->read_csv_range_size = 8 * KB * KB;
    /* DuckDB's defaults: a bar for what runs over two seconds */
    cfg->enable_progress_bar = true;
    cfg->progress_bar_time = 2000;
    const char *tmp = getenv("TMPDIR");
    snprintf(cfg->temp_directory, sizeof cfg->temp_directory, "%s", tmp ? tmp : "/tmp");
    cfg->max_temp_directory_size = default_temp_size(cfg->temp_directory);
}

int64_t cm_config_broadcast_bytes(const CmConfig *cfg)
{
    int64_t cap = cfg->memory_limit / 16;
    return cfg->broadcast_threshold < cap ? cfg->broadcast_threshold : cap;
}

/* min(broadcast_threshold, memory_limit / 4): beside a probe side
 * BROADCAST_PROBE_RATIO times larger. */
static int64_t broadcast_bytes_larger(const CmConfig *cfg)
{
    int64_t cap = cfg->memory_limit / 4;
    return cfg->broadcast_threshold < cap ? cfg->broadcast_threshold : cap;
}

/* BROADCAST_BIG_SCALE times broadcast_threshold, at most memory_limit / 16:
 * beside a probe side BROADCAST_BIG_RATIO times larger. */
static int64_t broadcast_bytes_big(const CmConfig *cfg)
{
    int64_t cap = cfg->memory_limit / 16;
    return cfg->broadcast_threshold > cap / BROADCAST_BIG_SCALE
               ? cap
               : cfg->broadcast_threshold * BROADCAST_BIG_SCALE;
}

int64_t cm_config_broadcast_bytes_max(const CmConfig *cfg)
{
    int64_t a = broadcast_bytes_larger(cfg), b = broadcast_bytes_big(cfg);
    return a > b ? a : b;
}

int64_t cm_config_broadcast_bytes_for(const CmConfig *cfg, double build_bytes, double probe_bytes)
{
    if (probe_bytes < BROADCAST_PROBE_RATIO * build_bytes) {
        return cm_config_broadcast_bytes(cfg);
    }
    int64_t cap = broadcast_bytes_larger(cfg);
    int64_t big = broadcast_bytes_big(cfg);
    return probe_bytes >= BROADCAST_BIG_RATIO * build_bytes && big > cap ? big : cap;
}

bool cm_parse_size(const char *text, int64_t *bytes)
{
    char *end;
    while (isspace((unsigned char)*text)) {
        text++;
    }
    if (!isdigit((unsigned char)*text)) {
        return false;
    }
    double v = strtod(text, &end);
    while (isspace((unsigned char)*end)) {
        end++;
    }
    double mult = 1;
    size_t unit_len = strlen(end);
    while (unit_len > 0 && isspace((unsigned char)end[unit_len - 1])) {
        unit_len--;
    }
    char unit[8];
    if (unit_len >= sizeof unit) {
        return false;
    }
    memcpy(unit, end, unit_len);
    unit[unit_len] = '\0';
    end = unit;
    if (*end != '\0') {
        static const char *units[] = {"b", "kb", "mb", "gb", "tb"};
        static const char *short_units[] = {"", "k", "m", "g", "t"};
        int u = -1;
        for (int i = 0; i < 5; i++) {
            if (strcasecmp(end, units[i]) == 0 || (i > 0 && strcasecmp(end, short_units[i]) == 0) ||
                (i > 0 && strncasecmp(end, short_units[i], 1) == 0 &&
                 strcasecmp(end + 1, "ib") == 0)) {
                u = i;
            }
        }
        if (u < 0) {
            return false;
        }
        for (int i = 0; i < u; i++) {
            mult *= 1024;
        }
    }
    double r = v * mult;
    if (r > 9.2e18) {
        return false;
    }
    *bytes = (int64_t)r;
    return true;
}

/* storage_fraction and shuffle_fraction share one limit: setting one to `d`
 * must leave their sum at most 1 (a rounding error's worth of slack, so that
 * 0.7 + 0.3 is fine).  True, with the error set, when it would not. */
static bool fractions_too_big(const CmConfig *cfg, const Setting *s, double d, CmErr *err)
{
    bool is_storage = s->offset == offsetof(CmConfig, storage_fraction);
    double other = is_storage ? cfg->shuffle_fraction : cfg->storage_fraction;
    if (d + other <= 1.0 + 1e-9) {
        return false;
    }
    cm_err_set(err, CM_RUNTIME, -1,
               "setting '%s' to %g would make storage_fraction + shuffle_fraction %g: their sum "
               "must be at most 1 (%s is %g)",
               s->name, d, d + other, is_storage ? "shuffle_fraction" : "storage_fraction", other);
    return true;
}

CmStatus cm_config_set(CmConfig *cfg, const char *name, const char *value, CmErr *err)
{
    const Setting *s = find(name);
    if (s == NULL) {
        return cm_err_set(err, CM_BIND, -1, "unknown setting '%s'", name);
    }
    char *field = (char *)cfg + s->offset;
    if (s->kind == SET_TEXT) {
        if (strlen(value) >= sizeof cfg->temp_directory) {
            return cm_err_set(err, CM_RUNTIME, -1, "value of '%s' is too long", name);
        }
        strcpy(field, value);
        return CM_OK;
    }
    if (s->kind == SET_BOOL) {
        bool b;
        if (!cm_parse_bool(value, strlen(value), &b) && strcasecmp(value, "on") != 0 &&
            strcasecmp(value, "off") != 0) {
            return cm_err_set(err, CM_RUNTIME, -1, "setting '%s' expects on or off, got '%s'", name,
                              value);
        }
        if (strcasecmp(value, "on") == 0 || strcasecmp(value, "off") == 0) {
            b = strcasecmp(value, "on") == 0;
        }
        *(bool *)field = b;
        return CM_OK;
    }
    if (s->kind == SET_CODEC) {
        static const char *const names[] = {"zstd", "none", "lz4", "auto"};
        for (int64_t i = 0; i < 4; i++) {
            if (strcasecmp(value, names[i]) == 0) {
                *(int64_t *)field = i;
                return CM_OK;
            }
        }
        return cm_err_set(err, CM_RUNTIME, -1,
                          "setting '%s' expects auto, lz4, zstd or none, got '%s'", name, value);
    }
    if (s->kind == SET_RATIO) {
        char *end;
        double d = strtod(value, &end);
        if (end == value || *end != '\0' || !(d >= (double)s->min && d <= (double)s->max)) {
            return cm_err_set(err, CM_RUNTIME, -1,
                              "setting '%s' expects a number between %lld and %lld, got '%s'", name,
                              (long long)s->min, (long long)s->max, value);
        }
        if ((s->offset == offsetof(CmConfig, storage_fraction) ||
             s->offset == offsetof(CmConfig, shuffle_fraction)) &&
            fractions_too_big(cfg, s, d, err)) {
            return err->code;
        }
        *(double *)field = d;
        return CM_OK;
    }
    if (s->kind == SET_MEM_MODE) {
        static const CmMemMode modes[] = {CM_MEM_STATIC, CM_MEM_UNIFIED, CM_MEM_AUTO};
        for (int i = 0; i < 3; i++) {
            if (strcasecmp(value, cm_mem_mode_name(modes[i])) == 0) {
                *(int64_t *)field = modes[i];
                return CM_OK;
            }
        }
        return cm_err_set(err, CM_RUNTIME, -1,
                          "setting '%s' expects static, unified or auto, got '%s'", name, value);
    }
    int64_t v;
    if (s->kind == SET_SIZE) {
        if (!cm_parse_size(value, &v)) {
            return cm_err_set(err, CM_RUNTIME, -1,
                              "setting '%s' expects a size such as '64MB', got '%s'", name, value);
        }
    } else {
        char *end;
        v = strtoll(value, &end, 10);
        if (end == value || *end != '\0') {
            return cm_err_set(err, CM_RUNTIME, -1, "setting '%s' expects an integer, got '%s'",
                              name, value);
        }
    }
    if (v < s->min || v > s->max) {
        return cm_err_set(err, CM_RUNTIME, -1, "setting '%s' must be between %lld and %lld", name,
                          (long long)s->min, (long long)s->max);
    }
    memcpy(field, &v, sizeof v);
    return CM_OK;
}

CmStatus cm_config_reset(CmConfig *cfg, const char *name, CmErr *err)
{
    const Setting *s = find(name);
    if (s == NULL) {
        return cm_err_set(err, CM_BIND, -1, "unknown setting '%s'", name);
    }
    CmConfig defaults;
    cm_config_init(&defaults);
    if (s->kind == SET_RATIO &&
        (s->offset == offsetof(CmConfig, storage_fraction) ||
         s->offset == offsetof(CmConfig, shuffle_fraction)) &&
        fractions_too_big(cfg, s, *(const double *)((const char *)&defaults + s->offset), err)) {
        return err->code;
    }
    size_t size = s->kind == SET_TEXT    ? sizeof cfg->temp_directory
                  : s->kind == SET_BOOL  ? sizeof(bool)
                  : s->kind == SET_RATIO ? sizeof(double)
                                         : sizeof(int64_t);
    memcpy((char *)cfg + s->offset, (char *)&defaults + s->offset, size);
    return CM_OK;
}

bool cm_config_get(const CmConfig *cfg, const char *name, char *buf, int cap)
{
    const Setting *s = find(name);
    if (s == NULL) {
        return false;
    }
    const char *field = (const char *)cfg + s->offset;
    if (s->kind == SET_TEXT) {
        snprintf(buf, (size_t)cap, "%s", field);
    } else if (s->kind == SET_BOOL) {
        snprintf(buf, (size_t)cap, "%s", *(const bool *)field ? "on" : "off");
    } else if (s->kind == SET_RATIO) {
        snprintf(buf, (size_t)cap, "%g", *(const double *)field);
    } else if (s->kind == SET_CODEC) {
        int64_t c = *(const int64_t *)field;
        snprintf(buf, (size_t)cap, "%s",
                 c == CM_COMPRESSION_ZSTD   ? "zstd"
                 : c == CM_COMPRESSION_NONE ? "none"
                 : c == CM_COMPRESSION_LZ4  ? "lz4"
                                            : "auto");
    } else if (s->kind == SET_MEM_MODE) {
        snprintf(buf, (size_t)cap, "%s", cm_mem_mode_name((CmMemMode) * (const int64_t *)field));
    } else {
        int64_t v;
        memcpy(&v, field, sizeof v);
        snprintf(buf, (size_t)cap, "%lld", (long long)v);
    }
    return true;
}

const char *cm_config_name(int i)
{
    return i >= 0 && i < N_SETTINGS ? SETTINGS[i].name : NULL;
}

const char *cm_config_doc(int i)
{
    return i >= 0 && i < N_SETTINGS ? SETTINGS[i].doc : NULL;
}

const char *cm_config_type(int i)
{
    static const char *const names[] = {
        [SET_INT] = "INTEGER",
        [SET_SIZE] = "SIZE",
        [SET_TEXT] = "VARCHAR",
        [SET_BOOL] = "BOOLEAN",
        [SET_RATIO] = "DOUBLE",
        [SET_CODEC] = "auto|none|lz4|zstd",
        [SET_MEM_MODE] = "static|unified|auto",
    };
    return i >= 0 && i < N_SETTINGS ? names[SETTINGS[i].kind] : NULL;
}
