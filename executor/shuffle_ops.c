/*
 * shuffle_ops.c - the exchange operators: shuffle write (a sink that hash
 * partitions rows and pushes blocks into the shuffle store) and shuffle read
 * (a source over one partition per task).
 *
 * The writer stages rows per partition and pushes a partition's rows as one
 * block when they fill its stage.  A stage is CM_BATCH_CAP rows unless the
 * partitions' stages would pass STAGE_BYTES: every map task holds a stage per
 * partition, so wide rows over many partitions (K-means' 21 columns over 8
 * partitions: 2.9 MB a task) shrink the stages, never below STAGE_MIN_ROWS
 * (blocks of fewer rows cost more per row to push, encode and read).  The
 * stages are reserved execution memory (common/mem.h): they cannot spill, and
 * what they hold is not the spilling operators' to take.  The partition is
 * taken from the high half of the key hash, leaving the low bits (which hash
 * tables use for slots) independent of the partition.
 */
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/bloom.h"
#include "executor/hashing.h"
#include "executor/ops.h"

typedef struct WriteSpec {
    ShShuffle **shuffle; /* created by the first task, read by the next stage */
    int n_parts;
    int n_keys;
    int *keys;
    ExBloom *fill;   /* a partitioned join's build side: its keys' hashes go in, or NULL */
    ExBloom *filter; /* its probe side: rows whose hash it has not seen are dropped, or NULL */
} WriteSpec;

/* A probe writer tries its filter on this many rows, then stops asking it
 * when it dropped less than one row in BLOOM_MIN_DROP: the probes would cost
 * more than the few rows they spare the exchange. */
#define BLOOM_TRIAL_ROWS 16384
#define BLOOM_MIN_DROP 8

/* The most a map task's stages take together, unless that leaves fewer
 * than STAGE_MIN_ROWS rows a partition. */
#define STAGE_BYTES ((int64_t)1 << 20)
#define STAGE_MIN_ROWS 256
#define STAGE_LIMIT_DIV 32
/* Rows a stage goes down to when the memory manager refuses the stages. */
#define STAGE_FLOOR_ROWS 16

typedef struct WriteLocal {
    ShWriter *writer;
    CmBatch *bufs; /* n_parts, on `slab` */
    int n_bufs;
    int stage_rows; /* a partition's rows pushed as one block */
    char *slab;     /* the stages' values; owned */
    CmMemRes res;   /* the slab */
    uint64_t hashes[CM_BATCH_CAP];
    uint32_t *part_pos; /* n_parts x CM_BATCH_CAP: this batch's rows of each partition */
    int *part_n;        /* n_parts */
    bool filtering;     /* spec->filter is ready and still worth asking */
    int64_t checked, dropped;
    bool keep[CM_BATCH_CAP]; /* this batch's rows the filter lets through */
} WriteLocal;

