/*
 * func_regex.c - regexp_matches, regexp_replace and regexp_extract, on PCRE2
 * (libpcre2-8, UTF mode), with DuckDB's meanings: regexp_matches is true when
 * the pattern matches anywhere in the string; regexp_replace replaces the
 * first match, or every match with the option 'g', and reads \0..\9 in the
 * replacement as groups; regexp_extract returns a group (0, the whole match,
 * by default) of the first match, or '' when there is none.  Options: 'g'
 * (replace only), 'i' case-insensitive, 'c' case-sensitive, 's' dot matches
 * newline.  DuckDB uses RE2: the syntax of the two agrees for the common
 * patterns (docs/conformance.md).
 *
 * A constant pattern is compiled once, when the call is bound (prepare_regex,
 * into the query arena: PCRE2 allocates through our arena functions, so the
 * compiled code goes away with the query and needs no free), and an invalid one
 * is an error at the pattern.  A pattern that varies is compiled per row, but
 * only when it differs from the previous row's.  Matching is thread-safe over
 * the shared compiled code; each evaluation makes its match data in the node's
 * heap.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <string.h>

#include "common/alloc.h"
#include "executor/func_int.h"

typedef struct Regex {
    pcre2_code *code;
    bool is_global; /* 'g' */
} Regex;

/* PCRE2 allocations go to an arena (data); free is a no-op, the arena dies whole. */
static void *arena_malloc(PCRE2_SIZE n, void *data)
{
    return cm_arena_alloc(data, n ? n : 1);
}

static void arena_free(void *p, void *data)
{
    (void)p;
    (void)data;
}

/* Parses the options string into PCRE2 flags and *is_global (only where
 * allow_g).  False for an unknown option. */
static bool parse_options(const char *s, size_t n, bool allow_g, uint32_t *flags, bool *is_global)
{
    for (size_t k = 0; k < n; k++) {
        switch (s[k]) {
        case 'i':
            *flags |= PCRE2_CASELESS;
            break;
        case 'c':
            *flags &= ~(uint32_t)PCRE2_CASELESS;
            break;
        case 's':
            *flags |= PCRE2_DOTALL;
            break;
        case 'g':
            if (!allow_g) {
                return false;
            }
            *is_global = true;
            break;
        default:
            return false;
        }
    }
    return true;
}

/* Compiles pattern p into re (in arena a); on a bad pattern an error at `off`. */
static CmStatus compile(CmArena *a, const char *p, size_t n, uint32_t flags, Regex *re, int64_t off,
                        CmErr *err)
{
    pcre2_general_context *gc = pcre2_general_context_create(arena_malloc, arena_free, a);
    pcre2_compile_context *cc = gc ? pcre2_compile_context_create(gc) : NULL;
    if (cc == NULL) {
        return cm_err_set(err, CM_OOM, off, "out of memory");
    }
    int code;
    PCRE2_SIZE at;
    re->code = pcre2_compile((PCRE2_SPTR)p, n, flags | PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &code,
                             &at, cc);
    if (re->code == NULL) {
        PCRE2_UCHAR msg[120];
        pcre2_get_error_message(code, msg, sizeof msg);
        return cm_err_set(err, CM_RUNTIME, off, "invalid regular expression '%.*s': %s",
                          (int)(n > 60 ? 60 : n), p, (const char *)msg);
    }
    return CM_OK;
}

/* The options argument of call e (index `at`): must be a constant string. */
static CmStatus read_options(const ExExpr *e, int at, bool allow_g, uint32_t *flags,
                             bool *is_global, CmErr *err)
{
    *flags = 0;
    *is_global = false;
    if (e->n_args <= at) {
        return CM_OK;
    }
    const ExExpr *o = e->args[at];
    if (o->kind != EX_E_CONST) {
        return cm_err_set(err, CM_TYPE, o->src_off >= 0 ? o->src_off : e->src_off,
                          "the options of %s must be a constant", e->name);
    }
    if (o->value.is_null) {
        return CM_OK;
    }
    if (!parse_options(cm_str_data(&o->value.s), o->value.s.len, allow_g, flags, is_global)) {
        return cm_err_set(err, CM_RUNTIME, o->src_off >= 0 ? o->src_off : e->src_off,
                          "unknown regular expression option '%.*s' in %s", (int)o->value.s.len,
                          cm_str_data(&o->value.s), e->name);
    }
    return CM_OK;
}

