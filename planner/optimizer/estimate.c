/*
 * estimate.c - cardinality estimates from column statistics (estimate.h).
 *
 * Every estimate is computed bottom-up on demand: a node's rows from its
 * children's rows and the estimates of the columns its conditions and keys
 * read, a column's estimate from the node below it that produces it.  Row
 * estimates are remembered by node address, so a plan is walked about once
 * per node however often the join planner asks; column estimates are not
 * (each walks one path down).  Conditions are independent of each other,
 * except that range bounds on one column are intersected before they are
 * multiplied with the rest (BETWEEN arrives as two filters).
 */
#include "planner/optimizer/estimate.h"

#include <math.h>
#include <string.h>

#include "common/alloc.h"

#define MEMO_FIRST 256 /* slots at first, a power of two; doubled at half full */
#define MAX_CONJ 64
#define NDV_SLACK 1.05 /* distinct counts this close are equal: the sketch is ~1.6% off */

typedef struct Memo {
    const PlNode *node; /* NULL: free */
    double rows;
} Memo;

struct PlEst {
    Memo *slots; /* open addressing by node address; owned */
    size_t n_slots, n_used;
};

PlEst *pl_est_new(void)
{
    PlEst *e = cm_calloc(1, sizeof *e);
    if (e != NULL && (e->slots = cm_calloc(MEMO_FIRST, sizeof(Memo))) == NULL) {
        cm_free(e);
        return NULL;
    }
    if (e != NULL) {
        e->n_slots = MEMO_FIRST;
    }
    return e;
}

void pl_est_free(PlEst *e)
{
    if (e != NULL) {
        cm_free(e->slots);
        cm_free(e);
    }
}

static size_t slot_of(const PlNode *n, size_t n_slots)
{
    uint64_t h = (uint64_t)(uintptr_t)n;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ULL;
    return (size_t)(h >> 20) & (n_slots - 1);
}

static bool memo_get(const PlEst *e, const PlNode *n, double *rows)
{
    if (e == NULL) {
        return false;
    }
    for (size_t i = slot_of(n, e->n_slots); e->slots[i].node != NULL;
         i = (i + 1) & (e->n_slots - 1)) {
        if (e->slots[i].node == n) {
            *rows = e->slots[i].rows;
            return true;
        }
    }
    return false;
}

static void memo_insert(Memo *slots, size_t n_slots, const PlNode *n, double rows)
{
    size_t i = slot_of(n, n_slots);
    while (slots[i].node != NULL) {
        i = (i + 1) & (n_slots - 1);
    }
    slots[i].node = n;
    slots[i].rows = rows;
}

/* Remembers n's rows; on OOM growing, simply does not. */
static void memo_put(PlEst *e, const PlNode *n, double rows)
{
    if (e == NULL) {
        return;
    }
    if (2 * (e->n_used + 1) > e->n_slots) {
        Memo *grown = cm_calloc(2 * e->n_slots, sizeof(Memo));
        if (grown == NULL) {
            return;
        }
        for (size_t i = 0; i < e->n_slots; i++) {
            if (e->slots[i].node != NULL) {
                memo_insert(grown, 2 * e->n_slots, e->slots[i].node, e->slots[i].rows);
            }
        }
        cm_free(e->slots);
        e->slots = grown;
        e->n_slots *= 2;
    }
    memo_insert(e->slots, e->n_slots, n, rows);
    e->n_used++;
}

/* ---- columns ------------------------------------------------------------------------- */

static void unknown(PlColEst *c)
{
    memset(c, 0, sizeof *c);
}

/* At most `rows` distinct values pass a node of `rows` rows. */
static void cap(PlColEst *c, double rows)
{
    double room = rows * (1 - c->null_frac);
    if (c->known && c->ndv > room) {
        c->ndv = room > 1 ? room : 1;
    }
}

