/*
 * build_expr.c - AST builders for expressions and types, called from the
 * grammar's actions (see parse_int.h), plus the helpers every builder shares.
 *
 * Invariant: once ps->is_failed is set (a syntax error, or the arena refused
 * memory), every builder returns the scratch node without reading its
 * arguments, which may themselves be scratch.  Until then every argument is a
 * real node.  A node's span starts at the offset the caller names (usually its
 * first token or its first child's start) and ends at ps->prev_end.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/arena.h"
#include "grammar.h"
#include "parser/parse_int.h"

/* ======================================================================== */
/* shared helpers                                                            */
/* ======================================================================== */

void ps_build_fail(PsParse *ps, CmStatus code, int64_t off, const char *msg)
{
    cm_err_set(ps->err, code, off, "%s", msg);
    if (!ps->is_failed) {
        ps->is_failed = true;
        ps->rc = code;
    }
}

void ps_build_oom(PsParse *ps)
{
    ps_build_fail(ps, CM_OOM, -1, "out of memory while parsing");
}

void *ps_build_alloc(PsParse *ps, size_t n)
{
    CM_ASSERT(n <= sizeof ps->scratch);
    if (!ps->is_failed) {
        void *p = cm_arena_zalloc(ps->arena, n);
        if (p != NULL) {
            return p;
        }
        ps_build_oom(ps);
    }
    memset(&ps->scratch, 0, sizeof ps->scratch);
    return &ps->scratch;
}

PsList *ps_build_list(PsParse *ps, PsList *list, void *item)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsList));
    }
    PsList *out = ps_list_append(ps->arena, list, item);
    if (out == NULL) {
        ps_build_oom(ps);
        return ps_build_alloc(ps, sizeof(PsList));
    }
    return out;
}

/* In arena: a copy of s[0..n); "" after an error or on OOM. */
static char *build_strndup(PsParse *ps, const char *s, size_t n)
{
    if (ps->is_failed) {
        return "";
    }
    char *out = cm_arena_strndup(ps->arena, s, n);
    if (out == NULL) {
        ps_build_oom(ps);
        return "";
    }
    return out;
}

const char *ps_build_ident(PsParse *ps, PsToken tok)
{
    const char *text = ps->sql + tok.off;
    size_t n = (size_t)tok.len;
    if (n >= 2 && text[0] == '"') {
        /* "quoted": drop the quotes, undouble "" and keep the case. */
        char *out = build_strndup(ps, text + 1, n - 2);
        size_t w = 0;
        for (size_t r = 0; out[r] != '\0'; r++, w++) {
            out[w] = out[r];
            if (out[r] == '"' && out[r + 1] == '"') {
                r++;
            }
        }
        if (!ps->is_failed) {
            out[w] = '\0';
        }
        return out;
    }
    char *out = build_strndup(ps, text, n);
    for (char *p = out; *p != '\0'; p++) {
        if (*p >= 'A' && *p <= 'Z') {
            *p = (char)(*p - 'A' + 'a');
        }
    }
    return out;
}

/* True when the identifier token reads `word` (lower case) once folded. */
static bool ident_is(PsParse *ps, PsToken tok, const char *word)
{
    return strcmp(ps_build_ident(ps, tok), word) == 0;
}

/* The error is reported at `off`; `len` bytes of the text are quoted. */
static void build_error_at(PsParse *ps, int64_t off, int64_t len)
{
    bool is_first = ps->err->code == CM_OK;
    if (len <= 0) {
        cm_err_set(ps->err, CM_SYNTAX, off, "syntax error at end of input");
    } else {
        int shown = len > 64 ? 64 : (int)len;
        cm_err_set(ps->err, CM_SYNTAX, off, "syntax error at or near '%.*s'", shown, ps->sql + off);
        if (is_first) {
            ps->err->len = len;
        }
    }
    if (!ps->is_failed) {
        ps->is_failed = true;
        ps->rc = CM_SYNTAX;
    }
}

void ps_build_syntax_error(PsParse *ps, PsToken tok)
{
    build_error_at(ps, tok.off, tok.type == 0 ? 0 : tok.len);
}

