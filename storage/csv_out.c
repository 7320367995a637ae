/*
 * csv_out.c - the CSV writer of COPY ... TO (csv_out.h).
 *
 * A batch of n rows is cut into S slices of consecutive rows; slice i is
 * formatted into text[cur][i].  The formatting of batch k and the writing of
 * batch k-1's texts (text[!cur][0..S) in order) are the tasks of one
 * cm_pool_run on the writer's pool, the write first, so the stream sees every
 * byte in row order and at most one batch's text waits.  Invariant: between
 * calls, text[!cur][0..n_pending) holds the text not yet written, in order.
 * A buffer grows only as far as the reservation w->res is granted; a slice
 * refused marks the batch, which is then written a row at a time through an
 * unreserved buffer the size of one row (a batch, like any operator's, is
 * outside the limit), once the earlier text is out.
 */
#include "storage/csv_out.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/mem.h"
#include "common/thread.h"
#include "common/value.h"

/* Slices per thread: with the write as one more task, several per thread
 * keep the threads busy to the end of a batch. */
#define SLICES_PER_THREAD 2
/* Below this many rows a batch is one slice: waking threads costs more. */
#define MIN_SLICE_ROWS 64

typedef struct Text {
    char *data; /* owned */
    size_t len, cap;
    bool is_refused; /* the reservation for more room was refused */
    bool is_oom;     /* the allocation failed */
} Text;

struct StCsvOut {
    FILE *f; /* borrowed */
    StCsvOutOptions opt;
    size_t null_len;
    CmPool *pool;  /* owned; NULL with one thread */
    int n_slices;  /* slices of a full batch */
    Text *text[2]; /* owned: [set][slice] */
    int cur;       /* the set the next batch is formatted into */
    int n_pending; /* text[!cur][0..n_pending) is still to be written */
    Text row;      /* the fallback's one-row buffer, not reserved */
    CmMemRes res;  /* the bytes of text[][] */
    /* Positioned mode (a regular file, several threads; see in_place): each
     * slice's task writes its own text with pwrite at `end`, taken in slice
     * order by passing `turn`. */
    bool looked;         /* whether in_place has decided */
    int fd;              /* >= 0 in positioned mode */
    int64_t end;         /* the file offset after the text placed so far */
    atomic_int turn;     /* the slice whose text is placed next */
    int refused_from;    /* the first slice refused room in this batch, or -1 */
    atomic_int io_errno; /* the first failed pwrite's (or seek's) errno, or 0 */
};

/* One batch's work for the pool. */
typedef struct Job {
    StCsvOut *w;
    const CmBatch *b;
    int n_slices;
    int n_writes; /* 1 when text[!cur] is written first */
} Job;

/* Room for `need` more bytes; false (with a flag) when refused or out of memory. */
static bool reserve(Text *t, size_t need, CmMemRes *res)
{
    if (t->len + need <= t->cap) {
        return true;
    }
    size_t cap = t->cap ? t->cap * 2 : 64 * 1024;
    while (cap < t->len + need) {
        cap *= 2;
    }
    if (res != NULL && !cm_mem_grow(res, (int64_t)(cap - t->cap))) {
        t->is_refused = true;
        return false;
    }
    char *data = cm_realloc(t->data, cap);
    if (data == NULL) {
        if (res != NULL) {
            cm_mem_shrink(res, (int64_t)(cap - t->cap));
        }
        t->is_oom = true;
        return false;
    }
    t->data = data;
    t->cap = cap;
    return true;
}

/* Whether the 8 bytes of x hold a zero byte (exact: a borrow into a byte only
 * comes from a zero byte below it, which is then reported anyway). */
static inline uint64_t zero_byte(uint64_t x)
{
    return (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
}

/* Whether s[0..n) holds the delimiter, the quote, CR or LF: eight bytes at a
 * time (the compiler does not vectorize a byte loop at -O2), then the tail.
 * Four memchr calls a field took a fifth of the CPU of TeraSort's COPY TO of
 * 2.5M 100-byte rows, and the byte loop a sixth. */
static bool has_special(char delim, char quote, const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t d = ones * (unsigned char)delim, q = ones * (unsigned char)quote,
             lf = ones * (unsigned char)'\n', cr = ones * (unsigned char)'\r';
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (zero_byte(x ^ d) | zero_byte(x ^ q) | zero_byte(x ^ lf) | zero_byte(x ^ cr)) {
            return true;
        }
    }
    unsigned char any = 0;
    for (; i < n; i++) {
        char c = s[i];
        any |= (unsigned char)((c == delim) | (c == quote) | (c == '\n') | (c == '\r'));
    }
    return any != 0;
}

