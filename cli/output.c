/*
 * output.c - the output modes of the `sluice` shell (see output.h).
 *
 * The columnar modes (box, table, markdown) make two passes over the rows they
 * show: one for the display width of each column (terminal columns: a CJK
 * character or an emoji takes two, a combining mark none; header included), one
 * to print.  Header names are centred as in sqlite3; in box and table, numeric
 * columns (INTEGER, BIGINT, DOUBLE, DECIMAL) are right-aligned and the others
 * left-aligned.  Box is DuckDB's: a second header line with the column types, the
 * first and last rows of a result longer than .maxrows around three rows of
 * middle dots, columns hidden from the middle and wide cells cut with "…" to fit
 * .maxwidth, and a footer with the row count.  Newline, tab and CR print as \n,
 * \t, \r in box, table, markdown and line (and '|' as \| in markdown), so a row
 * stays one line.  The streaming modes (csv, tsv, json, line) print row by row.
 * Row-at-a-time access is allowed here (STYLE.md section 7): this is the printer.
 */
#include "cli/output.h"

#include "common/utf8case.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

typedef enum CliAlign {
    CLI_ALIGN_LEFT,
    CLI_ALIGN_RIGHT,
    CLI_ALIGN_CENTER,
} CliAlign;

/* The lines that draw a columnar table. Each rule is {left, between columns, right}. */
typedef struct CliFrame {
    const char *horiz;     /* the horizontal line, repeated */
    const char *vert;      /* the vertical line between cells */
    const char *top[3];    /* above the header */
    const char *mid[3];    /* between header and rows */
    const char *bottom[3]; /* below the rows */
    bool has_outer;        /* draw the top and bottom rules */
    bool is_numbers_right; /* right-align numeric columns */
} CliFrame;

static const CliFrame BOX_FRAME = {
    .horiz = "\u2500",
    .vert = "\u2502",
    .top = {"\u250c", "\u252c", "\u2510"},
    .mid = {"\u251c", "\u253c", "\u2524"},
    .bottom = {"\u2514", "\u2534", "\u2518"},
    .has_outer = true,
    .is_numbers_right = true,
};
static const CliFrame TABLE_FRAME = {
    .horiz = "-",
    .vert = "|",
    .top = {"+", "+", "+"},
    .mid = {"+", "+", "+"},
    .bottom = {"+", "+", "+"},
    .has_outer = true,
    .is_numbers_right = true,
};
static const CliFrame MARKDOWN_FRAME = {
    .horiz = "-",
    .vert = "|",
    .mid = {"|", "|", "|"},
    .has_outer = false,
    .is_numbers_right = false,
};

/* Keep in sync with CliMode. */
static const char *const MODE_NAMES[] = {"box", "table", "csv", "tsv", "json", "markdown", "line"};

bool cli_output_mode_parse(const char *name, CliMode *mode)
{
    for (size_t mode_idx = 0; mode_idx < sizeof MODE_NAMES / sizeof MODE_NAMES[0]; mode_idx++) {
        if (strcmp(name, MODE_NAMES[mode_idx]) == 0) {
            *mode = (CliMode)mode_idx;
            return true;
        }
    }
    return false;
}

const char *cli_output_mode_name(CliMode mode)
{
    return MODE_NAMES[mode];
}

const char *cli_output_mode_list(void)
{
    return "box|table|csv|tsv|json|markdown|line";
}

/* ---------------------------------------------------------------- helpers */

/* The text of the cell read last: one buffer, grown as needed, so that
 * printing a result larger than memory keeps nothing per cell (where
 * sluice_result_text keeps every text until the result is freed). */
static char *cell_buf;
static size_t cell_cap;

/* The engine's text of a cell, valid until the next call; NULL for NULL. */
static const char *raw_text(const SluiceResult *res, int64_t row, int col)
{
    for (;;) {
        int64_t n = sluice_result_text_into(res, row, col, cell_buf, cell_cap);
        if (n < 0) {
            return NULL;
        }
        if ((size_t)n < cell_cap) {
            return cell_buf;
        }
        size_t cap = cell_cap * 2 > (size_t)n + 1 ? cell_cap * 2 : (size_t)n + 256;
        char *grown = realloc(cell_buf, cap);
        if (grown == NULL) {
            return cell_cap > 0 ? cell_buf : ""; /* cut, as it fits */
        }
        cell_buf = grown;
        cell_cap = cap;
    }
}

