/*
 * bind_join.c - FROM clauses with joins, together with WHERE: join order,
 * pushed-down conditions, and equality keys.
 *
 * The inner and cross joins of a FROM clause (comma lists included) are
 * flattened into leaves; outer joins are leaves of their own.  Every ON and
 * WHERE condition is bound over the whole clause and split into conjuncts,
 * each knowing which leaves it reads (a bit mask).  A conjunct on one leaf
 * filters that leaf; the others are placed at the first join that has all
 * their leaves, as join keys when they are column = column equalities of one
 * type across the two sides, else as a residual predicate.
 * Join order is greedy: start from the largest leaf (it streams through the
 * pipeline), then repeatedly join a leaf connected to the joined set by an
 * equality (so hash tables are built on the small sides of a star), the one
 * whose own conditions keep the least of it first, then the smallest; falling
 * back to a leaf with no equality (a nested-loop join) when none is.
 * The best bushy tree by cost (optimizer/join_order.h) over the same leaves
 * replaces that order when it costs under DP_GAIN of it (cost_order).
 * A final projection restores the FROM clause's column order, so everything
 * bound over the clause's scope stays valid.
 */
#include <string.h>

#include "common/alloc.h"
#include "executor/ops.h"
#include "planner/bind/binder_int.h"
#include "planner/optimizer/estimate.h"
#include "planner/optimizer/join_order.h"

#define MAX_LEAVES 64
/* The tree by cost is built when it costs under this share of the greedy
 * order.  The cost model knows nothing of the scans a join's key range lets
 * skip chunks: on TPC-DS q17 and q25 it rates a tree 15% cheaper that runs
 * 1.5-2x slower, because the greedy order's store_sales meets its date
 * filter first and skips most of its chunks.  So only a tree the model
 * finds twice as cheap replaces it. */
#define DP_GAIN 0.5
#define MAX_CONJ 512

typedef struct Leaf {
    PlNode *node;
    PlNode *orig;         /* node before conditions with subqueries were pushed into it, or NULL */
    const PsFrom *outer;  /* LEFT or RIGHT join this leaf is, or NULL */
    int null_lo, null_hi; /* its columns [lo, hi) (leaf-relative) that may be NULL-extended */
    int offset;           /* first column in the clause's scope */
    int n_cols;
} Leaf;

typedef struct JoinSet JoinSet;
struct JoinSet {
    PlBinder *b;
    int n_leaves;
    Leaf leaves[MAX_LEAVES];
    int n_cols; /* the clause's scope */
    PlScopeCol *cols;
    int cap_cols;
    int n_conj;
    ExExpr *conj[MAX_CONJ];
    uint64_t mask[MAX_CONJ];
    bool used[MAX_CONJ];
    int n_on;
    const PsExpr *on[MAX_CONJ]; /* ON conditions, bound once all leaves are known */
    int pushed[MAX_LEAVES];     /* conditions with subqueries applied to the leaf */
    int host[MAX_LEAVES];       /* plan_joins: the leaf a satellite joins into, or -1 */
    int n_as_inner;
    const PsFrom *as_inner[MAX_LEAVES]; /* outer joins WHERE turns into inner ones */
    int n_using; /* bind_outer: USING/NATURAL pairs (left, right scope column) */
    int *using_pairs;
    PlEst *est;               /* plan_joins: estimates of the leaves' nodes, or NULL */
    const double *rows, *eff; /* order_joins: each leaf's rows, and the share its own
                                 conditions and its satellites keep (find_satellites) */
    int n_steps;              /* order_joins: the joins built, each's probe and build leaves */
    uint64_t step_probe[MAX_LEAVES], step_build[MAX_LEAVES];
};

static void *oom(PlBinder *b)
{
    cm_err_set(b->err, CM_OOM, -1, "out of memory");
    return NULL;
}

/* ---- expression helpers -------------------------------------------------------------- */

/* The leaf holding scope column `col`, or -1 (a column added after the
 * leaves, such as a subquery's result). */
static int leaf_of(const JoinSet *js, int col)
{
    for (int i = 0; i < js->n_leaves; i++) {
        const Leaf *l = &js->leaves[i];
        if (col >= l->offset && col < l->offset + l->n_cols) {
            return i;
        }
    }
    return -1;
}

static uint64_t leaves_of(const JoinSet *js, const ExExpr *e)
{
    if (e->kind == EX_E_COLUMN) {
        int i = leaf_of(js, e->col);
        return i >= 0 ? (uint64_t)1 << i : 0;
    }
    uint64_t m = 0;
    for (int i = 0; i < e->n_args; i++) {
        m |= leaves_of(js, e->args[i]);
    }
    return m;
}

/* A copy of e with every column c replaced by map[c]. */
static ExExpr *remap(PlBinder *b, const ExExpr *e, const int *map)
{
    ExExpr *c = ex_expr_remap(b->arena, e, map);
    return c != NULL ? c : oom(b);
}

#define MAX_TERMS 64

/* Flattens a tree of `kind` (AND or OR) into its operands; false if too many. */
static bool flatten(ExExpr *e, ExExprKind kind, ExExpr **out, int *n)
{
    if (e->kind == kind) {
        for (int i = 0; i < e->n_args; i++) {
            if (!flatten(e->args[i], kind, out, n)) {
                return false;
            }
        }
        return true;
    }
    if (*n == MAX_TERMS) {
        return false;
    }
    out[(*n)++] = e;
    return true;
}

static bool contains(ExExpr *const *terms, int n, const ExExpr *e)
{
    for (int i = 0; i < n; i++) {
        if (pl_expr_equal(terms[i], e)) {
            return true;
        }
    }
    return false;
}

/* An OR of ANDs as a table: terms[i][0..n_terms[i]) are the conditions
 * ANDed in branch i. */
typedef struct OrTerms {
    int n_branch;
    int n_terms[MAX_TERMS];
    ExExpr *terms[MAX_TERMS][MAX_TERMS];
} OrTerms;

/* False when e is not an OR, or has more branches or terms than fit. */
static bool or_terms(ExExpr *e, OrTerms *t)
{
    ExExpr *branch[MAX_TERMS];
    t->n_branch = 0;
    if (e->kind != EX_E_OR || !flatten(e, EX_E_OR, branch, &t->n_branch)) {
        return false;
    }
    for (int i = 0; i < t->n_branch; i++) {
        t->n_terms[i] = 0;
        if (!flatten(branch[i], EX_E_AND, t->terms[i], &t->n_terms[i])) {
            return false;
        }
    }
    return true;
}

static bool add_conjuncts(JoinSet *js, ExExpr *e);

/* (A AND B) OR (A AND C) is A AND (B OR C): conditions common to every branch
 * of an OR are taken out, so that join keys written inside each branch (as
 * TPC-DS does) are seen as join keys.  Returns false on error; sets *done when
 * it added the rewritten conjuncts itself. */
static bool factor_or(JoinSet *js, ExExpr *e, bool *done)
{
    *done = false;
    OrTerms ot;
    if (!or_terms(e, &ot)) {
        return true;
    }
    int n_branch = ot.n_branch, *n_terms = ot.n_terms;
    ExExpr *(*terms)[MAX_TERMS] = ot.terms;
    ExExpr *common[MAX_TERMS];
    int n_common = 0;
    for (int t = 0; t < n_terms[0]; t++) {
        bool everywhere = true;
        for (int i = 1; i < n_branch && everywhere; i++) {
            everywhere = contains(terms[i], n_terms[i], terms[0][t]);
        }
        if (everywhere && !contains(common, n_common, terms[0][t])) {
            common[n_common++] = terms[0][t];
        }
    }
    if (n_common == 0) {
        return true;
    }
    ExExpr *rest = NULL;
    bool always = false; /* a branch left with nothing is TRUE: so is the OR */
    for (int i = 0; i < n_branch && !always; i++) {
        ExExpr *part = NULL;
        for (int t = 0; t < n_terms[i]; t++) {
            if (!contains(common, n_common, terms[i][t])) {
                part = part ? pl_make_and(js->b, part, terms[i][t]) : terms[i][t];
                if (part == NULL) {
                    return false;
                }
            }
        }
        always = part == NULL;
        rest = always ? NULL : rest ? pl_make_or(js->b, rest, part) : part;
        if (!always && rest == NULL) {
            return false;
        }
    }
    for (int t = 0; t < n_common; t++) {
        if (!add_conjuncts(js, common[t])) {
            return false;
        }
    }
    *done = true;
    return always || add_conjuncts(js, rest);
}

static bool append_conjunct(JoinSet *js, ExExpr *e, uint64_t mask)
{
    if (js->n_conj == MAX_CONJ) {
        cm_err_set(js->b->err, CM_LIMIT, e->src_off, "too many conditions in one query");
        return false;
    }
    js->conj[js->n_conj] = e;
    js->mask[js->n_conj] = mask;
    js->n_conj++;
    return true;
}

/* An OR over several leaves implies, for each leaf L, the OR over its branches
 * of each branch's conditions on L alone, when every branch has some: from
 * TPC-DS's (cd_status = 'M' AND ss_price BETWEEN 100 AND 150 ...) OR
 * (cd_status = 'S' AND ss_price BETWEEN 50 AND 100 ...) come
 * cd_status = 'M' OR cd_status = 'S' on the demographics and
 * ss_price BETWEEN 100 AND 150 OR ss_price BETWEEN 50 AND 100 on the sales,
 * which filter those leaves before they are joined.  A row the OR keeps has a
 * true branch, so every condition of that branch is true and the derived
 * condition is too: the derived ones only drop rows the OR would drop later.
 * The OR itself stays (it still has to be checked across the leaves). */
static bool derive_from_or(JoinSet *js, ExExpr *e, uint64_t mask)
{
    OrTerms ot;
    if (!or_terms(e, &ot)) {
        return true;
    }
    int n_branch = ot.n_branch, *n_terms = ot.n_terms;
    ExExpr *(*terms)[MAX_TERMS] = ot.terms;
    for (int l = 0; l < js->n_leaves; l++) {
        uint64_t bit = (uint64_t)1 << l;
        if (!(mask & bit)) {
            continue;
        }
        ExExpr *derived = NULL;
        bool every = true;
        for (int i = 0; i < n_branch && every; i++) {
            ExExpr *part = NULL;
            for (int t = 0; t < n_terms[i]; t++) {
                if (leaves_of(js, terms[i][t]) == bit) {
                    part = part ? pl_make_and(js->b, part, terms[i][t]) : terms[i][t];
                    if (part == NULL) {
                        return false;
                    }
                }
            }
            every = part != NULL;
            derived = !every ? NULL : derived ? pl_make_or(js->b, derived, part) : part;
            if (every && derived == NULL) {
                return false;
            }
        }
        if (every && !append_conjunct(js, derived, bit)) {
            return false;
        }
    }
    return true;
}

