/*
 * dims_retail.c - item, store, promotion, reason and inventory of tpcds_gen.
 *
 * Items come in pairs of versions (slowly changing dimension): rows 2j+1 and
 * 2j+2 share i_item_id j+1, its description, category, class, brand and
 * manufacturer; the first version is valid until 2000-10-26, the second from
 * 2000-10-27 on, and each has its own price, size, color, units and manager.
 * i_manufact_id cycles through 1..1000 by item id, so every manufacturer the
 * queries name exists once there are 1000 item ids (SF >= 0.12; 128 exists
 * from 128 ids).  Prices lean cheap (0.09 + 99.90 u^2), as q21 and q6 need
 * items far from the average.  Stores are mostly in Williamson County, TN,
 * in Midway and Fairview, at GMT -5; s_store_name is the syllable of the
 * last digit of s_store_sk ('ese' for 4, 14, ...).  Inventory is one row per
 * (week, item id, warehouse), naming the item version current that week.
 */
#include <stdio.h>

#include "bench/tpcds/gen/gen.h"

#define ITEM_FIRST_START 2450749 /* 1997-10-27 */
#define STORE_OPEN 2450521       /* 1997-03-13 */

/* --------------------------------------------------------------- item */

/* The category (0-based), class id (1-based) and brand number of item id j. */
static void item_kind(const GenCtx *g, int64_t j, int *cat, int *class_id, int *brand_n)
{
    *cat = (int)gen_uniform(gen_rand(g, GS_ITEM_ID, (uint64_t)j, 1), 0, gen_n_categories - 1);
    int n_classes = gen_categories[*cat].n_classes;
    *class_id = (int)gen_uniform(gen_rand(g, GS_ITEM_ID, (uint64_t)j, 2), 1, n_classes);
    *brand_n = (int)gen_uniform(gen_rand(g, GS_ITEM_ID, (uint64_t)j, 3), 1, 9);
}

static void item_row(const GenCtx *g, GenBuf *b, int64_t row)
{
    int64_t j = row / 2;
    bool is_second = row % 2;
    uint64_t u = (uint64_t)row;
    int cat, class_id, brand_n;
    char text[128], word[64];
    item_kind(g, j, &cat, &class_id, &brand_n);
    gen_int(b, row + 1);
    gen_bkey(b, (uint64_t)j + 1);
    gen_date(b, is_second ? GEN_ITEM_SPLIT : ITEM_FIRST_START);
    gen_date(b, is_second ? GEN_NULL : GEN_ITEM_SPLIT - 1);
    gen_text(text, 100, gen_rand(g, GS_ITEM_ID, (uint64_t)j, 4));
    gen_str(b, text);
    double x = (double)(gen_rand(g, GS_ITEM, u, 1) >> 11) / 9007199254740992.0;
    int64_t price = 9 + (int64_t)(9990.0 * x * x);
    gen_dec(b, price);
    gen_dec(b, price * gen_uniform(gen_rand(g, GS_ITEM, u, 2), 30, 90) / 100 + 1);
    gen_int(b, (int64_t)(cat + 1) * 1000000 + class_id * 1000 + brand_n);
    gen_fmt(b, "%s%s #%d", gen_brand_a.v[(brand_n + class_id) % 10], gen_brand_b.v[cat % 10],
            brand_n);
    gen_int(b, class_id);
    gen_str(b, gen_categories[cat].classes[class_id - 1]);
    gen_int(b, cat + 1);
    gen_str(b, gen_categories[cat].name);
    gen_int(b, 1 + j % 1000);
    gen_word(word, sizeof word, 1 + j % 1000);
    gen_str(b, word);
    gen_str(b, gen_pick(&gen_sizes, gen_rand(g, GS_ITEM, u, 3)));
    gen_fmt(b, "%08d%s", (int)gen_uniform(gen_rand(g, GS_ITEM, u, 4), 0, 99999999),
            gen_pick(&gen_colors, gen_rand(g, GS_ITEM, u, 5)));
    gen_str(b, gen_pick(&gen_colors, gen_rand(g, GS_ITEM, u, 6)));
    gen_str(b, gen_pick(&gen_units, gen_rand(g, GS_ITEM, u, 7)));
    gen_str(b, gen_pick(&gen_containers, 0));
    gen_int(b, gen_uniform(gen_rand(g, GS_ITEM, u, 8), 1, 100));
    gen_word(word, sizeof word, j + 1);
    gen_str(b, word);
    gen_eol(b);
}

void gen_item(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        item_row(g, b, row);
    }
}

/* -------------------------------------------------------------- store */

/* Store cities by (s_store_sk - 1) % 10: Midway and Fairview for most. */
static const char *const STORE_CITIES[10] = {
    "Midway", "Fairview", "Midway",      "Fairview",      "Oak Grove",
    "Midway", "Fairview", "Five Points", "Pleasant Hill", "Centerville",
};

static const char *const OTHER_COUNTIES[6] = {"Ziebach County", "Walker County",
                                              "Luce County",    "Richland County",
                                              "Bronx County",   "Franklin Parish"};