static void table_column(const StTable *t, int tcol, PlColEst *c)
{
    StColStats *s = &t->stats[tcol];
    unknown(c);
    if (t->n_rows == 0 || s->n_values == 0) {
        return;
    }
    c->known = true;
    c->table_rows = (double)t->n_rows;
    c->null_frac = (double)s->n_nulls / (double)s->n_values;
    double ndv = fmin(st_stats_ndv(s), (double)t->n_rows); /* stale: counted undone rows */
    c->ndv = ndv > 1 ? ndv : 1;
    c->has_range = s->has_range;
    c->lo = s->min;
    c->hi = s->max;
    uint8_t id = t->cols[tcol].type.id;
    c->integral = id == CM_T_INT32 || id == CM_T_INT64 || id == CM_T_DATE;
    c->stats = s->freq != NULL ? s : NULL;
    c->type = t->cols[tcol].type;
}

static const PlNode *filter_base(const PlNode *n)
{
    while (n->kind == PL_FILTER) {
        n = n->child;
    }
    return n;
}

/* The column an expression reads when it is one (through casts between
 * numbers, which keep its order), else -1. */
static int column_of(const ExExpr *x)
{
    while (x->kind == EX_E_FUNC && x->n_args == 1 && strcmp(x->name, "cast") == 0) {
        uint8_t to = x->type.id, from = x->args[0]->type.id;
        bool num_to = to == CM_T_INT32 || to == CM_T_INT64 || to == CM_T_DECIMAL ||
                      to == CM_T_DOUBLE || to == CM_T_DATE;
        bool num_from = from == CM_T_INT32 || from == CM_T_INT64 || from == CM_T_DECIMAL ||
                        from == CM_T_DOUBLE || from == CM_T_DATE;
        if (!(num_to && num_from) && to != from) {
            return -1;
        }
        x = x->args[0];
    }
    return x->kind == EX_E_COLUMN ? x->col : -1;
}

static void filtered_column(PlEst *e, const PlNode *n, int col, PlColEst *c);

void pl_est_column(PlEst *e, const PlNode *n, int col, PlColEst *c)
{
    unknown(c);
    switch (n->kind) {
    case PL_GET:
        if (n->table->stats != NULL && n->col_ids[col] < n->table->n_cols) {
            table_column(n->table, n->col_ids[col], c);
        }
        return;
    case PL_FILTER:
        filtered_column(e, n, col, c);
        break;
    case PL_PROJECT: {
        const ExExpr *x = n->exprs[col];
        int in = column_of(x);
        if (in >= 0) {
            pl_est_column(e, n->child, in, c); /* as many rows as its child: no cap */
        } else if (x->kind == EX_E_CONST) {
            c->known = true;
            c->ndv = 1;
            c->null_frac = x->value.is_null ? 1 : 0;
        }
        return;
    }
    case PL_AGGREGATE:
        if (col < n->n_keys) {
            pl_est_column(e, n->child, col, c);
            c->stats = NULL; /* each key once: the frequencies are gone */
        }
        break;
    case PL_JOIN:
        /* Not capped by the join's rows: a join drops rows independently of
         * the values of its other columns, which stay spread over their
         * domain (as PostgreSQL, which caps by a base relation's filtered
         * rows only).  Capping would make a later join on such a column
         * assume all of a filtered dimension's keys are among the rows. */
        if (col < n->child->n_cols) {
            pl_est_column(e, n->child, col, c);
        } else if (n->join_type != EX_JOIN_MARK) {
            pl_est_column(e, n->right, col - n->child->n_cols, c);
        }
        c->via_join = true;
        return;
    case PL_SORT:
    case PL_WINDOW:
        if (col < n->child->n_cols) {
            pl_est_column(e, n->child, col, c);
        }
        return;
    case PL_LIMIT:
        pl_est_column(e, n->child, col, c);
        break;
    default:
        return;
    }
    cap(c, pl_est_rows(e, n));
}

/* ---- conditions ---------------------------------------------------------------------- */

/* Where the columns of a condition come from: column c is column c - off of
 * `l` below r_base, else column c - r_base of `r`. */
typedef struct Src {
    PlEst *e;
    const PlNode *l, *r;
    int off, r_base;
} Src;