/* The text of a cell: the engine's text, or the null text for NULL. */
static const char *cell_text(const CliState *st, const SluiceResult *res, int64_t row, int col)
{
    const char *text = raw_text(res, row, col);
    return text == NULL ? st->null_text : text;
}

static bool is_numeric(SluiceType type)
{
    return type == SLUICE_INTEGER || type == SLUICE_BIGINT || type == SLUICE_DOUBLE ||
           type == SLUICE_DECIMAL;
}

static void put_repeat(FILE *out, const char *piece, size_t count)
{
    for (size_t idx = 0; idx < count; idx++) {
        fputs(piece, out);
    }
}

/* ---------------------------------------------------------------- display width */

/* A range of code points [lo, hi]. */
typedef struct CliRange {
    uint32_t lo, hi;
} CliRange;

/* Code points that take no column: combining marks, zero-width spaces and
 * joiners, variation selectors. A short table rather than wcwidth(3), so the
 * output does not depend on the locale the shell runs under. */
static const CliRange ZERO_WIDTH[] = {
    {0x0300, 0x036F}, {0x0483, 0x0489},   {0x0591, 0x05BD}, {0x05BF, 0x05BF}, {0x05C1, 0x05C2},
    {0x05C4, 0x05C5}, {0x05C7, 0x05C7},   {0x0610, 0x061A}, {0x064B, 0x065F}, {0x0670, 0x0670},
    {0x06D6, 0x06DC}, {0x06DF, 0x06E4},   {0x06E7, 0x06E8}, {0x06EA, 0x06ED}, {0x0900, 0x0902},
    {0x093A, 0x093A}, {0x093C, 0x093C},   {0x0941, 0x0948}, {0x094D, 0x094D}, {0x0E31, 0x0E31},
    {0x0E34, 0x0E3A}, {0x0E47, 0x0E4E},   {0x1AB0, 0x1AFF}, {0x1DC0, 0x1DFF}, {0x200B, 0x200F},
    {0x202A, 0x202E}, {0x2060, 0x2064},   {0x20D0, 0x20FF}, {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    {0xFEFF, 0xFEFF}, {0xE0100, 0xE01EF},
};

/* Code points that take two columns: East Asian Wide and Fullwidth, emoji
 * (Unicode 15's EastAsianWidth.txt, ranges merged). */
static const CliRange DOUBLE_WIDTH[] = {
    {0x1100, 0x115F},   {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},
    {0x23F0, 0x23F0},   {0x23F3, 0x23F3},   {0x25FD, 0x25FE},   {0x2614, 0x2615},
    {0x2648, 0x2653},   {0x267F, 0x267F},   {0x2693, 0x2693},   {0x26A1, 0x26A1},
    {0x26AA, 0x26AB},   {0x26BD, 0x26BE},   {0x26C4, 0x26C5},   {0x26CE, 0x26CE},
    {0x26D4, 0x26D4},   {0x26EA, 0x26EA},   {0x26F2, 0x26F3},   {0x26F5, 0x26F5},
    {0x26FA, 0x26FA},   {0x26FD, 0x26FD},   {0x2705, 0x2705},   {0x270A, 0x270B},
    {0x2728, 0x2728},   {0x274C, 0x274C},   {0x274E, 0x274E},   {0x2753, 0x2755},
    {0x2757, 0x2757},   {0x2795, 0x2797},   {0x27B0, 0x27B0},   {0x27BF, 0x27BF},
    {0x2B1B, 0x2B1C},   {0x2B50, 0x2B50},   {0x2B55, 0x2B55},   {0x2E80, 0x303E},
    {0x3041, 0x33FF},   {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
    {0xA960, 0xA97F},   {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE10, 0xFE19},
    {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x16FE0, 0x16FE4},
    {0x17000, 0x18AFF}, {0x1B000, 0x1B2FF}, {0x1F004, 0x1F004}, {0x1F0CF, 0x1F0CF},
    {0x1F18E, 0x1F18E}, {0x1F191, 0x1F19A}, {0x1F200, 0x1F202}, {0x1F210, 0x1F23B},
    {0x1F240, 0x1F248}, {0x1F250, 0x1F251}, {0x1F260, 0x1F265}, {0x1F300, 0x1F320},
    {0x1F32D, 0x1F335}, {0x1F337, 0x1F37C}, {0x1F37E, 0x1F393}, {0x1F3A0, 0x1F3CA},
    {0x1F3CF, 0x1F3D3}, {0x1F3E0, 0x1F3F0}, {0x1F3F4, 0x1F3F4}, {0x1F3F8, 0x1F43E},
    {0x1F440, 0x1F440}, {0x1F442, 0x1F4FC}, {0x1F4FF, 0x1F53D}, {0x1F54B, 0x1F54E},
    {0x1F550, 0x1F567}, {0x1F57A, 0x1F57A}, {0x1F595, 0x1F596}, {0x1F5A4, 0x1F5A4},
    {0x1F5FB, 0x1F64F}, {0x1F680, 0x1F6C5}, {0x1F6CC, 0x1F6CC}, {0x1F6D0, 0x1F6D2},
    {0x1F6D5, 0x1F6D7}, {0x1F6DC, 0x1F6DF}, {0x1F6EB, 0x1F6EC}, {0x1F6F4, 0x1F6FC},
    {0x1F7E0, 0x1F7EB}, {0x1F7F0, 0x1F7F0}, {0x1F90C, 0x1F93A}, {0x1F93C, 0x1F945},
    {0x1F947, 0x1F9FF}, {0x1FA70, 0x1FAFF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

static bool in_ranges(uint32_t cp, const CliRange *ranges, size_t n_ranges)
{
    size_t lo = 0, hi = n_ranges;

    while (lo < hi) { /* binary search: the ranges are sorted and disjoint */
        size_t mid = (lo + hi) / 2;
        if (cp < ranges[mid].lo) {
            hi = mid;
        } else if (cp > ranges[mid].hi) {
            lo = mid + 1;
        } else {
            return true;
        }
    }
    return false;
}

static size_t code_point_width(uint32_t cp)
{
    if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0) ||
        in_ranges(cp, ZERO_WIDTH, sizeof ZERO_WIDTH / sizeof ZERO_WIDTH[0])) {
        return 0;
    }
    return in_ranges(cp, DOUBLE_WIDTH, sizeof DOUBLE_WIDTH / sizeof DOUBLE_WIDTH[0]) ? 2 : 1;
}

size_t cli_output_width(const char *text, size_t len)
{
    size_t width = 0;

    for (size_t at = 0; at < len;) {
        uint32_t cp;
        size_t n_bytes = cm_utf8_decode(text + at, len - at, &cp);
        width += code_point_width(cp);
        at += n_bytes;
    }
    return width;
}

/* One character as it is displayed: its bytes (an escape for newline, tab and
 * CR, and for '|' in markdown) and the columns they take. */
typedef struct CliGlyph {
    const char *bytes; /* borrowed: the text itself or a static escape */
    size_t len;        /* bytes of the glyph */
    size_t width;      /* terminal columns */
} CliGlyph;

/* Reads the glyph at text (not at its NUL); returns the text after it. */
static const char *next_glyph(const char *text, bool is_markdown, CliGlyph *glyph)
{
    static const char *const ESCAPES[] = {"\\n", "\\t", "\\r", "\\|"};
    const char *escaped = *text == '\n'                 ? ESCAPES[0]
                          : *text == '\t'               ? ESCAPES[1]
                          : *text == '\r'               ? ESCAPES[2]
                          : is_markdown && *text == '|' ? ESCAPES[3]
                                                        : NULL;
    uint32_t cp;

    if (escaped != NULL) {
        *glyph = (CliGlyph){escaped, 2, 2};
        return text + 1;
    }
    size_t len = cm_utf8_decode(text, strnlen(text, 4), &cp);
    *glyph = (CliGlyph){text, len, code_point_width(cp)};
    return text + len;
}

/* Display width of text, escapes included. */
static size_t text_width(const char *text, bool is_markdown)
{
    size_t width = 0;
    CliGlyph glyph;

    while (*text != '\0') {
        text = next_glyph(text, is_markdown, &glyph);
        width += glyph.width;
    }
    return width;
}

/* Prints text escaped, in at most max_width columns: a longer text is cut and
 * ends with an ellipsis. Returns the columns printed. */
static size_t put_escaped(FILE *out, const char *text, size_t max_width, bool is_markdown)
{
    bool is_cut = text_width(text, is_markdown) > max_width;
    size_t limit = is_cut ? (max_width > 0 ? max_width - 1 : 0) : max_width;
    size_t width = 0;
    CliGlyph glyph;

    while (*text != '\0') {
        text = next_glyph(text, is_markdown, &glyph);
        if (width + glyph.width > limit) {
            break;
        }
        fwrite(glyph.bytes, 1, glyph.len, out);
        width += glyph.width;
    }
    if (is_cut && max_width > 0) {
        fputs("\u2026", out);
        width++;
    }
    return width;
}

static void put_aligned(FILE *out, const char *text, size_t width, CliAlign align, bool is_markdown)
{
    size_t text_cols = text_width(text, is_markdown);
    size_t pad = text_cols < width ? width - text_cols : 0;
    size_t left = align == CLI_ALIGN_RIGHT ? pad : align == CLI_ALIGN_CENTER ? pad / 2 : 0;

    put_repeat(out, " ", left);
    size_t printed = put_escaped(out, text, width, is_markdown);
    put_repeat(out, " ", width - left - printed);
}

/* ---------------------------------------------------------------- columnar modes */

/* The widest a column gets when the table has to shrink to fit .maxwidth,
 * before whole columns are hidden (DuckDB's max_col_width). */
#define CLI_NARROW_COL_WIDTH 20

/* Rows of middle dots that stand for the rows .maxrows hides. */
#define CLI_ELIDED_ROWS 3

/* What a columnar table shows of a result: which rows and columns, and how wide. */
typedef struct CliLayout {
    int64_t n_rows; /* rows of the result */
    int64_t n_top;  /* rows shown from the start */
    int64_t n_tail; /* rows shown from the end; n_top + n_tail < n_rows means rows are hidden */
    int n_cols;     /* columns of the result */
    int n_left;     /* columns shown from the left */
    int n_right;    /* columns shown from the right; n_left + n_right < n_cols means some hidden */
    int n_shown;    /* columns drawn: n_left + n_right, plus one for the "…" of hidden ones */
    int *cols;      /* owned; n_shown result column indexes, -1 for the "…" column */
    size_t *widths; /* owned; n_shown widths, in terminal columns */
    char **types;   /* owned; n_cols type names (box only, else NULL) */
} CliLayout;

/* The type of a column as DuckDB's box shows it (int32, varchar, decimal(15,2)). Owned. */
static char *type_name(const SluiceResult *res, int col)
{
    static const char *const NAMES[] = {
        [SLUICE_NULLTYPE] = "null",       [SLUICE_BOOLEAN] = "boolean",
        [SLUICE_INTEGER] = "int32",       [SLUICE_BIGINT] = "int64",
        [SLUICE_DOUBLE] = "double",       [SLUICE_DECIMAL] = "decimal",
        [SLUICE_VARCHAR] = "varchar",     [SLUICE_DATE] = "date",
        [SLUICE_TIME] = "time",           [SLUICE_LIST] = "list",
        [SLUICE_TIMESTAMP] = "timestamp", [SLUICE_INTERVAL] = "interval",
    };
    SluiceType type = sluice_result_column_type(res, col);
    int precision, scale;
    char buf[32];

    if (sluice_result_column_decimal(res, col, &precision, &scale)) {
        snprintf(buf, sizeof buf, "decimal(%d,%d)", precision, scale);
    } else {
        snprintf(buf, sizeof buf, "%s",
                 (size_t)type < sizeof NAMES / sizeof NAMES[0] ? NAMES[type] : "?");
    }
    return strdup(buf);
}

static void layout_fini(CliLayout *lay)
{
    if (lay->types != NULL) {
        for (int col_idx = 0; col_idx < lay->n_cols; col_idx++) {
            free(lay->types[col_idx]);
        }
    }
    free(lay->types);
    free(lay->cols);
    free(lay->widths);
}

/* The result row drawn at position pos of the table (0 .. n_top + n_tail). */
static int64_t layout_row(const CliLayout *lay, int64_t pos)
{
    return pos < lay->n_top ? pos : lay->n_rows - (lay->n_top + lay->n_tail - pos);
}

static bool layout_has_hidden_rows(const CliLayout *lay)
{
    return lay->n_top + lay->n_tail < lay->n_rows;
}

/* Natural width of result column col: its name, its type, the rows drawn. */
static size_t natural_width(const CliState *st, const SluiceResult *res, const CliLayout *lay,
                            int col, bool is_markdown)
{
    size_t width = text_width(sluice_result_column_name(res, col), is_markdown);

    if (lay->types != NULL) {
        size_t type_cols = text_width(lay->types[col], false);
        width = type_cols > width ? type_cols : width;
    }
    if (layout_has_hidden_rows(lay) && width < 1) {
        width = 1; /* the middle dot */
    }
    for (int64_t pos = 0; pos < lay->n_top + lay->n_tail; pos++) {
        size_t cell = text_width(cell_text(st, res, layout_row(lay, pos), col), is_markdown);
        width = cell > width ? cell : width;
    }
    return width;
}

/* Table width in terminal columns: "│ w │ w │". */
static size_t table_width(const CliLayout *lay)
{
    size_t width = 1;

    for (int idx = 0; idx < lay->n_shown; idx++) {
        width += lay->widths[idx] + 3;
    }
    return width;
}

/* Keeps the first n_left and last n_right columns, with a "…" column between them
 * when that hides any. full_widths holds the natural width of every column. */
static void layout_pick_columns(CliLayout *lay, const size_t *full_widths, int n_left, int n_right)
{
    lay->n_left = n_left;
    lay->n_right = n_right;
    lay->n_shown = 0;
    for (int col_idx = 0; col_idx < n_left; col_idx++) {
        lay->cols[lay->n_shown] = col_idx;
        lay->widths[lay->n_shown++] = full_widths[col_idx];
    }
    if (n_left + n_right < lay->n_cols) {
        lay->cols[lay->n_shown] = -1;
        lay->widths[lay->n_shown++] = 1;
    }
    for (int col_idx = lay->n_cols - n_right; col_idx < lay->n_cols; col_idx++) {
        lay->cols[lay->n_shown] = col_idx;
        lay->widths[lay->n_shown++] = full_widths[col_idx];
    }
}

/* Fits the table into max_width (0: no limit) as DuckDB's box does: first the
 * columns wider than CLI_NARROW_COL_WIDTH shrink to it (their cells end in "…"),
 * then columns are hidden from the middle outwards, then the one left shrinks. */
static void layout_fit(CliLayout *lay, size_t *full_widths, size_t max_width)
{
    int n_left = lay->n_cols, n_right = 0;

    layout_pick_columns(lay, full_widths, n_left, n_right);
    if (max_width == 0 || table_width(lay) <= max_width) {
        return;
    }
    for (int col_idx = 0; col_idx < lay->n_cols; col_idx++) {
        if (full_widths[col_idx] > CLI_NARROW_COL_WIDTH) {
            full_widths[col_idx] = CLI_NARROW_COL_WIDTH;
        }
    }
    layout_pick_columns(lay, full_widths, n_left, n_right);
    if (table_width(lay) > max_width && lay->n_cols > 1) {
        n_left = (lay->n_cols + 1) / 2;
        n_right = lay->n_cols - n_left;
    }
    while (table_width(lay) > max_width && n_left + n_right > 1) {
        if (n_left > n_right) {
            n_left--;
        } else {
            n_right--;
        }
        layout_pick_columns(lay, full_widths, n_left, n_right);
    }
    size_t excess = table_width(lay) > max_width ? table_width(lay) - max_width : 0;
    lay->widths[0] = lay->widths[0] > excess ? lay->widths[0] - excess : 1;
}

/* Plans what to draw. max_rows and max_width are 0 when unlimited. Returns false
 * when out of memory. */
static bool layout_init(CliLayout *lay, const CliState *st, const SluiceResult *res, bool has_types,
                        int64_t max_rows, size_t max_width, bool is_markdown)
{
    bool is_ok = false;
    size_t *full_widths = NULL;

    memset(lay, 0, sizeof *lay);
    lay->n_rows = sluice_result_row_count(res);
    lay->n_cols = sluice_result_column_count(res);
    lay->n_top = lay->n_rows;
    if (max_rows > 0 && lay->n_rows > max_rows) {
        lay->n_top = (max_rows + 1) / 2;
        lay->n_tail = max_rows / 2;
    }
    lay->cols = calloc((size_t)lay->n_cols + 1, sizeof *lay->cols);
    lay->widths = calloc((size_t)lay->n_cols + 1, sizeof *lay->widths);
    full_widths = calloc((size_t)lay->n_cols, sizeof *full_widths);
    if (lay->cols == NULL || lay->widths == NULL || full_widths == NULL) {
        goto done;
    }
    if (has_types) {
        lay->types = calloc((size_t)lay->n_cols, sizeof *lay->types);
        if (lay->types == NULL) {
            goto done;
        }
        for (int col_idx = 0; col_idx < lay->n_cols; col_idx++) {
            if ((lay->types[col_idx] = type_name(res, col_idx)) == NULL) {
                goto done;
            }
        }
    }
    for (int col_idx = 0; col_idx < lay->n_cols; col_idx++) {
        full_widths[col_idx] = natural_width(st, res, lay, col_idx, is_markdown);
    }
    layout_fit(lay, full_widths, max_width);
    is_ok = true;
done:
    free(full_widths);
    return is_ok;
}

static void put_rule(FILE *out, const CliFrame *frame, const char *const rule[3],
                     const CliLayout *lay)
{
    fputs(rule[0], out);
    for (int idx = 0; idx < lay->n_shown; idx++) {
        put_repeat(out, frame->horiz, lay->widths[idx] + 2);
        fputs(idx + 1 < lay->n_shown ? rule[1] : rule[2], out);
    }
    fputc('\n', out);
}

/* The kinds of line put_cells draws. */
typedef enum CliLine {
    CLI_LINE_NAMES,
    CLI_LINE_TYPES,
    CLI_LINE_ROW,
    CLI_LINE_DOTS, /* stands for hidden rows */
} CliLine;

/* One line of cells; row is the result row for CLI_LINE_ROW. */
static void put_cells(FILE *out, const CliFrame *frame, const CliState *st, const SluiceResult *res,
                      const CliLayout *lay, CliLine line, int64_t row)
{
    bool is_markdown = frame == &MARKDOWN_FRAME;

    fputs(frame->vert, out);
    for (int idx = 0; idx < lay->n_shown; idx++) {
        int col = lay->cols[idx];
        CliAlign align = CLI_ALIGN_CENTER;
        const char *text = "\u2026";
        if (col >= 0 && line == CLI_LINE_NAMES) {
            text = sluice_result_column_name(res, col);
        } else if (col >= 0 && line == CLI_LINE_TYPES) {
            text = lay->types[col];
        } else if (col >= 0) {
            bool is_right =
                frame->is_numbers_right && is_numeric(sluice_result_column_type(res, col));
            align = is_right ? CLI_ALIGN_RIGHT : CLI_ALIGN_LEFT;
            text = line == CLI_LINE_DOTS ? "\u00b7" : cell_text(st, res, row, col);
        }
        fputc(' ', out);
        put_aligned(out, text, lay->widths[idx], align, is_markdown);
        fputc(' ', out);
        fputs(frame->vert, out);
    }
    fputc('\n', out);
}

/* The footer's texts: "3 rows", or "100 rows (40 shown)", and "9 columns (4 shown)"
 * when columns are hidden, else "". */
static void footer_texts(const CliLayout *lay, char rows[64], char cols[64])
{
    int64_t n_drawn = lay->n_top + lay->n_tail;
    int rows_len =
        snprintf(rows, 64, "%" PRId64 " row%s", lay->n_rows, lay->n_rows == 1 ? "" : "s");

    if (n_drawn < lay->n_rows) {
        snprintf(rows + rows_len, 64 - (size_t)rows_len, " (%" PRId64 " shown)", n_drawn);
    }
    cols[0] = '\0';
    if (lay->n_left + lay->n_right < lay->n_cols) {
        snprintf(cols, 64, "%d column%s (%d shown)", lay->n_cols, lay->n_cols == 1 ? "" : "s",
                 lay->n_left + lay->n_right);
    }
}

/* Widens the last column when the footer would not fit under the table. */
static void footer_fit(CliLayout *lay)
{
    char rows[64], cols[64];

    footer_texts(lay, rows, cols);
    size_t need = strlen(rows) + (cols[0] != '\0' ? 2 + strlen(cols) : 0) + 4;
    size_t have = table_width(lay);
    if (need > have) {
        int last = lay->n_shown - 1;
        last -= last > 0 && lay->cols[last] < 0; /* a real column, not the "…" one */
        lay->widths[last] += need - have;
    }
}

/* The box's last lines: "│ 3 rows │" centred, or "│ 100 rows (40 shown)  9 columns
 * (4 shown) │" when columns are hidden (DuckDB's footer, on one line). */
static void put_footer(FILE *out, const CliFrame *frame, const CliLayout *lay)
{
    static const char *const JOIN_BOTTOM[3] = {"\u251c", "\u2534", "\u2524"};
    char rows[64], cols[64];
    size_t inner = table_width(lay) - 4;

    footer_texts(lay, rows, cols);
    put_rule(out, frame, JOIN_BOTTOM, lay);
    fputs(frame->vert, out);
    fputc(' ', out);
    if (cols[0] == '\0') {
        put_aligned(out, rows, inner, CLI_ALIGN_CENTER, false);
    } else {
        fputs(rows, out);
        put_repeat(out, " ", inner - strlen(rows) - strlen(cols));
        fputs(cols, out);
    }
    fputc(' ', out);
    fputs(frame->vert, out);
    fputc('\n', out);
    fputs(frame->bottom[0], out);
    put_repeat(out, frame->horiz, inner + 2);
    fputs(frame->bottom[2], out);
    fputc('\n', out);
}

/* The width the box must fit in: .maxwidth, or the terminal's when out is one. */
static size_t box_max_width(const CliState *st, FILE *out)
{
    struct winsize size;

    if (st->max_width != CLI_MAX_WIDTH_TERMINAL) {
        return (size_t)st->max_width;
    }
    if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &size) == 0) {
        return size.ws_col;
    }
    return 0;
}