static bool add_conjuncts(JoinSet *js, ExExpr *e)
{
    bool done;
    if (!factor_or(js, e, &done)) {
        return false;
    }
    if (done) {
        return true;
    }
    if (e->kind == EX_E_AND) {
        for (int i = 0; i < e->n_args; i++) {
            if (!add_conjuncts(js, e->args[i])) {
                return false;
            }
        }
        return true;
    }
    uint64_t mask = leaves_of(js, e);
    if (!append_conjunct(js, e, mask)) {
        return false;
    }
    bool several = (mask & (mask - 1)) != 0;
    return e->kind != EX_E_OR || !several || derive_from_or(js, e, mask);
}

static bool bind_condition(JoinSet *js, const PsExpr *ast, const char *clause)
{
    PlScope sc = {.n = js->n_cols, .cols = js->cols};
    ExExpr *e = pl_bind_scalar(js->b, &sc, ast, clause);
    e = e ? pl_cast(js->b, e, cm_type_make(CM_T_BOOL), ast->src_off) : NULL;
    return e != NULL && add_conjuncts(js, e);
}

/* ---- collecting leaves ----------------------------------------------------------------- */

static PlNode *bind_outer(PlBinder *b, const PsFrom *f, PlScope *sc, int *n_left);

static bool add_leaf(JoinSet *js, PlNode *node, const PlScope *sc)
{
    PlBinder *b = js->b;
    if (js->n_leaves == MAX_LEAVES) {
        cm_err_set(b->err, CM_LIMIT, -1, "more than %d tables in one FROM clause", MAX_LEAVES);
        return false;
    }
    if (js->n_cols + sc->n > js->cap_cols) {
        int cap = (js->n_cols + sc->n) * 2 + 16;
        PlScopeCol *cols = cm_arena_alloc(b->arena, sizeof(PlScopeCol) * (size_t)cap);
        if (cols == NULL) {
            return oom(b) != NULL;
        }
        if (js->n_cols > 0) {
            memcpy(cols, js->cols, sizeof(PlScopeCol) * (size_t)js->n_cols);
        }
        js->cols = cols;
        js->cap_cols = cap;
    }
    if (sc->n > 0) {
        memcpy(js->cols + js->n_cols, sc->cols, sizeof(PlScopeCol) * (size_t)sc->n);
    }
    js->leaves[js->n_leaves++] = (Leaf){.node = node, .offset = js->n_cols, .n_cols = sc->n};
    js->n_cols += sc->n;
    return true;
}

/* The column named `name` among scope columns [c0, c1); -1 if none, -2 if several. */
static int find_named(const JoinSet *js, int c0, int c1, const char *name)
{
    int found = -1;
    for (int i = c0; i < c1; i++) {
        if (!js->cols[i].hidden && strcmp(js->cols[i].name, name) == 0) {
            if (found >= 0) {
                return -2;
            }
            found = i;
        }
    }
    return found;
}

/* USING (cols) and NATURAL of a join whose sides are scope columns [l0, mid)
 * and [mid, r1): equalities, and the right twins hidden. The pairs of columns
 * go to pairs[2 k], pairs[2 k + 1] when pairs is not NULL (room for r1 - l0). */
static bool add_using(JoinSet *js, const PsFrom *f, int l0, int mid, int r1, int *pairs,
                      int *n_pairs)
{
    PlBinder *b = js->b;
    int n = f->using_cols ? f->using_cols->n : 0;
    for (int i = f->natural ? l0 : 0; f->natural ? i < mid : i < n; i++) {
        const char *name = f->natural ? js->cols[i].name : f->using_cols->items[i];
        int l = find_named(js, l0, mid, name), r = find_named(js, mid, r1, name);
        if (f->natural && (r == -1 || js->cols[i].hidden)) {
            continue;
        }
        if (l < 0 || r < 0) {
            cm_err_set(b->err, CM_BIND, f->src_off,
                       l == -2 || r == -2 ? "column '%s' in USING is ambiguous"
                                          : "column '%s' in USING is not on both sides",
                       name);
            return false;
        }
        ExExpr *args[2] = {ex_expr_column(b->arena, l, js->cols[l].type),
                           ex_expr_column(b->arena, r, js->cols[r].type)};
        if (args[0] == NULL || args[1] == NULL) {
            return oom(b) != NULL;
        }
        ExExpr *eq = pl_make_call(b, "=", args, 2, f->src_off);
        if (eq == NULL || !add_conjuncts(js, eq)) {
            return false;
        }
        js->cols[r].hidden = true;
        if (pairs != NULL) {
            pairs[2 * *n_pairs] = l;
            pairs[2 * (*n_pairs)++ + 1] = r;
        }
    }
    return true;
}

static bool collect(JoinSet *js, const PsFrom *f)
{
    PlBinder *b = js->b;
    bool inner =
        f->kind == PS_FROM_JOIN && (f->join_type == PS_JOIN_INNER || f->join_type == PS_JOIN_CROSS);
    for (int i = 0; i < js->n_as_inner && !inner; i++) {
        inner = js->as_inner[i] == f;
    }
    if (!inner) {
        PlScope sc;
        int n_left = 0;
        PlNode *n =
            f->kind == PS_FROM_JOIN ? bind_outer(b, f, &sc, &n_left) : pl_bind_from_item(b, f, &sc);
        if (n == NULL || !add_leaf(js, n, &sc)) {
            return false;
        }
        Leaf *l = &js->leaves[js->n_leaves - 1];
        if (f->kind == PS_FROM_JOIN && f->join_type == PS_JOIN_LEFT) {
            *l = (Leaf){.node = l->node,
                        .offset = l->offset,
                        .n_cols = l->n_cols,
                        .outer = f,
                        .null_lo = n_left,
                        .null_hi = sc.n};
        } else if (f->kind == PS_FROM_JOIN && f->join_type == PS_JOIN_RIGHT) {
            *l = (Leaf){.node = l->node,
                        .offset = l->offset,
                        .n_cols = l->n_cols,
                        .outer = f,
                        .null_lo = 0,
                        .null_hi = n_left};
        }
        return true;
    }
    int l0 = js->n_cols;
    if (!collect(js, f->left)) {
        return false;
    }
    int mid = js->n_cols;
    if (!collect(js, f->right)) {
        return false;
    }
    if ((f->using_cols != NULL || f->natural) &&
        !add_using(js, f, l0, mid, js->n_cols, NULL, NULL)) {
        return false;
    }
    if (f->on != NULL) {
        if (js->n_on == MAX_CONJ) {
            cm_err_set(b->err, CM_LIMIT, f->src_off, "too many joins");
            return false;
        }
        js->on[js->n_on++] = f->on;
    }
    return true;
}

/* ---- joining ------------------------------------------------------------------------------ */

/* Is conjunct c "column = column" of one type, one side in `left`, the other in `right`?
 * Sets the scope columns of each side. */
static bool is_key(const JoinSet *js, int c, uint64_t left, uint64_t right, int *lcol, int *rcol)
{
    const ExExpr *e = js->conj[c];
    if (e->kind != EX_E_FUNC || strcmp(e->name, "=") != 0 || e->n_args != 2 ||
        e->args[0]->kind != EX_E_COLUMN || e->args[1]->kind != EX_E_COLUMN ||
        !cm_type_eq(e->args[0]->type, e->args[1]->type)) {
        return false;
    }
    uint64_t m0 = leaves_of(js, e->args[0]), m1 = leaves_of(js, e->args[1]);
    if ((m0 & left) && (m1 & right)) {
        *lcol = e->args[0]->col;
        *rcol = e->args[1]->col;
        return true;
    }
    if ((m1 & left) && (m0 & right)) {
        *lcol = e->args[1]->col;
        *rcol = e->args[0]->col;
        return true;
    }
    return false;
}

/* A leaf with its single-leaf conjuncts applied; map gets its columns. */
/* Conjunct c as an equality of expressions, one over the joined leaves and one
 * over the leaf `right` alone (other than a column = column key): a hash join
 * key once each side computes its expression as a column.  Sets *l and *r to
 * the two sides. */
static bool is_expr_key(const JoinSet *js, int c, uint64_t left, uint64_t right, ExExpr **l,
                        ExExpr **r)
{
    ExExpr *e = js->conj[c];
    if (e->kind != EX_E_FUNC || strcmp(e->name, "=") != 0 || e->n_args != 2 ||
        !cm_type_eq(e->args[0]->type, e->args[1]->type)) {
        return false;
    }
    uint64_t m0 = leaves_of(js, e->args[0]), m1 = leaves_of(js, e->args[1]);
    for (int side = 0; side < 2; side++) {
        uint64_t ml = side ? m1 : m0, mr = side ? m0 : m1;
        if (ml != 0 && (ml & ~left) == 0 && mr == right) {
            *l = e->args[side];
            *r = e->args[1 - side];
            return true;
        }
    }
    return false;
}

/* Is conjunct c an inequality a range join can use (ex_join_bound_op)
 * between an expression over the leaves `left` and one over `right`, not
 * both plain columns (the physical planner finds those itself)?  *l gets
 * the left one, *r the right one, *l_first whether *l is the first operand. */
static bool is_expr_bound(const JoinSet *js, int c, uint64_t left, uint64_t right, ExExpr **l,
                          ExExpr **r, bool *l_first)
{
    ExExpr *e = js->conj[c];
    ExBoundOp op;
    if (!ex_join_bound_op(e, &op) ||
        (e->args[0]->kind == EX_E_COLUMN && e->args[1]->kind == EX_E_COLUMN)) {
        return false;
    }
    uint64_t m0 = leaves_of(js, e->args[0]), m1 = leaves_of(js, e->args[1]);
    for (int side = 0; side < 2; side++) {
        uint64_t ml = side ? m1 : m0, mr = side ? m0 : m1;
        if (ml != 0 && (ml & ~left) == 0 && mr != 0 && (mr & ~right) == 0) {
            *l = e->args[side];
            *r = e->args[1 - side];
            *l_first = side == 0;
            return true;
        }
    }
    return false;
}