/* Appends s[0..n), quoted when it holds the delimiter, a quote or a line
 * break, or would read back as NULL. */
static bool put_text(const StCsvOut *w, Text *t, const char *s, size_t n, CmMemRes *res)
{
    char q = w->opt.quote;
    bool quote = q != 0 && ((n == w->null_len && memcmp(s, w->opt.null_str, n) == 0) ||
                            has_special(w->opt.delimiter, q, s, n));
    if (!quote) {
        if (!reserve(t, n, res)) {
            return false;
        }
        memcpy(t->data + t->len, s, n);
        t->len += n;
        return true;
    }
    if (!reserve(t, 2 * n + 2, res)) {
        return false;
    }
    char *out = t->data + t->len;
    *out++ = q;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == q) {
            *out++ = q;
        }
        *out++ = s[i];
    }
    *out++ = q;
    t->len = (size_t)(out - t->data);
    return true;
}

/* Appends the NULL text, never quoted. */
static bool put_null(const StCsvOut *w, Text *t, CmMemRes *res)
{
    if (!reserve(t, w->null_len, res)) {
        return false;
    }
    memcpy(t->data + t->len, w->opt.null_str, w->null_len);
    t->len += w->null_len;
    return true;
}

/* Appends the value of v at position p in CSV form. */
static bool put_field(const StCsvOut *w, Text *t, const CmVec *v, uint32_t p, CmMemRes *res)
{
    if (v->type.id == CM_T_VARCHAR) {
        uint32_t q = v->kind == CM_VEC_CONST ? 0 : p;
        const CmStr *s = &((const CmStr *)v->data)[q];
        return cm_vec_is_null(v, q) ? put_null(w, t, res)
                                    : put_text(w, t, cm_str_data(s), s->len, res);
    }
    CmValue val;
    cm_vec_get_value(v, p, &val);
    if (val.is_null) {
        return put_null(w, t, res);
    }
    if (val.type.id == CM_T_LIST) {
        /* A list's text has no bound: formatted apart, then quoted as a string. */
        size_t len = cm_fmt_list(&val.l, cm_type_elem(val.type), NULL, 0);
        char *text = cm_malloc(len + 1);
        if (text == NULL) {
            t->is_oom = true;
            return false;
        }
        cm_fmt_list(&val.l, cm_type_elem(val.type), text, len + 1);
        bool ok = put_text(w, t, text, len, res);
        cm_free(text);
        return ok;
    }
    char buf[CM_FMT_CAP];
    size_t n;
    const char *s = cm_fmt_value(&val, buf, &n);
    return put_text(w, t, s, n, res);
}

/* Appends rows [from, to) of b as records; false when room was refused. */
static bool put_rows(const StCsvOut *w, Text *t, const CmBatch *b, int from, int to, CmMemRes *res)
{
    for (int r = from; r < to; r++) {
        uint32_t p = cm_batch_pos(b, r);
        /* A sorted batch points at strings all over its inputs' heaps: each
         * first read misses the cache.  Ask for a later row's now. */
        if (r + 8 < to) {
            uint32_t ahead = cm_batch_pos(b, r + 8);
            for (int c = 0; c < b->n_cols; c++) {
                const CmVec *v = &b->cols[c];
                if (v->type.id == CM_T_VARCHAR && v->kind != CM_VEC_CONST) {
                    __builtin_prefetch(cm_str_data(&((const CmStr *)v->data)[ahead]));
                }
            }
        }
        for (int c = 0; c < b->n_cols; c++) {
            if (c > 0) {
                if (!reserve(t, 1, res)) {
                    return false;
                }
                t->data[t->len++] = w->opt.delimiter;
            }
            if (!put_field(w, t, &b->cols[c], p, res)) {
                return false;
            }
        }
        if (!reserve(t, 1, res)) {
            return false;
        }
        t->data[t->len++] = '\n';
    }
    return true;
}

/* Keeps e as the writer's error unless one came first. */
static void note_errno(StCsvOut *w, int e)
{
    int none = 0;
    atomic_compare_exchange_strong(&w->io_errno, &none, e);
}

