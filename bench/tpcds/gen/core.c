/*
 * core.c - the counter-based PRNG, the calendar and the domain pickers of
 * tpcds_gen.
 *
 * gen_rand hashes (seed, stream, row, column) with two splitmix64 finalizers:
 * no state is carried from one value to the next, which is what makes any row
 * range generable alone.  Dates are Julian day numbers (the d_date_sk of
 * dsdgen), converted with the days-from-civil algorithm of H. Hinnant.
 */
#include <string.h>

#include "bench/tpcds/gen/gen.h"

uint64_t gen_rand(const GenCtx *g, GenStream s, uint64_t row, unsigned col)
{
    uint64_t h = cm_hash_u64(g->seed ^ ((uint64_t)s << 56) ^ row);
    return cm_hash_u64(h + 0x9e3779b97f4a7c15ULL * ((uint64_t)col + 1));
}

/* ------------------------------------------------------------- calendar */

int64_t gen_jdn(int year, int month, int day)
{
    int64_t y = year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468 + 2440588;
}

void gen_civil(int64_t jdn, int *year, int *month, int *day)
{
    int64_t z = jdn - 2440588 + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    *day = (int)(doy - (153 * mp + 2) / 5 + 1);
    *month = (int)m;
    *year = (int)(yoe + era * 400 + (m <= 2));
}

int gen_dow(int64_t jdn)
{
    return (int)((jdn + 1) % 7);
}

int gen_month_days(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool is_leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return days[month - 1] + (month == 2 && is_leap);
}

/* -------------------------------------------------------------- pickers */

const char *gen_pick(const GenList *l, uint64_t r)
{
    return l->v[gen_uniform(r, 0, l->n - 1)];
}

/* Addresses per state, roughly by population; the states the queries name
 * (TN CA KY GA TX OH OR NM VA MS CO MN WA IN ND OK ...) are all present. */
static const GenState STATES[] = {
    {"TX", 60, -6}, {"CA", 55, -8}, {"GA", 45, -5}, {"VA", 40, -5}, {"KY", 40, -5}, {"TN", 40, -5},
    {"OH", 35, -5}, {"IL", 35, -6}, {"NC", 35, -5}, {"MO", 30, -6}, {"IA", 30, -6}, {"IN", 30, -5},
    {"MS", 30, -6}, {"KS", 28, -6}, {"NE", 25, -6}, {"MN", 25, -6}, {"MI", 25, -5}, {"OK", 25, -6},
    {"WI", 22, -6}, {"AR", 22, -6}, {"AL", 22, -6}, {"PA", 22, -5}, {"NY", 20, -5}, {"FL", 20, -5},
    {"LA", 20, -6}, {"SD", 18, -6}, {"ND", 18, -6}, {"WV", 18, -5}, {"CO", 18, -7}, {"MT", 15, -7},
    {"SC", 15, -5}, {"WA", 15, -8}, {"OR", 12, -8}, {"NM", 12, -7}, {"ID", 10, -7}, {"UT", 10, -7},
    {"NJ", 10, -5}, {"MD", 10, -5}, {"AZ", 8, -7},  {"NV", 6, -8},  {"WY", 6, -7},  {"ME", 6, -5},
    {"MA", 6, -5},  {"NH", 5, -5},  {"VT", 5, -5},  {"AK", 4, -9},  {"CT", 3, -5},  {"HI", 2, -10},
    {"DE", 2, -5},  {"RI", 2, -5},  {"DC", 1, -5},
};

const GenState *gen_pick_state(uint64_t r)
{
    int total = 0;
    for (int i = 0; i < GEN_LEN(STATES); i++) {
        total += STATES[i].weight;
    }
    int64_t x = gen_uniform(r, 0, total - 1);
    for (int i = 0; i < GEN_LEN(STATES); i++) {
        x -= STATES[i].weight;
        if (x < 0) {
            return &STATES[i];
        }
    }
    return &STATES[0];
}

void gen_word(char *out, size_t cap, int64_t n)
{
    char digits[24];
    int n_digits = 0;
    do {
        digits[n_digits++] = (char)(n % 10);
        n /= 10;
    } while (n > 0 && n_digits < GEN_LEN(digits));
    size_t len = 0;
    out[0] = '\0';
    while (n_digits > 0) {
        const char *syl = gen_syllables.v[(int)digits[--n_digits]];
        size_t k = strlen(syl);
        if (len + k + 1 > cap) {
            break;
        }
        memcpy(out + len, syl, k + 1);
        len += k;
    }
}

static const char *const TEXT_WORDS[] = {
    "able",      "about",    "across",    "after",      "again",    "almost",    "always",
    "american",  "areas",    "available", "because",    "before",   "best",      "better",
    "business",  "certain",  "changes",   "children",   "clear",    "close",     "common",
    "companies", "control",  "costs",     "current",    "days",     "different", "early",
    "economic",  "end",      "enough",    "entire",     "even",     "events",    "fine",
    "following", "free",     "full",      "general",    "good",     "great",     "groups",
    "hands",     "high",     "important", "including",  "industry", "just",      "large",
    "later",     "level",    "little",    "local",      "long",     "major",     "members",
    "modern",    "national", "natural",   "necessary",  "new",      "numbers",   "old",
    "only",      "open",     "other",     "particular", "patients", "people",    "political",
    "possible",  "present",  "private",   "products",   "public",   "quite",     "real",
    "recent",    "right",    "small",     "social",     "special",  "strong",    "systems",
};

void gen_text(char *out, int max_len, uint64_t r)
{
    int len = 0;
    int want = 12 + (int)(r % (uint64_t)(max_len > 12 ? max_len - 11 : 1));
    uint64_t x = r;
    out[0] = '\0';
    while (len < want) {
        x = cm_hash_u64(x + 0x9e3779b97f4a7c15ULL);
        const char *w = TEXT_WORDS[x % GEN_LEN(TEXT_WORDS)];
        int k = (int)strlen(w);
        if (len + k + (len > 0) > max_len) {
            break;
        }
        if (len > 0) {
            out[len++] = ' ';
        }
        memcpy(out + len, w, (size_t)k + 1);
        len += k;
    }
    if (len > 0) {
        out[0] = (char)(out[0] - 'a' + 'A');
    }
}