/* n with the columns exprs[0..k) appended (each remapped through map). */
static PlNode *with_columns(PlBinder *b, PlNode *n, ExExpr **exprs, int k, const int *map)
{
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n->n_cols + k));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n->n_cols + k));
    if (cols == NULL || names == NULL) {
        return oom(b);
    }
    for (int c = 0; c < n->n_cols; c++) {
        cols[c] = ex_expr_column(b->arena, c, n->types[c]);
        names[c] = n->names[c];
        if (cols[c] == NULL) {
            return oom(b);
        }
    }
    for (int i = 0; i < k; i++) {
        cols[n->n_cols + i] = remap(b, exprs[i], map);
        names[n->n_cols + i] =
            cols[n->n_cols + i] != NULL ? pl_expr_name(b, cols[n->n_cols + i], n, "#key") : "#key";
        if (cols[n->n_cols + i] == NULL) {
            return NULL;
        }
    }
    return pl_project(b, n, n->n_cols + k, cols, names);
}

/* Leaf i's node under the conditions that read it alone: with `used`, those
 * not placed yet, which it then marks placed; without, all of them. */
static PlNode *own_filtered(const JoinSet *js, int i, bool *used)
{
    const Leaf *l = &js->leaves[i];
    int *local = cm_arena_alloc(js->b->arena, sizeof(int) * (size_t)(js->n_cols + 1));
    if (local == NULL) {
        return oom(js->b);
    }
    for (int c = 0; c < js->n_cols; c++) {
        local[c] = c - l->offset;
    }
    PlNode *n = l->node;
    for (int c = 0; c < js->n_conj; c++) {
        if (js->mask[c] == ((uint64_t)1 << i) && (used == NULL || !used[c])) {
            ExExpr *pred = remap(js->b, js->conj[c], local);
            n = pred ? pl_filter(js->b, n, pred, js->conj[c]->src_off) : NULL;
            if (n == NULL) {
                return NULL;
            }
            if (used != NULL) {
                used[c] = true;
            }
        }
    }
    return n;
}

static PlNode *filtered_leaf(JoinSet *js, int i, int *map, int base)
{
    const Leaf *l = &js->leaves[i];
    PlNode *n = own_filtered(js, i, js->used);
    if (n == NULL) {
        return NULL;
    }
    for (int c = 0; c < l->n_cols; c++) {
        map[l->offset + c] = base + c;
    }
    return n;
}

/* The base table behind column `col` of a leaf's node (through filters and
 * column projections) and that table's column in *tcol, or NULL. */
static const StTable *base_column(const PlNode *n, int col, int *tcol)
{
    for (;;) {
        if (n->kind == PL_GET) { /* a row address (ST_ROW_ADDR) is no column of the table */
            *tcol = n->col_ids[col];
            return *tcol < n->table->n_cols ? n->table : NULL;
        }
        if (n->kind == PL_PROJECT && n->exprs[col]->kind == EX_E_COLUMN) {
            col = n->exprs[col]->col;
        } else if (n->kind != PL_FILTER) {
            return NULL;
        }
        n = n->child;
    }
}

/* True when the clause columns cols[0..n), all of leaf i, hold every column
 * of the primary key of the table behind it; *rows is that table's size. */
static bool covers_key(const JoinSet *js, int i, const int *cols, int n, double *rows)
{
    const Leaf *l = &js->leaves[i];
    const StTable *t = NULL;
    int tcols[MAX_TERMS];
    for (int k = 0; k < n; k++) {
        const StTable *tk = base_column(l->node, cols[k] - l->offset, &tcols[k]);
        if (tk == NULL || (t != NULL && tk != t)) {
            return false;
        }
        t = tk;
    }
    *rows = t != NULL ? (double)t->n_rows : 0;
    return t != NULL && st_table_key_within(t, tcols, n);
}

/* About the share of the streaming rows that survive joining leaf i next
 * (more than 1 when the join repeats them).  With column statistics for the
 * keys it is the equi-join estimate over the streaming rows (estimate.h):
 * |i filtered| / max(ndv of the streaming keys, ndv of i's keys), so a
 * dimension whose filter keeps keys the facts rarely use (date_dim's years
 * beyond the sales) is not mistaken for a selective one.  Without them, when
 * the equalities cover i's primary key, each streaming row meets at most one
 * row of i: the share is the part of i's key space present after its
 * conditions, sel[i] x |i| / |key space|, where the key space is i's table, or
 * a joined table whose own key the equalities cover too (store_sales to
 * store_returns on ticket and item: a tenth of the sales have a return).
 * Otherwise nothing is known: 1. */
static double join_share(const JoinSet *js, uint64_t joined, int i, const double *est,
                         const double *sel)
{
    int lcols[MAX_TERMS], rcols[MAX_TERMS], n = 0;
    for (int c = 0; c < js->n_conj && n < MAX_TERMS; c++) {
        if (!js->used[c] && is_key(js, c, joined, (uint64_t)1 << i, &lcols[n], &rcols[n])) {
            n++;
        }
    }
    if (n == 0) {
        return 1;
    }
    PlColEst lk[MAX_TERMS], rk[MAX_TERMS];
    bool known = true;
    double stream = 1, rows;
    const Leaf *li = &js->leaves[i];
    for (int k = 0; k < n && known; k++) {
        int j = leaf_of(js, lcols[k]);
        const Leaf *lj = &js->leaves[j];
        pl_est_column(js->est, lj->node, lcols[k] - lj->offset, &lk[k]);
        pl_est_column(js->est, li->node, rcols[k] - li->offset, &rk[k]);
        known = lk[k].known && rk[k].known;
        stream = est[j] > stream ? est[j] : stream;
    }
    double filtered = est[i] * sel[i];
    if (known && pl_est_join(stream, filtered, n, lk, rk, &rows)) {
        return rows / stream;
    }
    double space;
    if (!covers_key(js, i, rcols, n, &rows) || rows <= 0) {
        return 1;
    }
    space = rows;
    for (int j = 0; j < js->n_leaves; j++) {
        int mine[MAX_TERMS], m = 0;
        double jrows;
        for (int k = 0; k < n && (joined >> j) & 1; k++) {
            if (leaf_of(js, lcols[k]) == j) {
                mine[m++] = lcols[k];
            }
        }
        if (m > 0 && covers_key(js, j, mine, m, &jrows) && jrows > space) {
            space = jrows;
        }
    }
    return sel[i] * rows / space;
}

/* The next leaf to join: one connected by an equality if any.  Among those,
 * the one with the least rank c / (1 - s), where s is the share of the
 * streaming rows it keeps (join_share) and c what each probe of its hash table
 * costs (probe_cost, half as much again for each key past the first): the
 * order that minimizes the sum of the probes' costs over a chain of filters
 * whose costs differ (a 20K-row supplier table that keeps a fifth of the
 * lineitems before a 2M-row orders table that keeps a seventh: TPC-H q05).
 * Equal costs (where the ranks order as the shares do), ranks within a tenth,
 * or shares of 1 and more, go by the smaller share; then by the smaller share
 * of the leaf its own conditions keep, then by the smaller.  So a star join
 * meets its most selective dimension first unless it is much costlier to
 * probe, and an unfiltered dimension, which drops nothing, last. */
static int pick_next(JoinSet *js, uint64_t joined, const double *est, const double *sel,
                     bool *connected)
{
    int best = -1;
    double best_share = 1, best_rank = 0, best_cost = 0;
    *connected = false;
    for (int i = 0; i < js->n_leaves; i++) {
        if ((joined & ((uint64_t)1 << i)) || js->host[i] >= 0) {
            continue;
        }
        int lc, rc, n_keys = 0;
        for (int c = 0; c < js->n_conj; c++) {
            ExExpr *le, *re;
            n_keys += !js->used[c] && (is_key(js, c, joined, (uint64_t)1 << i, &lc, &rc) ||
                                       is_expr_key(js, c, joined, (uint64_t)1 << i, &le, &re));
        }
        bool conn = n_keys > 0;
        double share = conn ? join_share(js, joined, i, est, sel) : 1;
        /* each key beyond the first is hashed and compared too */
        /* per probe of its table (larger than the caches: each a trip to
         * memory, which the prefetch only partly hides); coarse on purpose,
         * so that two tables of one class order by their shares alone */
        double cost = pl_jo_probe_cost(est[i] * sel[i]) * (1 + 0.5 * (n_keys > 1 ? n_keys - 1 : 0));
        double rank = share < 1 ? cost / (1 - share) : 0;
        bool better = best < 0 || (conn && !*connected);
        /* Shares within 2% are equal: estimates from sketches differ by
         * noise (two dimensions that both keep every row). */
        bool same = share <= best_share * 1.02 && best_share <= share * 1.02;
        bool ranked = share < 1 && best_share < 1 && cost != best_cost &&
                      (rank > best_rank * 1.1 || best_rank > rank * 1.1);
        if (!better && conn == *connected && ranked) {
            better = rank < best_rank;
        } else if (!better && conn == *connected) {
            better = (!same && share < best_share) ||
                     (same && (sel[i] < sel[best] ||
                               (sel[i] == sel[best] && est[i] * sel[i] < est[best] * sel[best])));
        }
        if (better) {
            best = i;
            best_share = share;
            best_rank = rank;
            best_cost = cost;
            *connected = conn;
        }
    }
    return best;
}

/* Places on join j the conditions not yet used that read the leaves `left`
 * and `right` (exactly those two sets when `exact`, else within them): the
 * column equalities across the two as keys, the rest as a residual.  map
 * gives each clause column's position in j's output, right_base where the
 * right side starts.  False on OOM. */
