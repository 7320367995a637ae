/*
 * test_plan.c - pl_node_clone (planner/plan.h): a copy whose nodes and arrays
 * are its own, so that a pass rewriting one tree in place (pl_prune) leaves
 * the other as it was; expressions and tables are shared.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "planner/plan.h"

static CmArena arena;

static void setup(void)
{
    cm_arena_init(&arena, 0);
}

static void teardown(void)
{
    cm_arena_fini(&arena);
}

TestSuite(pl_plan, .init = setup, .fini = teardown);

/* SORT(AGGREGATE(JOIN(PROJECT(GET), VALUES))): every array a node owns. */
static PlNode *sample(void)
{
    CmType i64 = cm_type_make(CM_T_INT64);
    PlNode *get = pl_node_new(&arena, PL_GET, 2);
    get->col_ids = cm_arena_alloc(&arena, 2 * sizeof(int));
    get->col_ids[0] = 0;
    get->col_ids[1] = 3;
    get->types[0] = get->types[1] = i64;
    get->names[0] = "a";
    get->names[1] = "b";
    PlNode *proj = pl_node_new(&arena, PL_PROJECT, 1);
    proj->exprs = cm_arena_alloc(&arena, sizeof(ExExpr *));
    proj->exprs[0] = ex_expr_column(&arena, 1, i64);
    proj->types[0] = i64;
    proj->child = get;
    PlNode *vals = pl_node_new(&arena, PL_VALUES, 1);
    vals->n_rows = 2;
    vals->exprs = cm_arena_alloc(&arena, 2 * sizeof(ExExpr *));
    CmValue one = {.type = i64, .i = 1}, two = {.type = i64, .i = 2};
    vals->exprs[0] = ex_expr_const(&arena, &one);
    vals->exprs[1] = ex_expr_const(&arena, &two);
    vals->types[0] = i64;
    PlNode *join = pl_node_new(&arena, PL_JOIN, 2);
    join->child = proj;
    join->right = vals;
    join->n_join_keys = 1;
    join->left_keys = cm_arena_alloc(&arena, sizeof(int));
    join->right_keys = cm_arena_alloc(&arena, sizeof(int));
    join->left_keys[0] = join->right_keys[0] = 0;
    PlNode *agg = pl_node_new(&arena, PL_AGGREGATE, 2);
    agg->child = join;
    agg->n_keys = 1;
    agg->n_aggs = 1;
    agg->aggs = cm_arena_zalloc(&arena, sizeof(ExAggSpec));
    agg->aggs[0].fn = EX_AGG_STRING_AGG;
    agg->aggs[0].arg = 1;
    agg->aggs[0].n_order = 1;
    agg->aggs[0].order = cm_arena_zalloc(&arena, sizeof(ExSortKey));
    agg->aggs[0].order[0].col = 1;
    PlNode *sort = pl_node_new(&arena, PL_SORT, 2);
    sort->child = agg;
    sort->n_sort_keys = 1;
    sort->sort_keys = cm_arena_zalloc(&arena, sizeof(ExSortKey));
    sort->sort_keys[0].col = 1;
    return sort;
}

Test(pl_plan, clone_owns_its_nodes_and_arrays)
{
    PlNode *n = sample();
    PlNode *c = pl_node_clone(&arena, n);
    cr_assert_not_null(c);
    /* the same tree */
    cr_assert_eq(c->kind, PL_SORT);
    cr_assert_eq(c->child->kind, PL_AGGREGATE);
    cr_assert_eq(c->child->child->kind, PL_JOIN);
    cr_assert_eq(c->child->child->child->child->kind, PL_GET);
    cr_assert_eq(c->child->child->right->n_rows, 2);
    cr_assert_eq(c->child->child->child->child->col_ids[1], 3);
    cr_assert_str_eq(c->child->child->child->child->names[0], "a");
    /* other nodes and arrays: rewriting the copy leaves the original alone */
    PlNode *cget = c->child->child->child->child, *get = n->child->child->child->child;
    cr_assert_neq(cget, get);
    cget->col_ids[1] = 7;
    cget->names[0] = "z";
    cget->n_cols = 1;
    c->sort_keys[0].col = 0;
    c->child->aggs[0].order[0].col = 0;
    c->child->child->left_keys[0] = 1;
    c->child->child->child->exprs[0] = NULL;
    c->child->child->right->exprs[1] = NULL;
    cr_assert_eq(get->col_ids[1], 3);
    cr_assert_str_eq(get->names[0], "a");
    cr_assert_eq(get->n_cols, 2);
    cr_assert_eq(n->sort_keys[0].col, 1);
    cr_assert_eq(n->child->aggs[0].order[0].col, 1);
    cr_assert_eq(n->child->child->left_keys[0], 0);
    cr_assert_not_null(n->child->child->child->exprs[0]);
    cr_assert_not_null(n->child->child->right->exprs[1]);
    /* expressions are shared */
    cr_assert_eq(pl_node_clone(&arena, n)->child->child->child->exprs[0],
                 n->child->child->child->exprs[0]);
}
