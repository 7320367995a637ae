/*
 * stream.c - streaming results: a query's rows handed to the client a chunk
 * at a time while the query runs.
 *
 * The statement runs on a producer thread of its own, holding the database
 * lock.  Its SELECT's result sink, instead of keeping rows, calls on_batch(),
 * which copies each batch into a chunk (a one-batch result that owns its
 * strings) and queues it.  The queue holds at most QUEUE_CAP chunks: when it
 * is full the query's head task waits in on_batch (the result sink keeps the
 * rows of the tasks after it, spilling them under memory pressure), so memory
 * stays bounded by a few chunks and the tasks in flight, whatever the size of
 * the result.  Freeing the stream early makes on_batch fail with CM_CANCELLED,
 * which stops the query; so does sluice_interrupt, which on_batch polls while
 * it waits.  Invariant: every chunk is fetched, in order, or freed with the
 * stream; the producer thread is joined before the stream is freed.
 */
#include <stdio.h>
#include <string.h>

#include "api/api_int.h"
#include "common/alloc.h"

#define QUEUE_CAP 4 /* chunks made and not yet fetched */
#define POLL_MS 20  /* how often a waiting query looks at the interrupt flag */

struct SluiceStream {
    SluiceDb *db; /* borrowed */
    char *sql;    /* owned copy: errors point into it */
    size_t len;
    const PlExecOpts *opts; /* borrowed until the statement is bound (is_started or is_done) */
    CmThread producer;
    CmMutex lock;
    CmCond cond; /* signalled on every change below */
    /* guarded by lock */
    PlResult *queue[QUEUE_CAP]; /* ring of chunks made, not fetched; owned */
    int head, n_queued;
    bool is_started;     /* the SELECT's columns are known */
    bool is_done;        /* the producer has finished (joined by the free) */
    bool is_closing;     /* the client freed the stream: stop the query */
    bool is_final_taken; /* a non-SELECT's result or the error was handed over */
    CmErr err;           /* the statement's error once is_done */
    PlResult *final;     /* a statement without a stream: its whole result, or NULL */
    /* set once by on_start, read-only after */
    int n_cols;
    char **names;  /* owned */
    CmType *types; /* owned */
};