static void src_column(const Src *s, int c, PlColEst *out)
{
    if (s->r != NULL && c >= s->r_base) {
        pl_est_column(s->e, s->r, c - s->r_base, out);
    } else if (c - s->off >= 0 && c - s->off < s->l->n_cols) {
        pl_est_column(s->e, s->l, c - s->off, out);
    } else {
        unknown(out);
    }
}

/* x without the casts around it: a constant's value is read before them. */
static const ExExpr *strip_casts(const ExExpr *x)
{
    while (x->kind == EX_E_FUNC && x->n_args == 1 && strcmp(x->name, "cast") == 0) {
        x = x->args[0];
    }
    return x;
}

static bool const_number(const ExExpr *x, double *v)
{
    x = strip_casts(x);
    if (x->kind != EX_E_CONST || x->value.is_null) {
        return false;
    }
    switch (x->value.type.id) {
    case CM_T_INT32:
    case CM_T_INT64:
    case CM_T_DATE:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
        *v = (double)x->value.i;
        return true;
    case CM_T_DECIMAL:
        *v = (double)x->value.i / pow(10, x->value.type.scale);
        return true;
    case CM_T_DECIMAL128:
        *v = (double)cm_i128_get(x->value.h) / pow(10, x->value.type.scale);
        return true;
    case CM_T_DOUBLE:
        *v = x->value.d;
        return !isnan(*v);
    default:
        return false;
    }
}

static bool is_op(const ExExpr *x, const char *name)
{
    return x->kind == EX_E_FUNC && x->name != NULL && strcmp(x->name, name) == 0;
}

/* A comparison of a column with a constant: its column, the operator with
 * the column on the left ("<", "<=", ">", ">=", "="), and the constant. */
static bool col_cmp_const(const ExExpr *x, int *col, const char **op, const ExExpr **k)
{
    static const char *const ops[] = {"<", "<=", ">", ">=", "="};
    static const char *const flip[] = {">", ">=", "<", "<=", "="};
    if (x->kind != EX_E_FUNC || x->n_args != 2 || x->name == NULL) {
        return false;
    }
    for (int i = 0; i < 5; i++) {
        if (strcmp(x->name, ops[i]) != 0) {
            continue;
        }
        int l = column_of(x->args[0]), r = column_of(x->args[1]);
        bool l_const = x->args[0]->kind == EX_E_CONST || is_op(x->args[0], "cast");
        bool r_const = x->args[1]->kind == EX_E_CONST || is_op(x->args[1], "cast");
        if (l >= 0 && r < 0 && r_const) {
            *col = l, *op = ops[i], *k = x->args[1];
            return true;
        }
        if (r >= 0 && l < 0 && l_const) {
            *col = r, *op = flip[i], *k = x->args[0];
            return true;
        }
        return false;
    }
    return false;
}

static double clamp01(double s)
{
    return s < 0 ? 0 : s > 1 ? 1 : s;
}

static double sel_expr(const Src *s, const ExExpr *x);

/* The hash the column's statistics give constant k (storage/stats.h), when
 * k is a value of the column's kind. */
static bool const_hash(const PlColEst *c, const ExExpr *k, uint64_t *h)
{
    double v;
    switch (c->type.id) {
    case CM_T_VARCHAR:
        k = strip_casts(k);
        if (k->kind != EX_E_CONST || k->value.is_null || k->value.type.id != CM_T_VARCHAR) {
            return false;
        }
        *h = st_stats_hash_str(cm_str_data(&k->value.s), k->value.s.len);
        return true;
    case CM_T_DOUBLE:
        if (!const_number(k, &v)) {
            return false;
        }
        *h = st_stats_hash_double(v);
        return true;
    case CM_T_INT32:
    case CM_T_INT64:
    case CM_T_DATE:
    case CM_T_TIME:
    case CM_T_TIMESTAMP:
    case CM_T_DECIMAL: {
        if (!const_number(k, &v)) {
            return false;
        }
        double unscaled = c->type.id == CM_T_DECIMAL ? v * pow(10, c->type.scale) : v;
        double whole = round(unscaled);
        if (fabs(unscaled - whole) > 1e-6 * fmax(1, fabs(whole)) || fabs(whole) >= 0x1p62) {
            return false; /* not a value of the column: the range test or 1/ndv decide */
        }
        *h = st_stats_hash_int((int64_t)whole);
        return true;
    }
    default:
        return false;
    }
}

