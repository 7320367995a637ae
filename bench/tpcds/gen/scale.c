/*
 * scale.c - the row counts of tpcds_gen at a scale factor, the table list,
 * and the order layout of the sales channels.
 *
 * Scaling rules (bench/tpcds/README.md):
 *  - store_sales, catalog_sales and web_sales are linear in SF (2,880,404,
 *    1,441,548 and 719,384 rows at SF 1), exact to the row;
 *  - their returns are a 10% sample of the sales lines (about 287,514,
 *    144,067 and 71,763 at SF 1), so their counts are near, not exact;
 *  - inventory is 261 weekly snapshots x item ids x warehouses (11,745,000
 *    at SF 1), as in dsdgen;
 *  - date_dim (73,049), time_dim (86,400), customer_demographics (1,920,800),
 *    household_demographics (7,200), income_band (20) and ship_mode (20) are
 *    fixed;
 *  - the other dimensions follow the official table of dsdgen at SF 1, 10,
 *    100, 300, 1000 and 3000, linearly interpolated between those points and
 *    held at the SF 3000 value above it; below SF 1, customer,
 *    customer_address and item shrink linearly (with a floor), the others keep
 *    their SF 1 count.
 */
#include <math.h>
#include <stdio.h>

#include "bench/tpcds/gen/gen.h"

/* The scale factors of the official row count table. */
static const double SF_POINTS[6] = {1, 10, 100, 300, 1000, 3000};

/* One dimension's official counts at SF_POINTS, and its rule below SF 1. */
typedef struct DimScale {
    double rows[6];
    double floor; /* > 0: linear below SF 1 down to this count; 0: fixed below SF 1 */
} DimScale;

static const DimScale CUSTOMER = {{1e5, 5e5, 2e6, 5e6, 12e6, 30e6}, 1000};
static const DimScale ADDRESS = {{5e4, 25e4, 1e6, 25e5, 6e6, 15e6}, 500};
static const DimScale ITEM = {{18000, 102000, 204000, 264000, 300000, 360000}, 1000};
static const DimScale STORE = {{12, 102, 402, 804, 1002, 1350}, 0};
static const DimScale WAREHOUSE = {{5, 10, 15, 17, 20, 22}, 0};
static const DimScale PROMO = {{300, 500, 1000, 1300, 1500, 1800}, 0};
static const DimScale REASON = {{35, 45, 55, 60, 65, 67}, 0};
static const DimScale CALL_CENTER = {{6, 24, 30, 36, 42, 48}, 0};
static const DimScale WEB_SITE = {{30, 42, 24, 46, 54, 66}, 0};
static const DimScale WEB_PAGE = {{60, 200, 2040, 2400, 3000, 3600}, 0};
static const DimScale CATALOG_PAGE = {{11718, 12000, 20400, 26000, 30000, 36000}, 0};

static int64_t dim_rows(const DimScale *d, double sf)
{
    if (sf < SF_POINTS[0]) {
        if (d->floor <= 0) {
            return (int64_t)d->rows[0];
        }
        return (int64_t)fmax(d->floor, llround(d->rows[0] * sf));
    }
    for (int i = 0; i + 1 < GEN_LEN(SF_POINTS); i++) {
        if (sf <= SF_POINTS[i + 1]) {
            double t = (sf - SF_POINTS[i]) / (SF_POINTS[i + 1] - SF_POINTS[i]);
            return llround(d->rows[i] + t * (d->rows[i + 1] - d->rows[i]));
        }
    }
    return (int64_t)d->rows[GEN_LEN(SF_POINTS) - 1];
}

int gen_order_lines(const GenCtx *g, const GenOrders *ch, GenStream s, int64_t o)
{
    if (o == ch->n_orders - 1) {
        return ch->last_lines;
    }
    uint64_t r = gen_rand(g, GS_ORDER_SIZE, (uint64_t)o, (unsigned)s);
    return (int)gen_uniform(r, ch->min_lines, ch->max_lines);
}

/* Counts the orders that hold ch->n_rows lines; the last one is cut to fit. */
static void count_orders(const GenCtx *g, GenOrders *ch, GenStream s)
{
    int64_t rows = 0;
    int64_t o = 0;
    ch->n_orders = INT64_MAX;
    while (rows < ch->n_rows) {
        int lines = gen_order_lines(g, ch, s, o);
        if (rows + lines >= ch->n_rows) {
            ch->last_lines = (int)(ch->n_rows - rows);
        }
        rows += lines;
        o++;
    }
    ch->n_orders = o;
}

static void init_orders(const GenCtx *g, GenOrders *ch, GenStream s, double per_sf, int lo, int hi,
                        bool need)
{
    ch->n_rows = llround(per_sf * g->sf);
    ch->min_lines = lo;
    ch->max_lines = hi;
    ch->n_orders = 0;
    ch->last_lines = 0;
    if (need && ch->n_rows > 0) {
        count_orders(g, ch, s);
    }
}

