/*
 * sales.c - what the three sales channels of tpcds_gen share: the money of
 * a line and of its return, the items of an order, and the parties (who
 * bills, who receives).
 *
 * Money is integer cents, so every derived column is exact: quantity 1..100,
 * wholesale cost 1.00..100.00, list price = wholesale x (1 + 0..200%), sales
 * price = list x (1 - 0..100%), a coupon on 20% of the lines, tax 0..9%,
 * shipping 0..50% of the list amount (catalog and web), and the ext_, net_
 * columns derived from those as dsdgen does.  A returned line returns
 * 1..quantity units.
 *
 * Items: half of the lines of a known customer are one of the customer's 4
 * favorite items (fixed per customer, the same in every channel), so that
 * a customer buys the same item in a store and from the catalog often enough
 * for q17, q25 and q29; the items of one order are distinct (the primary key
 * is item + order number).  Likewise half of the orders of a known customer
 * fall on one of the customer's 4 shopping days, so that one customer buys
 * in several channels on one day (q38 intersects them); the dates stay
 * uniform over 1998-01-02 .. 2003-01-02.
 */
#include "bench/tpcds/gen/gen.h"

#define N_FAVORITES 4
#define FAVORITE_PCT 50
#define RETURN_PCT 10
#define N_SHOP_DAYS 4
#define SHOP_DAY_PCT 50

enum { COL_PRICE = 50, COL_RETURN = 90, COL_ITEM = 1000 };

void gen_price(const GenCtx *g, GenStream s, uint64_t line_row, bool has_ship, GenPrice *p)
{
    uint64_t coupon_r = gen_rand(g, s, line_row, COL_PRICE + 5);
    p->quantity = gen_uniform(gen_rand(g, s, line_row, COL_PRICE), 1, 100);
    p->wholesale = gen_uniform(gen_rand(g, s, line_row, COL_PRICE + 1), 100, 10000);
    p->list =
        p->wholesale * (100 + gen_uniform(gen_rand(g, s, line_row, COL_PRICE + 2), 0, 200)) / 100;
    p->sales = p->list * (100 - gen_uniform(gen_rand(g, s, line_row, COL_PRICE + 3), 0, 100)) / 100;
    p->tax_bp = (int)gen_uniform(gen_rand(g, s, line_row, COL_PRICE + 4), 0, 900);
    p->ext_wholesale = p->quantity * p->wholesale;
    p->ext_list = p->quantity * p->list;
    p->ext_sales = p->quantity * p->sales;
    p->ext_discount = p->ext_list - p->ext_sales;
    p->coupon = gen_chance(coupon_r, 20) ? p->ext_sales * gen_uniform(coupon_r, 0, 100) / 100 : 0;
    p->net_paid = p->ext_sales - p->coupon;
    p->ext_tax = p->net_paid * p->tax_bp / 10000;
    p->net_paid_tax = p->net_paid + p->ext_tax;
    p->ext_ship = 0;
    if (has_ship) {
        p->ext_ship =
            p->ext_list * gen_uniform(gen_rand(g, s, line_row, COL_PRICE + 6), 0, 50) / 100;
    }
    p->net_paid_ship = p->net_paid + p->ext_ship;
    p->net_paid_ship_tax = p->net_paid_ship + p->ext_tax;
    p->net_profit = p->net_paid - p->ext_wholesale;
}

void gen_refund(const GenCtx *g, GenStream s, uint64_t line_row, const GenPrice *p, GenRefund *r)
{
    r->quantity = gen_uniform(gen_rand(g, s, line_row, COL_RETURN + 10), 1, p->quantity);
    r->amt = r->quantity * p->sales;
    r->tax = r->amt * p->tax_bp / 10000;
    r->amt_tax = r->amt + r->tax;
    r->fee = gen_uniform(gen_rand(g, s, line_row, COL_RETURN + 11), 50, 10000);
    r->ship =
        r->quantity * p->list * gen_uniform(gen_rand(g, s, line_row, COL_RETURN + 12), 0, 50) / 100;
    r->cash = r->amt_tax * gen_uniform(gen_rand(g, s, line_row, COL_RETURN + 13), 0, 100) / 100;
    int64_t rest = r->amt_tax - r->cash;
    r->reversed = rest * gen_uniform(gen_rand(g, s, line_row, COL_RETURN + 14), 0, 100) / 100;
    r->credit = rest - r->reversed;
    r->net_loss = r->tax + r->fee + r->ship;
}