/* Equality of a column with a constant: none when the constant lies outside
 * the column's range; a frequent value's share of the non-NULL rows; else
 * 1/ndv of them, lowered by what the frequent values take. */
static double sel_eq_const(const PlColEst *c, const ExExpr *k)
{
    double v;
    if (c->has_range && const_number(k, &v) && (v < c->lo || v > c->hi)) {
        return 0;
    }
    uint64_t h;
    if (c->stats != NULL && const_hash(c, k, &h)) {
        double share = st_stats_freq(c->stats, h);
        if (share >= 0) {
            return (1 - c->null_frac) * share;
        }
        /* The frequent values leave less to the rest: scale 1/ndv (which may
         * be capped below the table's) by the rare share over the table's 1/ndv. */
        double rare = st_stats_rare_share(c->stats) * fmax(1, st_stats_ndv(c->stats));
        return (1 - c->null_frac) * fmin(1, rare) / c->ndv;
    }
    return (1 - c->null_frac) / c->ndv;
}

/* The share of [lo, hi] within [a, b] (bounds inclusive), an integral
 * column counted in whole values. */
static double range_share(const PlColEst *c, double a, double b)
{
    double lo = c->lo, hi = c->hi;
    if (c->integral) {
        a = ceil(a);
        b = floor(b) + 1;
        hi += 1;
    }
    a = a > lo ? a : lo;
    b = b < hi ? b : hi;
    if (b < a || (b == a && c->integral)) {
        return 0;
    }
    if (hi <= lo) {
        return 1; /* one value, inside [a, b] */
    }
    return (b - a) / (hi - lo);
}

/* Narrows [*a, *b] by `column op v`: a strict bound on an integral column
 * moves by one value; on others it is as good as inclusive. */
static void narrow(const PlColEst *c, const char *op, double v, double *a, double *b)
{
    double step = c->integral && strchr(op, '=') == NULL ? 1 : 0;
    if (op[0] == '>') {
        *a = fmax(*a, v + step);
    } else {
        *b = fmin(*b, v - step);
    }
}

/* Conjuncts: ranges on one column are intersected, each column's range
 * counted once; every other conjunct multiplies. */
static double sel_and(const Src *s, ExExpr *const *conj, int n)
{
    double sel = 1;
    bool done[MAX_CONJ] = {false};
    for (int i = 0; i < n && i < MAX_CONJ; i++) {
        int col;
        const char *op;
        const ExExpr *k;
        double v;
        if (done[i]) {
            continue;
        }
        PlColEst c;
        if (!col_cmp_const(conj[i], &col, &op, &k) || strcmp(op, "=") == 0 ||
            !const_number(k, &v)) {
            sel *= sel_expr(s, conj[i]);
            continue;
        }
        src_column(s, col, &c);
        if (!c.known || !c.has_range) {
            sel *= sel_expr(s, conj[i]);
            continue;
        }
        double a = -INFINITY, b = INFINITY;
        for (int j = i; j < n && j < MAX_CONJ; j++) {
            int col2;
            const char *op2;
            const ExExpr *k2;
            double v2;
            if (done[j] || !col_cmp_const(conj[j], &col2, &op2, &k2) || col2 != col ||
                strcmp(op2, "=") == 0 || !const_number(k2, &v2)) {
                continue;
            }
            done[j] = true;
            narrow(&c, op2, v2, &a, &b);
        }
        sel *= (1 - c.null_frac) * range_share(&c, a, b);
    }
    for (int i = MAX_CONJ; i < n; i++) {
        sel *= sel_expr(s, conj[i]);
    }
    return clamp01(sel);
}

