/*
 * dims_sites.c - the small dimensions of the catalog and web channels in
 * tpcds_gen: warehouse, ship_mode, call_center, web_site, web_page and
 * catalog_page.
 *
 * ship_mode has the 20 rows of dsdgen (6 types, 6 codes, 20 carriers).
 * web_name is "site_N"; catalog pages are numbered 108 to a catalog.  The
 * rest is drawn from the domains of words.c, keyed by row.
 */
#include <stdio.h>

#include "bench/tpcds/gen/gen.h"

#define SITE_OPEN 2450815 /* 1998-01-01 */

/* street .. country, GMT offset and (when has_tax) a tax rate of a site. */
static void site_place(const GenCtx *g, GenBuf *b, GenStream s, uint64_t row, bool has_tax)
{
    const GenState *st = gen_pick_state(gen_rand(g, s, row, 30));
    gen_street(g, b, s, row);
    gen_str(b, gen_pick(&gen_cities, gen_rand(g, s, row, 31)));
    gen_str(b, gen_pick(&gen_counties, gen_rand(g, s, row, 32)));
    gen_str(b, st->code);
    gen_zip(g, b, s, row);
    gen_str(b, "United States");
    gen_dec(b, st->gmt * 100);
    if (has_tax) {
        gen_dec(b, gen_uniform(gen_rand(g, s, row, 33), 0, 12));
    }
}

void gen_warehouse(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    char text[32];
    for (int64_t row = first; row < end; row++) {
        uint64_t u = (uint64_t)row;
        gen_int(b, row + 1);
        gen_bkey(b, u + 1);
        gen_text(text, 20, gen_rand(g, GS_WAREHOUSE, u, 1));
        gen_str(b, text);
        gen_int(b, gen_uniform(gen_rand(g, GS_WAREHOUSE, u, 2), 50000, 1000000));
        site_place(g, b, GS_WAREHOUSE, u, false);
        gen_eol(b);
    }
}

void gen_ship_mode(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    char text[32];
    for (int64_t row = first; row < end; row++) {
        gen_int(b, row + 1);
        gen_bkey(b, (uint64_t)row + 1);
        gen_str(b, gen_ship_types.v[row % 6]);
        gen_str(b, gen_ship_codes.v[(row / 6 + row) % 6]);
        gen_str(b, gen_carriers.v[row % gen_carriers.n]);
        gen_text(text, 20, gen_rand(g, GS_WAREHOUSE, (uint64_t)row + 1000, 1));
        gen_str(b, text);
        gen_eol(b);
    }
}

/* The market and company columns shared by call_center and web_site. */
static void market(const GenCtx *g, GenBuf *b, GenStream s, uint64_t u)
{
    char text[128];
    gen_int(b, gen_uniform(gen_rand(g, s, u, 10), 1, 6));
    gen_text(text, 50, gen_rand(g, s, u, 11));
    gen_str(b, text);
    gen_text(text, 100, gen_rand(g, s, u, 12));
    gen_str(b, text);
    gen_str(b, gen_pick(&gen_managers, gen_rand(g, s, u, 13)));
}

static void call_center_row(const GenCtx *g, GenBuf *b, int64_t row)
{
    static const char *const CLASSES[3] = {"small", "medium", "large"};
    uint64_t u = (uint64_t)row;
    char word[64];
    int64_t division = gen_uniform(gen_rand(g, GS_CALL_CENTER, u, 5), 1, 6);
    int64_t company = gen_uniform(gen_rand(g, GS_CALL_CENTER, u, 6), 1, 6);
    gen_int(b, row + 1);
    gen_bkey(b, u + 1);
    gen_date(b, SITE_OPEN);
    gen_null(b); /* cc_rec_end_date */
    gen_null(b); /* cc_closed_date_sk */
    gen_int(b, SITE_OPEN - gen_uniform(gen_rand(g, GS_CALL_CENTER, u, 1), 0, 1000));
    gen_str(b, gen_cc_names.v[row % gen_cc_names.n]);
    gen_str(b, CLASSES[gen_uniform(gen_rand(g, GS_CALL_CENTER, u, 2), 0, 2)]);
    gen_int(b, gen_uniform(gen_rand(g, GS_CALL_CENTER, u, 3), 1, 70000));
    gen_int(b, gen_uniform(gen_rand(g, GS_CALL_CENTER, u, 4), 10000, 1000000));
    gen_str(b, gen_pick(&gen_hours, gen_rand(g, GS_CALL_CENTER, u, 7)));
    gen_str(b, gen_pick(&gen_managers, gen_rand(g, GS_CALL_CENTER, u, 8)));
    market(g, b, GS_CALL_CENTER, u);
    gen_int(b, division);
    gen_word(word, sizeof word, division);
    gen_str(b, word);
    gen_int(b, company);
    gen_word(word, sizeof word, company);
    gen_str(b, word);
    site_place(g, b, GS_CALL_CENTER, u, true);
    gen_eol(b);
}

