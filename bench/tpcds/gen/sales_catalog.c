/*
 * sales_catalog.c - catalog_sales and catalog_returns of tpcds_gen.
 *
 * A unit is an order (cs_order_number = unit + 1) of 4..14 lines; the order
 * fixes the sold date and time (any hour), the call center, the bill party
 * and the ship party (the same customer 90% of the time).  Each line has its
 * item, catalog page, ship mode, warehouse, promotion and a ship date 1..150
 * days after the sale.  catalog_returns regenerates the orders and writes
 * each returned line (10%), returned 1..90 days after shipping, refunded to
 * the bill party and returned by the ship party.
 */
#include "bench/tpcds/gen/gen.h"

typedef struct CsOrder {
    int64_t number;               /* cs_order_number */
    int n_lines;                  /* rows of the order */
    int64_t date, time, center;   /* sold date and time keys, call center */
    GenParty bill, ship;          /* who pays, who receives */
    int64_t items[GEN_MAX_LINES]; /* item of each line */
} CsOrder;

typedef struct CsLine {
    int64_t page, mode, warehouse, promo, ship_date;
} CsLine;

static void cs_order(const GenCtx *g, int64_t o, CsOrder *t)
{
    uint64_t u = (uint64_t)o;
    t->number = o + 1;
    t->n_lines = gen_order_lines(g, &g->cs, GS_CS_ORDER, o);
    t->time = gen_uniform(gen_rand(g, GS_CS_ORDER, u, 2), 0, 86399);
    t->center = gen_fk(gen_rand(g, GS_CS_ORDER, u, 3), g->n_call_center, 2);
    gen_party(g, GS_CS_ORDER, u, 4, &t->bill);
    t->date = gen_order_date(g, GS_CS_ORDER, o, t->bill.customer);
    t->ship = t->bill;
    if (gen_chance(gen_rand(g, GS_CS_ORDER, u, 8), 10)) {
        gen_party(g, GS_CS_ORDER, u, 10, &t->ship);
    }
    gen_order_items(g, GS_CS_LINE, o, t->bill.customer, t->n_lines, t->items);
}

static void cs_line(const GenCtx *g, const CsOrder *t, uint64_t row, CsLine *l)
{
    l->page = gen_fk(gen_rand(g, GS_CS_LINE, row, 1), g->n_catalog_page, 2);
    l->mode = gen_fk(gen_rand(g, GS_CS_LINE, row, 2), 20, 2);
    l->warehouse = gen_fk(gen_rand(g, GS_CS_LINE, row, 3), g->n_warehouse, 2);
    l->promo = gen_fk(gen_rand(g, GS_CS_LINE, row, 4), g->n_promo, 2);
    l->ship_date = t->date + gen_uniform(gen_rand(g, GS_CS_LINE, row, 5), 1, 150);
}

void gen_catalog_sales(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    CsOrder t;
    CsLine l;
    GenPrice p;
    for (int64_t o = first; o < end; o++) {
        cs_order(g, o, &t);
        for (int k = 0; k < t.n_lines; k++) {
            uint64_t row = gen_line_row(o, k);
            cs_line(g, &t, row, &l);
            gen_price(g, GS_CS_LINE, row, true, &p);
            gen_int(b, t.date);
            gen_int(b, t.time);
            gen_int(b, l.ship_date);
            gen_write_party(b, &t.bill);
            gen_write_party(b, &t.ship);
            gen_int(b, t.center);
            gen_int(b, l.page);
            gen_int(b, l.mode);
            gen_int(b, l.warehouse);
            gen_int(b, t.items[k]);
            gen_int(b, l.promo);
            gen_int(b, t.number);
            gen_write_price(b, &p, true);
            gen_eol(b);
        }
    }
}

static void cr_row(const GenCtx *g, GenBuf *b, const CsOrder *t, int k, uint64_t row)
{
    CsLine l;
    GenPrice p;
    GenRefund r;
    cs_line(g, t, row, &l);
    gen_price(g, GS_CS_LINE, row, true, &p);
    gen_refund(g, GS_CS_LINE, row, &p, &r);
    gen_int(b, l.ship_date + gen_uniform(gen_rand(g, GS_CS_LINE, row, 6), 1, 90));
    gen_int(b, gen_uniform(gen_rand(g, GS_CS_LINE, row, 7), 0, 86399));
    gen_int(b, t->items[k]);
    gen_write_party(b, &t->bill);
    gen_write_party(b, &t->ship);
    gen_int(b, t->center);
    gen_int(b, l.page);
    gen_int(b, l.mode);
    gen_int(b, l.warehouse);
    gen_int(b, gen_fk(gen_rand(g, GS_CS_LINE, row, 8), g->n_reason, 2));
    gen_int(b, t->number);
    gen_write_refund(b, &r);
    gen_eol(b);
}

void gen_catalog_returns(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    CsOrder t;
    for (int64_t o = first; o < end; o++) {
        cs_order(g, o, &t);
        for (int k = 0; k < t.n_lines; k++) {
            uint64_t row = gen_line_row(o, k);
            if (gen_is_returned(g, GS_CS_LINE, row)) {
                cr_row(g, b, &t, k, row);
            }
        }
    }
}