static int flatten_and(ExExpr *x, ExExpr **out, int n)
{
    if (x->kind == EX_E_AND) {
        for (int i = 0; i < x->n_args; i++) {
            n = flatten_and(x->args[i], out, n);
        }
        return n;
    }
    if (n < MAX_CONJ) {
        out[n] = x;
    }
    return n + 1;
}

static double sel_func(const Src *s, const ExExpr *x)
{
    PlColEst c, d;
    int col;
    const char *op;
    const ExExpr *k;
    if ((is_op(x, "is_null") || is_op(x, "is_not_null")) && (col = column_of(x->args[0])) >= 0) {
        src_column(s, col, &c);
        if (c.known) {
            return is_op(x, "is_null") ? c.null_frac : 1 - c.null_frac;
        }
    } else if (is_op(x, "not") && x->n_args == 1) {
        return clamp01(1 - sel_expr(s, x->args[0]));
    } else if ((is_op(x, "<>") || is_op(x, "!=")) && x->n_args == 2) {
        ExExpr eq = *x;
        eq.name = "=";
        int l = column_of(x->args[0]);
        src_column(s, l >= 0 ? l : column_of(x->args[1]), &c);
        if (l >= 0 || column_of(x->args[1]) >= 0) {
            if (c.known) {
                return clamp01(1 - c.null_frac - sel_expr(s, &eq));
            }
        }
    } else if (col_cmp_const(x, &col, &op, &k)) {
        src_column(s, col, &c);
        if (c.known && strcmp(op, "=") == 0) {
            return sel_eq_const(&c, k);
        }
        double v, a = -INFINITY, b = INFINITY;
        if (c.known && c.has_range && const_number(k, &v)) {
            narrow(&c, op, v, &a, &b);
            return (1 - c.null_frac) * range_share(&c, a, b);
        }
    } else if (is_op(x, "=") && x->n_args == 2 && column_of(x->args[0]) >= 0 &&
               column_of(x->args[1]) >= 0) {
        /* Two columns of the same rows: as a join of the rows with themselves. */
        src_column(s, column_of(x->args[0]), &c);
        src_column(s, column_of(x->args[1]), &d);
        if (c.known && d.known) {
            return (1 - c.null_frac) * (1 - d.null_frac) / fmax(c.ndv, d.ndv);
        }
    }
    return pl_selectivity(x);
}

static double sel_expr(const Src *s, const ExExpr *x)
{
    switch (x->kind) {
    case EX_E_AND: {
        ExExpr *conj[MAX_CONJ];
        int n = flatten_and((ExExpr *)x, conj, 0);
        return n <= MAX_CONJ ? sel_and(s, conj, n) : pl_selectivity(x);
    }
    case EX_E_OR: {
        double keep = 1;
        for (int i = 0; i < x->n_args; i++) {
            keep *= 1 - sel_expr(s, x->args[i]);
        }
        return clamp01(1 - keep);
    }
    case EX_E_FUNC:
        return sel_func(s, x);
    default:
        return pl_selectivity(x);
    }
}

double pl_est_conjuncts(PlEst *e, const PlNode *n, int col_off, ExExpr *const *conj, int n_conj)
{
    Src s = {.e = e, .l = n, .off = col_off};
    return sel_and(&s, conj, n_conj);
}

/* The conditions of a chain of filters ending at n (outermost first). */
static int chain_conjuncts(const PlNode *n, ExExpr **conj)
{
    int k = 0;
    for (; n->kind == PL_FILTER; n = n->child) {
        k = flatten_and(n->pred, conj, k);
    }
    return k;
}