static void write_local_fini(ExOp *op, void *local)
{
    WriteLocal *l = local;
    if (l == NULL) {
        return;
    }
    for (int i = 0; i < l->n_bufs; i++) {
        cm_batch_fini(&l->bufs[i]);
    }
    cm_free(l->bufs);
    cm_free(l->slab);
    cm_free(l->part_pos);
    cm_free(l->part_n);
    cm_mem_res_fini(&l->res);
    sh_writer_abort(l->writer); /* NULL once committed */
    cm_free(l);
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

/* Rows a partition's stage holds: STAGE_BYTES (at most a STAGE_LIMIT_DIV-th
 * of memory_limit) over the partitions, within [STAGE_MIN_ROWS, CM_BATCH_CAP]. */
static int stage_rows_for(const ExOp *op, int n_parts)
{
    int64_t row = (int64_t)cm_batch_slab_bytes(op->n_cols, op->types, 1);
    int64_t budget = cm_mem_limit() / STAGE_LIMIT_DIV;
    budget = budget < STAGE_BYTES ? budget : STAGE_BYTES;
    int64_t rows = budget / ((row > 0 ? row : 1) * n_parts);
    int floor = min_int(STAGE_MIN_ROWS, CM_BATCH_CAP);
    return rows < floor ? floor : (int)(rows < CM_BATCH_CAP ? rows : CM_BATCH_CAP);
}

/* Reserves and allocates the stages.  They cannot spill, but they can be
 * smaller: while the memory manager refuses them as it refuses spillable
 * growth (leaving room for others, within a fair share), they shrink; at
 * STAGE_FLOOR_ROWS they are reserved as memory that cannot spill, whose
 * refusal is the error. */
static CmStatus stages_init(ExOp *op, const WriteSpec *s, WriteLocal *l, CmErr *err)
{
    int rows = stage_rows_for(op, s->n_parts);
    for (;;) {
        int64_t bytes = (int64_t)cm_batch_slab_bytes(op->n_cols, op->types, rows) * s->n_parts;
        int floor = min_int(STAGE_FLOOR_ROWS, CM_BATCH_CAP);
        if (rows > floor && !cm_mem_grow(&l->res, bytes)) {
            rows = rows / 2 > floor ? rows / 2 : floor;
            continue;
        }
        if (rows <= floor && cm_mem_need(&l->res, bytes, err) != CM_OK) {
            return err->code;
        }
        l->stage_rows = rows;
        l->slab = cm_malloc((size_t)(bytes > 0 ? bytes : 1));
        if (l->slab == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory staging shuffle rows");
        }
        size_t one = cm_batch_slab_bytes(op->n_cols, op->types, rows);
        for (; l->n_bufs < s->n_parts; l->n_bufs++) {
            if (cm_batch_init_in(&l->bufs[l->n_bufs], op->n_cols, op->types,
                                 l->slab + one * (size_t)l->n_bufs, rows, err) != CM_OK) {
                return err->code;
            }
        }
        return CM_OK;
    }
}

static void *write_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    WriteSpec *s = op->spec;
    cm_mutex_lock(&op->lock);
    if (*s->shuffle == NULL) {
        *s->shuffle = sh_shuffle_new(task->query->shuffle_store, task->n_tasks, s->n_parts,
                                     op->n_cols, op->types, err);
    }
    cm_mutex_unlock(&op->lock);
    if (*s->shuffle == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    WriteLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    ex_op_res_init(op, &l->res, "shuffle write stages");
    l->res.fixed = true;
    l->bufs = cm_calloc((size_t)s->n_parts, sizeof(CmBatch));
    l->part_pos = cm_malloc(sizeof(uint32_t) * (size_t)s->n_parts * CM_BATCH_CAP);
    l->part_n = cm_calloc((size_t)s->n_parts, sizeof(int));
    if (l->bufs == NULL || l->part_pos == NULL || l->part_n == NULL) {
        write_local_fini(op, l);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (stages_init(op, s, l, err) != CM_OK) {
        write_local_fini(op, l);
        return NULL;
    }
    l->filtering = s->filter != NULL && s->filter->words != NULL && atomic_load(&s->filter->ready);
    /* A re-run of this map commits under a new attempt, replacing the old. */
    l->writer = sh_writer_open(*s->shuffle, task->task_idx,
                               sh_shuffle_next_attempt(*s->shuffle, task->task_idx), err);
    if (l->writer == NULL) {
        write_local_fini(op, l);
        return NULL;
    }
    return l;
}

/* Rows are sorted into per-partition position lists first, then appended to
 * each partition's buffer a column at a time. */
static CmStatus write_sink(ExOp *op, void *local, const CmBatch *in, CmErr *err)
{
    WriteSpec *s = op->spec;
    WriteLocal *l = local;
    memset(l->part_n, 0, sizeof(int) * (size_t)s->n_parts);
    if (s->n_parts == 1) {
        for (int i = 0; i < in->n_rows; i++) {
            l->part_pos[i] = cm_batch_pos(in, i);
        }
        l->part_n[0] = in->n_rows;
    } else {
        ex_hash_keys(in, s->n_keys, s->keys, l->hashes);
        if (s->fill != NULL && s->fill->words != NULL) {
            ex_bloom_insert(s->fill, l->hashes, in->n_rows);
        }
        const bool *keep = NULL;
        if (l->filtering) {
            l->dropped += in->n_rows - ex_bloom_probe(s->filter, l->hashes, in->n_rows, l->keep);
            l->checked += in->n_rows;
            keep = l->keep;
            l->filtering =
                l->checked < BLOOM_TRIAL_ROWS || l->dropped * BLOOM_MIN_DROP >= l->checked;
        }
        for (int i = 0; i < in->n_rows; i++) {
            if (keep != NULL && !keep[i]) {
                continue;
            }
            int part = (int)((l->hashes[i] >> 32) % (uint64_t)s->n_parts);
            l->part_pos[(size_t)part * CM_BATCH_CAP + (size_t)l->part_n[part]++] =
                cm_batch_pos(in, i);
        }
    }
    for (int part = 0; part < s->n_parts; part++) {
        const uint32_t *pos = &l->part_pos[(size_t)part * CM_BATCH_CAP];
        CmBatch *buf = &l->bufs[part];
        for (int done = 0; done < l->part_n[part];) {
            int n = l->stage_rows - buf->n_rows;
            n = n < l->part_n[part] - done ? n : l->part_n[part] - done;
            if (cm_batch_append_rows(buf, in, pos + done, n, true, err) != CM_OK) {
                return err->code;
            }
            done += n;
            if (buf->n_rows == l->stage_rows) {
                if (sh_writer_push(l->writer, part, buf, err) != CM_OK) {
                    return err->code;
                }
                cm_batch_reset(buf);
            }
        }
    }
    return CM_OK;
}

static CmStatus write_combine(ExOp *op, void *local, CmErr *err)
{
    WriteLocal *l = local;
    const WriteSpec *s = op->spec;
    if (s->filter != NULL && l->checked > 0) {
        atomic_fetch_add(&s->filter->checked, l->checked);
        atomic_fetch_add(&s->filter->dropped, l->dropped);
        l->checked = l->dropped = 0;
    }
    for (int p = 0; p < l->n_bufs; p++) {
        if (l->bufs[p].n_rows > 0 && sh_writer_push(l->writer, p, &l->bufs[p], err) != CM_OK) {
            return err->code;
        }
    }
    ShWriter *w = l->writer;
    l->writer = NULL;
    return sh_writer_close(w, err);
}

static void write_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const WriteSpec *s = op->spec;
    size_t n = (size_t)snprintf(buf, cap, "%s, %d partition%s", s->n_keys ? "hash" : "gather",
                                s->n_parts, s->n_parts == 1 ? "" : "s");
    for (int k = 0; k < s->n_keys && n + 8 < cap; k++) {
        n += (size_t)snprintf(buf + n, cap - n, "%s", k ? ", " : " on ");
        n += ex_col_to_string(in_names, s->keys[k], buf + n, cap - n);
    }
    if (s->fill != NULL && n < cap) {
        n += (size_t)snprintf(buf + n, cap - n, ", keys to a bloom filter");
    }
    if (s->filter != NULL && n < cap) {
        snprintf(buf + n, cap - n, ", bloom filter from Stage %d", s->filter->from_stage);
    }
}

/* A build side's writer owns its filter's words from its stage's start to
 * the end of the plan (the sink's global state outlives its stage). */
static CmStatus write_global_init(ExOp *op, ExQuery *q, CmErr *err)
{
    (void)q;
    (void)err;
    WriteSpec *s = op->spec;
    if (s->fill != NULL) {
        ex_op_res_init(op, &s->fill->res, "bloom filter");
        s->fill->res.fixed = true;
        ex_bloom_alloc(s->fill); /* refused: no filter */
        op->global = s->fill;
    }
    return CM_OK;
}

static void write_global_fini(ExOp *op)
{
    ex_bloom_free(op->global);
}

/* Every task has inserted its keys: the probe side may ask. */
static CmStatus write_finalize(ExOp *op, ExQuery *q, CmErr *err)
{
    (void)q;
    (void)err;
    const WriteSpec *s = op->spec;
    if (s->fill != NULL) {
        atomic_store(&s->fill->ready, true);
    }
    return CM_OK;
}

static const ExOpVt WRITE_VT = {
    .name = "SHUFFLE_WRITE",
    .global_init = write_global_init,
    .global_fini = write_global_fini,
    .finalize = write_finalize,
    .local_init = write_local_init,
    .local_fini = write_local_fini,
    .sink = write_sink,
    .combine = write_combine,
    .explain = write_explain,
    .row_independent = true,
};

ExOp *ex_shuffle_write_new(CmArena *a, ShShuffle **shuffle, int n_parts, int n_keys,
                           const int *keys, int n_cols, const CmType *types, CmErr *err)
{
    WriteSpec *s = cm_arena_zalloc(a, sizeof *s);
    int *k = cm_arena_alloc(a, sizeof(int) * (size_t)(n_keys ? n_keys : 1));
    ExOp *op = s && k ? ex_op_new(a, &WRITE_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    if (n_keys > 0) {
        memcpy(k, keys, sizeof(int) * (size_t)n_keys);
    }
    s->shuffle = shuffle;
    s->n_parts = n_parts;
    s->n_keys = n_keys;
    s->keys = k;
    return op;
}

void ex_shuffle_write_bloom(ExOp *build, ExOp *probe, ExBloom *bloom)
{
    ((WriteSpec *)build->spec)->fill = bloom;
    ((WriteSpec *)probe->spec)->filter = bloom;
}

bool ex_shuffle_write_bloom_stats(const ExOp *op, long long *checked, long long *dropped)
{
    const ExBloom *bf = ex_op_is_shuffle_write(op) ? ((const WriteSpec *)op->spec)->filter : NULL;
    if (bf == NULL) {
        return false;
    }
    *checked = atomic_load(&bf->checked);
    *dropped = atomic_load(&bf->dropped);
    return true;
}

/* ---- read ------------------------------------------------------------------ */

typedef struct ReadSpec {
    int n_inputs;
    ShShuffle ***inputs;        /* shuffles read one after the other (UNION ALL) */
    const ExReadRanges *ranges; /* coalesced partition ranges, or NULL */
    bool is_map_order; /* read map by map (task order of the writing stage), not as stored */
} ReadSpec;

typedef struct ReadLocal {
    int task_idx;
    int input;       /* the shuffle being read */
    int map, n_maps; /* is_map_order: the map being read, of the input's n_maps */
    ShReader *reader;
    CmBatch out;
} ReadLocal;

static int read_n_tasks(ExOp *op, ExQuery *q)
{
    const ReadSpec *s = op->spec;
    if (s->ranges != NULL) {
        return s->ranges->n_tasks;
    }
    ShShuffle *sh = *s->inputs[0];
    return sh ? sh_shuffle_n_parts(sh) : 1;
}

static void read_local_fini(ExOp *op, void *local)
{
    ReadLocal *l = local;
    if (l != NULL) {
        if (l->reader != NULL) {
            sh_reader_close(l->reader);
        }
        cm_batch_fini(&l->out);
        cm_free(l);
    }
}

static void *read_local_init(ExOp *op, const ExTask *task, CmErr *err)
{
    ReadLocal *l = cm_calloc(1, sizeof *l);
    if (l == NULL || cm_batch_init(&l->out, op->n_cols, op->types, err) != CM_OK) {
        cm_free(l);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    l->task_idx = task->task_idx;
    l->input = -1;
    return l;
}

/* Moves to the next input that has a shuffle (is_map_order: to its next map
 * first); false when none is left. */
static bool next_input(const ReadSpec *s, ReadLocal *l, CmErr *err)
{
    if (l->reader != NULL) {
        sh_reader_close(l->reader);
        l->reader = NULL;
    }
    const ExTaskRead *t = s->ranges ? &s->ranges->task[l->task_idx] : NULL;
    int p0 = t ? t->p0 : l->task_idx;
    int p1 = t ? t->p1 : l->task_idx + 1;
    bool is_map_order = s->is_map_order && !(t && t->m1 >= 0);
    if (is_map_order && l->input >= 0 && ++l->map < l->n_maps) {
        l->reader = sh_reader_open_in_order(*s->inputs[l->input], p0, p1, l->map, l->map + 1, err);
        return l->reader != NULL;
    }
    while (++l->input < s->n_inputs) {
        ShShuffle *sh = *s->inputs[l->input];
        if (sh != NULL && p0 < sh_shuffle_n_parts(sh)) {
            int m0 = t && t->m1 >= 0 ? t->m0 : 0;
            int m1 = t && t->m1 >= 0 ? t->m1 : sh_shuffle_n_maps(sh);
            if (is_map_order) {
                l->map = m0;
                l->n_maps = m1;
                if (m0 >= m1) {
                    continue;
                }
                m1 = m0 + 1;
            }
            l->reader = is_map_order ? sh_reader_open_in_order(sh, p0, p1, m0, m1, err)
                                     : sh_reader_open(sh, p0, p1, m0, m1, err);
            return l->reader != NULL;
        }
    }
    return false;
}

static ExOpResult read_pull(ExOp *op, void *local, const CmBatch **out, CmErr *err)
{
    const ReadSpec *s = op->spec;
    ReadLocal *l = local;
    for (;;) {
        if (l->reader == NULL && !next_input(s, l, err)) {
            return EX_DONE;
        }
        bool eof = true;
        if (sh_reader_next(l->reader, &l->out, &eof, err) != CM_OK) {
            return EX_DONE;
        }
        if (!eof) {
            *out = &l->out;
            return EX_HAVE_MORE;
        }
        sh_reader_close(l->reader);
        l->reader = NULL;
    }
}

static void read_explain(const ExOp *op, const char *const *in_names, char *buf, size_t cap)
{
    const ReadSpec *s = op->spec;
    if (s->n_inputs > 1) {
        snprintf(buf, cap, "%d inputs", s->n_inputs);
    } else {
        buf[0] = '\0';
    }
}

static const ExOpVt READ_VT = {
    .name = "SHUFFLE_READ",
    .n_tasks = read_n_tasks,
    .local_init = read_local_init,
    .local_fini = read_local_fini,
    .pull = read_pull,
    .explain = read_explain,
};

ExOp *ex_shuffle_read_multi_new(CmArena *a, int n_inputs, ShShuffle ***inputs, int n_cols,
                                const CmType *types, CmErr *err)
{
    ReadSpec *s = cm_arena_zalloc(a, sizeof *s);
    ShShuffle ***in = cm_arena_alloc(a, sizeof(ShShuffle **) * (size_t)(n_inputs ? n_inputs : 1));
    ExOp *op = s && in ? ex_op_new(a, &READ_VT, s, n_cols, types) : NULL;
    if (op == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    memcpy(in, inputs, sizeof(ShShuffle **) * (size_t)n_inputs);
    s->n_inputs = n_inputs;
    s->inputs = in;
    return op;
}

ExOp *ex_shuffle_read_new(CmArena *a, ShShuffle **shuffle, int n_cols, const CmType *types,
                          CmErr *err)
{
    return ex_shuffle_read_multi_new(a, 1, &shuffle, n_cols, types, err);
}

void ex_shuffle_read_set_map_order(ExOp *op)
{
    ((ReadSpec *)op->spec)->is_map_order = true;
}

/* ---- adaptive hooks ---------------------------------------------------------- */

bool ex_op_is_shuffle_read(const ExOp *op)
{
    return op->vt == &READ_VT;
}

bool ex_op_is_shuffle_write(const ExOp *op)
{
    return op->vt == &WRITE_VT;
}

bool ex_op_row_independent(const ExOp *op)
{
    /* The flag covers kinds that qualify whatever their spec.  The aggregate
     * and the join depend on theirs: a final aggregate needs all rows of a
     * group, a partitioned join all rows of a key, and a FULL join would emit
     * its unmatched build rows once per task. */
    if (op->vt->row_independent || ex_hash_agg_is_partial(op)) {
        return true;
    }
    if (ex_op_is_hash_join(op)) {
        const ExJoinSpec *js = ex_hash_join_spec(op);
        return !js->partitioned && js->type != EX_JOIN_FULL;
    }
    return false;
}

void ex_shuffle_read_set_ranges(ExOp *op, const ExReadRanges *ranges)
{
    ((ReadSpec *)op->spec)->ranges = ranges;
}

ShShuffle ***ex_shuffle_read_inputs(const ExOp *op, int *n_inputs)
{
    const ReadSpec *s = op->spec;
    *n_inputs = s->n_inputs;
    return s->inputs;
}

ShShuffle **ex_shuffle_write_slot(const ExOp *op)
{
    return ((const WriteSpec *)op->spec)->shuffle;
}