void ps_build_expect_word(PsParse *ps, PsToken tok, const char *word)
{
    if (!ps->is_failed && !ident_is(ps, tok, word)) {
        build_error_at(ps, tok.off, tok.len);
    }
}

void ps_build_overflow(PsParse *ps)
{
    ps_build_fail(ps, CM_LIMIT, ps->cur_off, "statement is nested too deeply");
}

/* Sets a node's span from off to the end of the last token read. */
static void set_span(PsParse *ps, int64_t *src_off, int64_t *src_len, int64_t off)
{
    *src_off = off;
    *src_len = ps->prev_end - off;
}

/* ======================================================================== */
/* literals and names                                                        */
/* ======================================================================== */

PsExpr *ps_build_expr(PsParse *ps, PsExprKind kind, int64_t off)
{
    PsExpr *e = ps_build_alloc(ps, sizeof(PsExpr));
    e->kind = kind;
    set_span(ps, &e->src_off, &e->src_len, off);
    return e;
}

PsExpr *ps_build_number(PsParse *ps, PsToken tok)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_NUMBER, tok.off);
    e->str = build_strndup(ps, ps->sql + tok.off, (size_t)tok.len);
    e->str_len = (int64_t)strlen(e->str);
    return e;
}

PsExpr *ps_build_int(PsParse *ps, PsToken tok)
{
    const char *text = ps->sql + tok.off;
    uint64_t value = 0;
    for (int64_t idx = 0; idx < tok.len; idx++) {
        uint64_t digit = (uint64_t)(text[idx] - '0');
        if (value > ((uint64_t)INT64_MAX - digit) / 10) {
            return ps_build_number(ps, tok); /* too large for int64 */
        }
        value = value * 10 + digit;
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_INT, tok.off);
    e->ival = (int64_t)value;
    return e;
}

/* The largest parameter index: `$n` past it is an error, not a huge array. */
#define PS_MAX_PARAM 65535

PsExpr *ps_build_param(PsParse *ps, PsToken tok)
{
    int64_t idx = ps->n_params + 1;
    if (ps->sql[tok.off] == '$') {
        idx = 0;
        for (int64_t k = 1; k < tok.len && idx <= PS_MAX_PARAM; k++) {
            idx = idx * 10 + (ps->sql[tok.off + k] - '0');
        }
    }
    if (idx < 1 || idx > PS_MAX_PARAM) {
        ps_build_fail(ps, CM_SYNTAX, tok.off, "a parameter's index must be from $1 to $65535");
        return ps_build_expr(ps, PS_EX_NULL, tok.off);
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_PARAM, tok.off);
    e->ival = idx;
    if (idx > ps->n_params) {
        ps->n_params = (int)idx;
    }
    return e;
}

static int hex_digit(char c);

/* Appends code point cp as UTF-8 at out + *w; false for a surrogate or past U+10FFFF. */
static bool put_utf8(char *out, size_t *w, uint32_t cp)
{
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp == 0) {
        return false;
    }
    unsigned char *o = (unsigned char *)out + *w;
    int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static const unsigned char lead[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
    for (int i = n - 1; i > 0; i--) {
        o[i] = (unsigned char)(0x80 | (cp & 0x3F));
        cp >>= 6;
    }
    o[0] = (unsigned char)(lead[n] | cp);
    *w += (size_t)n;
    return true;
}

/* The body of E'...' at s[0..n) into out (never longer): PostgreSQL's escapes
 * \b \f \n \r \t, \ooo (octal), \xhh, \uXXXX and \UXXXXXXXX; a backslash before any
 * other character keeps that character, and '' is one quote. An escape whose
 * value is not a character (a byte past ASCII, a surrogate, NUL) is an error
 * at its offset in *bad. */