/* Writes t->len bytes of t at file offset `at` (positioned mode). */
static void place(StCsvOut *w, const Text *t, int64_t at)
{
    size_t done = 0;
    while (done < t->len) {
        ssize_t n = pwrite(w->fd, t->data + done, t->len - done, (off_t)(at + (int64_t)done));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            note_errno(w, n < 0 ? errno : EIO);
            return;
        }
        done += (size_t)n;
    }
}

static void write_text(StCsvOut *w, Text *t)
{
    if (t->len > 0 && w->fd >= 0) {
        place(w, t, w->end);
        w->end += (int64_t)t->len;
    } else if (t->len > 0) {
        fwrite(t->data, 1, t->len, w->f);
    }
    t->len = 0;
}

/* Positioned mode's slice task: formats the slice, waits for its turn (the
 * tasks before it hold lower slices, as the pool hands tasks out in order, so
 * the wait ends), and writes its text from the thread that made it, while
 * the next slices are formatted.  Through the stream, one thread wrote what
 * the others had just formatted: every byte crossed between cores in the
 * kernel's copy, which took a quarter of TeraSort's COPY TO (1 GB of text at
 * 0.7 GB/s).  The turn passes after the write: two writes at once to one
 * file only spin on its inode lock.  A slice refused room writes nothing, nor
 * do the slices after it; st_csv_out_write writes their rows a row at a time. */
static void format_and_place(StCsvOut *w, const Job *job, int slice)
{
    int n = job->b->n_rows;
    Text *t = &w->text[0][slice];
    t->len = 0;
    bool ok = put_rows(w, t, job->b, (int)((int64_t)n * slice / job->n_slices),
                       (int)((int64_t)n * (slice + 1) / job->n_slices), &w->res);
    while (atomic_load_explicit(&w->turn, memory_order_acquire) != slice) {
        sched_yield();
    }
    if (!ok && w->refused_from < 0) {
        w->refused_from = slice;
    }
    if (w->refused_from < 0) {
        write_text(w, t);
    }
    t->len = 0;
    atomic_store_explicit(&w->turn, slice + 1, memory_order_release);
}

static void run_job(void *arg, int task_idx, int worker_id)
{
    Job *job = arg;
    StCsvOut *w = job->w;
    if (w->fd >= 0) {
        format_and_place(w, job, task_idx);
        return;
    }
    if (task_idx < job->n_writes) {
        for (int i = 0; i < w->n_pending; i++) {
            write_text(w, &w->text[!w->cur][i]);
        }
        return;
    }
    int slice = task_idx - job->n_writes, n = job->b->n_rows;
    Text *t = &w->text[w->cur][slice];
    t->len = 0;
    put_rows(w, t, job->b, (int)((int64_t)n * slice / job->n_slices),
             (int)((int64_t)n * (slice + 1) / job->n_slices), &w->res);
}

StCsvOut *st_csv_out_new(FILE *f, const StCsvOutOptions *opt, int n_threads, CmErr *err)
{
    StCsvOut *w = cm_calloc(1, sizeof *w);
    if (w == NULL) {
        cm_err_set(err, CM_OOM, -1, "out of memory");
        return NULL;
    }
    w->f = f;
    w->fd = -1;
    w->opt = *opt;
    w->null_len = strlen(opt->null_str);
    cm_mem_res_init(&w->res, CM_MEM_EXECUTION, "COPY TO text", NULL);
    w->n_slices = n_threads > 1 ? SLICES_PER_THREAD * n_threads : 1;
    w->text[0] = cm_calloc((size_t)w->n_slices, sizeof(Text));
    w->text[1] = cm_calloc((size_t)w->n_slices, sizeof(Text));
    if (w->text[0] == NULL || w->text[1] == NULL ||
        (n_threads > 1 && (w->pool = cm_pool_new(n_threads)) == NULL)) {
        st_csv_out_free(w);
        cm_err_set(err, CM_OOM, -1, "out of memory starting the COPY writer");
        return NULL;
    }
    return w;
}

/* Writes rows [from, n) of b a row at a time, after the earlier text: a
 * slice was refused room. */
static CmStatus write_rows(StCsvOut *w, const CmBatch *b, int from, CmErr *err)
{
    for (int r = from; r < b->n_rows; r++) {
        w->row.len = 0;
        if (!put_rows(w, &w->row, b, r, r + 1, NULL)) {
            return cm_err_set(err, CM_OOM, -1, "out of memory writing a COPY row");
        }
        write_text(w, &w->row);
    }
    return CM_OK;
}