static int options_arg(const ExExpr *e)
{
    return e->aux == 1 ? 3 : e->aux == 0 ? 2 : 99; /* replace: 4th; matches: 3rd; extract: none */
}

/* ExFuncMatch.prepare: checks the constant arguments and compiles a constant pattern. */
static CmStatus prepare_regex(CmArena *a, ExExpr *e, CmErr *err)
{
    uint32_t flags;
    bool is_global;
    if (read_options(e, options_arg(e), e->aux == 1, &flags, &is_global, err) != CM_OK) {
        return err->code;
    }
    if (e->aux == 2 && e->n_args == 3) {
        const ExExpr *g = e->args[2];
        if (g->kind != EX_E_CONST) {
            return cm_err_set(err, CM_TYPE, g->src_off >= 0 ? g->src_off : e->src_off,
                              "the group of regexp_extract must be a constant");
        }
        if (!g->value.is_null && (g->value.i < 0 || g->value.i > 9)) {
            return cm_err_set(err, CM_RUNTIME, g->src_off >= 0 ? g->src_off : e->src_off,
                              "the group of regexp_extract must be between 0 and 9");
        }
    }
    const ExExpr *pat = e->args[1];
    if (pat->kind != EX_E_CONST || pat->value.is_null) {
        return CM_OK;
    }
    Regex *re = cm_arena_zalloc(a, sizeof *re);
    if (re == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory");
    }
    re->is_global = is_global;
    if (compile(a, cm_str_data(&pat->value.s), pat->value.s.len, flags, re,
                pat->src_off >= 0 ? pat->src_off : e->src_off, err) != CM_OK) {
        return err->code;
    }
    e->prep = re;
    return CM_OK;
}

/* Per evaluation: the compiled pattern of each row and the match data. */
typedef struct RegexRun {
    const Regex *fixed; /* the constant pattern's, or NULL */
    Regex row;          /* a varying pattern's, compiled in the heap */
    CmStr last;         /* ... from this text */
    bool has_last;
    uint32_t flags;
    pcre2_match_data *md;
    pcre2_general_context *gc;
    char *buf; /* regexp_replace's result being built; owned, grown by doubling */
    size_t cap, len;
} RegexRun;

static CmStatus run_init(const ExExpr *e, CmArena *heap, RegexRun *run, CmErr *err)
{
    memset(run, 0, sizeof *run);
    run->fixed = e->prep;
    bool is_global;
    if (read_options(e, options_arg(e), e->aux == 1, &run->flags, &is_global, err) != CM_OK) {
        return err->code;
    }
    run->row.is_global = is_global;
    run->gc = pcre2_general_context_create(arena_malloc, arena_free, heap);
    run->md = run->gc ? pcre2_match_data_create(10, run->gc) : NULL;
    if (run->md == NULL) {
        return cm_err_set(err, CM_OOM, e->src_off, "out of memory");
    }
    return CM_OK;
}

/* The compiled pattern for row text `pat`. */
static const Regex *run_pattern(const ExExpr *e, CmArena *heap, RegexRun *run, const CmStr *pat,
                                CmErr *err)
{
    if (run->fixed != NULL) {
        return run->fixed;
    }
    if (run->has_last && cm_str_eq(&run->last, pat)) {
        return &run->row;
    }
    if (compile(heap, cm_str_data(pat), pat->len, run->flags, &run->row, e->src_off, err) !=
        CM_OK) {
        return NULL;
    }
    run->last = *pat; /* the argument vector outlives this evaluation */
    run->has_last = true;
    return &run->row;
}

