/*
 * dims_people.c - the customer side of tpcds_gen: customer,
 * customer_address, customer_demographics, household_demographics and
 * income_band.
 *
 * customer_demographics is the full cross product of its attributes
 * (2 genders x 5 marital statuses x 7 education levels x 20 purchase
 * estimates x 4 credit ratings x 7 x 7 x 7 dependent counts = 1,920,800 rows,
 * gender varying fastest, as in dsdgen); household_demographics is the cross
 * product of 20 income bands x 6 buy potentials x 10 dependent counts x
 * 6 vehicle counts (-1..4) = 7,200 rows.  Customers and addresses are drawn
 * from the domains of words.c, keyed by row.
 */
#include <stdio.h>

#include "bench/tpcds/gen/gen.h"

#define NULL_PCT 2 /* NULLs in the optional attributes of a customer */

int64_t gen_fk(uint64_t r, int64_t n, int null_pct)
{
    if (null_pct > 0 && gen_chance(r, null_pct)) {
        return GEN_NULL;
    }
    return gen_uniform(r, 1, n);
}

int64_t gen_skewed(const GenCtx *g, uint64_t r, int64_t lo, int64_t hi)
{
    if (g->skew <= 0) {
        return gen_uniform(r, lo, hi);
    }
    double u = (double)(r >> 11) * (1.0 / 9007199254740992.0), x = u;
    for (int k = 0; k < g->skew; k++) {
        x *= u;
    }
    int64_t v = lo + (int64_t)(x * (double)(hi - lo + 1));
    return v > hi ? hi : v;
}

/* The birth date and the dates of the customer's first purchase and review. */
static void customer_dates(const GenCtx *g, GenBuf *b, uint64_t row)
{
    int64_t first_sale =
        gen_uniform(gen_rand(g, GS_CUSTOMER, row, 10), GEN_SOLD_FIRST - 1095, GEN_SOLD_LAST - 30);
    gen_int(b, first_sale + 30); /* c_first_shipto_date_sk */
    gen_int(b, first_sale);      /* c_first_sales_date_sk */
}

static void customer_row(const GenCtx *g, GenBuf *b, int64_t row)
{
    uint64_t u = (uint64_t)row;
    const char *first = gen_pick(&gen_first_names, gen_rand(g, GS_CUSTOMER, u, 20));
    const char *last = gen_pick(&gen_last_names, gen_rand(g, GS_CUSTOMER, u, 21));
    uint64_t r_null = gen_rand(g, GS_CUSTOMER, u, 22);
    bool has_name = !gen_chance(r_null, NULL_PCT);
    gen_int(b, row + 1);
    gen_bkey(b, (uint64_t)row + 1);
    gen_int(b, gen_fk(gen_rand(g, GS_CUSTOMER, u, 1), 1920800, NULL_PCT));
    gen_int(b, gen_fk(gen_rand(g, GS_CUSTOMER, u, 2), 7200, NULL_PCT));
    gen_int(b, gen_fk(gen_rand(g, GS_CUSTOMER, u, 3), g->n_address, 0));
    customer_dates(g, b, u);
    gen_str(b, gen_pick(&gen_salutations, gen_rand(g, GS_CUSTOMER, u, 4)));
    gen_str(b, has_name ? first : NULL);
    gen_str(b, has_name ? last : NULL);
    gen_flag(b, gen_chance(gen_rand(g, GS_CUSTOMER, u, 5), 50));
    gen_int(b, gen_uniform(gen_rand(g, GS_CUSTOMER, u, 6), 1, 28));
    gen_int(b, gen_uniform(gen_rand(g, GS_CUSTOMER, u, 7), 1, 12));
    gen_int(b, gen_uniform(gen_rand(g, GS_CUSTOMER, u, 8), 1924, 1992));
    gen_str(b, gen_pick(&gen_countries, gen_rand(g, GS_CUSTOMER, u, 9)));
    gen_null(b); /* c_login: empty in dsdgen */
    if (has_name) {
        gen_fmt(b, "%s.%s@%s.com", first, last,
                gen_pick(&gen_street_names, gen_rand(g, GS_CUSTOMER, u, 23)));
    } else {
        gen_null(b);
    }
    gen_int(b, gen_uniform(gen_rand(g, GS_CUSTOMER, u, 11), 2452283, 2452648));
    gen_eol(b);
}