void gen_write_price(GenBuf *b, const GenPrice *p, bool has_ship)
{
    gen_int(b, p->quantity);
    gen_dec(b, p->wholesale);
    gen_dec(b, p->list);
    gen_dec(b, p->sales);
    gen_dec(b, p->ext_discount);
    gen_dec(b, p->ext_sales);
    gen_dec(b, p->ext_wholesale);
    gen_dec(b, p->ext_list);
    gen_dec(b, p->ext_tax);
    gen_dec(b, p->coupon);
    if (has_ship) {
        gen_dec(b, p->ext_ship);
    }
    gen_dec(b, p->net_paid);
    gen_dec(b, p->net_paid_tax);
    if (has_ship) {
        gen_dec(b, p->net_paid_ship);
        gen_dec(b, p->net_paid_ship_tax);
    }
    gen_dec(b, p->net_profit);
}

void gen_write_refund(GenBuf *b, const GenRefund *r)
{
    gen_int(b, r->quantity);
    gen_dec(b, r->amt);
    gen_dec(b, r->tax);
    gen_dec(b, r->amt_tax);
    gen_dec(b, r->fee);
    gen_dec(b, r->ship);
    gen_dec(b, r->cash);
    gen_dec(b, r->reversed);
    gen_dec(b, r->credit);
    gen_dec(b, r->net_loss);
}

bool gen_is_returned(const GenCtx *g, GenStream s, uint64_t line_row)
{
    return gen_chance(gen_rand(g, s, line_row, COL_RETURN), RETURN_PCT);
}

void gen_party(const GenCtx *g, GenStream s, uint64_t row, unsigned col, GenParty *p)
{
    uint64_t cr = gen_rand(g, s, row, col);
    p->customer = gen_chance(cr, 2) ? GEN_NULL : gen_skewed(g, cr, 1, g->n_customer);
    p->cdemo = gen_fk(gen_rand(g, s, row, col + 1), 1920800, 2);
    p->hdemo = gen_fk(gen_rand(g, s, row, col + 2), 7200, 2);
    p->addr = gen_fk(gen_rand(g, s, row, col + 3), g->n_address, 2);
}

void gen_write_party(GenBuf *b, const GenParty *p)
{
    gen_int(b, p->customer);
    gen_int(b, p->cdemo);
    gen_int(b, p->hdemo);
    gen_int(b, p->addr);
}

/* Favorite k of a customer: N_FAVORITES items spread over the item range. */
static int64_t favorite(const GenCtx *g, int64_t customer, uint64_t k)
{
    uint64_t h = gen_rand(g, GS_FAVORITE, (uint64_t)customer, 0);
    uint64_t step = (uint64_t)g->n_item / N_FAVORITES;
    return 1 + (int64_t)((h + k * step) % (uint64_t)g->n_item);
}

void gen_order_items(const GenCtx *g, GenStream s, int64_t order, int64_t customer, int n,
                     int64_t *items)
{
    for (int k = 0; k < n; k++) {
        uint64_t row = gen_line_row(order, k);
        for (unsigned attempt = 0;; attempt++) {
            uint64_t r = gen_rand(g, s, row, COL_ITEM + attempt);
            int64_t item = gen_skewed(g, r, 1, g->n_item);
            if (attempt == 0 && customer != GEN_NULL && gen_chance(r, FAVORITE_PCT)) {
                item = favorite(g, customer, (r >> 8) % N_FAVORITES);
            }
            bool is_dup = false;
            for (int i = 0; i < k && !is_dup; i++) {
                is_dup = items[i] == item;
            }
            if (!is_dup) {
                items[k] = item;
                break;
            }
        }
    }
}

int64_t gen_order_date(const GenCtx *g, GenStream s, int64_t order, int64_t customer)
{
    uint64_t r = gen_rand(g, s, (uint64_t)order, 1);
    if (customer != GEN_NULL && gen_chance(r, SHOP_DAY_PCT)) {
        r = gen_rand(g, GS_FAVORITE, (uint64_t)customer, 1 + (unsigned)((r >> 8) % N_SHOP_DAYS));
    }
    if (g->skew > 0) { /* the recent days popular */
        return GEN_SOLD_LAST - gen_skewed(g, r, 0, GEN_SOLD_LAST - GEN_SOLD_FIRST);
    }
    return gen_uniform(r, GEN_SOLD_FIRST, GEN_SOLD_LAST);
}