static void print_columnar(const CliState *st, const SluiceResult *res, FILE *out,
                           const CliFrame *frame)
{
    bool is_box = frame == &BOX_FRAME;
    bool is_markdown = frame == &MARKDOWN_FRAME;
    CliLayout lay;

    if (!layout_init(&lay, st, res, is_box, is_box ? st->max_rows : 0,
                     is_box ? box_max_width(st, out) : 0, is_markdown)) {
        layout_fini(&lay);
        fputs("sluice: out of memory\n", stderr);
        return;
    }
    if (is_box) {
        footer_fit(&lay); /* before any rule is drawn, so every rule agrees */
    }
    if (frame->has_outer) {
        put_rule(out, frame, frame->top, &lay);
    }
    put_cells(out, frame, st, res, &lay, CLI_LINE_NAMES, -1);
    if (is_box) {
        put_cells(out, frame, st, res, &lay, CLI_LINE_TYPES, -1);
    }
    int64_t n_drawn = lay.n_top + lay.n_tail;
    if (n_drawn > 0 || !frame->has_outer) {
        put_rule(out, frame, frame->mid, &lay);
    }
    for (int64_t pos = 0; pos < n_drawn; pos++) {
        if (pos == lay.n_top && layout_has_hidden_rows(&lay)) {
            for (int dot_idx = 0; dot_idx < CLI_ELIDED_ROWS; dot_idx++) {
                put_cells(out, frame, st, res, &lay, CLI_LINE_DOTS, -1);
            }
        }
        put_cells(out, frame, st, res, &lay, CLI_LINE_ROW, layout_row(&lay, pos));
    }
    if (is_box) {
        put_footer(out, frame, &lay);
    } else if (frame->has_outer) {
        put_rule(out, frame, frame->bottom, &lay);
    }
    layout_fini(&lay);
}