/* pcre2_match at `start`; < 0 when no match, else the number of groups set. */
static int match_at(const Regex *re, const char *s, size_t n, size_t start, RegexRun *run)
{
    int rc = pcre2_match(re->code, (PCRE2_SPTR)s, n, start, 0, run->md, NULL);
    return rc == 0 ? 10 : rc; /* 0: more groups than the ovector keeps (10) */
}

static CmStatus regex_oom(const ExExpr *e, CmErr *err)
{
    return cm_err_set(err, CM_OOM, e->src_off, "out of memory");
}

/* Appends s[0..n) to run->buf; false on OOM. */
static bool append(RegexRun *run, const char *s, size_t n)
{
    if (n == 0) {
        return true; /* and buf may still be NULL, which memcpy must not see */
    }
    if (run->len + n > run->cap) {
        size_t cap = run->cap ? run->cap : 256;
        while (cap < run->len + n) {
            cap *= 2;
        }
        char *b = cm_realloc(run->buf, cap);
        if (b == NULL) {
            return false;
        }
        run->buf = b;
        run->cap = cap;
    }
    memcpy(run->buf + run->len, s, n);
    run->len += n;
    return true;
}

/* Appends the replacement for the match in run->md: \0..\9 are groups (an unset
 * one is empty), \\ is a backslash, any other character is itself. */
static bool expand(RegexRun *run, const char *s, int rc, const CmStr *rep)
{
    const char *r = cm_str_data(rep);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(run->md);
    for (size_t k = 0; k < rep->len; k++) {
        if (r[k] == '\\' && k + 1 < rep->len && r[k + 1] >= '0' && r[k + 1] <= '9') {
            int g = r[++k] - '0';
            if (g < rc && ov[2 * g] != PCRE2_UNSET &&
                !append(run, s + ov[2 * g], ov[2 * g + 1] - ov[2 * g])) {
                return false;
            }
            continue;
        }
        if (r[k] == '\\' && k + 1 < rep->len && r[k + 1] == '\\') {
            k++;
        }
        if (!append(run, &r[k], 1)) {
            return false;
        }
    }
    return true;
}

