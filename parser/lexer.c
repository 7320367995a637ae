/*
 * lexer.c - the hand-written SQL tokenizer.
 *
 * Design: a single forward scan from a byte offset; each call returns one
 * token as an (offset, length) slice, so the lexer keeps no state and needs no
 * memory.  Invariant: a token never extends past `len`, and the text need not
 * be NUL-terminated, so every look-ahead checks the bound first.  A word is
 * looked up in `keywords`, a table sorted by name and searched by bisection
 * with a case-insensitive compare; keep the table sorted (a unit test checks).
 */
#include "parser/lexer.h"

#include <stdbool.h>
#include <string.h>

#include "grammar.h"

typedef struct Keyword {
    const char *name; /* upper case */
    int code;         /* PS_TK_* */
} Keyword;

/* Sorted by name (strcmp order).  Keep in sync with the %token lists in grammar.y. */
static const Keyword keywords[] = {
    {"ADD", PS_TK_ADD},
    {"ALL", PS_TK_ALL},
    {"ALTER", PS_TK_ALTER},
    {"ANALYZE", PS_TK_ANALYZE},
    {"AND", PS_TK_AND},
    {"ANY", PS_TK_ANY},
    {"AS", PS_TK_AS},
    {"ASC", PS_TK_ASC},
    {"BEGIN", PS_TK_BEGIN},
    {"BETWEEN", PS_TK_BETWEEN},
    {"BOTH", PS_TK_BOTH},
    {"BY", PS_TK_BY},
    {"CACHE", PS_TK_CACHE},
    {"CASE", PS_TK_CASE},
    {"CLEAR", PS_TK_CLEAR},
    {"COLUMN", PS_TK_COLUMN},
    {"COMMIT", PS_TK_COMMIT},
    {"COPY", PS_TK_COPY},
    {"CREATE", PS_TK_CREATE},
    {"CROSS", PS_TK_CROSS},
    {"CUBE", PS_TK_CUBE},
    {"CURRENT", PS_TK_CURRENT},
    {"DAY", PS_TK_DAY},
    {"DAYS", PS_TK_DAYS},
    {"DEFAULT", PS_TK_DEFAULT},
    {"DELETE", PS_TK_DELETE},
    {"DESC", PS_TK_DESC},
    {"DESCRIBE", PS_TK_DESCRIBE},
    {"DISTINCT", PS_TK_DISTINCT},
    {"DROP", PS_TK_DROP},
    {"ELSE", PS_TK_ELSE},
    {"END", PS_TK_END},
    {"ESCAPE", PS_TK_ESCAPE},
    {"EXCEPT", PS_TK_EXCEPT},
    {"EXCLUDE", PS_TK_EXCLUDE},
    {"EXISTS", PS_TK_EXISTS},
    {"EXPLAIN", PS_TK_EXPLAIN},
    {"FALSE", PS_TK_FALSE},
    {"FILTER", PS_TK_FILTER},
    {"FIRST", PS_TK_FIRST},
    {"FOLLOWING", PS_TK_FOLLOWING},
    {"FOR", PS_TK_FOR},
    {"FROM", PS_TK_FROM},
    {"FULL", PS_TK_FULL},
    {"GROUP", PS_TK_GROUP},
    {"GROUPING", PS_TK_GROUPING},
    {"HAVING", PS_TK_HAVING},
    {"HOUR", PS_TK_HOUR},
    {"HOURS", PS_TK_HOURS},
    {"IF", PS_TK_IF},
    {"ILIKE", PS_TK_ILIKE},
    {"IN", PS_TK_IN},
    {"INDEX", PS_TK_INDEX},
    {"INNER", PS_TK_INNER},
    {"INSERT", PS_TK_INSERT},
    {"INTERSECT", PS_TK_INTERSECT},
    {"INTERVAL", PS_TK_INTERVAL},
    {"INTO", PS_TK_INTO},
    {"IS", PS_TK_IS},
    {"ISNULL", PS_TK_ISNULL},
    {"JOIN", PS_TK_JOIN},
    {"KEY", PS_TK_KEY},
    {"LAST", PS_TK_LAST},
    {"LAZY", PS_TK_LAZY},
    {"LEADING", PS_TK_LEADING},
    {"LEFT", PS_TK_LEFT},
    {"LIKE", PS_TK_LIKE},
    {"LIMIT", PS_TK_LIMIT},
    {"MICROSECOND", PS_TK_MICROSECOND},
    {"MICROSECONDS", PS_TK_MICROSECONDS},
    {"MILLISECOND", PS_TK_MILLISECOND},
    {"MILLISECONDS", PS_TK_MILLISECONDS},
    {"MINUTE", PS_TK_MINUTE},
    {"MINUTES", PS_TK_MINUTES},
    {"MONTH", PS_TK_MONTH},
    {"MONTHS", PS_TK_MONTHS},
    {"NATURAL", PS_TK_NATURAL},
    {"NOT", PS_TK_NOT},
    {"NOTNULL", PS_TK_NOTNULL},
    {"NULL", PS_TK_NULL},
    {"NULLS", PS_TK_NULLS},
    {"OFFSET", PS_TK_OFFSET},
    {"ON", PS_TK_ON},
    {"OPTIONS", PS_TK_OPTIONS},
    {"OR", PS_TK_OR},
    {"ORDER", PS_TK_ORDER},
    {"OUTER", PS_TK_OUTER},
    {"OVER", PS_TK_OVER},
    {"PARTITION", PS_TK_PARTITION},
    {"POSITION", PS_TK_POSITION},
    {"PRECEDING", PS_TK_PRECEDING},
    {"PRECISION", PS_TK_PRECISION},
    {"PRIMARY", PS_TK_PRIMARY},
    {"QUALIFY", PS_TK_QUALIFY},
    {"RANGE", PS_TK_RANGE},
    {"RECURSIVE", PS_TK_RECURSIVE},
    {"RENAME", PS_TK_RENAME},
    {"REPLACE", PS_TK_REPLACE},
    {"RESET", PS_TK_RESET},
    {"RETURNING", PS_TK_RETURNING},
    {"RIGHT", PS_TK_RIGHT},
    {"ROLLBACK", PS_TK_ROLLBACK},
    {"ROLLUP", PS_TK_ROLLUP},
    {"ROW", PS_TK_ROW},
    {"ROWS", PS_TK_ROWS},
    {"SECOND", PS_TK_SECOND},
    {"SECONDS", PS_TK_SECONDS},
    {"SELECT", PS_TK_SELECT},
    {"SET", PS_TK_SET},
    {"SETS", PS_TK_SETS},
    {"SHOW", PS_TK_SHOW},
    {"SOME", PS_TK_SOME},
    {"START", PS_TK_START},
    {"TABLE", PS_TK_TABLE},
    {"TEMP", PS_TK_TEMP},
    {"TEMPORARY", PS_TK_TEMPORARY},
    {"THEN", PS_TK_THEN},
    {"TO", PS_TK_TO},
    {"TRAILING", PS_TK_TRAILING},
    {"TRANSACTION", PS_TK_TRANSACTION},
    {"TRUE", PS_TK_TRUE},
    {"UNBOUNDED", PS_TK_UNBOUNDED},
    {"UNCACHE", PS_TK_UNCACHE},
    {"UNION", PS_TK_UNION},
    {"UNIQUE", PS_TK_UNIQUE},
    {"UNKNOWN", PS_TK_UNKNOWN},
    {"UPDATE", PS_TK_UPDATE},
    {"USING", PS_TK_USING},
    {"VALUES", PS_TK_VALUES},
    {"VARYING", PS_TK_VARYING},
    {"VIEW", PS_TK_VIEW},
    {"WEEK", PS_TK_WEEK},
    {"WEEKS", PS_TK_WEEKS},
    {"WHEN", PS_TK_WHEN},
    {"WHERE", PS_TK_WHERE},
    {"WINDOW", PS_TK_WINDOW},
    {"WITH", PS_TK_WITH},
    {"WORK", PS_TK_WORK},
    {"YEAR", PS_TK_YEAR},
    {"YEARS", PS_TK_YEARS},
};