static bool join_conditions(JoinSet *js, PlNode *j, uint64_t left, uint64_t right, bool exact,
                            const int *map, int right_base)
{
    for (int c = 0; c < js->n_conj; c++) {
        int lc, rc;
        bool reads = exact ? js->mask[c] == (left | right) : (js->mask[c] & ~(left | right)) == 0;
        if (js->used[c] || !reads) {
            continue;
        }
        js->used[c] = true;
        if (is_key(js, c, left, right, &lc, &rc)) {
            j->left_keys[j->n_join_keys] = map[lc];
            j->right_keys[j->n_join_keys++] = map[rc] - right_base;
            continue;
        }
        ExExpr *r = remap(js->b, js->conj[c], map);
        j->residual = r && j->residual ? pl_make_and(js->b, j->residual, r) : r;
        if (j->residual == NULL) {
            return false;
        }
    }
    return true;
}

/* An inner join of l and r (output l's columns then r's) with room for
 * max_keys keys; NULL on OOM. */
static PlNode *inner_join(PlBinder *b, PlNode *l, PlNode *r, int max_keys)
{
    PlNode *j = pl_node_new(b->arena, PL_JOIN, l->n_cols + r->n_cols);
    if (j == NULL) {
        return oom(b);
    }
    j->child = l;
    j->right = r;
    j->join_type = EX_JOIN_INNER;
    memcpy(j->types, l->types, sizeof(CmType) * (size_t)l->n_cols);
    memcpy(j->types + l->n_cols, r->types, sizeof(CmType) * (size_t)r->n_cols);
    memcpy(j->names, l->names, sizeof(char *) * (size_t)l->n_cols);
    memcpy(j->names + l->n_cols, r->names, sizeof(char *) * (size_t)r->n_cols);
    j->left_keys = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(max_keys + 1));
    j->right_keys = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(max_keys + 1));
    return j->left_keys && j->right_keys ? j : oom(b);
}

/* Every leaf of the set, as bits. */
static uint64_t all_leaves(const JoinSet *js)
{
    return js->n_leaves == 64 ? ~(uint64_t)0 : ((uint64_t)1 << js->n_leaves) - 1;
}

/* The leaf and its satellites, theirs too, as bits. */
static uint64_t group_of(const JoinSet *js, int leaf)
{
    uint64_t g = (uint64_t)1 << leaf;
    for (int f = 0; f < js->n_leaves; f++) {
        g |= js->host[f] == leaf ? group_of(js, f) : 0;
    }
    return g;
}

static int pick_next(JoinSet *js, uint64_t joined, const double *est, const double *sel,
                     bool *connected);

/* Notes a join of the leaves `probe` with `build`, for pl_jo_cost. */
static void record_step(JoinSet *js, uint64_t probe, uint64_t build)
{
    if (js->n_steps < MAX_LEAVES) {
        js->step_probe[js->n_steps] = probe;
        js->step_build[js->n_steps++] = build;
    }
}

/* map less base: clause columns' positions within a subtree placed at base
 * (map itself at 0); NULL on OOM. */
static int *shifted(JoinSet *js, int *map, int base)
{
    if (base == 0) {
        return map;
    }
    int *local = cm_arena_alloc(js->b->arena, sizeof(int) * (size_t)(js->n_cols + 1));
    if (local == NULL) {
        return oom(js->b);
    }
    for (int c = 0; c < js->n_cols; c++) {
        local[c] = map[c] - base;
    }
    return local;
}

/* Leaf i, filtered, with its satellites joined into it (each with its own
 * first), in the order pick_next gives them: one build side, its columns at
 * map positions from base, the host's first and each satellite's after them
 * as if they were one leaf.  The equalities between the parts are the keys,
 * their other conditions within the group a residual. */
static PlNode *group_node(JoinSet *js, int i, int *map, int base)
{
    PlBinder *b = js->b;
    PlNode *n = filtered_leaf(js, i, map, base);
    uint64_t have = (uint64_t)1 << i;
    int host[MAX_LEAVES];
    memcpy(host, js->host, sizeof host);
    for (;;) {
        /* pick_next among i's satellites not joined yet: every other leaf
         * passes for joined, and they for leaves of their own */
        uint64_t left = 0;
        for (int f = 0; f < js->n_leaves; f++) {
            if (host[f] == i && !((have >> f) & 1)) {
                left |= group_of(js, f);
                js->host[f] = -1;
            }
        }
        bool connected;
        int f = n != NULL && left != 0
                    ? pick_next(js, all_leaves(js) & ~left, js->rows, js->eff, &connected)
                    : -1;
        memcpy(js->host, host, sizeof host);
        if (f < 0 || n == NULL) {
            break;
        }
        PlNode *sn = group_node(js, f, map, base + n->n_cols);
        PlNode *j = sn ? inner_join(b, n, sn, js->n_conj) : NULL;
        /* Positions inside the pair; only the group's columns are read. */
        int *local = j ? shifted(js, map, base) : NULL;
        if (local == NULL) {
            return NULL;
        }
        uint64_t g = group_of(js, f);
        record_step(js, have, g);
        n = join_conditions(js, j, have, g, false, local, n->n_cols) ? j : NULL;
        have |= g;
    }
    return n;
}

static PlNode *tree_node(JoinSet *js, const PlJoinOrder *o, uint64_t s, int *map, int base);

/* cur (the leaves `joined`, its columns at map positions from base) joined
 * with the leaves `bit` as the build side: with o, their subtree in that
 * order (tree_node); without, leaf `next` with its satellites (group_node). */
static PlNode *join_sides(JoinSet *js, PlNode *cur, uint64_t joined, uint64_t bit, int next,
                          const PlJoinOrder *o, int *map, int base)
{
    PlBinder *b = js->b;
    uint64_t all = joined | bit;
    /* Equalities of expressions (a.k = b.k + 1, an INTEGER against a BIGINT
     * through a cast) become keys too: each side computes its expression as
     * an extra column, which the clause's final projection drops.  Without
     * them the join would be a nested loop over every pair. */
    ExExpr *lx[MAX_TERMS], *rx[MAX_TERMS];
    int n_x = 0, x_base = cur->n_cols;
    bool col_key = false;
    for (int c = 0; c < js->n_conj; c++) {
        int lc, rc;
        col_key |= !js->used[c] && is_key(js, c, joined, bit, &lc, &rc);
    }
    for (int c = 0; c < js->n_conj && !col_key && n_x < MAX_TERMS; c++) {
        if (!js->used[c] && (js->mask[c] & ~all) == 0 &&
            is_expr_key(js, c, joined, bit, &lx[n_x], &rx[n_x])) {
            js->used[c] = true;
            n_x++;
        }
    }
    /* Without a key, up to two inequalities of expressions across the sides
     * (b.t BETWEEN a.t - 5 AND a.t + 5) are computed the same way, and the
     * comparison of their two new columns replaces each: the physical
     * planner makes such a join a range join over them (join_bounds). */
    int n_b = 0, bound_conj[2];
    bool l_first[2];
    for (int c = 0; c < js->n_conj && !col_key && n_x == 0 && n_b < 2; c++) {
        if (!js->used[c] && (js->mask[c] & ~all) == 0 &&
            is_expr_bound(js, c, joined, bit, &lx[n_b], &rx[n_b], &l_first[n_b])) {
            js->used[c] = true;
            bound_conj[n_b++] = c;
        }
    }
    /* a side's operand the two bounds share is one column (x BETWEEN b.t - 1
     * AND b.t + 1 sorts b on one t: a band, searched at both ends) */
    bool l_one = n_b == 2 && pl_expr_equal(lx[0], lx[1]);
    bool r_one = n_b == 2 && pl_expr_equal(rx[0], rx[1]);
    int n_lextra = n_x + n_b - l_one, n_rextra = n_x + n_b - r_one; /* n_x or n_b is 0 */
    int *local = shifted(js, map, base);
    if (local == NULL ||
        (n_lextra > 0 && (cur = with_columns(b, cur, lx, n_lextra, local)) == NULL)) {
        return NULL;
    }
    int right_base = base + cur->n_cols;
    PlNode *leaf =
        o ? tree_node(js, o, bit, map, right_base) : group_node(js, next, map, right_base);
    int leaf_base = leaf ? leaf->n_cols : 0;
    if (leaf != NULL && n_rextra > 0) {
        int *rlocal = shifted(js, map, right_base); /* positions in the build side */
        leaf = rlocal ? with_columns(b, leaf, rx, n_rextra, rlocal) : NULL;
    }
    PlNode *j = leaf ? inner_join(b, cur, leaf, js->n_conj) : NULL;
    if (j == NULL || (local = shifted(js, map, base)) == NULL) {
        return NULL;
    }
    for (int i = 0; i < n_x; i++) {
        j->left_keys[j->n_join_keys] = x_base + i;
        j->right_keys[j->n_join_keys++] = leaf_base + i;
    }
    for (int i = 0; i < n_b; i++) {
        const ExExpr *e = js->conj[bound_conj[i]];
        CmType t = e->args[0]->type;
        ExExpr *pc = ex_expr_column(b->arena, x_base + (l_one ? 0 : i), t);
        ExExpr *bc = ex_expr_column(b->arena, cur->n_cols + leaf_base + (r_one ? 0 : i), t);
        ExExpr *args[2] = {l_first[i] ? pc : bc, l_first[i] ? bc : pc};
        ExExpr *cmp = pc && bc ? pl_make_call(b, e->name, args, 2, e->src_off) : NULL;
        j->residual = cmp && j->residual ? pl_make_and(b, j->residual, cmp) : cmp;
        if (j->residual == NULL) {
            return cmp ? NULL : oom(b);
        }
    }
    record_step(js, joined, bit);
    return join_conditions(js, j, joined, bit, false, local, cur->n_cols) ? j : NULL;
}

/* The leaves s joined in the order o gives (its probe part first), their
 * columns at map positions from base. */
static PlNode *tree_node(JoinSet *js, const PlJoinOrder *o, uint64_t s, int *map, int base)
{
    if ((s & (s - 1)) == 0) {
        return filtered_leaf(js, __builtin_ctzll(s), map, base);
    }
    uint64_t p = o->probe[s];
    PlNode *l = tree_node(js, o, p, map, base);
    return l ? join_sides(js, l, p, s ^ p, -1, o, map, base) : NULL;
}

/* Is conjunct c an equality (of columns or expressions): an edge of the join
 * graph, where other conditions are residuals wherever they fall? */
static bool is_equality(const JoinSet *js, int c)
{
    const ExExpr *e = js->conj[c];
    return e->kind == EX_E_FUNC && strcmp(e->name, "=") == 0 && e->n_args == 2;
}