static bool unescape_e(const char *s, size_t n, char *out, size_t *w, size_t *bad)
{
    *w = 0;
    for (size_t r = 0; r < n; r++) {
        if (s[r] == '\'' && r + 1 < n && s[r + 1] == '\'') {
            out[(*w)++] = s[r++];
            continue;
        }
        if (s[r] != '\\' || r + 1 >= n) {
            out[(*w)++] = s[r];
            continue;
        }
        size_t at = r++;
        char c = s[r];
        static const char simple[] = {'b', '\b', 'f', '\f', 'n', '\n', 'r', '\r', 't', '\t'};
        bool done = false;
        for (size_t i = 0; i < sizeof simple && !done; i += 2) {
            if (c == simple[i]) {
                out[(*w)++] = simple[i + 1];
                done = true;
            }
        }
        if (done) {
            continue;
        }
        uint32_t v = 0;
        int digits = 0, max = 0, base = 16;
        if (c >= '0' && c <= '7') {
            base = 8, max = 3;
            r--;
        } else if (c == 'x') {
            max = 2;
        } else if (c == 'u') {
            max = 4;
        } else if (c == 'U') {
            max = 8;
        } else {
            out[(*w)++] = c;
            continue;
        }
        while (digits < max && r + 1 < n) {
            int d = hex_digit(s[r + 1]);
            if (d < 0 || d >= base) {
                break;
            }
            v = v * (uint32_t)base + (uint32_t)d;
            r++;
            digits++;
        }
        bool exact = c == 'u' || c == 'U';
        if (digits == 0 || (exact && digits != max) ||
            ((c == 'x' || base == 8) && (v == 0 || v >= 0x80)) || !put_utf8(out, w, v)) {
            *bad = at;
            return false;
        }
    }
    return true;
}

/* Fills e->str/str_len with the unescaped body of the 'string' token. */
static void set_string(PsParse *ps, PsExpr *e, PsToken tok)
{
    char first = ps->sql[tok.off];
    if (first == 'E' || first == 'e') {
        size_t n = (size_t)tok.len - 3, w = 0, bad = 0;
        char *out = build_strndup(ps, ps->sql + tok.off + 2, n);
        if (!ps->is_failed && !unescape_e(ps->sql + tok.off + 2, n, out, &w, &bad)) {
            ps_build_fail(ps, CM_SYNTAX, tok.off + 2 + (int64_t)bad,
                          "invalid escape in string literal");
            return;
        }
        if (!ps->is_failed) {
            out[w] = '\0';
        }
        e->str = out;
        e->str_len = (int64_t)w;
        return;
    }
    char *out = build_strndup(ps, ps->sql + tok.off + 1, (size_t)tok.len - 2);
    size_t n = (size_t)tok.len - 2;
    size_t w = 0;
    for (size_t r = 0; !ps->is_failed && r < n; r++, w++) {
        out[w] = out[r];
        if (out[r] == '\'' && r + 1 < n && out[r + 1] == '\'') {
            r++;
        }
    }
    if (!ps->is_failed) {
        out[w] = '\0';
    }
    e->str = out;
    e->str_len = (int64_t)w;
}

PsExpr *ps_build_string(PsParse *ps, PsToken tok)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_STRING, tok.off);
    set_string(ps, e, tok);
    return e;
}

PsExpr *ps_build_bool(PsParse *ps, PsToken tok, bool value)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_BOOL, tok.off);
    e->ival = value ? 1 : 0;
    return e;
}

/* A PsTypeName for a bare type word at tok. */
static PsTypeName *simple_type(PsParse *ps, const char *name, PsToken tok)
{
    PsTypeName *t = ps_build_alloc(ps, sizeof(PsTypeName));
    t->name = name;
    t->src_off = tok.off;
    t->src_len = tok.len;
    return t;
}

static int hex_digit(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* X'4142': the bytes written in hex, as a string (there is no BLOB type yet). */
static PsExpr *build_hex(PsParse *ps, PsToken x, PsToken str)
{
    const char *h = ps->sql + str.off + 1;
    size_t n = (size_t)str.len - 2;
    char *out = build_strndup(ps, h, n);
    bool ok = n % 2 == 0;
    for (size_t i = 0; ok && !ps->is_failed && i < n; i += 2) {
        int hi = hex_digit(h[i]), lo = hex_digit(h[i + 1]);
        ok = hi >= 0 && lo >= 0;
        out[i / 2] = (char)(hi * 16 + lo);
    }
    if (!ok) {
        build_error_at(ps, str.off, str.len);
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_STRING, x.off);
    if (!ps->is_failed) {
        out[n / 2] = '\0';
    }
    e->str = out;
    e->str_len = (int64_t)(n / 2);
    return e;
}

PsExpr *ps_build_typed(PsParse *ps, PsToken type, PsToken str)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    if (type.len == 1 && (ps->sql[type.off] == 'x' || ps->sql[type.off] == 'X') &&
        str.off == type.off + 1) {
        return build_hex(ps, type, str);
    }
    const char *name = ps_build_ident(ps, type);
    if (strcmp(name, "date") != 0 && strcmp(name, "time") != 0 && strcmp(name, "timestamp") != 0) {
        build_error_at(ps, str.off, str.len);
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_TYPED, type.off);
    e->type = simple_type(ps, name, type);
    set_string(ps, e, str);
    return e;
}