/* ---------------------------------------------------------------- csv and tsv */

/* A csv field: quoted, with "" for ", when it holds a comma, quote, CR or LF (RFC 4180). */
static void put_csv_field(FILE *out, const char *text)
{
    if (strpbrk(text, ",\"\r\n") == NULL) {
        fputs(text, out);
        return;
    }
    fputc('"', out);
    for (; *text != '\0'; text++) {
        if (*text == '"') {
            fputc('"', out);
        }
        fputc(*text, out);
    }
    fputc('"', out);
}

static void put_separated(FILE *out, const char *text, bool is_csv)
{
    if (is_csv) {
        put_csv_field(out, text);
    } else {
        fputs(text, out);
    }
}

static void print_separated(const CliState *st, const SluiceResult *res, FILE *out, bool is_csv)
{
    int n_cols = sluice_result_column_count(res);
    int64_t n_rows = sluice_result_row_count(res);
    char sep = is_csv ? ',' : '\t';

    if (st->has_header) {
        for (int col_idx = 0; col_idx < n_cols; col_idx++) {
            if (col_idx > 0) {
                fputc(sep, out);
            }
            put_separated(out, sluice_result_column_name(res, col_idx), is_csv);
        }
        fputc('\n', out);
    }
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        for (int col_idx = 0; col_idx < n_cols; col_idx++) {
            if (col_idx > 0) {
                fputc(sep, out);
            }
            const char *text = cell_text(st, res, row_idx, col_idx);
            bool is_null = sluice_result_is_null(res, row_idx, col_idx);
            if (is_csv && !st->has_null_text && (is_null || text[0] == '\0')) {
                /* as COPY TO writes them: NULL an empty field, '' a quoted one */
                fputs(is_null ? "" : "\"\"", out);
                continue;
            }
            put_separated(out, text, is_csv);
        }
        fputc('\n', out);
    }
}