/* eff[i]: the share of leaf i its own conditions and its satellites' joins
 * keep (each satellite's share of it at most 1). */
static void group_share(JoinSet *js, int i, const double *est, const double *sel, double *eff)
{
    eff[i] = sel[i];
    for (int f = 0; f < js->n_leaves; f++) {
        if (js->host[f] == i) {
            group_share(js, f, est, sel, eff);
            double s = join_share(js, (uint64_t)1 << i, f, est, eff);
            eff[i] *= s < 1 ? s : 1;
        }
    }
}

/* A satellite is a leaf which, filtered by its own conditions or by its own
 * satellites, has all its equalities with the other leaves go to one leaf,
 * its host, other than the streaming one (TPC-DS's d3 of catalog_sales in
 * q17 and q25; TPC-H q05's region of nation, and nation of supplier).  It is
 * joined into its host before the host meets the stream, so the host's build
 * side is filtered by it instead of carrying all its rows (1.4M of
 * catalog_sales, where the dates keep a tenth; q05's 100K suppliers, where
 * the region keeps a fifth).  Its other conditions with leaves outside the
 * group are residuals, placed where the two meet.  Satellites found, eff gets
 * each leaf's share with its group's joins (group_share): what the stream
 * keeps meeting it. */
static void find_satellites(JoinSet *js, int first, const double *est, const double *sel,
                            double *eff)
{
    for (int f = 0; f < js->n_leaves; f++) {
        js->host[f] = -1;
        eff[f] = sel[f];
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int f = 0; f < js->n_leaves; f++) {
            if (f == first || js->host[f] >= 0 || eff[f] >= 1) {
                continue;
            }
            uint64_t g = group_of(js, f), nb = 0;
            for (int c = 0; c < js->n_conj; c++) {
                nb |= (js->mask[c] & g) && is_equality(js, c) ? js->mask[c] & ~g : 0;
            }
            if (nb == 0 || (nb & (nb - 1)) != 0 || (nb >> first) & 1) {
                continue;
            }
            bool key = false;
            for (int c = 0; c < js->n_conj && !key; c++) {
                int lc, rc;
                key = js->mask[c] == (nb | ((uint64_t)1 << f)) && is_key(js, c, nb, g, &lc, &rc);
            }
            int h = 0;
            while (!((nb >> h) & 1)) {
                h++;
            }
            if (key) {
                js->host[f] = h;
                for (int i = 0; i < js->n_leaves; i++) {
                    if (js->host[i] < 0) {
                        group_share(js, i, est, sel, eff);
                    }
                }
                changed = true;
            }
        }
    }
}

/* The class of column c: the root of its chain in cls (a union-find). */
static int class_of(const int *cls, int c)
{
    while (cls[c] != c) {
        c = cls[c];
    }
    return c;
}

/* The inner joins of js as a graph for pl_jo_best, est[i] x sel[i] the rows
 * of leaf i after its own conditions.  False when there are too many leaves
 * or conditions for one. */
static bool join_graph(JoinSet *js, const double *est, const double *sel, PlJoinGraph *g)
{
    int n = js->n_leaves, *cls = NULL, key_col[PL_JO_MAX_KEYS];
    g->n_leaves = n;
    g->n_keys = g->n_other = 0;
    g->cfg = js->b->cfg;
    if (n > PL_JO_MAX_LEAVES ||
        (cls = cm_arena_alloc(js->b->arena, sizeof(int) * (size_t)(js->n_cols + 1))) == NULL) {
        return false;
    }
    for (int c = 0; c < js->n_cols; c++) {
        cls[c] = c;
    }
    for (int i = 0; i < n; i++) {
        g->rows[i] = est[i] * sel[i];
        g->width[i] = pl_est_row_width(js->leaves[i].node);
        g->expr_edges[i] = 0;
        for (int j = 0; j < n; j++) {
            g->pk_rows[i][j] = 0;
        }
    }
    for (int c = 0; c < js->n_conj; c++) {
        uint64_t m = js->mask[c];
        if (js->used[c] || (m & (m - 1)) == 0) {
            continue; /* placed, or one leaf's own */
        }
        int a = __builtin_ctzll(m), bl = 63 - __builtin_clzll(m), lc, rc;
        uint64_t ma = (uint64_t)1 << a, mb = (uint64_t)1 << bl;
        ExExpr *le, *re;
        bool pair = (m & ~(ma | mb)) == 0;
        if (pair && is_key(js, c, ma, mb, &lc, &rc)) {
            if (g->n_keys == PL_JO_MAX_KEYS) {
                return false;
            }
            PlJoKey *k = &g->keys[g->n_keys++];
            const Leaf *la = &js->leaves[a], *lb = &js->leaves[bl];
            k->a = a;
            k->b = bl;
            pl_est_column(js->est, la->node, lc - la->offset, &k->ka);
            pl_est_column(js->est, lb->node, rc - lb->offset, &k->kb);
            key_col[g->n_keys - 1] = lc;
            cls[class_of(cls, lc)] = class_of(cls, rc);
        } else if (pair &&
                   (is_expr_key(js, c, ma, mb, &le, &re) || is_expr_key(js, c, mb, ma, &le, &re))) {
            g->expr_edges[a] |= (uint16_t)mb;
            g->expr_edges[bl] |= (uint16_t)ma;
        } else if (g->n_other < PL_JO_MAX_OTHER) {
            g->other[g->n_other++] = (uint16_t)m;
        } else {
            return false;
        }
    }
    for (int k = 0; k < g->n_keys; k++) {
        g->keys[k].cls = class_of(cls, key_col[k]);
    }
    for (int i = 0; i < n; i++) { /* keys covering a side's primary key */
        for (int j = 0; j < n; j++) {
            int lcols[MAX_TERMS], rcols[MAX_TERMS], m = 0;
            for (int c = 0; c < js->n_conj && i != j && m < MAX_TERMS; c++) {
                m += !js->used[c] &&
                     is_key(js, c, (uint64_t)1 << i, (uint64_t)1 << j, &lcols[m], &rcols[m]);
            }
            double rows;
            if (m > 0 && covers_key(js, j, rcols, m, &rows) && rows > 0) {
                g->pk_rows[i][j] = rows;
            }
        }
    }
    return true;
}

/* The best tree by cost of js's inner joins into *o (its graph in *g, and
 * js->used as it is now in *used, for building it after the greedy order),
 * or *o NULL when there is none to weigh: ordering by cost is off, the clause
 * has fewer than three leaves or more than PL_JO_MAX_LEAVES, or its leaves
 * are not all joined by equalities.  False on OOM. */
static bool cost_order(JoinSet *js, const double *est, const double *sel, PlJoinGraph **g,
                       PlJoinOrder **o, bool **used)
{
    PlBinder *b = js->b;
    *o = NULL;
    if ((b->cfg != NULL && !b->cfg->join_enumeration) || js->n_leaves < 3 ||
        js->n_leaves > PL_JO_MAX_LEAVES) {
        return true;
    }
    *g = cm_arena_alloc(b->arena, sizeof **g);
    PlJoinOrder *best = cm_arena_alloc(b->arena, sizeof *best);
    *used = cm_arena_alloc(b->arena, sizeof(bool) * (size_t)(js->n_conj + 1));
    if (*g == NULL || best == NULL || *used == NULL) {
        oom(b);
        return false;
    }
    if (join_graph(js, est, sel, *g) && pl_jo_best(*g, best)) {
        memcpy(*used, js->used, sizeof(bool) * (size_t)js->n_conj);
        *o = best;
    }
    return true;
}

static PlNode *order_joins(JoinSet *js);

/* Orders the inner joins of the set and restores the clause's column order. */
static PlNode *plan_joins(JoinSet *js)
{
    js->est = NULL;
    PlNode *n = order_joins(js);
    pl_est_free(js->est);
    js->est = NULL;
    return n;
}

static PlNode *order_joins(JoinSet *js)
{
    PlBinder *b = js->b;
    double est[MAX_LEAVES], sel[MAX_LEAVES], eff[MAX_LEAVES];
    int first = 0;
    ExExpr **own = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(js->n_conj + 1));
    if (own == NULL) {
        return oom(b);
    }
    js->est = pl_est_new(); /* the leaves do not change until the joins are placed */
    for (int i = 0; i < js->n_leaves; i++) {
        est[i] = pl_est_rows(js->est, js->leaves[i].node);
        /* The share of the leaf its own conditions keep (a condition with a
         * subquery, already applied, a guessed quarter). */
        int n_own = 0;
        for (int c = 0; c < js->n_conj; c++) {
            if (js->mask[c] == (uint64_t)1 << i && !js->used[c]) { /* else in the node */
                own[n_own++] = js->conj[c];
            }
        }
        sel[i] = pl_est_conjuncts(js->est, js->leaves[i].node, js->leaves[i].offset, own, n_own);
        for (int k = 0; k < js->pushed[i]; k++) {
            sel[i] *= 0.25;
        }
        /* The leaf with the most rows after its own conditions streams: the
         * others are built into hash tables.  (TPC-H q12: lineitem filtered
         * to 31K rows built, and 1.5M orders probing it, instead of a 118 MB
         * table of orders.) */
        if (est[i] * sel[i] > est[first] * sel[first]) {
            first = i;
        }
    }
    find_satellites(js, first, est, sel, eff);
    js->rows = est;
    js->eff = eff;
    int *map = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(js->n_cols + 1));
    if (map == NULL) {
        return oom(b);
    }
    PlJoinOrder *o = NULL;
    PlJoinGraph *g = NULL;
    bool *greedy_used = NULL;
    if (!cost_order(js, est, sel, &g, &o, &greedy_used)) {
        return NULL;
    }
    js->n_steps = 0;
    PlNode *cur = filtered_leaf(js, first, map, 0);
    uint64_t joined = (uint64_t)1 << first;
    uint64_t every = all_leaves(js);
    while (joined != every && cur != NULL) {
        bool connected;
        int next = pick_next(js, joined, est, eff, &connected);
        if (next < 0) {
            cm_err_set(b->err, CM_INTERNAL, -1, "join order: a table was left out");
            return NULL;
        }
        cur = join_sides(js, cur, joined, group_of(js, next), next, NULL, map, 0);
        joined |= group_of(js, next);
    }
    /* The tree by cost replaces the greedy order only when it costs well
     * under it: the greedy order's shares come from the same estimates, and
     * where the two are close the greedy one's tie-breaks have been measured. */
    if (cur != NULL && o != NULL &&
        o->cost[every] < DP_GAIN * pl_jo_cost(g, o, js->step_probe, js->step_build, js->n_steps)) {
        memcpy(js->used, greedy_used, sizeof(bool) * (size_t)js->n_conj);
        cur = tree_node(js, o, every, map, 0);
    }
    for (int c = 0; c < js->n_conj && cur != NULL; c++) {
        if (!js->used[c]) { /* conditions on no table at all */
            ExExpr *r = remap(b, js->conj[c], map);
            cur = r ? pl_filter(b, cur, r, js->conj[c]->src_off) : NULL;
        }
    }
    if (cur == NULL || js->n_leaves == 1) {
        return cur;
    }
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(js->n_cols + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(js->n_cols + 1));
    if (cols == NULL || names == NULL) {
        return oom(b);
    }
    for (int c = 0; c < js->n_cols; c++) {
        cols[c] = ex_expr_column(b->arena, map[c], js->cols[c].type);
        names[c] = js->cols[c].name;
        if (cols[c] == NULL) {
            return oom(b);
        }
    }
    return pl_project(b, cur, js->n_cols, cols, names);
}

