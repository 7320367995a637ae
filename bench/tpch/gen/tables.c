/*
 * tables.c - the eight TPC-H tables, row by row, from the rules of clause
 * 4.2.3 of the TPC-H specification (cardinalities, key ranges, value
 * domains and the derived columns).
 *
 * An order and its lines are drawn by draw_order from the order's index
 * alone, so orders.dat (status and total price derived from the lines) and
 * lineitem.dat agree without sharing state.
 */
#include <stdio.h>
#include <string.h>

#include "bench/tpch/gen/tpch.h"

#define MAX_LINES 7

static const struct {
    const char *name;
    int region;
} NATIONS[25] = {
    {"ALGERIA", 0},       {"ARGENTINA", 1}, {"BRAZIL", 1}, {"CANADA", 1},
    {"EGYPT", 4},         {"ETHIOPIA", 0},  {"FRANCE", 3}, {"GERMANY", 3},
    {"INDIA", 2},         {"INDONESIA", 2}, {"IRAN", 4},   {"IRAQ", 4},
    {"JAPAN", 2},         {"JORDAN", 4},    {"KENYA", 0},  {"MOROCCO", 0},
    {"MOZAMBIQUE", 0},    {"PERU", 1},      {"CHINA", 2},  {"ROMANIA", 3},
    {"SAUDI ARABIA", 4},  {"VIETNAM", 2},   {"RUSSIA", 3}, {"UNITED KINGDOM", 3},
    {"UNITED STATES", 1},
};

static const char *const REGIONS[5] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};

void tpch_ctx_init(TpchCtx *g, double sf, uint64_t seed)
{
    *g = (TpchCtx){.sf = sf, .seed = seed};
    g->n_supplier = (int64_t)(sf * 10000 + 0.5);
    g->n_part = (int64_t)(sf * 200000 + 0.5);
    g->n_customer = (int64_t)(sf * 150000 + 0.5);
    g->n_orders = (int64_t)(sf * 1500000 + 0.5);
    g->start_date = gen_jdn(1992, 1, 1);
    g->current_date = gen_jdn(1995, 6, 17);
    g->end_date = gen_jdn(1998, 12, 31);
}

uint64_t tpch_rand(const TpchCtx *g, TpchStream s, uint64_t row, unsigned col)
{
    uint64_t h = cm_hash_u64(g->seed ^ ((uint64_t)s << 56) ^ row);
    return cm_hash_u64(h + 0x9e3779b97f4a7c15ULL * ((uint64_t)col + 1));
}

int64_t tpch_retail_cents(int64_t partkey)
{
    return 90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000);
}

int64_t tpch_part_supp(const TpchCtx *g, int64_t partkey, int i)
{
    int64_t s = g->n_supplier;
    return (partkey + i * (s / 4 + (partkey - 1) / s)) % s + 1;
}

/* Writes the comment column of a row: spec text of [min_len, max_len] bytes. */
static void comment(GenBuf *b, uint64_t r, int min_len, int max_len)
{
    char text[256];
    tpch_text(text, min_len, max_len, r);
    gen_str(b, text);
}

/* Country code (nation + 10) and three local groups (clause 4.2.2.9). */
static void phone(GenBuf *b, int64_t nation, uint64_t r)
{
    gen_fmt(b, "%d-%03d-%03d-%04d", (int)nation + 10, (int)gen_uniform(r, 100, 999),
            (int)gen_uniform(cm_hash_u64(r + 1), 100, 999),
            (int)gen_uniform(cm_hash_u64(r + 2), 1000, 9999));
}

static void region(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        gen_int(b, row);
        gen_str(b, REGIONS[row]);
        comment(b, tpch_rand(g, TS_REGION, (uint64_t)row, 0), 31, 115);
        gen_eol(b);
    }
}

static void nation(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t row = first; row < end; row++) {
        gen_int(b, row);
        gen_str(b, NATIONS[row].name);
        gen_int(b, NATIONS[row].region);
        comment(b, tpch_rand(g, TS_NATION, (uint64_t)row, 0), 31, 114);
        gen_eol(b);
    }
}