#define N_KEYWORDS ((int)(sizeof keywords / sizeof keywords[0]))
#define KEYWORD_MAX 16 /* longer words are never keywords */

/* ---- character classes --------------------------------------------------- */

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* Bytes >= 0x80 are letters so that UTF-8 identifiers pass through whole. */
static bool is_ident_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_ident_char(unsigned char c)
{
    return is_ident_start(c) || is_digit(c) || c == '$';
}

static unsigned char upper(unsigned char c)
{
    return (c >= 'a' && c <= 'z') ? (unsigned char)(c - 'a' + 'A') : c;
}

/* ---- keywords ------------------------------------------------------------ */

/* strcmp-style compare of the upper-cased slice s[0..n) with the keyword kw. */
static int keyword_cmp(const char *s, size_t n, const char *kw)
{
    for (size_t idx = 0; idx < n; idx++) {
        unsigned char a = upper((unsigned char)s[idx]);
        unsigned char b = (unsigned char)kw[idx];
        if (b == '\0' || a != b) {
            return (int)a - (int)b;
        }
    }
    return kw[n] == '\0' ? 0 : -1;
}

int ps_lexer_keyword(const char *s, size_t n)
{
    if (n == 0 || n > KEYWORD_MAX) {
        return 0;
    }
    int lo = 0;
    int hi = N_KEYWORDS - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int cmp = keyword_cmp(s, n, keywords[mid].name);
        if (cmp == 0) {
            return keywords[mid].code;
        }
        if (cmp < 0) {
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    return 0;
}

int ps_lexer_n_keywords(void)
{
    return N_KEYWORDS;
}

const char *ps_lexer_keyword_at(int idx)
{
    return (idx >= 0 && idx < N_KEYWORDS) ? keywords[idx].name : NULL;
}

/* ---- token scanners ------------------------------------------------------ */

/* Each scanner starts at sql[pos] and returns the offset just past its token. */

/* 'string' or "identifier" with the quote doubled inside; `len` when unterminated. */
static size_t scan_quoted(const char *sql, size_t len, size_t pos, char quote, bool *is_closed)
{
    pos++;
    while (pos < len) {
        if (sql[pos] == quote) {
            if (pos + 1 < len && sql[pos + 1] == quote) {
                pos += 2;
                continue;
            }
            *is_closed = true;
            return pos + 1;
        }
        pos++;
    }
    *is_closed = false;
    return len;
}

/* E'...' from its quote at pos: a backslash escapes the next character, so
 * E'it\'s' is one string. Returns the end, past the closing quote. */
static size_t scan_escaped(const char *sql, size_t len, size_t pos, bool *is_closed)
{
    pos++;
    while (pos < len) {
        if (sql[pos] == '\\') {
            pos += 2;
            continue;
        }
        if (sql[pos] == '\'') {
            if (pos + 1 < len && sql[pos + 1] == '\'') {
                pos += 2;
                continue;
            }
            *is_closed = true;
            return pos + 1;
        }
        pos++;
    }
    *is_closed = false;
    return len;
}

/* Digits, an optional fraction and an optional exponent; *is_float when either. */
static size_t scan_number(const char *sql, size_t len, size_t pos, bool *is_float)
{
    *is_float = false;
    while (pos < len && is_digit((unsigned char)sql[pos])) {
        pos++;
    }
    if (pos < len && sql[pos] == '.') {
        *is_float = true;
        pos++;
        while (pos < len && is_digit((unsigned char)sql[pos])) {
            pos++;
        }
    }
    if (pos < len && (sql[pos] == 'e' || sql[pos] == 'E')) {
        size_t exp = pos + 1;
        if (exp < len && (sql[exp] == '+' || sql[exp] == '-')) {
            exp++;
        }
        if (exp < len && is_digit((unsigned char)sql[exp])) {
            *is_float = true;
            pos = exp;
            while (pos < len && is_digit((unsigned char)sql[pos])) {
                pos++;
            }
        }
    }
    return pos;
}

/* Operators of two characters, tried before the one-character ones. */
static const struct {
    char first, second; /* the two characters */
    int code;           /* PS_TK_* */
} two_char_ops[] = {
    {'|', '|', PS_TK_CONCAT}, {':', ':', PS_TK_DCOLON}, {'=', '=', PS_TK_EQ},
    {'!', '=', PS_TK_NE},     {'<', '>', PS_TK_NE},     {'<', '=', PS_TK_LE},
    {'<', '<', PS_TK_SHL},    {'>', '=', PS_TK_GE},     {'>', '>', PS_TK_SHR},
};

/* The operator of one character c, or PS_TK_ILLEGAL. */
static int one_char_op(char c)
{
    static const char chars[] = "+-*/%(),.;&~|=<>[]{}:";
    static const int codes[] = {
        PS_TK_PLUS,   PS_TK_MINUS,  PS_TK_STAR,  PS_TK_SLASH, PS_TK_PERCENT,  PS_TK_LP,
        PS_TK_RP,     PS_TK_COMMA,  PS_TK_DOT,   PS_TK_SEMI,  PS_TK_BITAND,   PS_TK_TILDE,
        PS_TK_BITOR,  PS_TK_EQ,     PS_TK_LT,    PS_TK_GT,    PS_TK_LBRACKET, PS_TK_RBRACKET,
        PS_TK_LBRACE, PS_TK_RBRACE, PS_TK_COLON,
    };
    const char *hit = c != '\0' ? strchr(chars, c) : NULL;
    return hit != NULL ? codes[hit - chars] : PS_TK_ILLEGAL;
}

/* The operator at sql[pos]: its code (PS_TK_ILLEGAL for an unknown character)
 * and its length in *n. */
static int scan_operator(const char *sql, size_t len, size_t pos, size_t *n)
{
    char next = pos + 1 < len ? sql[pos + 1] : '\0';
    for (size_t idx = 0; idx < sizeof two_char_ops / sizeof two_char_ops[0]; idx++) {
        if (two_char_ops[idx].first == sql[pos] && two_char_ops[idx].second == next) {
            *n = 2;
            return two_char_ops[idx].code;
        }
    }
    *n = 1;
    return one_char_op(sql[pos]);
}

/* Skips white space and comments from pos.  Returns CM_SYNTAX for an
 * unterminated block comment (reported at its start). */
static CmStatus skip_blank(const char *sql, size_t len, size_t *pos, CmErr *err)
{
    size_t p = *pos;
    for (;;) {
        while (p < len && is_space((unsigned char)sql[p])) {
            p++;
        }
        if (p + 1 < len && sql[p] == '-' && sql[p + 1] == '-') {
            while (p < len && sql[p] != '\n') {
                p++;
            }
            continue;
        }
        if (p + 1 < len && sql[p] == '/' && sql[p + 1] == '*') {
            size_t start = p;
            p += 2;
            while (p + 1 < len && !(sql[p] == '*' && sql[p + 1] == '/')) {
                p++;
            }
            if (p + 1 >= len) {
                *pos = len;
                return cm_err_set(err, CM_SYNTAX, (int64_t)start, "unterminated /* comment");
            }
            p += 2;
            continue;
        }
        break;
    }
    *pos = p;
    return CM_OK;
}

/* A word: a keyword's code or PS_TK_ID. */
static size_t scan_word(const char *sql, size_t len, size_t pos, int *type)
{
    size_t start = pos;
    while (pos < len && is_ident_char((unsigned char)sql[pos])) {
        pos++;
    }
    int kw = ps_lexer_keyword(sql + start, pos - start);
    *type = kw != 0 ? kw : PS_TK_ID;
    return pos;
}

/* A number; a number running straight into a word ("12abc", "1e") is ILLEGAL. */
static size_t scan_numeric(const char *sql, size_t len, size_t pos, int *type)
{
    bool is_float = false;
    size_t end = scan_number(sql, len, pos, &is_float);
    *type = is_float ? PS_TK_FLOAT : PS_TK_INTEGER;
    if (end < len && is_ident_char((unsigned char)sql[end])) {
        while (end < len && is_ident_char((unsigned char)sql[end])) {
            end++;
        }
        *type = PS_TK_ILLEGAL;
    }
    return end;
}

/* A parameter: `?`, or `$` and digits (ILLEGAL when a word runs on, "$1a"). */
static size_t scan_param(const char *sql, size_t len, size_t pos, int *type)
{
    size_t end = pos + 1;
    *type = PS_TK_PARAM;
    if (sql[pos] == '$') {
        while (end < len && is_digit((unsigned char)sql[end])) {
            end++;
        }
        if (end < len && is_ident_char((unsigned char)sql[end])) {
            while (end < len && is_ident_char((unsigned char)sql[end])) {
                end++;
            }
            *type = PS_TK_ILLEGAL;
        }
    }
    return end;
}

CmStatus ps_lexer_next(const char *sql, size_t len, size_t off, PsToken *tok, CmErr *err)
{
    size_t pos = off;
    tok->type = 0;
    tok->off = (int64_t)len;
    tok->len = 0;
    if (skip_blank(sql, len, &pos, err) != CM_OK) {
        return CM_SYNTAX;
    }
    if (pos >= len) {
        return CM_OK;
    }
    unsigned char c = (unsigned char)sql[pos];
    size_t end;
    int type;
    if (c == '\'' || c == '"') {
        bool is_closed = false;
        end = scan_quoted(sql, len, pos, (char)c, &is_closed);
        if (!is_closed) {
            return cm_err_set(err, CM_SYNTAX, (int64_t)pos,
                              c == '\'' ? "unterminated string literal"
                                        : "unterminated quoted identifier");
        }
        type = c == '\'' ? PS_TK_STRING : PS_TK_ID;
        if (c == '"' && end - pos == 2) {
            type = PS_TK_ILLEGAL; /* a zero-length "" identifier */
        }
    } else if ((c == 'E' || c == 'e') && pos + 1 < len && sql[pos + 1] == '\'') {
        bool is_closed = false;
        end = scan_escaped(sql, len, pos + 1, &is_closed);
        if (!is_closed) {
            return cm_err_set(err, CM_SYNTAX, (int64_t)pos, "unterminated string literal");
        }
        type = PS_TK_STRING;
    } else if (is_digit(c) ||
               (c == '.' && pos + 1 < len && is_digit((unsigned char)sql[pos + 1]))) {
        end = scan_numeric(sql, len, pos, &type);
    } else if (is_ident_start(c)) {
        end = scan_word(sql, len, pos, &type);
    } else if (c == '?' || (c == '$' && pos + 1 < len && is_digit((unsigned char)sql[pos + 1]))) {
        end = scan_param(sql, len, pos, &type);
    } else {
        size_t n = 1;
        type = scan_operator(sql, len, pos, &n);
        end = pos + n;
    }
    tok->type = type;
    tok->off = (int64_t)pos;
    tok->len = (int64_t)(end - pos);
    return CM_OK;
}

/* ---- names --------------------------------------------------------------- */

/* Names of the tokens that are not keywords. */
static const struct {
    int code;         /* PS_TK_*, 0 for the end of input */
    const char *name; /* static */
} token_names[] = {
    {0, "EOF"},
    {PS_TK_ID, "ID"},
    {PS_TK_STRING, "STRING"},
    {PS_TK_INTEGER, "INTEGER"},
    {PS_TK_FLOAT, "FLOAT"},
    {PS_TK_ILLEGAL, "ILLEGAL"},
    {PS_TK_SEMI, "SEMI"},
    {PS_TK_LP, "LP"},
    {PS_TK_RP, "RP"},
    {PS_TK_COMMA, "COMMA"},
    {PS_TK_DOT, "DOT"},
    {PS_TK_LBRACKET, "LBRACKET"},
    {PS_TK_RBRACKET, "RBRACKET"},
    {PS_TK_LBRACE, "LBRACE"},
    {PS_TK_RBRACE, "RBRACE"},
    {PS_TK_COLON, "COLON"},
    {PS_TK_PARAM, "PARAM"},
    {PS_TK_PLUS, "PLUS"},
    {PS_TK_MINUS, "MINUS"},
    {PS_TK_STAR, "STAR"},
    {PS_TK_SLASH, "SLASH"},
    {PS_TK_PERCENT, "PERCENT"},
    {PS_TK_CONCAT, "CONCAT"},
    {PS_TK_EQ, "EQ"},
    {PS_TK_NE, "NE"},
    {PS_TK_LT, "LT"},
    {PS_TK_LE, "LE"},
    {PS_TK_GT, "GT"},
    {PS_TK_GE, "GE"},
    {PS_TK_DCOLON, "DCOLON"},
    {PS_TK_BITAND, "BITAND"},
    {PS_TK_BITOR, "BITOR"},
    {PS_TK_SHL, "SHL"},
    {PS_TK_SHR, "SHR"},
    {PS_TK_TILDE, "TILDE"},
    {PS_TK_NOT_LA, "NOT_LA"},
};

const char *ps_lexer_token_name(int type)
{
    for (size_t idx = 0; idx < sizeof token_names / sizeof token_names[0]; idx++) {
        if (token_names[idx].code == type) {
            return token_names[idx].name;
        }
    }
    for (int idx = 0; idx < N_KEYWORDS; idx++) {
        if (keywords[idx].code == type) {
            return keywords[idx].name;
        }
    }
    return "?";
}