/* regexp_replace of one row into *out (the first match, or all with 'g'). */
static CmStatus replace_row(const ExExpr *e, CmArena *heap, const Regex *re, const char *s,
                            size_t n, const CmStr *rep, RegexRun *run, CmStr *out, CmErr *err)
{
    run->len = 0;
    size_t pos = 0, done = 0;
    for (;;) {
        int rc = match_at(re, s, n, pos, run);
        if (rc < 0) {
            break;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(run->md);
        size_t from = ov[0], to = ov[1];
        if (!append(run, s + done, from - done) || !expand(run, s, rc, rep)) {
            return regex_oom(e, err);
        }
        done = to;
        if (!re->is_global) {
            break;
        }
        if (to == from) {
            /* An empty match: the next character is kept and the search goes on after it. */
            if (to >= n) {
                break;
            }
            size_t c = 1;
            while (to + c < n && ((unsigned char)s[to + c] & 0xc0) == 0x80) {
                c++;
            }
            if (!append(run, s + to, c)) {
                return regex_oom(e, err);
            }
            done = pos = to + c;
        } else {
            pos = to;
        }
    }
    if (!append(run, s + done, n - done)) {
        return regex_oom(e, err);
    }
    if (run->len > UINT32_MAX) {
        return cm_err_set(err, CM_LIMIT, e->src_off, "result of regexp_replace is too long");
    }
    char *d = run->len <= CM_STR_INLINE ? run->buf : cm_arena_alloc(heap, run->len);
    if (d == NULL) {
        return regex_oom(e, err);
    }
    if (d != run->buf) {
        memcpy(d, run->buf, run->len);
    }
    *out = cm_str_make(run->len ? d : "", (uint32_t)run->len);
    return CM_OK;
}

/* aux 0 matches, 1 replace, 2 extract. */
static CmStatus regex_rows(KERNEL_ARGS, RegexRun *run);

static CmStatus regex_k(KERNEL_ARGS)
{
    RegexRun run;
    CmStatus st = run_init(e, heap, &run, err);
    if (st == CM_OK) {
        st = regex_rows(e, in, args, out, heap, err, &run);
    }
    cm_free(run.buf);
    return st;
}

static CmStatus regex_rows(KERNEL_ARGS, RegexRun *run)
{
    const CmStr *a = args[0]->data, *pats = args[1]->data;
    ex_and_validity(args, e->aux == 1 ? 3 : 2, out);
    /* The group is a constant (prepare_regex); NULL makes every row NULL. */
    bool null_group = e->aux == 2 && e->n_args > 2 && e->args[2]->value.is_null;
    int64_t group = e->aux == 2 && e->n_args > 2 ? e->args[2]->value.i : 0;
    for (int i = 0; i < in->n_rows; i++) {
        uint32_t p = cm_batch_pos(in, i);
        if (cm_vec_is_null(out, p) || null_group) {
            cm_vec_set_null(out, p);
            continue;
        }
        const Regex *re = run_pattern(e, heap, run, &pats[p], err);
        if (re == NULL) {
            return err->code;
        }
        const char *s = cm_str_data(&a[p]);
        size_t n = a[p].len;
        int rc = match_at(re, s, n, 0, run);
        if (rc < -1) {
            return cm_err_set(err, CM_RUNTIME, e->src_off, "regular expression match failed");
        }
        if (e->aux == 0) {
            ((uint8_t *)out->data)[p] = rc >= 0;
        } else if (e->aux == 2) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(run->md);
            CmStr *r = out->data;
            if (rc < 0 || group >= rc || ov[2 * group] == PCRE2_UNSET) {
                r[p] = cm_str_make("", 0);
            } else {
                r[p] =
                    cm_str_make(s + ov[2 * group], (uint32_t)(ov[2 * group + 1] - ov[2 * group]));
            }
        } else {
            const CmStr *rep = &((const CmStr *)args[2]->data)[p];
            CmStr *r = out->data;
            if (rc < 0) {
                r[p] = a[p];
                continue;
            }
            if (replace_row(e, heap, re, s, n, rep, run, &r[p], err) != CM_OK) {
                return err->code;
            }
        }
    }
    return CM_OK;
}

/* ---- resolution ------------------------------------------------------------------------ */

CmStatus ex_resolve_regex(const char *name, int n_args, const CmType *types, int64_t off,
                          ExFuncMatch *m, CmErr *err)
{
    int aux;
    if (!strcmp(name, "regexp_matches") && (n_args == 2 || n_args == 3)) {
        aux = 0;
    } else if (!strcmp(name, "regexp_replace") && (n_args == 3 || n_args == 4)) {
        aux = 1;
    } else if (!strcmp(name, "regexp_extract") && (n_args == 2 || n_args == 3)) {
        aux = 2;
    } else {
        return EX_NOT_MINE;
    }
    CmType str = cm_type_varchar(-1, false);
    for (int a = 0; a < n_args; a++) {
        bool is_group = aux == 2 && a == 2;
        bool ok = types[a].id == CM_T_NULL || types[a].id == CM_T_VARCHAR ||
                  (is_group && cm_type_is_integer(types[a]));
        if (!ok) {
            char tn[32];
            return cm_err_set(err, CM_TYPE, off, "%s expects %s for argument %d, not %s", name,
                              is_group ? "an integer" : "VARCHAR", a + 1,
                              cm_type_name(types[a], tn, sizeof tn));
        }
        m->arg_types[a] = is_group ? cm_type_make(CM_T_INT64) : str;
    }
    m->result = aux == 0 ? cm_type_make(CM_T_BOOL) : str;
    m->kernel = regex_k;
    m->aux = aux;
    m->prepare = prepare_regex;
    return CM_OK;
}
