/*
 * functions.c - the registry of callable functions (functions.h).
 *
 * Keep in sync with the resolvers of executor/func_*.c (scalar entries marked
 * R), bind_expr.c's special calls (B) and binder.c's table functions: the
 * planner unit test resolves every R entry at its least and greatest argument
 * counts, and the binder refuses a name missing here, so a gap shows as a
 * failing test rather than as a function nobody can call or find.
 */
#include "planner/bind/functions.h"

#include <string.h>

#include "executor/ops.h"

#define R PL_FUNC_RESOLVED
#define B PL_FUNC_BINDER
#define ANY (-1)

/* clang-format off */
static const PlFunc FUNCS[] = {
    /* ---- scalar: strings ---- */
    {"ascii", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"char_length", PL_FUNC_SCALAR, 1, 1, R, "length"},
    {"character_length", PL_FUNC_SCALAR, 1, 1, R, "length"},
    {"chr", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"concat", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"concat_ws", PL_FUNC_SCALAR, 2, ANY, R, NULL},
    {"contains", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"ends_with", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"hex", PL_FUNC_SCALAR, 1, 1, R, "to_hex"},
    {"format", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"instr", PL_FUNC_SCALAR, 2, 2, R, "strpos"},
    {"lcase", PL_FUNC_SCALAR, 1, 1, R, "lower"},
    {"left", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"length", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"lower", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"lpad", PL_FUNC_SCALAR, 3, 3, R, NULL},
    {"ltrim", PL_FUNC_SCALAR, 1, 2, R, NULL},
    {"md5", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"position", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"prefix", PL_FUNC_SCALAR, 2, 2, R, "starts_with"},
    {"printf", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"regexp_extract", PL_FUNC_SCALAR, 2, 3, R, NULL},
    {"regexp_matches", PL_FUNC_SCALAR, 2, 3, R, NULL},
    {"regexp_replace", PL_FUNC_SCALAR, 3, 4, R, NULL},
    {"repeat", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"replace", PL_FUNC_SCALAR, 3, 3, R, NULL},
    {"reverse", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"right", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"rpad", PL_FUNC_SCALAR, 3, 3, R, NULL},
    {"rtrim", PL_FUNC_SCALAR, 1, 2, R, NULL},
    {"split_part", PL_FUNC_SCALAR, 3, 3, R, NULL},
    {"starts_with", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"strpos", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"substr", PL_FUNC_SCALAR, 2, 3, R, NULL},
    {"substring", PL_FUNC_SCALAR, 2, 3, R, "substr"},
    {"suffix", PL_FUNC_SCALAR, 2, 2, R, "ends_with"},
    {"to_hex", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"trim", PL_FUNC_SCALAR, 1, 2, R, NULL},
    {"ucase", PL_FUNC_SCALAR, 1, 1, R, "upper"},
    {"upper", PL_FUNC_SCALAR, 1, 1, R, NULL},
    /* ---- scalar: numbers ---- */
    {"abs", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"acos", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"asin", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"atan", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"atan2", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"cbrt", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"ceil", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"ceiling", PL_FUNC_SCALAR, 1, 1, R, "ceil"},
    {"cos", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"cot", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"degrees", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"exp", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"floor", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"ln", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"log", PL_FUNC_SCALAR, 1, 2, R, NULL},
    {"log10", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"log2", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"mod", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"pi", PL_FUNC_SCALAR, 0, 0, R, NULL},
    {"pow", PL_FUNC_SCALAR, 2, 2, R, "power"},
    {"power", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"radians", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"random", PL_FUNC_SCALAR, 0, 0, R, NULL},
    {"round", PL_FUNC_SCALAR, 1, 2, R, NULL},
    {"setseed", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"sign", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"sin", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"sqrt", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"tan", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"trunc", PL_FUNC_SCALAR, 1, 2, R, NULL},
    /* ---- scalar: dates, times, timestamps ---- */
    {"add_months", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"age", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"century", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"current_date", PL_FUNC_SCALAR, 0, 0, R, NULL},
    {"current_timestamp", PL_FUNC_SCALAR, 0, 0, B, "now"},
    {"date_add", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"date_diff", PL_FUNC_SCALAR, 3, 3, R, NULL},
    {"date_part", PL_FUNC_SCALAR, 2, 2, B, "extract"},
    {"date_trunc", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"datediff", PL_FUNC_SCALAR, 3, 3, R, "date_diff"},
    {"day", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"dayname", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"dayofweek", PL_FUNC_SCALAR, 1, 1, R, "dow"},
    {"dayofyear", PL_FUNC_SCALAR, 1, 1, R, "doy"},
    {"decade", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"dow", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"doy", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"epoch", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"epoch_ms", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"epoch_us", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"extract", PL_FUNC_SCALAR, 2, 2, B, NULL},
    {"get_current_timestamp", PL_FUNC_SCALAR, 0, 0, B, "now"},
    {"hour", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"last_day", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"make_date", PL_FUNC_SCALAR, 3, 3, R, NULL},
    {"make_timestamp", PL_FUNC_SCALAR, 1, 6, R, NULL},
    {"microsecond", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"millisecond", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"minute", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"month", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"monthname", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"now", PL_FUNC_SCALAR, 0, 0, B, NULL},
    {"quarter", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"second", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"strftime", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"strptime", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"sub_months", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"to_timestamp", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"today", PL_FUNC_SCALAR, 0, 0, R, "current_date"},
    {"transaction_timestamp", PL_FUNC_SCALAR, 0, 0, B, "now"},
    {"week", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"year", PL_FUNC_SCALAR, 1, 1, R, NULL},
    /* ---- scalar: lists ---- */
    {"array_cat", PL_FUNC_SCALAR, 1, ANY, R, "list_concat"},
    {"array_concat", PL_FUNC_SCALAR, 1, ANY, R, "list_concat"},
    {"array_contains", PL_FUNC_SCALAR, 2, 2, R, "list_contains"},
    {"array_extract", PL_FUNC_SCALAR, 2, 2, R, "list_extract"},
    {"array_has", PL_FUNC_SCALAR, 2, 2, R, "list_contains"},
    {"array_length", PL_FUNC_SCALAR, 1, 1, R, "len"},
    {"len", PL_FUNC_SCALAR, 1, 1, R, NULL},
    {"list_cat", PL_FUNC_SCALAR, 1, ANY, R, "list_concat"},
    {"list_concat", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"list_contains", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"list_element", PL_FUNC_SCALAR, 2, 2, R, "list_extract"},
    {"list_extract", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"list_has", PL_FUNC_SCALAR, 2, 2, R, "list_contains"},
    {"list_length", PL_FUNC_SCALAR, 1, 1, R, "len"},
    {"list_pack", PL_FUNC_SCALAR, 0, ANY, R, "list_value"},
    {"list_value", PL_FUNC_SCALAR, 0, ANY, R, NULL},
    {"str_split", PL_FUNC_SCALAR, 2, 2, R, "string_split"},
    {"string_split", PL_FUNC_SCALAR, 2, 2, R, NULL},
    {"string_to_array", PL_FUNC_SCALAR, 2, 2, R, "string_split"},
    {"unnest", PL_FUNC_SCALAR, 1, 1, B, NULL},
    /* ---- scalar: conditionals and the rest ---- */
    {"coalesce", PL_FUNC_SCALAR, 1, ANY, B, NULL},
    {"greatest", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"grouping", PL_FUNC_SCALAR, 1, ANY, B, NULL},
    {"grouping_id", PL_FUNC_SCALAR, 1, ANY, B, "grouping"},
    {"hash", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"if", PL_FUNC_SCALAR, 3, 3, B, NULL},
    {"ifnull", PL_FUNC_SCALAR, 2, 2, B, NULL},
    {"iif", PL_FUNC_SCALAR, 3, 3, B, "if"},
    {"least", PL_FUNC_SCALAR, 1, ANY, R, NULL},
    {"nullif", PL_FUNC_SCALAR, 2, 2, B, NULL},
    {"typeof", PL_FUNC_SCALAR, 1, 1, B, NULL},
    {"version", PL_FUNC_SCALAR, 0, 0, R, NULL},
    /* ---- aggregates ---- */
    {"any_value", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_MIN, NULL},
    {"approx_count_distinct", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_APPROX_DISTINCT, NULL},
    {"arbitrary", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_FIRST, "first"},
    {"arg_max", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_ARG_MAX, NULL},
    {"arg_min", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_ARG_MIN, NULL},
    {"array_agg", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_LIST, "list"},
    {"avg", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_AVG, NULL},
    /* over BOOLEAN, false < true; count_if counts its true rows */
    {"bit_and", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_BIT_AND, NULL},
    {"bit_or", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_BIT_OR, NULL},
    {"bit_xor", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_BIT_XOR, NULL},
    {"bool_and", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_MIN, NULL},
    {"bool_or", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_MAX, NULL},
    {"count", PL_FUNC_AGGREGATE, 0, 1, EX_AGG_COUNT, NULL},
    {"count_if", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_COUNT, NULL},
    /* NULLs included, as DuckDB's */
    {"first", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_FIRST, NULL},
    {"group_concat", PL_FUNC_AGGREGATE, 1, 2, EX_AGG_STRING_AGG, "string_agg"},
    {"last", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_LAST, NULL},
    {"list", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_LIST, NULL},
    {"listagg", PL_FUNC_AGGREGATE, 1, 2, EX_AGG_STRING_AGG, "string_agg"},
    {"max", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_MAX, NULL},
    {"max_by", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_ARG_MAX, "arg_max"},
    {"median", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_QUANTILE_CONT, NULL},
    {"min", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_MIN, NULL},
    {"min_by", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_ARG_MIN, "arg_min"},
    {"mode", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_MODE, NULL},
    {"quantile", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_QUANTILE_DISC, "quantile_disc"},
    {"quantile_cont", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_QUANTILE_CONT, NULL},
    {"quantile_disc", PL_FUNC_AGGREGATE, 2, 2, EX_AGG_QUANTILE_DISC, NULL},
    {"stddev", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_STDDEV_SAMP, "stddev_samp"},
    {"stddev_pop", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_STDDEV_POP, NULL},
    {"stddev_samp", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_STDDEV_SAMP, NULL},
    {"string_agg", PL_FUNC_AGGREGATE, 1, 2, EX_AGG_STRING_AGG, NULL},
    {"sum", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_SUM, NULL},
    {"var_pop", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_VAR_POP, NULL},
    {"var_samp", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_VAR_SAMP, NULL},
    {"variance", PL_FUNC_AGGREGATE, 1, 1, EX_AGG_VAR_SAMP, "var_samp"},
    /* ---- window functions (with OVER) ---- */
    {"avg", PL_FUNC_WINDOW, 1, 1, EX_WIN_AVG, NULL},
    {"count", PL_FUNC_WINDOW, 0, 1, EX_WIN_COUNT, NULL},
    {"cume_dist", PL_FUNC_WINDOW, 0, 0, EX_WIN_CUME_DIST, NULL},
    {"dense_rank", PL_FUNC_WINDOW, 0, 0, EX_WIN_DENSE_RANK, NULL},
    {"first_value", PL_FUNC_WINDOW, 1, 1, EX_WIN_FIRST_VALUE, NULL},
    {"lag", PL_FUNC_WINDOW, 1, 3, EX_WIN_LAG, NULL},
    {"last_value", PL_FUNC_WINDOW, 1, 1, EX_WIN_LAST_VALUE, NULL},
    {"lead", PL_FUNC_WINDOW, 1, 3, EX_WIN_LEAD, NULL},
    {"max", PL_FUNC_WINDOW, 1, 1, EX_WIN_MAX, NULL},
    {"min", PL_FUNC_WINDOW, 1, 1, EX_WIN_MIN, NULL},
    {"percent_rank", PL_FUNC_WINDOW, 0, 0, EX_WIN_PERCENT_RANK, NULL},
    {"rank", PL_FUNC_WINDOW, 0, 0, EX_WIN_RANK, NULL},
    {"row_number", PL_FUNC_WINDOW, 0, 0, EX_WIN_ROW_NUMBER, NULL},
    {"sum", PL_FUNC_WINDOW, 1, 1, EX_WIN_SUM, NULL},
    /* ---- table functions (in FROM) ---- */
    {"generate_series", PL_FUNC_TABLE, 1, 3, 0, NULL},
    {"range", PL_FUNC_TABLE, 1, 3, 0, NULL},
    {"read_csv", PL_FUNC_TABLE, 1, ANY, 0, NULL},
    {"read_csv_auto", PL_FUNC_TABLE, 1, ANY, 0, "read_csv"},
    /* the system tables (planner/system.h), called as well as named */
    {"sluice_cache", PL_FUNC_TABLE, 0, 0, 0, NULL},
    {"sluice_column_stats", PL_FUNC_TABLE, 0, 0, 0, NULL},
    {"sluice_functions", PL_FUNC_TABLE, 0, 0, 0, NULL},
    {"sluice_memory", PL_FUNC_TABLE, 0, 0, 0, NULL},
    {"sluice_settings", PL_FUNC_TABLE, 0, 0, 0, NULL},
    {"unnest", PL_FUNC_TABLE, 1, 1, 0, NULL},
};
/* clang-format on */

#define N_FUNCS ((int)(sizeof FUNCS / sizeof FUNCS[0]))

const PlFunc *pl_func_find(const char *name, PlFuncKind kind)
{
    for (int i = 0; i < N_FUNCS; i++) {
        if (FUNCS[i].kind == kind && strcmp(FUNCS[i].name, name) == 0) {
            return &FUNCS[i];
        }
    }
    return NULL;
}

int pl_func_count(void)
{
    return N_FUNCS;
}

const PlFunc *pl_func_at(int idx)
{
    return idx >= 0 && idx < N_FUNCS ? &FUNCS[idx] : NULL;
}

const char *pl_func_kind_name(PlFuncKind kind)
{
    switch (kind) {
    case PL_FUNC_SCALAR:
        return "scalar";
    case PL_FUNC_AGGREGATE:
        return "aggregate";
    case PL_FUNC_WINDOW:
        return "window";
    case PL_FUNC_TABLE:
        return "table";
    }
    return "?";
}