/* ---- outer joins ----------------------------------------------------------------------- */

static PlNode *bind_outer_join(PlBinder *b, const PsFrom *f, PlScope *sc, int *n_left, JoinSet *js);

/* USING (x) and NATURAL on an outer join: the unqualified x, in the left twin's
 * place (as DuckDB), is the left twin for LEFT, the right one for RIGHT and
 * COALESCE(a.x, b.x) for FULL; the twins stay reachable qualified only. For
 * RIGHT and FULL the merged column is computed and marked `merged`, so that a
 * condition on it never counts as rejecting the NULLs of the left side
 * (rejected_outer). */
static PlNode *bind_outer(PlBinder *b, const PsFrom *f, PlScope *sc, int *n_left)
{
    JoinSet *js = cm_arena_zalloc(b->arena, sizeof *js);
    if (js == NULL) {
        return oom(b);
    }
    PlNode *j = bind_outer_join(b, f, sc, n_left, js);
    if (j == NULL || (!f->natural && f->using_cols == NULL)) {
        return j;
    }
    int n_pairs = js->n_using;
    const int *pairs = js->using_pairs;
    if (f->join_type == PS_JOIN_LEFT || n_pairs == 0) {
        return j;
    }
    int n = sc->n + n_pairs;
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(n + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(n + 1));
    PlScopeCol *scope = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(n + 1));
    if (cols == NULL || names == NULL || scope == NULL) {
        return oom(b);
    }
    for (int c = 0; c < sc->n; c++) {
        scope[c] = sc->cols[c];
        names[c] = j->names[c];
        if ((cols[c] = ex_expr_column(b->arena, c, j->types[c])) == NULL) {
            return oom(b);
        }
    }
    for (int k = 0; k < n_pairs; k++) {
        int l = pairs[2 * k], r = pairs[2 * k + 1];
        /* the left twin moves to the end, hidden; the merged column takes its place */
        scope[sc->n + k] = sc->cols[l];
        scope[sc->n + k].hidden = true;
        cols[sc->n + k] = cols[l];
        names[sc->n + k] = names[l];
        cols[l] = f->join_type == PS_JOIN_RIGHT ? cols[r]
                                                : pl_make_coalesce(b, cols[l], cols[r], f->src_off);
        if (cols[l] == NULL) {
            return NULL;
        }
        scope[l] = (PlScopeCol){.name = sc->cols[l].name, .type = cols[l]->type, .merged = true};
    }
    sc->n = n;
    sc->cols = scope;
    return pl_project(b, j, n, cols, names);
}

/* An outer join's ON conditions that read only its build side (the side
 * whose rows appear only where they match: the right of a LEFT JOIN, the
 * left of a RIGHT JOIN) filter that side before the join, and pushed[c] says
 * which: a build row that fails one can match no row, which is all the ON
 * condition says of it.  TPC-H q13's `o_comment NOT LIKE '%special%requests%'`
 * then filters orders at its scan, instead of every pair at the join, and the
 * comments no longer travel to the join's table.  Not for FULL, whose build
 * rows appear unmatched too, nor for a volatile condition (random() is
 * evaluated per pair in the ON). */
static PlNode *filter_build_side(JoinSet *js, const PsFrom *f, PlNode *bn, int build,
                                 const bool *xkey, bool *pushed)
{
    PlBinder *b = js->b;
    const Leaf *leaf = &js->leaves[build];
    uint64_t bbit = (uint64_t)1 << build;
    int *local = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(js->n_cols + 1));
    if (local == NULL) {
        return oom(b);
    }
    for (int c = 0; c < js->n_cols; c++) {
        local[c] = c >= leaf->offset && c < leaf->offset + leaf->n_cols ? c - leaf->offset : -1;
    }
    for (int c = 0; c < js->n_conj && f->join_type != PS_JOIN_FULL; c++) {
        const ExExpr *e = js->conj[c];
        if (xkey[c] || leaves_of(js, e) != bbit || ex_expr_is_volatile(e)) {
            continue;
        }
        ExExpr *x = remap(b, e, local);
        if (x == NULL || (bn = pl_filter(b, bn, x, f->src_off)) == NULL) {
            return NULL;
        }
        pushed[c] = true;
    }
    return bn;
}

static PlNode *bind_outer_join(PlBinder *b, const PsFrom *f, PlScope *sc, int *n_left, JoinSet *js)
{
    js->b = b;
    PlScope ls, rs;
    PlNode *l = pl_bind_from_where(b, f->left, NULL, &ls);
    PlNode *r = l ? pl_bind_from_where(b, f->right, NULL, &rs) : NULL;
    if (r == NULL || !add_leaf(js, l, &ls) || !add_leaf(js, r, &rs)) {
        return NULL;
    }
    *n_left = ls.n;
    if (f->natural || f->using_cols != NULL) {
        js->using_pairs = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(2 * js->n_cols + 2));
        if (js->using_pairs == NULL) {
            return oom(b);
        }
        if (!add_using(js, f, 0, ls.n, js->n_cols, js->using_pairs, &js->n_using)) {
            return NULL;
        }
    }
    if (f->on != NULL && !bind_condition(js, f->on, "ON")) {
        return NULL;
    }
    /* RIGHT is LEFT with the sides swapped: the preserved side probes. */
    bool swap = f->join_type == PS_JOIN_RIGHT;
    int probe = swap ? 1 : 0, build = 1 - probe;
    int *map = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(js->n_cols + 1));
    if (map == NULL) {
        return oom(b);
    }
    for (int c = 0; c < js->leaves[probe].n_cols; c++) {
        map[js->leaves[probe].offset + c] = c;
    }
    uint64_t pbit = (uint64_t)1 << probe, bbit = (uint64_t)1 << build;
    /* With no column = column key, equalities of expressions become keys as
     * for inner joins (see join_sides): each side computes its expression as
     * an extra column, dropped by the projection at the end. */
    PlNode *pn = js->leaves[probe].node, *bn = js->leaves[build].node;
    ExExpr *lx[MAX_TERMS], *rx[MAX_TERMS];
    bool *xkey = cm_arena_zalloc(b->arena, (size_t)(js->n_conj + 1));
    int n_x = 0, p_base = pn->n_cols, b_base = bn->n_cols;
    bool col_key = false;
    for (int c = 0; c < js->n_conj; c++) {
        int lc, rc;
        col_key |= is_key(js, c, pbit, bbit, &lc, &rc);
    }
    for (int c = 0; c < js->n_conj && !col_key && xkey != NULL && n_x < MAX_TERMS; c++) {
        if (is_expr_key(js, c, pbit, bbit, &lx[n_x], &rx[n_x])) {
            xkey[c] = true;
            n_x++;
        }
    }
    if (xkey == NULL) {
        return oom(b);
    }
    if (n_x > 0) {
        int *local = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(js->n_cols + 1));
        if (local == NULL) {
            return oom(b);
        }
        for (int c = 0; c < js->n_cols; c++) {
            local[c] =
                c - js->leaves[c >= js->leaves[build].offset &&
                                       c < js->leaves[build].offset + js->leaves[build].n_cols
                                   ? build
                                   : probe]
                        .offset;
        }
        if ((pn = with_columns(b, pn, lx, n_x, local)) == NULL ||
            (bn = with_columns(b, bn, rx, n_x, local)) == NULL) {
            return NULL;
        }
    }
    bool *pushed = cm_arena_zalloc(b->arena, (size_t)(js->n_conj + 1));
    if (pushed == NULL || (bn = filter_build_side(js, f, bn, build, xkey, pushed)) == NULL) {
        return pushed ? NULL : oom(b);
    }
    PlNode *j = pl_node_new(b->arena, PL_JOIN, pn->n_cols + bn->n_cols);
    if (j == NULL) {
        return oom(b);
    }
    for (int c = 0; c < js->leaves[build].n_cols; c++) {
        map[js->leaves[build].offset + c] = pn->n_cols + c;
    }
    j->child = pn;
    j->right = bn;
    j->join_type = f->join_type == PS_JOIN_FULL ? EX_JOIN_FULL : EX_JOIN_LEFT;
    j->left_keys = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(js->n_conj + 1));
    j->right_keys = cm_arena_alloc(b->arena, sizeof(int) * (size_t)(js->n_conj + 1));
    if (j->left_keys == NULL || j->right_keys == NULL) {
        return oom(b);
    }
    memcpy(j->types, pn->types, sizeof(CmType) * (size_t)pn->n_cols);
    memcpy(j->types + pn->n_cols, bn->types, sizeof(CmType) * (size_t)bn->n_cols);
    memcpy(j->names, pn->names, sizeof(char *) * (size_t)pn->n_cols);
    memcpy(j->names + pn->n_cols, bn->names, sizeof(char *) * (size_t)bn->n_cols);
    for (int c = 0; c < js->n_cols; c++) {
        j->names[map[c]] = js->cols[c].name;
    }
    for (int i = 0; i < n_x; i++) {
        j->left_keys[j->n_join_keys] = p_base + i;
        j->right_keys[j->n_join_keys++] = b_base + i;
    }
    for (int c = 0; c < js->n_conj; c++) {
        int lc, rc;
        if (xkey[c] || pushed[c]) {
            continue;
        }
        if (is_key(js, c, pbit, bbit, &lc, &rc)) {
            j->left_keys[j->n_join_keys] = map[lc];
            j->right_keys[j->n_join_keys++] = map[rc] - pn->n_cols;
            continue;
        }
        ExExpr *e = remap(b, js->conj[c], map);
        j->residual = e && j->residual ? pl_make_and(b, j->residual, e) : e;
        if (j->residual == NULL) {
            return NULL;
        }
    }
    sc->n = js->n_cols;
    sc->cols = js->cols;
    if (!swap && n_x == 0) {
        return j;
    }
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(js->n_cols + 1));
    const char **names = cm_arena_alloc(b->arena, sizeof(char *) * (size_t)(js->n_cols + 1));
    if (cols == NULL || names == NULL) {
        return oom(b);
    }
    for (int c = 0; c < js->n_cols; c++) {
        cols[c] = ex_expr_column(b->arena, map[c], js->cols[c].type);
        names[c] = js->cols[c].name;
        if (cols[c] == NULL) {
            return oom(b);
        }
    }
    return pl_project(b, j, js->n_cols, cols, names);
}