/* A column below a chain of filters, narrowed by the chain's conditions on it. */
static void filtered_column(PlEst *e, const PlNode *n, int col, PlColEst *c)
{
    const PlNode *base = filter_base(n);
    pl_est_column(e, base, col, c);
    if (!c->known) {
        return;
    }
    ExExpr *conj[MAX_CONJ];
    int k = chain_conjuncts(n, conj);
    Src s = {.e = e, .l = base};
    for (int i = 0; i < k && i < MAX_CONJ; i++) {
        int ccol;
        const char *op;
        const ExExpr *kx;
        if (is_op(conj[i], "is_not_null") && column_of(conj[i]->args[0]) == col) {
            c->null_frac = 0;
        } else if (col_cmp_const(conj[i], &ccol, &op, &kx) && ccol == col) {
            double v = 0, a = -INFINITY, b = INFINITY;
            bool is_num = c->has_range && const_number(kx, &v);
            c->stats = NULL; /* narrowed: its values' frequencies are not the table's */
            if (strcmp(op, "=") == 0) {
                c->ndv = 1;
                a = b = v;
            } else {
                ExExpr *one[1] = {conj[i]};
                c->ndv = fmax(1, c->ndv * sel_and(&s, one, 1) / fmax(1e-9, 1 - c->null_frac));
                if (is_num) {
                    narrow(c, op, v, &a, &b);
                }
            }
            if (is_num) {
                c->lo = fmax(c->lo, a);
                c->hi = fmin(c->hi, b);
                c->has_range = c->lo <= c->hi;
            }
            c->null_frac = 0; /* a comparison keeps no NULL */
        }
    }
}

/* ---- rows ---------------------------------------------------------------------------- */

bool pl_est_join(double l_rows, double r_rows, int n_keys, const PlColEst *lk, const PlColEst *rk,
                 double *rows)
{
    double dl = 1, dr = 1, keep = 1, l_cap = 0, r_cap = 0;
    bool l_joined = false, r_joined = false;
    for (int k = 0; k < n_keys; k++) {
        if (!lk[k].known || !rk[k].known) {
            return false;
        }
        dl *= lk[k].ndv;
        dr *= rk[k].ndv;
        l_cap = fmax(l_cap, fmax(lk[k].table_rows, lk[k].ndv));
        r_cap = fmax(r_cap, fmax(rk[k].table_rows, rk[k].ndv));
        l_joined |= lk[k].via_join;
        r_joined |= rk[k].via_join;
        keep *= (1 - lk[k].null_frac) * (1 - rk[k].null_frac);
    }
    /* A composite key has no more distinct values than its table has rows
     * (its columns are correlated: ticket and item of a sale), nor than a
     * filtered table has rows left.  A join's rows are no cap: the rows it
     * drops leave the keys of its other columns spread over their domain. */
    dl = fmin(dl, l_joined || l_cap == 0 ? l_cap : fmin(l_cap, l_rows));
    dr = fmin(dr, r_joined || r_cap == 0 ? r_cap : fmin(r_cap, r_rows));
    /* Containment, as for one key, taken to the tuple: when each column of
     * one side has no more values than the other side's (within the sketch's
     * error), its tuples are taken to be among the other's.  That is the
     * composite foreign key (lineitem's (partkey, suppkey) in partsupp):
     * without it, the referencing side's tuples count as many as its rows,
     * and the join looks as selective as the referenced table is small. */
    if (n_keys > 1) {
        bool l_within = true, r_within = true;
        for (int k = 0; k < n_keys; k++) {
            l_within = l_within && lk[k].ndv <= NDV_SLACK * rk[k].ndv;
            r_within = r_within && rk[k].ndv <= NDV_SLACK * lk[k].ndv;
        }
        dl = l_within ? fmin(dl, dr) : dl;
        dr = r_within ? fmin(dr, dl) : dr;
    }
    double d = fmax(1, fmax(dl, dr));
    *rows = l_rows * r_rows * keep / d;
    return true;
}

#define MAX_KEYS 64