void gen_customer(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        customer_row(g, b, row);
    }
}

void gen_street(const GenCtx *g, GenBuf *b, GenStream s, uint64_t row)
{
    uint64_t r = gen_rand(g, s, row, 40);
    gen_fmt(b, "%d", (int)gen_uniform(r, 1, 999));
    if (gen_chance(gen_rand(g, s, row, 41), 50)) {
        gen_fmt(b, "%s %s", gen_pick(&gen_street_names, gen_rand(g, s, row, 42)),
                gen_pick(&gen_street_names, gen_rand(g, s, row, 43)));
    } else {
        gen_str(b, gen_pick(&gen_street_names, gen_rand(g, s, row, 42)));
    }
    gen_str(b, gen_pick(&gen_street_types, gen_rand(g, s, row, 44)));
    gen_fmt(b, "Suite %d", (int)gen_uniform(gen_rand(g, s, row, 45), 0, 49) * 10);
}

void gen_zip(const GenCtx *g, GenBuf *b, GenStream s, uint64_t row)
{
    uint64_t r = gen_rand(g, s, row, 46);
    if (gen_chance(r, 6)) {
        gen_str(b, gen_pick(&gen_zips, gen_rand(g, s, row, 47)));
    } else {
        gen_fmt(b, "%05d", (int)gen_uniform(gen_rand(g, s, row, 47), 10000, 99999));
    }
}

static void address_row(const GenCtx *g, GenBuf *b, int64_t row)
{
    uint64_t u = (uint64_t)row;
    const GenState *st = gen_pick_state(gen_rand(g, GS_ADDRESS, u, 1));
    gen_int(b, row + 1);
    gen_bkey(b, (uint64_t)row + 1);
    gen_street(g, b, GS_ADDRESS, u);
    gen_str(b, gen_pick(&gen_cities, gen_rand(g, GS_ADDRESS, u, 2)));
    gen_str(b, gen_pick(&gen_counties, gen_rand(g, GS_ADDRESS, u, 3)));
    gen_str(b, st->code);
    gen_zip(g, b, GS_ADDRESS, u);
    gen_str(b, "United States");
    gen_dec(b, st->gmt * 100);
    gen_str(b, gen_pick(&gen_location_types, gen_rand(g, GS_ADDRESS, u, 4)));
    gen_eol(b);
}

void gen_customer_address(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        address_row(g, b, row);
    }
}

void gen_customer_demographics(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        int64_t x = row;
        gen_int(b, row + 1);
        gen_str(b, x % 2 ? "F" : "M");
        x /= 2;
        gen_str(b, gen_marital.v[x % 5]);
        x /= 5;
        gen_str(b, gen_education.v[x % 7]);
        x /= 7;
        gen_int(b, (x % 20 + 1) * 500);
        x /= 20;
        gen_str(b, gen_credit.v[x % 4]);
        x /= 4;
        gen_int(b, x % 7);
        x /= 7;
        gen_int(b, x % 7);
        x /= 7;
        gen_int(b, x % 7);
        gen_eol(b);
    }
}

void gen_household_demographics(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        gen_int(b, row + 1);
        gen_int(b, row % 20 + 1);
        gen_str(b, gen_buy_potential.v[row / 20 % 6]);
        gen_int(b, row / 120 % 10);
        gen_int(b, row / 1200 % 6 - 1);
        gen_eol(b);
    }
}

void gen_income_band(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        gen_int(b, row + 1);
        gen_int(b, row * 10000 + (row > 0));
        gen_int(b, (row + 1) * 10000);
        gen_eol(b);
    }
}