/* ---- entry ------------------------------------------------------------------------------- */

static bool split_conjunct(JoinSet *js, const PsExpr *e, const PsExpr **deferred, int *n_deferred);

/* Splits an AND tree into the conjuncts with and without subqueries, in the
 * order written.  The chain a AND b AND c is ((a AND b) AND c): its `left`
 * operands are followed by iteration, as it is as deep as it is long. */
static bool split_where(JoinSet *js, const PsExpr *e, const PsExpr **deferred, int *n_deferred)
{
    int n = 0;
    for (const PsExpr *l = e; l->kind == PS_EX_BINARY && l->op == PS_OP_AND; l = l->left) {
        n++;
    }
    const PsExpr **rights = cm_malloc(sizeof *rights * (size_t)(n ? n : 1));
    if (rights == NULL) {
        cm_err_set(js->b->err, CM_OOM, e->src_off, "out of memory");
        return false;
    }
    const PsExpr *l = e;
    for (int i = n - 1; i >= 0; i--, l = l->left) {
        rights[i] = l->right;
    }
    bool is_ok = split_conjunct(js, l, deferred, n_deferred);
    for (int i = 0; i < n && is_ok; i++) {
        is_ok = split_where(js, rights[i], deferred, n_deferred);
    }
    cm_free(rights);
    return is_ok;
}

/* One conjunct (not an AND) of split_where. */
static bool split_conjunct(JoinSet *js, const PsExpr *e, const PsExpr **deferred, int *n_deferred)
{
    if (!pl_has_subquery(e)) {
        return bind_condition(js, e, "WHERE");
    }
    if (*n_deferred == MAX_CONJ) {
        cm_err_set(js->b->err, CM_LIMIT, e->src_off, "too many conditions in one query");
        return false;
    }
    deferred[(*n_deferred)++] = e;
    return true;
}

/* The MARK join among the joins and filters from *input down to `base`
 * (exclusive: those the conditions' subqueries attached, each keeping its
 * input's columns first) whose mark is column c, or NULL; the link to it. */
static PlNode **mark_join_of(PlNode **input, const PlNode *base, int c)
{
    for (PlNode **at = input; *at != base && (*at)->n_cols > c; at = &(*at)->child) {
        PlNode *j = *at;
        if (j->kind == PL_JOIN && j->join_type == EX_JOIN_MARK && j->child->n_cols == c) {
            return j->n_cols == c + 1 ? at : NULL;
        }
        if (j->kind != PL_JOIN && j->kind != PL_FILTER) {
            return NULL;
        }
    }
    return NULL;
}

/* A conjunct of pred that is a subquery's mark column alone (`x IN (SELECT
 * ...)`, `EXISTS (...)` as a WHERE condition of their own) keeps the rows
 * whose mark is TRUE: the rows a SEMI join keeps, whatever the mark would
 * have said of the others (FALSE or NULL).  The MARK join that makes it
 * (mark_join_of: never one of base's own) becomes that SEMI join, under a
 * projection that gives the column back as TRUE for anything else that reads
 * it, and the conjunct leaves *pred (NULL when none is left).  The planner
 * then estimates the join by what it keeps (a MARK join keeps every row), and
 * a partitioned one gets a runtime filter (executor/bloom.h).  *input is the
 * top of the chain; false on OOM. */
static bool marks_as_semi(PlBinder *b, PlNode **input, const PlNode *base, ExExpr **pred)
{
    ExExpr *conj[MAX_TERMS];
    int n_conj = 0;
    if (!flatten(*pred, EX_E_AND, conj, &n_conj)) {
        return true; /* too many conditions to take apart: left as they are */
    }
    ExExpr *rest = NULL;
    for (int i = 0; i < n_conj; i++) {
        bool is_mark = conj[i]->kind == EX_E_COLUMN && conj[i]->type.id == CM_T_BOOL;
        PlNode **at = is_mark ? mark_join_of(input, base, conj[i]->col) : NULL;
        if (at == NULL) {
            if ((rest = rest ? pl_make_and(b, rest, conj[i]) : conj[i]) == NULL) {
                return false;
            }
            continue;
        }
        PlNode *j = *at;
        int c = conj[i]->col;
        ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(c + 1));
        CmValue yes = {.type = cm_type_make(CM_T_BOOL), .i = 1};
        if (cols == NULL || (cols[c] = ex_expr_const(b->arena, &yes)) == NULL) {
            oom(b);
            return false;
        }
        for (int k = 0; k < c; k++) {
            if ((cols[k] = ex_expr_column(b->arena, k, j->types[k])) == NULL) {
                oom(b);
                return false;
            }
        }
        j->join_type = EX_JOIN_SEMI;
        j->join_mark_plain = false;
        j->n_cols = c;
        if ((*at = pl_project(b, j, c + 1, cols, j->names)) == NULL) {
            return false;
        }
    }
    *pred = rest;
    return true;
}

/* The conditions asts[0..n), which hold subqueries, applied to n (whose
 * columns are `scope`): each subquery joins its result on, the filter runs,
 * and the extra columns are dropped.  js is the FROM clause n joins, or NULL
 * when n is one of its tables.  A correlated subquery takes its outer values
 * from base (n, or what n filters: a superset of n's values is enough), so
 * the subqueries already in n are not planned again inside it. */
static PlNode *filter_with(PlBinder *b, PlNode *n, PlNode *base, const PlScope *scope,
                           const JoinSet *js, const PsExpr **asts, int n_asts)
{
    PlScope sc = {.n = scope->n};
    sc.cols = cm_arena_alloc(b->arena, sizeof(PlScopeCol) * (size_t)(scope->n + 1));
    if (sc.cols == NULL) {
        return oom(b);
    }
    if (scope->n > 0) {
        memcpy(sc.cols, scope->cols, sizeof(PlScopeCol) * (size_t)scope->n);
    }
    PlNode *input = n;
    PlBindCtx ctx = {.b = b,
                     .scope = &sc,
                     .mscope = &sc,
                     .input = &input,
                     .base = base,
                     .js = js,
                     .clause = "WHERE"};
    ExExpr *pred = NULL;
    for (int i = 0; i < n_asts; i++) {
        ctx.filter_top = asts[i];
        ExExpr *e = pl_bind_expr(&ctx, asts[i]);
        e = e ? pl_cast(b, e, cm_type_make(CM_T_BOOL), asts[i]->src_off) : NULL;
        pred = e && pred ? pl_make_and(b, pred, e) : e;
        if (pred == NULL) {
            return NULL;
        }
    }
    if (!marks_as_semi(b, &input, n, &pred)) {
        return NULL;
    }
    PlNode *f = pred != NULL ? pl_filter(b, input, pred, asts[0]->src_off) : input;
    if (f == NULL || f->n_cols == scope->n) {
        return f;
    }
    ExExpr **cols = cm_arena_alloc(b->arena, sizeof(ExExpr *) * (size_t)(scope->n + 1));
    if (cols == NULL) {
        return oom(b);
    }
    for (int c = 0; c < scope->n; c++) {
        if ((cols[c] = ex_expr_column(b->arena, c, f->types[c])) == NULL) {
            return oom(b);
        }
    }
    return pl_project(b, f, scope->n, cols, f->names);
}

/* The conditions asts[0..n) applied to n one after the other, in the order
 * written: each later one reads only the rows the earlier ones kept, and a
 * correlated subquery in it takes its outer values from those rows.  TPC-H
 * q20's `ps_partkey IN (forest parts) AND ps_availqty > (SELECT sum ...
 * WHERE l_partkey = ps_partkey ...)` then sums lineitem for the 84 (part,
 * supplier) pairs the IN keeps at SF 0.01 instead of all 8,000. */
static PlNode *filter_each(PlBinder *b, PlNode *n, const PlScope *scope, const JoinSet *js,
                           const PsExpr **asts, int n_asts)
{
    PlNode *cur = filter_with(b, n, n, scope, js, asts, 1);
    for (int i = 1; cur != NULL && i < n_asts; i++) {
        cur = filter_with(b, cur, cur, scope, NULL, &asts[i], 1);
    }
    return cur;
}

/* The one leaf a condition with subqueries reads (its own columns, and the
 * outer columns of its correlated subqueries), or -1.  Learned by binding it
 * once over the whole clause, onto a stand-in for the joined rows; the result
 * is discarded, and so is an error (binding it for real reports it again). */