PsExpr *ps_build_interval(PsParse *ps, PsToken kw, PsToken qty, const PsToken *unit)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_TYPED, kw.off);
    e->type = simple_type(ps, "interval", kw);
    if (qty.type == PS_TK_STRING) {
        set_string(ps, e, qty);
    } else {
        e->str = build_strndup(ps, ps->sql + qty.off, (size_t)qty.len);
        e->str_len = qty.len;
    }
    e->name = unit != NULL ? ps_build_ident(ps, *unit) : NULL;
    return e;
}

PsExpr *ps_build_column(PsParse *ps, const PsToken *parts, int n)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_COLUMN, parts[0].off);
    e->name = ps_build_ident(ps, parts[n - 1]);
    e->qualifier = n >= 2 ? ps_build_ident(ps, parts[n - 2]) : NULL;
    ps_build_schema_ref(ps, parts, n >= 2 ? n - 2 : 0, &e->schema);
    return e;
}

PsExpr *ps_build_star(PsParse *ps, const PsToken *quals, int n, int64_t off)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_STAR, off);
    e->qualifier = n >= 1 ? ps_build_ident(ps, quals[n - 1]) : NULL;
    ps_build_schema_ref(ps, quals, n >= 1 ? n - 1 : 0, &e->schema);
    return e;
}

/* ======================================================================== */
/* operators and predicates                                                  */
/* ======================================================================== */

PsExpr *ps_build_unary(PsParse *ps, PsOp op, PsToken tok, PsExpr *x)
{
    if (!ps->is_failed && op == PS_OP_NOT && x->kind == PS_EX_EXISTS && !x->negated) {
        x->negated = true; /* NOT EXISTS (..) */
        set_span(ps, &x->src_off, &x->src_len, tok.off);
        return x;
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_UNARY, tok.off);
    e->op = op;
    e->left = x;
    return e;
}

PsExpr *ps_build_negate(PsParse *ps, PsToken tok, PsExpr *x)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    if (x->kind == PS_EX_INT && x->ival != INT64_MIN) {
        x->ival = -x->ival;
        set_span(ps, &x->src_off, &x->src_len, tok.off);
        return x;
    }
    if (x->kind == PS_EX_NUMBER) {
        if (strcmp(x->str, "9223372036854775808") == 0) {
            x->kind = PS_EX_INT;
            x->ival = INT64_MIN;
            x->str = NULL;
            x->str_len = 0;
        } else if (x->str[0] == '-') {
            x->str++;
            x->str_len--;
        } else {
            char *text = cm_arena_printf(ps->arena, "-%s", x->str);
            if (text == NULL) {
                ps_build_oom(ps);
                return ps_build_alloc(ps, sizeof(PsExpr));
            }
            x->str = text;
            x->str_len++;
        }
        set_span(ps, &x->src_off, &x->src_len, tok.off);
        return x;
    }
    return ps_build_unary(ps, PS_OP_NEG, tok, x);
}

PsExpr *ps_build_binary(PsParse *ps, PsOp op, PsExpr *l, PsExpr *r)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_BINARY, l->src_off);
    e->op = op;
    e->left = l;
    e->right = r;
    return e;
}

PsExpr *ps_build_is_null(PsParse *ps, PsExpr *x, bool negated)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_IS_NULL, x->src_off);
    e->left = x;
    e->negated = negated;
    return e;
}

PsExpr *ps_build_is_distinct(PsParse *ps, PsExpr *l, PsExpr *r, bool negated)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_IS_DISTINCT, l->src_off);
    e->left = l;
    e->right = r;
    e->negated = negated;
    return e;
}