static void store_place(const GenCtx *g, GenBuf *b, int64_t sk)
{
    uint64_t u = (uint64_t)sk;
    const GenState *st = gen_pick_state(gen_rand(g, GS_STORE, u, 20));
    bool is_tn = sk % 5 != 0;
    gen_street(g, b, GS_STORE, u);
    gen_str(b, STORE_CITIES[(sk - 1) % 10]);
    gen_str(b, sk % 4 != 3 ? "Williamson County"
                           : OTHER_COUNTIES[gen_uniform(gen_rand(g, GS_STORE, u, 21), 0, 5)]);
    gen_str(b, is_tn ? "TN" : st->code);
    gen_zip(g, b, GS_STORE, u);
    gen_str(b, "United States");
    gen_dec(b, is_tn ? -500 : st->gmt * 100);
    gen_dec(b, gen_uniform(gen_rand(g, GS_STORE, u, 22), 0, 11));
}

static void store_row(const GenCtx *g, GenBuf *b, int64_t sk)
{
    uint64_t u = (uint64_t)sk;
    char text[128];
    gen_int(b, sk);
    gen_bkey(b, (uint64_t)sk);
    gen_date(b, STORE_OPEN);
    gen_null(b); /* s_rec_end_date */
    gen_null(b); /* s_closed_date_sk */
    gen_str(b, gen_syllables.v[sk % 10]);
    gen_int(b, gen_uniform(gen_rand(g, GS_STORE, u, 1), 200, 300));
    gen_int(b, gen_uniform(gen_rand(g, GS_STORE, u, 2), 5000000, 10000000));
    gen_str(b, gen_pick(&gen_hours, gen_rand(g, GS_STORE, u, 3)));
    gen_str(b, gen_pick(&gen_managers, gen_rand(g, GS_STORE, u, 4)));
    gen_int(b, gen_uniform(gen_rand(g, GS_STORE, u, 5), 1, 10));
    gen_str(b, "Unknown");
    gen_text(text, 100, gen_rand(g, GS_STORE, u, 6));
    gen_str(b, text);
    gen_str(b, gen_pick(&gen_managers, gen_rand(g, GS_STORE, u, 7)));
    gen_int(b, 1);
    gen_str(b, "Unknown");
    gen_int(b, 1);
    gen_str(b, "Unknown");
    store_place(g, b, sk);
    gen_eol(b);
}

void gen_store(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        store_row(g, b, row + 1);
    }
}

/* ---------------------------------------------------- promotion, reason */

static void promo_row(const GenCtx *g, GenBuf *b, int64_t sk)
{
    uint64_t u = (uint64_t)sk;
    char word[64], text[128];
    int64_t start = gen_uniform(gen_rand(g, GS_PROMO, u, 1), GEN_SOLD_FIRST - 30, GEN_SOLD_LAST);
    gen_int(b, sk);
    gen_bkey(b, (uint64_t)sk);
    gen_int(b, start);
    gen_int(b, start + gen_uniform(gen_rand(g, GS_PROMO, u, 2), 1, 60));
    gen_int(b, gen_fk(gen_rand(g, GS_PROMO, u, 3), g->n_item, 0));
    gen_dec(b, 100000);
    gen_int(b, 1);
    gen_word(word, sizeof word, gen_uniform(gen_rand(g, GS_PROMO, u, 4), 0, 9));
    gen_str(b, word);
    for (unsigned ch = 0; ch < 8; ch++) { /* dmail email catalog tv radio press event demo */
        gen_flag(b, gen_chance(gen_rand(g, GS_PROMO, u, 10 + ch), 50));
    }
    gen_text(text, 60, gen_rand(g, GS_PROMO, u, 5));
    gen_str(b, text);
    gen_str(b, "Unknown");
    gen_flag(b, false);
    gen_eol(b);
}

void gen_promotion(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        promo_row(g, b, row + 1);
    }
}

void gen_reason(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        gen_int(b, row + 1);
        gen_bkey(b, (uint64_t)row + 1);
        if (row < gen_reasons.n) {
            gen_str(b, gen_reasons.v[row]);
        } else {
            gen_fmt(b, "reason %d", (int)row + 1);
        }
        gen_eol(b);
    }
}

/* ---------------------------------------------------------- inventory */

void gen_inventory(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    int64_t per_week = g->n_item_ids * g->n_warehouse;
    for (int64_t row = first; row < end; row++) {
        int64_t date = GEN_INV_FIRST + 7 * (row / per_week);
        int64_t j = row % per_week / g->n_warehouse;
        uint64_t r = gen_rand(g, GS_INVENTORY, (uint64_t)row, 1);
        gen_int(b, date);
        gen_int(b, 2 * j + 1 + (date >= GEN_ITEM_SPLIT));
        gen_int(b, row % g->n_warehouse + 1);
        gen_int(b, gen_chance(r, 2) ? GEN_NULL : gen_uniform(r, 0, 1000));
        gen_eol(b);
    }
}