/* Decides, at the first batch (after the caller's header), whether the
 * writer places its text itself: into a regular file, with several threads.
 * The stream is flushed and its position taken; st_csv_out_finish moves the
 * stream to the end again.  A pipe or device keeps the stream. */
static void in_place(StCsvOut *w)
{
    w->looked = true;
    struct stat st;
    int fd = fileno(w->f);
    if (w->pool == NULL || fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        fflush(w->f) != 0) {
        return;
    }
    off_t at = ftello(w->f);
    if (at >= 0) {
        w->fd = fd;
        w->end = (int64_t)at;
    }
}

/* The error of a failed pwrite (or of the final seek), if any. */
static CmStatus io_error(StCsvOut *w, CmErr *err)
{
    int e = atomic_load(&w->io_errno);
    return e == 0 ? CM_OK
                  : cm_err_set(err, CM_IO, -1, "cannot write '%s': %s",
                               w->opt.name != NULL ? w->opt.name : "the COPY output", strerror(e));
}

/* Positioned mode's batch: each slice formatted and placed by its own task. */
static CmStatus place_batch(StCsvOut *w, const CmBatch *b, int n_slices, CmErr *err)
{
    Job job = {.w = w, .b = b, .n_slices = n_slices};
    atomic_store(&w->turn, 0);
    w->refused_from = -1;
    cm_pool_run(w->pool, n_slices, run_job, &job);
    for (int i = 0; i < n_slices; i++) {
        Text *t = &w->text[0][i];
        t->is_refused = false;
        if (t->is_oom) {
            t->is_oom = false;
            return cm_err_set(err, CM_OOM, -1, "out of memory writing COPY text");
        }
    }
    if (w->refused_from >= 0 &&
        write_rows(w, b, (int)((int64_t)b->n_rows * w->refused_from / n_slices), err) != CM_OK) {
        return err->code;
    }
    return io_error(w, err);
}

CmStatus st_csv_out_write(StCsvOut *w, const CmBatch *b, CmErr *err)
{
    int n_slices = b->n_rows / MIN_SLICE_ROWS;
    n_slices = n_slices < 1 ? 1 : n_slices > w->n_slices ? w->n_slices : n_slices;
    if (!w->looked) {
        in_place(w);
    }
    if (w->fd >= 0) {
        return place_batch(w, b, n_slices, err);
    }
    Job job = {.w = w, .b = b, .n_slices = n_slices, .n_writes = w->n_pending > 0};
    if (w->pool != NULL) {
        cm_pool_run(w->pool, job.n_writes + n_slices, run_job, &job);
    } else {
        for (int t = 0; t < job.n_writes + n_slices; t++) {
            run_job(&job, t, 0);
        }
    }
    w->n_pending = 0;
    bool is_refused = false;
    for (int i = 0; i < n_slices; i++) {
        Text *t = &w->text[w->cur][i];
        if (t->is_oom) {
            t->is_oom = false;
            return cm_err_set(err, CM_OOM, -1, "out of memory writing COPY text");
        }
        is_refused |= t->is_refused;
        t->is_refused = false;
    }
    if (is_refused) {
        return write_rows(w, b, 0, err);
    }
    w->n_pending = n_slices;
    w->cur = !w->cur;
    return CM_OK;
}

CmStatus st_csv_out_finish(StCsvOut *w, CmErr *err)
{
    for (int i = 0; i < w->n_pending; i++) {
        write_text(w, &w->text[!w->cur][i]);
    }
    w->n_pending = 0;
    if (w->fd >= 0 && fseeko(w->f, (off_t)w->end, SEEK_SET) != 0) {
        note_errno(w, errno);
    }
    return err->code == CM_OK ? io_error(w, err) : err->code;
}

void st_csv_out_free(StCsvOut *w)
{
    if (w == NULL) {
        return;
    }
    cm_pool_free(w->pool);
    for (int s = 0; s < 2; s++) {
        for (int i = 0; w->text[s] != NULL && i < w->n_slices; i++) {
            cm_free(w->text[s][i].data);
        }
        cm_free(w->text[s]);
    }
    cm_free(w->row.data);
    cm_mem_res_fini(&w->res);
    cm_free(w);
}