/* ---------------------------------------------------------------- json */

static void put_json_string(FILE *out, const char *text)
{
    fputc('"', out);
    for (; *text != '\0'; text++) {
        unsigned char c = (unsigned char)*text;
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\b':
            fputs("\\b", out);
            break;
        case '\f':
            fputs("\\f", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fprintf(out, "\\u%04x", c);
            } else {
                fputc(c, out);
            }
        }
    }
    fputc('"', out);
}

static const char *skip_digits(const char *text)
{
    while (*text >= '0' && *text <= '9') {
        text++;
    }
    return text;
}

/* True when text is a JSON number (so "inf" or "nan" print as strings instead). */
static bool is_json_number(const char *text)
{
    const char *end;

    text += *text == '-';
    end = skip_digits(text);
    if (end == text || (*text == '0' && end - text > 1)) {
        return false;
    }
    if (*end == '.') {
        text = end + 1;
        end = skip_digits(text);
        if (end == text) {
            return false;
        }
    }
    if (*end == 'e' || *end == 'E') {
        text = end + 1;
        text += *text == '+' || *text == '-';
        end = skip_digits(text);
        if (end == text) {
            return false;
        }
    }
    return *end == '\0';
}

static void put_json_value(FILE *out, const SluiceResult *res, int64_t row, int col)
{
    const char *text = raw_text(res, row, col);
    SluiceType type = sluice_result_column_type(res, col);

    if (text == NULL) {
        fputs("null", out);
    } else if (is_numeric(type) && is_json_number(text)) {
        fputs(text, out);
    } else if (type == SLUICE_BOOLEAN && (!strcmp(text, "true") || !strcmp(text, "false"))) {
        fputs(text, out);
    } else {
        put_json_string(out, text);
    }
}