void gen_call_center(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        call_center_row(g, b, row);
    }
}

static void web_site_row(const GenCtx *g, GenBuf *b, int64_t row)
{
    uint64_t u = (uint64_t)row;
    char word[64];
    int64_t company = gen_uniform(gen_rand(g, GS_WEB_SITE, u, 1), 1, 6);
    gen_int(b, row + 1);
    gen_bkey(b, u + 1);
    gen_date(b, SITE_OPEN);
    gen_null(b); /* web_rec_end_date */
    gen_fmt(b, "site_%d", (int)row);
    gen_int(b, SITE_OPEN - gen_uniform(gen_rand(g, GS_WEB_SITE, u, 2), 0, 1000));
    gen_null(b); /* web_close_date_sk */
    gen_str(b, "Unknown");
    gen_str(b, gen_pick(&gen_managers, gen_rand(g, GS_WEB_SITE, u, 3)));
    market(g, b, GS_WEB_SITE, u);
    gen_int(b, company);
    gen_word(word, sizeof word, company);
    gen_str(b, word);
    site_place(g, b, GS_WEB_SITE, u, true);
    gen_eol(b);
}

void gen_web_site(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        web_site_row(g, b, row);
    }
}

void gen_web_page(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        uint64_t u = (uint64_t)row;
        int64_t created = GEN_SOLD_FIRST - gen_uniform(gen_rand(g, GS_WEB_PAGE, u, 1), 0, 1000);
        bool is_autogen = gen_chance(gen_rand(g, GS_WEB_PAGE, u, 2), 30);
        gen_int(b, row + 1);
        gen_bkey(b, u + 1);
        gen_date(b, SITE_OPEN);
        gen_null(b); /* wp_rec_end_date */
        gen_int(b, created);
        gen_int(b, created + gen_uniform(gen_rand(g, GS_WEB_PAGE, u, 3), 0, 100));
        gen_flag(b, is_autogen);
        gen_int(b,
                is_autogen ? gen_fk(gen_rand(g, GS_WEB_PAGE, u, 4), g->n_customer, 0) : GEN_NULL);
        gen_str(b, "http://www.foo.com");
        gen_str(b, gen_pick(&gen_web_page_types, gen_rand(g, GS_WEB_PAGE, u, 5)));
        gen_int(b, gen_uniform(gen_rand(g, GS_WEB_PAGE, u, 6), 300, 8000));
        gen_int(b, gen_uniform(gen_rand(g, GS_WEB_PAGE, u, 7), 2, 25));
        gen_int(b, gen_uniform(gen_rand(g, GS_WEB_PAGE, u, 8), 1, 7));
        gen_int(b, gen_uniform(gen_rand(g, GS_WEB_PAGE, u, 9), 0, 4));
        gen_eol(b);
    }
}

void gen_catalog_page(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    char text[128];
    for (int64_t row = first; row < end; row++) {
        int64_t catalog = row / 108;
        int64_t start = GEN_SOLD_FIRST + catalog * 30 % 1800;
        gen_int(b, row + 1);
        gen_bkey(b, (uint64_t)row + 1);
        gen_int(b, start);
        gen_int(b, start + 90);
        gen_str(b, "DEPARTMENT");
        gen_int(b, catalog + 1);
        gen_int(b, row % 108 + 1);
        gen_text(text, 100, gen_rand(g, GS_CATALOG_PAGE, (uint64_t)row, 1));
        gen_str(b, text);
        gen_str(b, gen_catalog_types.v[catalog % 3]);
        gen_eol(b);
    }
}