static void init_dims(GenCtx *g)
{
    double sf = g->sf;
    g->n_customer = dim_rows(&CUSTOMER, sf);
    g->n_address = dim_rows(&ADDRESS, sf);
    g->n_item = dim_rows(&ITEM, sf) & ~(int64_t)1; /* two versions per item id */
    g->n_item_ids = g->n_item / 2;
    g->n_store = dim_rows(&STORE, sf);
    g->n_warehouse = dim_rows(&WAREHOUSE, sf);
    g->n_promo = dim_rows(&PROMO, sf);
    g->n_reason = dim_rows(&REASON, sf);
    g->n_call_center = dim_rows(&CALL_CENTER, sf);
    g->n_web_site = dim_rows(&WEB_SITE, sf);
    g->n_web_page = dim_rows(&WEB_PAGE, sf);
    g->n_catalog_page = dim_rows(&CATALOG_PAGE, sf);
}

void gen_ctx_init(GenCtx *g, double sf, uint64_t seed, const bool need_orders[3])
{
    *g = (GenCtx){.sf = sf, .seed = seed};
    snprintf(g->args, sizeof g->args, "--sf %g --seed %llu", sf, (unsigned long long)seed);
    init_dims(g);
    init_orders(g, &g->ss, GS_SS_ORDER, 2880404, 8, 16, need_orders[0]);
    init_orders(g, &g->cs, GS_CS_ORDER, 1441548, 4, 14, need_orders[1]);
    init_orders(g, &g->ws, GS_WS_ORDER, 719384, 8, 16, need_orders[2]);

    int64_t *u = g->units;
    u[GT_DBGEN_VERSION] = 1;
    u[GT_CUSTOMER_ADDRESS] = g->n_address;
    u[GT_CUSTOMER_DEMOGRAPHICS] = 1920800;
    u[GT_DATE_DIM] = GEN_DATE_ROWS;
    u[GT_WAREHOUSE] = g->n_warehouse;
    u[GT_SHIP_MODE] = 20;
    u[GT_TIME_DIM] = 86400;
    u[GT_REASON] = g->n_reason;
    u[GT_INCOME_BAND] = 20;
    u[GT_ITEM] = g->n_item;
    u[GT_STORE] = g->n_store;
    u[GT_CALL_CENTER] = g->n_call_center;
    u[GT_CUSTOMER] = g->n_customer;
    u[GT_WEB_SITE] = g->n_web_site;
    u[GT_HOUSEHOLD_DEMOGRAPHICS] = 7200;
    u[GT_WEB_PAGE] = g->n_web_page;
    u[GT_PROMOTION] = g->n_promo;
    u[GT_CATALOG_PAGE] = g->n_catalog_page;
    u[GT_INVENTORY] = GEN_INV_WEEKS * g->n_item_ids * g->n_warehouse;
    u[GT_STORE_SALES] = u[GT_STORE_RETURNS] = g->ss.n_orders;
    u[GT_CATALOG_SALES] = u[GT_CATALOG_RETURNS] = g->cs.n_orders;
    u[GT_WEB_SALES] = u[GT_WEB_RETURNS] = g->ws.n_orders;
}

/* Keep in the order of GenTableId. */
const GenTable GEN_TABLES[GT_N_TABLES] = {
    {"dbgen_version", gen_dbgen_version, 1},
    {"customer_address", gen_customer_address, 8192},
    {"customer_demographics", gen_customer_demographics, 65536},
    {"date_dim", gen_date_dim, 8192},
    {"warehouse", gen_warehouse, 8192},
    {"ship_mode", gen_ship_mode, 8192},
    {"time_dim", gen_time_dim, 16384},
    {"reason", gen_reason, 8192},
    {"income_band", gen_income_band, 8192},
    {"item", gen_item, 4096},
    {"store", gen_store, 8192},
    {"call_center", gen_call_center, 8192},
    {"customer", gen_customer, 8192},
    {"web_site", gen_web_site, 8192},
    {"store_returns", gen_store_returns, 2048},
    {"household_demographics", gen_household_demographics, 8192},
    {"web_page", gen_web_page, 8192},
    {"promotion", gen_promotion, 8192},
    {"catalog_page", gen_catalog_page, 8192},
    {"inventory", gen_inventory, 65536},
    {"catalog_returns", gen_catalog_returns, 2048},
    {"web_returns", gen_web_returns, 2048},
    {"web_sales", gen_web_sales, 1024},
    {"catalog_sales", gen_catalog_sales, 1024},
    {"store_sales", gen_store_sales, 1024},
};
