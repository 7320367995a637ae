/*
 * sales_store.c - store_sales and store_returns of tpcds_gen.
 *
 * A unit is a ticket (ss_ticket_number = unit + 1) of 8..16 lines; the
 * ticket fixes the date (1998-01-02 .. 2003-01-02), the time (8:00 ..
 * 21:59), the customer, demographics, address and store, each line an item
 * (distinct in the ticket), a promotion and its money.  store_returns
 * regenerates the same tickets and writes a row for each returned line (10%):
 * same ticket number, item, customer and store, returned 1..150 days after
 * the sale, so returns always match a sale (q17, q25, q50, q93).
 */
#include "bench/tpcds/gen/gen.h"

#define STORE_OPENS (8 * 3600)
#define STORE_CLOSES (22 * 3600 - 1)

typedef struct SsTicket {
    int64_t number;               /* ss_ticket_number */
    int n_lines;                  /* rows of the ticket */
    int64_t date, time, store;    /* date and time keys, store key */
    GenParty who;                 /* customer, demographics, address */
    int64_t items[GEN_MAX_LINES]; /* item of each line */
} SsTicket;

static void ss_ticket(const GenCtx *g, int64_t o, SsTicket *t)
{
    uint64_t u = (uint64_t)o;
    t->number = o + 1;
    t->n_lines = gen_order_lines(g, &g->ss, GS_SS_ORDER, o);
    t->time = gen_uniform(gen_rand(g, GS_SS_ORDER, u, 2), STORE_OPENS, STORE_CLOSES);
    t->store = gen_fk(gen_rand(g, GS_SS_ORDER, u, 3), g->n_store, 2);
    gen_party(g, GS_SS_ORDER, u, 4, &t->who);
    t->date = gen_order_date(g, GS_SS_ORDER, o, t->who.customer);
    gen_order_items(g, GS_SS_LINE, o, t->who.customer, t->n_lines, t->items);
}

void gen_store_sales(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    SsTicket t;
    GenPrice p;
    for (int64_t o = first; o < end; o++) {
        ss_ticket(g, o, &t);
        for (int k = 0; k < t.n_lines; k++) {
            uint64_t row = gen_line_row(o, k);
            gen_price(g, GS_SS_LINE, row, false, &p);
            gen_int(b, t.date);
            gen_int(b, t.time);
            gen_int(b, t.items[k]);
            gen_write_party(b, &t.who);
            gen_int(b, t.store);
            gen_int(b, gen_fk(gen_rand(g, GS_SS_LINE, row, 1), g->n_promo, 2));
            gen_int(b, t.number);
            gen_write_price(b, &p, false);
            gen_eol(b);
        }
    }
}

static void sr_row(const GenCtx *g, GenBuf *b, const SsTicket *t, int k, uint64_t row)
{
    GenPrice p;
    GenRefund r;
    gen_price(g, GS_SS_LINE, row, false, &p);
    gen_refund(g, GS_SS_LINE, row, &p, &r);
    gen_int(b, t->date + gen_uniform(gen_rand(g, GS_SS_LINE, row, 2), 1, 150));
    gen_int(b, gen_uniform(gen_rand(g, GS_SS_LINE, row, 3), STORE_OPENS, STORE_CLOSES));
    gen_int(b, t->items[k]);
    gen_write_party(b, &t->who);
    gen_int(b, t->store);
    gen_int(b, gen_fk(gen_rand(g, GS_SS_LINE, row, 4), g->n_reason, 2));
    gen_int(b, t->number);
    gen_write_refund(b, &r);
    gen_eol(b);
}

void gen_store_returns(const GenCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    SsTicket t;
    for (int64_t o = first; o < end; o++) {
        ss_ticket(g, o, &t);
        for (int k = 0; k < t.n_lines; k++) {
            uint64_t row = gen_line_row(o, k);
            if (gen_is_returned(g, GS_SS_LINE, row)) {
                sr_row(g, b, &t, k, row);
            }
        }
    }
}
