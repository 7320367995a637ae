/*
 * gen.h - the internals shared by the files of tpcds_gen, the TPC-DS data
 * generator of the Sluice benchmarks (bench/tpcds/README.md has the rules).
 *
 * Every value is a pure function of (seed, stream, row, column) through a
 * counter-based PRNG (gen_rand: splitmix64 finalizers), so any range of rows
 * can be generated on its own, and chunks generated in parallel concatenate
 * to the same bytes for any thread count.  A table is a sequence of "units":
 * rows for most tables, orders (tickets) for the sales and returns tables,
 * whose lines are the rows.  A table function appends units [first, end) as
 * .dat text ('|' after every field, empty = NULL) to a GenBuf.
 * GenCtx is filled once by gen_ctx_init and is read-only afterwards, so table
 * functions may run concurrently on disjoint unit ranges, each with its own
 * GenBuf.  Keep the table order of GenTableId in sync with GEN_TABLES.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"

#define GEN_NULL INT64_MIN /* an integer, key or decimal written as NULL */
#define GEN_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* d_date_sk is the Julian day number of d_date (as in dsdgen). */
#define GEN_DATE_FIRST 2415022 /* 1900-01-02, the first date_dim row */
#define GEN_DATE_ROWS 73049    /* through 2100-01-01 */
#define GEN_SOLD_FIRST 2450816 /* 1998-01-02, the first sold date */
#define GEN_SOLD_LAST 2452642  /* 2003-01-02, the last sold date */
#define GEN_INV_FIRST 2450815  /* 1998-01-01, the first inventory snapshot */
#define GEN_INV_WEEKS 261      /* weekly inventory snapshots */
#define GEN_ITEM_SPLIT 2451845 /* 2000-10-27: the second version of an item starts */
#define GEN_MAX_LINES 16       /* most lines in one order */

/* ---------------------------------------------------------------- output */

typedef struct GenBuf {
    char *data;  /* owned (cm_malloc) */
    size_t len;  /* bytes used */
    size_t cap;  /* bytes allocated */
    bool is_oom; /* a growth failed: the text is incomplete */
} GenBuf;

void gen_buf_fini(GenBuf *b);
/* Makes room for n more bytes; false (and is_oom set) when memory ran out. */
bool gen_buf_room(GenBuf *b, size_t n);