/* The supplier comment; every 2000th supplier (from a phase drawn from the
 * seed) carries "Customer ... Complaints", and as many "Customer ...
 * Recommends": 5 x SF of each (clause 4.2.3, for Q16). */
static void supplier_comment(const TpchCtx *g, GenBuf *b, int64_t row)
{
    char text[256];
    tpch_text(text, 25, 100, tpch_rand(g, TS_SUPPLIER, (uint64_t)row, 5));
    int64_t phase = tpch_uniform(g, TS_SUPPLIER, 0, 6, 0, 999);
    int64_t pick = (row + phase) % 2000;
    if (pick == 0 || pick == 1000) {
        const char *tail = pick == 0 ? "Complaints" : "Recommends";
        int len = (int)strlen(text);
        int need = 9 + (int)strlen(tail); /* "Customer " + tail */
        int at = (int)tpch_uniform(g, TS_SUPPLIER, (uint64_t)row, 7, 0, len - need);
        memcpy(text + at, "Customer ", 9);
        memcpy(text + at + 9, tail, strlen(tail));
    }
    gen_str(b, text);
}

static void supplier(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    char text[64];
    for (int64_t row = first; row < end; row++) {
        int64_t key = row + 1;
        int64_t nat = tpch_uniform(g, TS_SUPPLIER, (uint64_t)row, 1, 0, 24);
        gen_int(b, key);
        gen_fmt(b, "Supplier#%09lld", (long long)key);
        tpch_vstring(text, 10, 40, tpch_rand(g, TS_SUPPLIER, (uint64_t)row, 0));
        gen_str(b, text);
        gen_int(b, nat);
        phone(b, nat, tpch_rand(g, TS_SUPPLIER, (uint64_t)row, 2));
        gen_dec(b, tpch_uniform(g, TS_SUPPLIER, (uint64_t)row, 3, -99999, 999999));
        supplier_comment(g, b, row);
        gen_eol(b);
    }
}

static void customer(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    char text[64];
    for (int64_t row = first; row < end; row++) {
        int64_t key = row + 1;
        int64_t nat = tpch_uniform(g, TS_CUSTOMER, (uint64_t)row, 1, 0, 24);
        gen_int(b, key);
        gen_fmt(b, "Customer#%09lld", (long long)key);
        tpch_vstring(text, 10, 40, tpch_rand(g, TS_CUSTOMER, (uint64_t)row, 0));
        gen_str(b, text);
        gen_int(b, nat);
        phone(b, nat, tpch_rand(g, TS_CUSTOMER, (uint64_t)row, 2));
        gen_dec(b, tpch_uniform(g, TS_CUSTOMER, (uint64_t)row, 3, -99999, 999999));
        gen_str(b, tpch_pick(&tpch_segments, tpch_rand(g, TS_CUSTOMER, (uint64_t)row, 4)));
        comment(b, tpch_rand(g, TS_CUSTOMER, (uint64_t)row, 5), 29, 116);
        gen_eol(b);
    }
}

static void part(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    char text[64];
    for (int64_t row = first; row < end; row++) {
        int64_t key = row + 1;
        int m = (int)tpch_uniform(g, TS_PART, (uint64_t)row, 1, 1, 5);
        gen_int(b, key);
        tpch_part_name(text, tpch_rand(g, TS_PART, (uint64_t)row, 0));
        gen_str(b, text);
        gen_fmt(b, "Manufacturer#%d", m);
        gen_fmt(b, "Brand#%d%d", m, (int)tpch_uniform(g, TS_PART, (uint64_t)row, 2, 1, 5));
        gen_fmt(b, "%s %s %s", tpch_pick(&tpch_type_s1, tpch_rand(g, TS_PART, (uint64_t)row, 3)),
                tpch_pick(&tpch_type_s2, tpch_rand(g, TS_PART, (uint64_t)row, 4)),
                tpch_pick(&tpch_type_s3, tpch_rand(g, TS_PART, (uint64_t)row, 5)));
        gen_int(b, tpch_uniform(g, TS_PART, (uint64_t)row, 6, 1, 50));
        gen_fmt(b, "%s %s", tpch_pick(&tpch_container_s1, tpch_rand(g, TS_PART, (uint64_t)row, 7)),
                tpch_pick(&tpch_container_s2, tpch_rand(g, TS_PART, (uint64_t)row, 8)));
        gen_dec(b, tpch_retail_cents(key));
        comment(b, tpch_rand(g, TS_PART, (uint64_t)row, 9), 5, 22);
        gen_eol(b);
    }
}