static int subquery_leaf(JoinSet *js, const PsExpr *ast, bool *correlated)
{
    PlBinder *b = js->b;
    PlNode *scratch = pl_node_new(b->arena, PL_VALUES, js->n_cols);
    PlScopeCol *cols = cm_arena_alloc(b->arena, sizeof(PlScopeCol) * (size_t)(js->n_cols + 1));
    if (scratch == NULL || cols == NULL) {
        return -1;
    }
    for (int c = 0; c < js->n_cols; c++) {
        scratch->types[c] = js->cols[c].type;
        scratch->names[c] = js->cols[c].name;
    }
    memcpy(cols, js->cols, sizeof(PlScopeCol) * (size_t)js->n_cols);
    PlScope sc = {.n = js->n_cols, .cols = cols};
    PlNode *input = scratch;
    uint64_t refs = 0;
    PlBindCtx ctx = {.b = b,
                     .scope = &sc,
                     .mscope = &sc,
                     .input = &input,
                     .base = scratch,
                     .js = js,
                     .leaf_refs = &refs,
                     .correlated = correlated,
                     .clause = "WHERE"};
    ExExpr *e = pl_bind_expr(&ctx, ast);
    if (e == NULL) {
        cm_err_init(b->err);
        return -1;
    }
    uint64_t m = refs;
    if (m == 0 || (m & (m - 1)) != 0) {
        return -1;
    }
    int leaf = 0;
    while (!(m & ((uint64_t)1 << leaf))) {
        leaf++;
    }
    return leaf;
}

/* True when leaf i is the clause's largest table and the other tables' own
 * conditions are estimated to keep under a quarter of its rows (each joins
 * it on a key, so its conditions keep their share of its rows).  A correlated
 * subquery condition on i then runs after the joins, on their rows, and
 * takes its outer values from them (bind_subquery.c: outer_values): TPC-H
 * q21's EXISTS on lineitem then sees the lines of one nation's suppliers and
 * of finished orders, 1/50 of them, instead of every late line. */
static bool joins_keep_little(const JoinSet *js, int i)
{
    PlEst *est = pl_est_new();
    ExExpr **own = cm_arena_alloc(js->b->arena, sizeof(ExExpr *) * (size_t)(js->n_conj + 1));
    bool largest = est != NULL && own != NULL;
    double keep = 1, rows = largest ? pl_est_rows(est, js->leaves[i].node) : 0;
    for (int j = 0; j < js->n_leaves && largest; j++) {
        if (j == i) {
            continue;
        }
        largest = pl_est_rows(est, js->leaves[j].node) <= rows;
        int n_own = 0;
        for (int c = 0; c < js->n_conj; c++) {
            if (js->mask[c] == (uint64_t)1 << j) {
                own[n_own++] = js->conj[c];
            }
        }
        keep *= pl_est_conjuncts(est, js->leaves[j].node, js->leaves[j].offset, own, n_own);
    }
    pl_est_free(est);
    return largest && keep < 0.25;
}

/* A condition with subqueries that reads one table of the FROM clause filters
 * that table before the joins, not the joined rows after them: TPC-DS q06's
 * d_month_seq = (SELECT ...) keeps 31 of date_dim's 73,049 rows before
 * date_dim meets store_sales, instead of filtering 2.8M joined rows.  Only at
 * the top level: inside a subquery, the trial binding could reach the
 * enclosing query.  Returns how many conditions remain for the joined rows. */
static int push_subquery_conditions(JoinSet *js, const PsExpr **deferred, int n)
{
    int kept = 0;
    for (int i = 0; i < n; i++) {
        bool correlated = false;
        int leaf = subquery_leaf(js, deferred[i], &correlated);
        if (leaf >= 0 && correlated && joins_keep_little(js, leaf)) {
            leaf = -1;
        }
        if (leaf < 0) {
            deferred[kept++] = deferred[i];
            continue;
        }
        Leaf *l = &js->leaves[leaf];
        PlScope sc = {.n = l->n_cols, .cols = js->cols + l->offset};
        if (l->orig == NULL) { /* the leaf's own conditions first: cheaper than subqueries */
            l->orig = l->node = own_filtered(js, leaf, js->used);
            if (l->node == NULL) {
                return -1;
            }
        }
        PlNode *f = filter_with(js->b, l->node, l->orig, &sc, NULL, &deferred[i], 1);
        if (f == NULL) {
            return -1;
        }
        l->node = f;
        js->pushed[leaf]++;
    }
    return kept;
}

/* True when e is a comparison that is not TRUE once a column of [lo, hi)
 * is NULL: that column, or a cast of it, is one of its operands. A merged
 * USING column is not NULL-extended, whatever its place. */
static bool rejects_null(const JoinSet *js, const ExExpr *e, int lo, int hi)
{
    static const char *const cmp[] = {"=", "<>", "<", "<=", ">", ">="};
    bool is_cmp = false;
    for (size_t i = 0; e->kind == EX_E_FUNC && e->n_args == 2 && i < 6 && !is_cmp; i++) {
        is_cmp = strcmp(e->name, cmp[i]) == 0;
    }
    for (int a = 0; is_cmp && a < 2; a++) {
        const ExExpr *x = e->args[a];
        if (x->kind == EX_E_FUNC && x->n_args == 1 && strcmp(x->name, "cast") == 0) {
            x = x->args[0];
        }
        if (x->kind == EX_E_COLUMN && x->col >= lo && x->col < hi && !js->cols[x->col].merged) {
            return true;
        }
    }
    return false;
}

/* The outer joins among the leaves whose NULL-extended rows some condition
 * of the clause rejects: (ss LEFT JOIN sr ON ...), reason WHERE sr_reason_sk
 * = r_reason_sk keeps no row without a return, so the LEFT JOIN is an inner
 * one, and as such its tables can be ordered with the others. */
static int rejected_outer(const JoinSet *js, const PsFrom **out)
{
    int n = 0;
    for (int i = 0; i < js->n_leaves; i++) {
        const Leaf *l = &js->leaves[i];
        bool rejected = false;
        for (int c = 0; l->outer != NULL && c < js->n_conj && !rejected; c++) {
            rejected =
                rejects_null(js, js->conj[c], l->offset + l->null_lo, l->offset + l->null_hi);
        }
        if (rejected) {
            out[n++] = l->outer;
        }
    }
    return n;
}

static PlNode *from_where(PlBinder *b, const PsFrom *from, const PsExpr *where, PlScope *sc,
                          const PsFrom *const *as_inner, int n_as_inner);

PlNode *pl_bind_from_where(PlBinder *b, const PsFrom *from, const PsExpr *where, PlScope *sc)
{
    return from_where(b, from, where, sc, NULL, 0);
}

/* Binds the clause treating the outer joins as_inner[] as inner joins; when
 * its conditions show more outer joins to be inner, binds it again with
 * those added (each round adds one at least, so it ends). */
static PlNode *from_where(PlBinder *b, const PsFrom *from, const PsExpr *where, PlScope *sc,
                          const PsFrom *const *as_inner, int n_as_inner)
{
    PlInject *inj = b->inject; /* only the subquery's own FROM takes it */
    b->inject = NULL;
    JoinSet *js = cm_arena_zalloc(b->arena, sizeof *js);
    if (js == NULL) {
        return oom(b);
    }
    js->b = b;
    js->n_as_inner = n_as_inner;
    for (int i = 0; i < n_as_inner; i++) {
        js->as_inner[i] = as_inner[i];
    }
    if (!collect(js, from)) {
        return NULL;
    }
    if (inj != NULL) {
        PlScope ds = {.n = inj->d->n_cols};
        ds.cols = cm_arena_zalloc(b->arena, sizeof(PlScopeCol) * (size_t)(ds.n + 1));
        if (ds.cols == NULL) {
            return oom(b);
        }
        for (int i = 0; i < ds.n; i++) {
            ds.cols[i] = (PlScopeCol){
                .name = pl_outer_name(b, inj->d, i), .type = inj->d->types[i], .hidden = true};
        }
        inj->outer->inject_offset = js->n_cols;
        if (!add_leaf(js, inj->d, &ds)) {
            return NULL;
        }
        inj->joined = true;
    }
    for (int i = 0; i < js->n_on; i++) {
        if (!bind_condition(js, js->on[i], "ON")) {
            return NULL;
        }
    }
    const PsExpr **deferred = NULL;
    int n_deferred = 0;
    if (where != NULL) {
        deferred = cm_arena_alloc(b->arena, sizeof(PsExpr *) * MAX_CONJ);
        if (deferred == NULL) {
            return oom(b);
        }
        if (!split_where(js, where, deferred, &n_deferred)) {
            return NULL;
        }
    }
    const PsFrom *more[MAX_LEAVES];
    int n_more = inj == NULL ? rejected_outer(js, more) : 0;
    if (n_more > 0 && n_as_inner + n_more <= MAX_LEAVES) {
        const PsFrom **all = cm_arena_alloc(b->arena, sizeof(PsFrom *) * MAX_LEAVES);
        if (all == NULL) {
            return oom(b);
        }
        for (int i = 0; i < n_as_inner; i++) {
            all[i] = as_inner[i];
        }
        memcpy(all + n_as_inner, more, sizeof(PsFrom *) * (size_t)n_more);
        return from_where(b, from, where, sc, all, n_as_inner + n_more);
    }
    if (n_deferred > 0 && b->outer == NULL && js->n_leaves > 1) {
        n_deferred = push_subquery_conditions(js, deferred, n_deferred);
        if (n_deferred < 0) {
            return NULL;
        }
    }
    PlNode *n = plan_joins(js);
    if (n != NULL && n_deferred > 0) {
        PlScope whole = {.n = js->n_cols, .cols = js->cols};
        n = filter_each(b, n, &whole, js, deferred, n_deferred);
    }
    sc->n = js->n_cols;
    sc->cols = js->cols;
    return n;
}

uint64_t pl_join_leaves_of(const JoinSet *js, const int *cols, int n)
{
    uint64_t m = 0;
    for (int k = 0; k < n; k++) {
        int i = leaf_of(js, cols[k]);
        if (i < 0) {
            return ~(uint64_t)0;
        }
        m |= (uint64_t)1 << i;
    }
    return m;
}

PlNode *pl_join_leaf_of(const JoinSet *js, const int *cols, int n, int *local)
{
    int leaf = -1;
    for (int k = 0; k < n; k++) {
        int found = leaf_of(js, cols[k]);
        if (found < 0 || (leaf >= 0 && found != leaf)) {
            return NULL;
        }
        local[k] = cols[k] - js->leaves[found].offset;
        leaf = found;
    }
    /* Under the leaf's own conditions (each row the caller sees passed them),
     * before any pushed subquery condition: those are not planned again. */
    if (leaf < 0) {
        return NULL;
    }
    return js->leaves[leaf].orig ? js->leaves[leaf].orig : own_filtered(js, leaf, NULL);
}