static CmStatus on_start(void *ctx, int n_cols, const char *const *names, const CmType *types,
                         CmErr *err)
{
    SluiceStream *s = ctx;
    s->names = cm_calloc((size_t)n_cols + 1, sizeof(char *));
    s->types = cm_calloc((size_t)n_cols + 1, sizeof(CmType));
    if (s->names == NULL || s->types == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    for (int c = 0; c < n_cols; c++) {
        if ((s->names[c] = cm_strdup(names[c])) == NULL) {
            return cm_err_set(err, CM_OOM, -1, "out of memory");
        }
        s->types[c] = types[c];
        s->n_cols = c + 1;
    }
    cm_mutex_lock(&s->lock);
    s->is_started = true;
    cm_cond_broadcast(&s->cond);
    cm_mutex_unlock(&s->lock);
    return CM_OK;
}

/* A chunk holding copies of the active rows of b, with the stream's names. */
static PlResult *chunk_new(const SluiceStream *s, const CmBatch *b, CmErr *err)
{
    PlResult *r = cm_calloc(1, sizeof *r);
    if (r == NULL || (r->names = cm_calloc((size_t)s->n_cols + 1, sizeof(char *))) == NULL) {
        cm_free(r);
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    r->changes = -1;
    for (int c = 0; c < s->n_cols; c++) {
        r->names[c] = cm_strdup(s->names[c]);
        r->n_cols = c + 1;
        if (r->names[c] == NULL) {
            cm_err_set(err, CM_OOM, -1, "out of memory");
        }
    }
    if (err->code == CM_OK && (r->rows = ex_result_new(s->n_cols, s->types, err)) != NULL) {
        ex_result_append(r->rows, b, err);
    }
    if (err->code != CM_OK) {
        pl_result_free(r);
        return NULL;
    }
    return r;
}

/* The result sink's stream: queues a copy of b, waiting for room. */
static CmStatus on_batch(void *ctx, const CmBatch *b, CmErr *err)
{
    SluiceStream *s = ctx;
    if (b->n_rows == 0) {
        return CM_OK;
    }
    PlResult *chunk = chunk_new(s, b, err);
    if (chunk == NULL) {
        return err->code;
    }
    cm_mutex_lock(&s->lock);
    while (s->n_queued == QUEUE_CAP && !s->is_closing &&
           !pl_session_is_interrupted(s->db->session)) {
        cm_cond_timedwait(&s->cond, &s->lock, POLL_MS);
    }
    if (s->is_closing) {
        cm_err_set(err, CM_CANCELLED, -1, "the stream was freed");
    } else if (s->n_queued == QUEUE_CAP) {
        cm_err_set(err, CM_CANCELLED, -1, "interrupted");
    } else {
        s->queue[(s->head + s->n_queued) % QUEUE_CAP] = chunk;
        s->n_queued++;
        chunk = NULL;
        cm_cond_broadcast(&s->cond);
    }
    cm_mutex_unlock(&s->lock);
    pl_result_free(chunk);
    return err->code;
}

static void *produce(void *arg)
{
    SluiceStream *s = arg;
    CmErr e;
    cm_err_init(&e);
    PlExecOpts o = *s->opts;
    o.stream = on_batch;
    o.start = on_start;
    o.stream_ctx = s;
    size_t off = 0;
    PlResult *r = NULL;
    cm_mutex_lock(&s->db->shared->lock);
    pl_session_exec_opts(s->db->session, s->sql, s->len, &off, &o, &r, &e);
    cm_mutex_unlock(&s->db->shared->lock);
    cm_mutex_lock(&s->lock);
    s->err = e;
    if (s->is_started) {
        pl_result_free(r); /* its rows went by the stream */
    } else {
        s->final = r;
    }
    s->is_done = true;
    cm_cond_broadcast(&s->cond);
    cm_mutex_unlock(&s->lock);
    return NULL;
}

/* Ends the stream's use of its connection and frees it (the producer joined). */
static void stream_free(SluiceStream *s)
{
    for (int i = 0; i < s->n_queued; i++) {
        pl_result_free(s->queue[(s->head + i) % QUEUE_CAP]);
    }
    pl_result_free(s->final);
    for (int c = 0; s->names != NULL && c < s->n_cols; c++) {
        cm_free(s->names[c]);
    }
    cm_free(s->names);
    cm_free(s->types);
    cm_cond_fini(&s->cond);
    cm_mutex_fini(&s->lock);
    atomic_store(&s->db->is_streaming, false);
    cm_free(s->sql);
    cm_free(s);
}

int api_stream_start(SluiceDb *db, const char *sql, size_t len, const PlExecOpts *opts,
                     SluiceStream **out, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    *out = NULL;
    bool is_idle = false;
    if (!atomic_compare_exchange_strong(&db->is_streaming, &is_idle, true)) {
        return api_misuse(err);
    }
    SluiceStream *s = cm_calloc(1, sizeof *s);
    if (s == NULL || (s->sql = cm_malloc(len + 1)) == NULL) {
        cm_free(s);
        atomic_store(&db->is_streaming, false);
        cm_err_set(&e, CM_OOM, -1, "out of memory");
        api_to_error(&e, NULL, 0, err);
        return e.code;
    }
    memcpy(s->sql, sql, len);
    s->sql[len] = '\0';
    s->len = len;
    s->db = db;
    s->opts = opts;
    cm_mutex_init(&s->lock);
    cm_cond_init(&s->cond);
    if (!cm_thread_start(&s->producer, produce, s)) {
        stream_free(s);
        cm_err_set(&e, CM_OOM, -1, "could not start the stream's thread");
        api_to_error(&e, NULL, 0, err);
        return e.code;
    }
    /* Wait for the columns (or the end): the values are bound by then. */
    cm_mutex_lock(&s->lock);
    while (!s->is_started && !s->is_done) {
        cm_cond_wait(&s->cond, &s->lock);
    }
    /* once started, even a query that failed at once hands its error to fetch */
    bool is_failed = !s->is_started && s->err.code != CM_OK;
    s->opts = NULL;
    cm_mutex_unlock(&s->lock);
    if (is_failed) {
        cm_thread_join(&s->producer);
        api_to_error(&s->err, s->sql, s->len, err);
        int code = s->err.code;
        stream_free(s);
        return code;
    }
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
    *out = s;
    return 0;
}

int sluice_query_stream(SluiceDb *db, const char *sql, SluiceStream **out, SluiceError *err)
{
    CmErr e;
    cm_err_init(&e);
    int n_params = 0;
    size_t len = strlen(sql);
    if (api_check_one(sql, len, &n_params, &e) != CM_OK) {
        *out = NULL;
        api_to_error(&e, sql, len, err);
        return e.code;
    }
    PlExecOpts o = {0};
    return api_stream_start(db, sql, len, &o, out, err);
}

/* A non-SELECT's columns come from its whole result. */
static const PlResult *final_of(const SluiceStream *s)
{
    return !s->is_started && s->final != NULL && s->final->rows != NULL ? s->final : NULL;
}

int sluice_stream_column_count(const SluiceStream *s)
{
    const PlResult *f = final_of(s);
    return f != NULL ? f->n_cols : s->n_cols;
}

const char *sluice_stream_column_name(const SluiceStream *s, int col)
{
    const PlResult *f = final_of(s);
    return f != NULL ? f->names[col] : s->names[col];
}

SluiceType sluice_stream_column_type(const SluiceStream *s, int col)
{
    const PlResult *f = final_of(s);
    return api_type_of(f != NULL ? ex_result_type(f->rows, col) : s->types[col]);
}

/* What the stream hands over once the queue is drained and the producer is
 * done: a non-SELECT's whole result as one chunk, then its error or the end. */
static int fetch_final(SluiceStream *s, PlResult **chunk, SluiceError *err)
{
    if (s->is_final_taken) {
        return 0;
    }
    s->is_final_taken = true;
    if (s->err.code != CM_OK) {
        api_to_error(&s->err, s->sql, s->len, err);
        return s->err.code;
    }
    if (final_of(s) != NULL && ex_result_n_rows(s->final->rows) > 0) {
        *chunk = s->final;
        s->final = NULL;
    }
    return 0;
}

int sluice_fetch_chunk(SluiceStream *s, SluiceResult **out, SluiceError *err)
{
    *out = NULL;
    if (err != NULL) {
        memset(err, 0, sizeof *err);
    }
    PlResult *chunk = NULL;
    int rc = 0;
    cm_mutex_lock(&s->lock);
    while (s->n_queued == 0 && !s->is_done) {
        cm_cond_wait(&s->cond, &s->lock);
    }
    if (s->n_queued > 0) {
        chunk = s->queue[s->head];
        s->head = (s->head + 1) % QUEUE_CAP;
        s->n_queued--;
        cm_cond_broadcast(&s->cond);
    } else {
        rc = fetch_final(s, &chunk, err);
    }
    cm_mutex_unlock(&s->lock);
    if (chunk != NULL && (*out = api_result_wrap(chunk)) == NULL) {
        CmErr e;
        cm_err_init(&e);
        cm_err_set(&e, CM_OOM, -1, "out of memory");
        api_to_error(&e, NULL, 0, err);
        return e.code;
    }
    return rc;
}

void sluice_stream_free(SluiceStream *s)
{
    if (s == NULL) {
        return;
    }
    cm_mutex_lock(&s->lock);
    s->is_closing = true;
    cm_cond_broadcast(&s->cond);
    cm_mutex_unlock(&s->lock);
    cm_thread_join(&s->producer);
    stream_free(s);
}