/* Unit = part: its four suppliers. */
static void partsupp(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t unit = first; unit < end; unit++) {
        int64_t key = unit + 1;
        for (int i = 0; i < 4; i++) {
            uint64_t row = (uint64_t)unit * 4 + (uint64_t)i;
            gen_int(b, key);
            gen_int(b, tpch_part_supp(g, key, i));
            gen_int(b, tpch_uniform(g, TS_PARTSUPP, row, 0, 1, 9999));
            gen_dec(b, tpch_uniform(g, TS_PARTSUPP, row, 1, 100, 100000));
            comment(b, tpch_rand(g, TS_PARTSUPP, row, 2), 49, 198);
            gen_eol(b);
        }
    }
}

/* ------------------------------------------------------ orders, lineitem */

typedef struct Line {
    int64_t partkey, suppkey, quantity, ext_cents, discount, tax; /* discount, tax: cents */
    int64_t ship, commit, receipt;                                /* Julian days */
    char returnflag, linestatus;
} Line;

typedef struct Order {
    int64_t key, custkey, date, total_cents;
    char status;
    int n_lines;
    Line lines[MAX_LINES];
} Order;

/* Sparse keys (clause 4.2.3): the first 8 of every 32. */
static int64_t order_key(int64_t idx)
{
    return idx / 8 * 32 + idx % 8 + 1;
}

/* Customers whose key is a multiple of 3 place no order: j-th other key. */
static int64_t order_customer(const TpchCtx *g, int64_t idx)
{
    int64_t n_valid = g->n_customer - g->n_customer / 3;
    int64_t j = tpch_uniform(g, TS_ORDER, (uint64_t)idx, 0, 0, n_valid - 1);
    return 3 * (j / 2) + j % 2 + 1;
}

static void draw_line(const TpchCtx *g, const Order *o, uint64_t row, Line *l)
{
    l->partkey = tpch_uniform(g, TS_LINE, row, 0, 1, g->n_part);
    l->suppkey = tpch_part_supp(g, l->partkey, (int)tpch_uniform(g, TS_LINE, row, 1, 0, 3));
    l->quantity = tpch_uniform(g, TS_LINE, row, 2, 1, 50);
    l->ext_cents = l->quantity * tpch_retail_cents(l->partkey);
    l->discount = tpch_uniform(g, TS_LINE, row, 3, 0, 10);
    l->tax = tpch_uniform(g, TS_LINE, row, 4, 0, 8);
    l->ship = o->date + tpch_uniform(g, TS_LINE, row, 5, 1, 121);
    l->commit = o->date + tpch_uniform(g, TS_LINE, row, 6, 30, 90);
    l->receipt = l->ship + tpch_uniform(g, TS_LINE, row, 7, 1, 30);
    if (l->receipt <= g->current_date) {
        l->returnflag = tpch_uniform(g, TS_LINE, row, 8, 0, 1) ? 'R' : 'A';
    } else {
        l->returnflag = 'N';
    }
    l->linestatus = l->ship > g->current_date ? 'O' : 'F';
}