static double join_rows(PlEst *e, const PlNode *n)
{
    double l = pl_est_rows(e, n->child), r = pl_est_rows(e, n->right);
    PlColEst lk[MAX_KEYS], rk[MAX_KEYS];
    int nk = n->n_join_keys < MAX_KEYS ? n->n_join_keys : MAX_KEYS;
    for (int k = 0; k < nk; k++) {
        pl_est_column(e, n->child, n->left_keys[k], &lk[k]);
        pl_est_column(e, n->right, n->right_keys[k], &rk[k]);
    }
    double inner;
    bool known = nk > 0 && pl_est_join(l, r, nk, lk, rk, &inner);
    if (n->join_type == EX_JOIN_SEMI) {
        double dl = 1, dr = 1;
        for (int k = 0; known && k < nk; k++) {
            dl *= lk[k].ndv;
            dr *= rk[k].ndv;
        }
        return known ? l * fmin(1, fmin(dr, r) / fmin(dl, l > 0 ? l : 1)) : l;
    }
    if (n->join_type == EX_JOIN_ANTI || n->join_type == EX_JOIN_MARK) {
        return l;
    }
    if (!known) {
        inner = nk > 0 ? fmax(l, r) : l * r;
    }
    if (n->residual != NULL) {
        Src s = {.e = e, .l = n->child, .r = n->right, .r_base = n->child->n_cols};
        inner *= known ? sel_expr(&s, n->residual) : 0.5;
    }
    if (n->join_type == EX_JOIN_LEFT) {
        return fmax(inner, l);
    }
    if (n->join_type == EX_JOIN_FULL) {
        return fmax(inner, fmax(l, r));
    }
    return inner;
}

/* Groups: the product of the keys' distinct counts (a NULL key is a group
 * too), at most the input's rows. */
static double group_rows(PlEst *e, const PlNode *n)
{
    double in = pl_est_rows(e, n->child), groups = 1;
    for (int k = 0; k < n->n_keys; k++) {
        PlColEst c;
        pl_est_column(e, n->child, k, &c);
        if (!c.known) {
            return in * 0.5;
        }
        groups *= c.ndv + (c.null_frac > 0 ? 1 : 0);
        if (groups >= in) {
            return in;
        }
    }
    return groups;
}

static double rows_of(PlEst *e, const PlNode *n)
{
    switch (n->kind) {
    case PL_GET:
        return (double)n->table->n_rows;
    case PL_VALUES:
        return n->n_rows;
    case PL_SERIES:
        return (double)n->series_rows;
    case PL_CSV:
        return n->csv->est_rows;
    case PL_FILTER: {
        const PlNode *base = filter_base(n);
        ExExpr *conj[MAX_CONJ];
        int k = chain_conjuncts(n, conj);
        double in = pl_est_rows(e, base);
        double sel;
        if (k > MAX_CONJ) {
            sel = 1;
            for (const PlNode *f = n; f->kind == PL_FILTER; f = f->child) {
                sel *= pl_selectivity(f->pred);
            }
        } else {
            Src s = {.e = e, .l = base};
            sel = sel_and(&s, conj, k);
        }
        return in > 0 ? fmax(1, in * sel) : 0;
    }
    case PL_AGGREGATE:
        return n->n_keys == 0 ? 1 : group_rows(e, n);
    case PL_LIMIT: {
        double c = pl_est_rows(e, n->child);
        return n->limit >= 0 && (double)n->limit < c ? (double)n->limit : c;
    }
    case PL_JOIN:
        return join_rows(e, n);
    case PL_UNION: {
        double sum = 0;
        for (int i = 0; i < n->n_inputs; i++) {
            sum += pl_est_rows(e, n->inputs[i]);
        }
        return sum;
    }
    case PL_EXPAND:
        return pl_est_rows(e, n->child) * (n->n_sets > 0 ? n->n_sets : 1);
    default:
        return pl_est_rows(e, n->child);
    }
}

double pl_est_rows(PlEst *e, const PlNode *n)
{
    double rows;
    if (memo_get(e, n, &rows)) {
        return rows;
    }
    rows = rows_of(e, n);
    memo_put(e, n, rows);
    return rows;
}

double pl_est_row_width(const PlNode *n)
{
    double width = 0;
    for (int i = 0; i < n->n_cols; i++) {
        width += (double)cm_type_width(n->types[i]) + (n->types[i].id == CM_T_VARCHAR ? 16 : 0);
    }
    return width;
}