/* Field writers: each appends the value and its '|'. */
void gen_null(GenBuf *b);
void gen_int(GenBuf *b, int64_t v);     /* GEN_NULL: empty */
void gen_dec(GenBuf *b, int64_t cents); /* scale 2; GEN_NULL: empty */
void gen_str(GenBuf *b, const char *s); /* NULL: empty */
void gen_date(GenBuf *b, int64_t jdn);  /* YYYY-MM-DD; GEN_NULL: empty */
void gen_bkey(GenBuf *b, uint64_t key); /* the 16-letter business key of dsdgen */
void gen_flag(GenBuf *b, bool is_yes);  /* Y or N */
void gen_fmt(GenBuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gen_eol(GenBuf *b); /* ends the row */

/* ------------------------------------------------------------------ rng */

/* Streams keep the draws of different tables and purposes apart. */
typedef enum GenStream {
    GS_CALL_CENTER = 1,
    GS_CATALOG_PAGE,
    GS_CUSTOMER,
    GS_ADDRESS,
    GS_ITEM,
    GS_ITEM_ID,
    GS_PROMO,
    GS_STORE,
    GS_WAREHOUSE,
    GS_WEB_SITE,
    GS_WEB_PAGE,
    GS_INVENTORY,
    GS_FAVORITE,
    GS_SS_ORDER,
    GS_SS_LINE,
    GS_CS_ORDER,
    GS_CS_LINE,
    GS_WS_ORDER,
    GS_WS_LINE,
    GS_ORDER_SIZE,
} GenStream;

typedef struct GenCtx GenCtx;

/* The draw of column `col` of row `row` in stream s: 64 uniform bits. */
uint64_t gen_rand(const GenCtx *g, GenStream s, uint64_t row, unsigned col);

/* A uniform integer in [lo, hi] from 64 random bits. */
static inline int64_t gen_uniform(uint64_t r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(((r >> 32) * (uint64_t)(hi - lo + 1)) >> 32);
}

/* True with probability pct/100, from the low bits of r. */
static inline bool gen_chance(uint64_t r, int pct)
{
    return (int)(r % 100) < pct;
}

/* ------------------------------------------------------------- calendar */

int64_t gen_jdn(int year, int month, int day);
void gen_civil(int64_t jdn, int *year, int *month, int *day);
int gen_dow(int64_t jdn); /* 0 = Sunday .. 6 = Saturday */
int gen_month_days(int year, int month);

/* ------------------------------------------------------------ domains */

typedef struct GenList {
    const char *const *v; /* static strings */
    int n;
} GenList;

typedef struct GenState {
    const char *code; /* two letters */
    int weight;       /* relative frequency among addresses */
    int gmt;          /* hours from UTC */
} GenState;

const char *gen_pick(const GenList *l, uint64_t r);
/* A state drawn by weight; the same r always gives the same state. */
const GenState *gen_pick_state(uint64_t r);
/* The dsdgen-style word of n made of syllables ("ought", "able", ... per digit). */
void gen_word(char *out, size_t cap, int64_t n);
/* Writes street number, name, type and suite of an address of row in stream s. */
void gen_street(const GenCtx *g, GenBuf *b, GenStream s, uint64_t row);
/* Writes a zip: 6% of the time one of the zips the queries name, else 5 digits. */
void gen_zip(const GenCtx *g, GenBuf *b, GenStream s, uint64_t row);
/* A text of random words, at most max_len bytes, into out (cap > max_len). */
void gen_text(char *out, int max_len, uint64_t r);

extern const GenList gen_first_names, gen_last_names, gen_salutations, gen_countries,
    gen_street_names, gen_street_types, gen_cities, gen_counties, gen_location_types, gen_colors,
    gen_sizes, gen_units, gen_containers, gen_education, gen_marital, gen_credit, gen_buy_potential,
    gen_reasons, gen_ship_types, gen_ship_codes, gen_carriers, gen_web_page_types, gen_cc_names,
    gen_hours, gen_managers, gen_zips, gen_catalog_types, gen_brand_a, gen_brand_b, gen_syllables;

/* The categories of items; classes[k] is the class of class id k + 1. */
typedef struct GenCategory {
    const char *name;
    const char *const *classes;
    int n_classes;
} GenCategory;

extern const GenCategory gen_categories[];
extern const int gen_n_categories;

/* ------------------------------------------------------------- context */

typedef enum GenTableId {
    GT_DBGEN_VERSION,
    GT_CUSTOMER_ADDRESS,
    GT_CUSTOMER_DEMOGRAPHICS,
    GT_DATE_DIM,
    GT_WAREHOUSE,
    GT_SHIP_MODE,
    GT_TIME_DIM,
    GT_REASON,
    GT_INCOME_BAND,
    GT_ITEM,
    GT_STORE,
    GT_CALL_CENTER,
    GT_CUSTOMER,
    GT_WEB_SITE,
    GT_STORE_RETURNS,
    GT_HOUSEHOLD_DEMOGRAPHICS,
    GT_WEB_PAGE,
    GT_PROMOTION,
    GT_CATALOG_PAGE,
    GT_INVENTORY,
    GT_CATALOG_RETURNS,
    GT_WEB_RETURNS,
    GT_WEB_SALES,
    GT_CATALOG_SALES,
    GT_STORE_SALES,
    GT_N_TABLES
} GenTableId;

/* The orders of one sales channel: lines are rows, an order has 1..16 lines. */
typedef struct GenOrders {
    int64_t n_rows;   /* lines wanted: the sales table's row count */
    int64_t n_orders; /* orders that hold n_rows lines */
    int last_lines;   /* lines of the last order, cut so the total is n_rows */
    int min_lines;    /* lines of an order: uniform in [min_lines, max_lines] */
    int max_lines;
} GenOrders;

struct GenCtx {
    double sf;                  /* scale factor */
    uint64_t seed;              /* --seed */
    int64_t units[GT_N_TABLES]; /* units (rows, or orders for sales/returns) */
    int64_t n_customer;         /* rows of the dimension tables */
    int64_t n_address;
    int64_t n_item;     /* item rows: two versions per item id */
    int64_t n_item_ids; /* distinct i_item_id */
    int64_t n_store;
    int64_t n_warehouse;
    int64_t n_promo;
    int64_t n_reason;
    int64_t n_call_center;
    int64_t n_web_site;
    int64_t n_web_page;
    int64_t n_catalog_page;
    GenOrders ss, cs, ws; /* store, catalog and web orders */
    int skew;             /* --skew: 0 uniform (dsdgen's shapes); k in 1..3 draws the sales'
                             items, customers and dates as u^(k+1) (gen_skewed) */
    char args[96];        /* the arguments, for dbgen_version */
};

/* Fills g for scale factor sf (> 0) and seed; the orders of a channel are
 * counted only when need_orders[channel] (0 store, 1 catalog, 2 web). */
void gen_ctx_init(GenCtx *g, double sf, uint64_t seed, const bool need_orders[3]);

/* Lines of order o of a channel (the last order may be cut). */
int gen_order_lines(const GenCtx *g, const GenOrders *ch, GenStream s, int64_t o);

/* ---------------------------------------------------------------- tables */

typedef void (*GenTableFn)(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);

typedef struct GenTable {
    const char *name; /* table name = file name without .dat */
    GenTableFn fn;    /* appends units [first, end) */
    int64_t chunk;    /* units per parallel task */
} GenTable;

extern const GenTable GEN_TABLES[GT_N_TABLES];

void gen_dbgen_version(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_date_dim(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_time_dim(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_customer(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_customer_address(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_customer_demographics(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_household_demographics(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_income_band(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_item(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_store(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_warehouse(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_ship_mode(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_reason(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_promotion(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_call_center(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_web_site(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_web_page(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_catalog_page(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_inventory(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_store_sales(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_store_returns(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_catalog_sales(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_catalog_returns(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_web_sales(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);
void gen_web_returns(const GenCtx *g, GenBuf *b, int64_t first, int64_t end);

/* ----------------------------------------------------------- sales help */

/* The money of one sales line, in cents (dsdgen's pricing rules). */
typedef struct GenPrice {
    int64_t quantity;
    int64_t wholesale, list, sales; /* unit prices */
    int64_t ext_discount, ext_sales, ext_wholesale, ext_list, ext_tax, coupon, ext_ship;
    int64_t net_paid, net_paid_tax, net_paid_ship, net_paid_ship_tax, net_profit;
    int tax_bp; /* tax rate, basis points */
} GenPrice;

/* The money of one return of a line. */
typedef struct GenRefund {
    int64_t quantity;
    int64_t amt, tax, amt_tax, fee, ship, cash, reversed, credit, net_loss;
} GenRefund;

/* Who bills or receives an order: customer, demographics and address keys. */
typedef struct GenParty {
    int64_t customer, cdemo, hdemo, addr; /* GEN_NULL when unknown */
} GenParty;

/* Draws the money of line line_row of line stream s (ship cost when has_ship). */
void gen_price(const GenCtx *g, GenStream s, uint64_t line_row, bool has_ship, GenPrice *p);
/* Draws the return of that line. */
void gen_refund(const GenCtx *g, GenStream s, uint64_t line_row, const GenPrice *p, GenRefund *r);
/* Writes quantity .. net_profit (with the ship columns when has_ship). */
void gen_write_price(GenBuf *b, const GenPrice *p, bool has_ship);
/* Writes return_quantity .. net_loss. */
void gen_write_refund(GenBuf *b, const GenRefund *r);
/* Draws a party from columns col.. of row of stream s. */
void gen_party(const GenCtx *g, GenStream s, uint64_t row, unsigned col, GenParty *p);
/* Writes customer, cdemo, hdemo, addr. */
void gen_write_party(GenBuf *b, const GenParty *p);
/* Whether line line_row of stream s was returned (10% of the lines). */
bool gen_is_returned(const GenCtx *g, GenStream s, uint64_t line_row);
/* Distinct items of the lines of one order, biased to the customer's favorites. */
void gen_order_items(const GenCtx *g, GenStream s, int64_t order, int64_t customer, int n,
                     int64_t *items);
/* The sold date of an order, biased to the customer's shopping days. */
int64_t gen_order_date(const GenCtx *g, GenStream s, int64_t order, int64_t customer);
/* A key in [1, n], or GEN_NULL with probability null_pct/100. */
int64_t gen_fk(uint64_t r, int64_t n, int null_pct);
/* A value in [lo, hi] from r: uniform when g->skew is 0, else lo + (hi - lo + 1) x u^(skew+1)
 * for u uniform in [0, 1): the low values popular (with skew 1, a tenth of the range holds
 * about a third of the draws; with 3, more than half).  For the generator-independent
 * check (bench/tpcds/README.md): the same tables with other value distributions. */
int64_t gen_skewed(const GenCtx *g, uint64_t r, int64_t lo, int64_t hi);
/* The row of line `line` of order o in a line stream. */
static inline uint64_t gen_line_row(int64_t o, int line)
{
    return (uint64_t)o * GEN_MAX_LINES + (uint64_t)line;
}