/* Order idx and its lines; status and total price derived from the lines. */
static void draw_order(const TpchCtx *g, int64_t idx, Order *o)
{
    o->key = order_key(idx);
    o->custkey = order_customer(g, idx);
    o->date = tpch_uniform(g, TS_ORDER, (uint64_t)idx, 1, g->start_date, g->end_date - 151);
    o->n_lines = (int)tpch_uniform(g, TS_ORDER, (uint64_t)idx, 2, 1, MAX_LINES);
    o->total_cents = 0;
    int n_open = 0;
    for (int i = 0; i < o->n_lines; i++) {
        Line *l = &o->lines[i];
        draw_line(g, o, (uint64_t)idx * 8 + (uint64_t)i, l);
        o->total_cents += (l->ext_cents * (100 + l->tax) * (100 - l->discount) + 5000) / 10000;
        n_open += l->linestatus == 'O';
    }
    o->status = n_open == o->n_lines ? 'O' : n_open == 0 ? 'F' : 'P';
}

static void orders(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    int64_t n_clerks = g->n_supplier / 10 > 0 ? g->n_supplier / 10 : 1; /* SF x 1000 */
    for (int64_t idx = first; idx < end; idx++) {
        Order o;
        draw_order(g, idx, &o);
        char status[2] = {o.status, '\0'};
        gen_int(b, o.key);
        gen_int(b, o.custkey);
        gen_str(b, status);
        gen_dec(b, o.total_cents);
        gen_date(b, o.date);
        gen_str(b, tpch_pick(&tpch_priorities, tpch_rand(g, TS_ORDER, (uint64_t)idx, 3)));
        gen_fmt(b, "Clerk#%09lld",
                (long long)tpch_uniform(g, TS_ORDER, (uint64_t)idx, 4, 1, n_clerks));
        gen_int(b, 0);
        comment(b, tpch_rand(g, TS_ORDER, (uint64_t)idx, 5), 19, 78);
        gen_eol(b);
    }
}

static void line_row(const TpchCtx *g, GenBuf *b, const Order *o, int i, uint64_t row)
{
    const Line *l = &o->lines[i];
    char flag[2] = {l->returnflag, '\0'};
    char status[2] = {l->linestatus, '\0'};
    gen_int(b, o->key);
    gen_int(b, l->partkey);
    gen_int(b, l->suppkey);
    gen_int(b, i + 1);
    gen_dec(b, l->quantity * 100);
    gen_dec(b, l->ext_cents);
    gen_dec(b, l->discount);
    gen_dec(b, l->tax);
    gen_str(b, flag);
    gen_str(b, status);
    gen_date(b, l->ship);
    gen_date(b, l->commit);
    gen_date(b, l->receipt);
    gen_str(b, tpch_pick(&tpch_instructions, tpch_rand(g, TS_LINE, row, 9)));
    gen_str(b, tpch_pick(&tpch_modes, tpch_rand(g, TS_LINE, row, 10)));
    comment(b, tpch_rand(g, TS_LINE, row, 11), 10, 43);
    gen_eol(b);
}

/* Unit = order: its lines. */
static void lineitem(const TpchCtx *g, GenBuf *b, int64_t first, int64_t end)
{
    for (int64_t idx = first; idx < end; idx++) {
        Order o;
        draw_order(g, idx, &o);
        for (int i = 0; i < o.n_lines; i++) {
            line_row(g, b, &o, i, (uint64_t)idx * 8 + (uint64_t)i);
        }
    }
}

const TpchTable TPCH_TABLES[TPCH_N_TABLES] = {
    {"region", region, 5},         {"nation", nation, 25},       {"supplier", supplier, 10000},
    {"customer", customer, 10000}, {"part", part, 10000},        {"partsupp", partsupp, 5000},
    {"orders", orders, 10000},     {"lineitem", lineitem, 5000},
};

int64_t tpch_units(const TpchCtx *g, int t)
{
    switch (t) {
    case 0:
        return 5;
    case 1:
        return 25;
    case 2:
        return g->n_supplier;
    case 3:
        return g->n_customer;
    case 4:
    case 5:
        return g->n_part;
    default:
        return g->n_orders;
    }
}