PsExpr *ps_build_is_bool(PsParse *ps, PsExpr *x, PsToken lit, bool value, bool is_not)
{
    /* x IS TRUE is x IS NOT DISTINCT FROM TRUE; x IS NOT TRUE is x IS DISTINCT FROM TRUE.
     * The literal is the rule's last token, so its span ends at prev_end. */
    PsExpr *b = ps_build_bool(ps, lit, value);
    return ps_build_is_distinct(ps, x, b, !is_not);
}

PsExpr *ps_build_between(PsParse *ps, PsExpr *x, PsExpr *lo, PsExpr *hi, bool negated)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_BETWEEN, x->src_off);
    e->left = x;
    e->negated = negated;
    e->args = ps_build_list(ps, ps_build_list(ps, NULL, lo), hi);
    return e;
}

PsExpr *ps_build_in_list(PsParse *ps, PsExpr *x, PsList *list, bool negated)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_IN_LIST, x->src_off);
    e->left = x;
    e->args = list != NULL ? list : ps_build_alloc(ps, sizeof(PsList));
    e->negated = negated;
    return e;
}

PsExpr *ps_build_in_select(PsParse *ps, PsExpr *x, PsSelect *sub, bool negated)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_IN_SELECT, x->src_off);
    e->left = x;
    e->subquery = sub;
    e->negated = negated;
    return e;
}

PsExpr *ps_build_like(PsParse *ps, PsOp op, PsExpr *x, PsExpr *pat, PsExpr *esc, bool negated)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_LIKE, x->src_off);
    e->op = op;
    e->left = x;
    e->right = pat;
    e->escape = esc;
    e->negated = negated;
    return e;
}

PsExpr *ps_build_cast(PsParse *ps, PsExpr *x, PsTypeName *type, int64_t off)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_CAST, off);
    e->left = x;
    e->type = type;
    return e;
}

PsExpr *ps_build_parens(PsParse *ps, PsExpr *x, PsToken lp)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    set_span(ps, &x->src_off, &x->src_len, lp.off);
    return x;
}

PsExpr *ps_build_row(PsParse *ps, PsToken lp, PsList *list, PsExpr *x)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    PsExpr *e = ps_build_expr(ps, PS_EX_ROW, lp.off);
    e->args = ps_build_list(ps, list, x);
    return e;
}

PsList *ps_build_row_items(PsParse *ps, PsExpr *x)
{
    if (!ps->is_failed && x->kind == PS_EX_ROW) {
        return x->args;
    }
    return ps_build_list(ps, NULL, x);
}

PsExpr *ps_build_subquery(PsParse *ps, PsExprKind kind, PsSelect *sub, int64_t off)
{
    PsExpr *e = ps_build_expr(ps, kind, off);
    e->subquery = sub;
    return e;
}

PsExpr *ps_build_case(PsParse *ps, PsToken kw, PsExpr *operand, PsList *whens, PsExpr *els)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_CASE, kw.off);
    e->left = operand;
    e->args = whens;
    e->right = els;
    return e;
}

PsList *ps_build_when(PsParse *ps, PsList *whens, PsExpr *cond, PsExpr *result)
{
    PsWhen *w = ps_build_alloc(ps, sizeof(PsWhen));
    w->cond = cond;
    w->result = result;
    return ps_build_list(ps, whens, w);
}

/* ======================================================================== */
/* function calls and their special forms                                    */
/* ======================================================================== */

/* A PS_EX_FUNC named `name` (lower case, static or in arena) starting at off. */
static PsExpr *func_named(PsParse *ps, const char *name, int64_t off, PsList *args)
{
    PsExpr *e = ps_build_expr(ps, PS_EX_FUNC, off);
    e->name = name;
    e->args = args;
    return e;
}

PsExpr *ps_build_func_named(PsParse *ps, const char *name, int64_t off, PsList *args)
{
    return func_named(ps, name, off, args);
}

PsTypeName *ps_build_list_type(PsParse *ps, PsTypeName *t, PsToken bracket)
{
    if (!ps->is_failed && t->is_list) {
        build_error_at(ps, bracket.off, bracket.len); /* no nested lists */
    }
    t->is_list = true;
    return t;
}