/* An array of objects, one row per line, as sqlite3's json mode: [{..},\n{..}]. */
static void print_json(const SluiceResult *res, FILE *out)
{
    int n_cols = sluice_result_column_count(res);
    int64_t n_rows = sluice_result_row_count(res);

    fputc('[', out);
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        fputc('{', out);
        for (int col_idx = 0; col_idx < n_cols; col_idx++) {
            if (col_idx > 0) {
                fputc(',', out);
            }
            put_json_string(out, sluice_result_column_name(res, col_idx));
            fputc(':', out);
            put_json_value(out, res, row_idx, col_idx);
        }
        fputs(row_idx + 1 < n_rows ? "},\n" : "}", out);
    }
    fputs("]\n", out);
}

/* ---------------------------------------------------------------- line */

/* `name = value` per column, names right-aligned to at least 5 columns, a blank
 * line between rows (sqlite3's line mode). */
static void print_line(const CliState *st, const SluiceResult *res, FILE *out)
{
    int n_cols = sluice_result_column_count(res);
    int64_t n_rows = sluice_result_row_count(res);
    size_t width = 5;

    for (int col_idx = 0; col_idx < n_cols; col_idx++) {
        size_t name_width = text_width(sluice_result_column_name(res, col_idx), false);
        width = name_width > width ? name_width : width;
    }
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        if (row_idx > 0) {
            fputc('\n', out);
        }
        for (int col_idx = 0; col_idx < n_cols; col_idx++) {
            put_aligned(out, sluice_result_column_name(res, col_idx), width, CLI_ALIGN_RIGHT,
                        false);
            fputs(" = ", out);
            put_escaped(out, cell_text(st, res, row_idx, col_idx), SIZE_MAX, false);
            fputc('\n', out);
        }
    }
}

/* ---------------------------------------------------------------- dispatch */

void cli_output_result(const CliState *st, const SluiceResult *res, FILE *out)
{
    if (res == NULL || sluice_result_column_count(res) == 0) {
        return;
    }
    switch (st->mode) {
    case CLI_MODE_BOX:
        print_columnar(st, res, out, &BOX_FRAME);
        break;
    case CLI_MODE_TABLE:
        print_columnar(st, res, out, &TABLE_FRAME);
        break;
    case CLI_MODE_MARKDOWN:
        print_columnar(st, res, out, &MARKDOWN_FRAME);
        break;
    case CLI_MODE_CSV:
        print_separated(st, res, out, true);
        break;
    case CLI_MODE_TSV:
        print_separated(st, res, out, false);
        break;
    case CLI_MODE_JSON:
        print_json(res, out);
        break;
    case CLI_MODE_LINE:
        print_line(st, res, out);
        break;
    }
}