PsExpr *ps_build_func(PsParse *ps, PsToken name, PsList *args, bool distinct, bool star)
{
    PsExpr *e = func_named(ps, ps_build_ident(ps, name), name.off, args);
    e->distinct = distinct;
    e->star = star;
    return e;
}

void ps_build_func_order(PsParse *ps, PsExpr *f, PsList *items, PsToken order)
{
    (void)ps;
    f->agg_order = items;
    f->agg_order_off = order.off;
}

PsExpr *ps_build_func_cast(PsParse *ps, PsToken name, PsToken as, PsExpr *x, PsTypeName *type)
{
    if (ps->is_failed || !ident_is(ps, name, "cast")) {
        build_error_at(ps, as.off, as.len);
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    return ps_build_cast(ps, x, type, name.off);
}

/* extract(field FROM x) -> "extract"('field', x); the field is a bare name or a string. */
static PsExpr *build_extract(PsParse *ps, PsToken name, PsToken kw, PsExpr *field, PsExpr *x)
{
    if (field->kind == PS_EX_COLUMN && field->qualifier == NULL) {
        field->kind = PS_EX_STRING;
        field->str = field->name;
        field->str_len = (int64_t)strlen(field->name);
        field->name = NULL;
    } else if (field->kind != PS_EX_STRING) {
        build_error_at(ps, kw.off, kw.len);
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    return func_named(ps, "extract", name.off,
                      ps_build_list(ps, ps_build_list(ps, NULL, field), x));
}

PsExpr *ps_build_func_from(PsParse *ps, PsToken name, PsToken kw, PsExpr *a, PsExpr *b, PsExpr *c)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    const char *fn = ps_build_ident(ps, name);
    if (strcmp(fn, "extract") == 0 && b != NULL && c == NULL) {
        return build_extract(ps, name, kw, a, b);
    }
    if (strcmp(fn, "substring") == 0 || strcmp(fn, "substr") == 0) {
        PsList *args = ps_build_list(ps, NULL, a);
        if (b == NULL) {
            /* substring(x FOR n) starts at 1; the 1 points at FOR. */
            b = ps_build_expr(ps, PS_EX_INT, kw.off);
            b->src_len = kw.len;
            b->ival = 1;
        }
        args = ps_build_list(ps, args, b);
        if (c != NULL) {
            args = ps_build_list(ps, args, c);
        }
        return func_named(ps, fn, name.off, args);
    }
    if (strcmp(fn, "trim") == 0 && b != NULL && c == NULL) {
        return ps_build_trim(ps, name, PS_TRIM_BOTH, a, b);
    }
    build_error_at(ps, kw.off, kw.len);
    return ps_build_alloc(ps, sizeof(PsExpr));
}

PsExpr *ps_build_trim(PsParse *ps, PsToken name, PsTrimSpec spec, PsExpr *chars, PsExpr *s)
{
    if (ps->is_failed || !ident_is(ps, name, "trim")) {
        build_error_at(ps, name.off, name.len);
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    static const char *const names[] = {"trim", "ltrim", "rtrim"};
    PsList *args = ps_build_list(ps, NULL, s);
    if (chars != NULL) {
        args = ps_build_list(ps, args, chars);
    }
    return func_named(ps, names[spec], name.off, args);
}

PsExpr *ps_build_position(PsParse *ps, PsToken kw, PsExpr *needle, PsExpr *haystack)
{
    PsList *args = ps_build_list(ps, ps_build_list(ps, NULL, needle), haystack);
    return func_named(ps, "position", kw.off, args);
}

PsExpr *ps_build_func_tail(PsParse *ps, PsExpr *call, PsExpr *filter, PsWindow *over)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    if (filter == NULL && over == NULL) {
        return call;
    }
    if (call->kind != PS_EX_FUNC) {
        ps_build_fail(ps, CM_SYNTAX, call->src_off, "FILTER and OVER apply only to function calls");
        return ps_build_alloc(ps, sizeof(PsExpr));
    }
    call->filter = filter;
    call->over = over;
    set_span(ps, &call->src_off, &call->src_len, call->src_off);
    return call;
}

PsWindow *ps_build_frame(PsParse *ps, PsFrameUnit unit, const PsBound *start, const PsBound *end)
{
    PsWindow *w = ps_build_alloc(ps, sizeof(PsWindow));
    w->frame = unit;
    w->start_kind = start->kind;
    w->start_off = start->off;
    w->end_kind = end != NULL ? end->kind : PS_BOUND_CURRENT_ROW;
    w->end_off = end != NULL ? end->off : NULL;
    return w;
}

PsWindow *ps_build_window(PsParse *ps, PsList *partition_by, PsList *order_by, PsWindow *frame)
{
    PsWindow *w = frame != NULL ? frame : ps_build_alloc(ps, sizeof(PsWindow));
    if (frame == NULL) {
        w->frame = PS_FRAME_NONE;
        w->start_kind = PS_BOUND_UNBOUNDED_PRECEDING;
        w->end_kind = PS_BOUND_CURRENT_ROW;
    }
    w->partition_by = partition_by;
    w->order_by = order_by;
    return w;
}

void ps_build_window_ref(PsParse *ps, PsWindow *w, PsToken name)
{
    w->ref = ps_build_ident(ps, name);
    w->ref_off = name.off;
}

PsWindowDef *ps_build_window_def(PsParse *ps, PsToken name, PsWindow *spec)
{
    PsWindowDef *d = ps_build_alloc(ps, sizeof(PsWindowDef));
    d->name = ps_build_ident(ps, name);
    d->name_off = name.off;
    d->spec = spec;
    return d;
}

PsOrderItem *ps_build_order_item(PsParse *ps, PsExpr *x, bool desc, int nulls)
{
    PsOrderItem *item = ps_build_alloc(ps, sizeof(PsOrderItem));
    item->expr = x;
    item->desc = desc;
    item->nulls = nulls;
    return item;
}

/* ======================================================================== */
/* types                                                                     */
/* ======================================================================== */

/* Spellings of the same type, mapped to the one name the binder sees. */
static const struct {
    const char *alias;
    const char *name;
} type_aliases[] = {
    {"int", "integer"},     {"int4", "integer"},    {"integer", "integer"},
    {"bigint", "bigint"},   {"int8", "bigint"},     {"smallint", "smallint"},
    {"int2", "smallint"},   {"tinyint", "tinyint"}, {"int1", "tinyint"},
    {"double", "double"},   {"float", "double"},    {"float8", "double"},
    {"real", "real"},       {"float4", "real"},     {"decimal", "decimal"},
    {"numeric", "decimal"}, {"dec", "decimal"},     {"char", "char"},
    {"character", "char"},  {"bpchar", "char"},     {"varchar", "varchar"},
    {"text", "text"},       {"string", "text"},     {"bool", "boolean"},
    {"boolean", "boolean"},
};

static const char *canonical_type(const char *name)
{
    for (size_t idx = 0; idx < sizeof type_aliases / sizeof type_aliases[0]; idx++) {
        if (strcmp(type_aliases[idx].alias, name) == 0) {
            return type_aliases[idx].name;
        }
    }
    return name;
}

PsTypeName *ps_build_type(PsParse *ps, PsToken name, PsToken mod, const PsToken *params,
                          int n_params)
{
    if (ps->is_failed) {
        return ps_build_alloc(ps, sizeof(PsTypeName));
    }
    const char *base = canonical_type(ps_build_ident(ps, name));
    if (mod.type == PS_TK_PRECISION || mod.type == PS_TK_VARYING) {
        const char *want = mod.type == PS_TK_PRECISION ? "double" : "char";
        if (strcmp(base, want) != 0) {
            build_error_at(ps, mod.off, mod.len);
            return ps_build_alloc(ps, sizeof(PsTypeName));
        }
        base = mod.type == PS_TK_PRECISION ? "double" : "varchar";
    }
    PsTypeName *t = ps_build_alloc(ps, sizeof(PsTypeName));
    t->name = base;
    t->n_params = n_params;
    for (int idx = 0; idx < n_params; idx++) {
        PsExpr *p = ps_build_int(ps, params[idx]);
        if (p->kind != PS_EX_INT) {
            build_error_at(ps, params[idx].off, params[idx].len);
            return t;
        }
        t->params[idx] = p->ival;
    }
    set_span(ps, &t->src_off, &t->src_len, name.off);
    return t;
}
