/*
 * output.c - the output modes of the `sluice` shell (see output.h).
 *
 * The columnar modes (box, table, markdown) make two passes over the result:
 * one for the display width of each column (UTF-8 characters, header included),
 * one to print.  Their header names are centred as in sqlite3; in box and table,
 * numeric columns (INTEGER, BIGINT, DOUBLE, DECIMAL) are right-aligned and the
 * others left-aligned.  The streaming modes (csv, tsv, json, line) print row by
 * row.  Row-at-a-time access is allowed here (STYLE.md section 7): this is the
 * printer.
 */
#include "cli/output.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The text of a cell: the engine's text, or the null text for NULL. */
static const char *cell_text(const CliState *st, const SluiceResult *res, int64_t row, int col)
{
    const char *text = sluice_result_text(res, row, col);
    return text == NULL || sluice_result_is_null(res, row, col) ? st->null_text : text;
}

static bool is_numeric(SluiceType type)
{
    return type == SLUICE_INTEGER || type == SLUICE_BIGINT || type == SLUICE_DOUBLE ||
           type == SLUICE_DECIMAL;
}

/* Display width: one column per UTF-8 character (continuation bytes take none). */
static size_t text_width(const char *text)
{
    size_t width = 0;

    for (; *text != '\0'; text++) {
        width += ((unsigned char)*text & 0xC0) != 0x80;
    }
    return width;
}

static void put_repeat(FILE *out, const char *piece, size_t count)
{
    for (size_t idx = 0; idx < count; idx++) {
        fputs(piece, out);
    }
}

static void put_aligned(FILE *out, const char *text, size_t width, CliAlign align)
{
    size_t pad = width - text_width(text);
    size_t left = align == CLI_ALIGN_RIGHT ? pad : align == CLI_ALIGN_CENTER ? pad / 2 : 0;

    put_repeat(out, " ", left);
    fputs(text, out);
    put_repeat(out, " ", pad - left);
}

/* ---------------------------------------------------------------- columnar modes */

/* Width of each column over its name and every value. Owned by the caller. */
static size_t *column_widths(const CliState *st, const SluiceResult *res, int n_cols)
{
    size_t *widths = calloc((size_t)n_cols, sizeof *widths);
    int64_t n_rows = sluice_result_row_count(res);

    if (widths == NULL) {
        return NULL;
    }
    for (int col_idx = 0; col_idx < n_cols; col_idx++) {
        widths[col_idx] = text_width(sluice_result_column_name(res, col_idx));
        for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
            size_t width = text_width(cell_text(st, res, row_idx, col_idx));
            widths[col_idx] = width > widths[col_idx] ? width : widths[col_idx];
        }
    }
    return widths;
}

static void put_rule(FILE *out, const CliFrame *frame, const char *const rule[3],
                     const size_t *widths, int n_cols)
{
    fputs(rule[0], out);
    for (int col_idx = 0; col_idx < n_cols; col_idx++) {
        put_repeat(out, frame->horiz, widths[col_idx] + 2);
        fputs(col_idx + 1 < n_cols ? rule[1] : rule[2], out);
    }
    fputc('\n', out);
}

/* One row of cells; row < 0 is the header. */
static void put_cells(FILE *out, const CliFrame *frame, const CliState *st, const SluiceResult *res,
                      int64_t row, const size_t *widths, int n_cols)
{
    fputs(frame->vert, out);
    for (int col_idx = 0; col_idx < n_cols; col_idx++) {
        CliAlign align = CLI_ALIGN_CENTER;
        const char *text;
        if (row < 0) {
            text = sluice_result_column_name(res, col_idx);
        } else {
            bool is_right =
                frame->is_numbers_right && is_numeric(sluice_result_column_type(res, col_idx));
            align = is_right ? CLI_ALIGN_RIGHT : CLI_ALIGN_LEFT;
            text = cell_text(st, res, row, col_idx);
        }
        fputc(' ', out);
        put_aligned(out, text, widths[col_idx], align);
        fputc(' ', out);
        fputs(frame->vert, out);
    }
    fputc('\n', out);
}

static void print_columnar(const CliState *st, const SluiceResult *res, FILE *out,
                           const CliFrame *frame)
{
    int n_cols = sluice_result_column_count(res);
    int64_t n_rows = sluice_result_row_count(res);
    size_t *widths = column_widths(st, res, n_cols);

    if (widths == NULL) {
        fputs("sluice: out of memory\n", stderr);
        return;
    }
    if (frame->has_outer) {
        put_rule(out, frame, frame->top, widths, n_cols);
    }
    put_cells(out, frame, st, res, -1, widths, n_cols);
    if (n_rows > 0 || !frame->has_outer) {
        put_rule(out, frame, frame->mid, widths, n_cols);
    }
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        put_cells(out, frame, st, res, row_idx, widths, n_cols);
    }
    if (frame->has_outer) {
        put_rule(out, frame, frame->bottom, widths, n_cols);
    }
    free(widths);
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
            put_separated(out, cell_text(st, res, row_idx, col_idx), is_csv);
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
    const char *text = sluice_result_text(res, row, col);
    SluiceType type = sluice_result_column_type(res, col);

    if (text == NULL || sluice_result_is_null(res, row, col)) {
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
        size_t name_width = text_width(sluice_result_column_name(res, col_idx));
        width = name_width > width ? name_width : width;
    }
    for (int64_t row_idx = 0; row_idx < n_rows; row_idx++) {
        if (row_idx > 0) {
            fputc('\n', out);
        }
        for (int col_idx = 0; col_idx < n_cols; col_idx++) {
            put_aligned(out, sluice_result_column_name(res, col_idx), width, CLI_ALIGN_RIGHT);
            fprintf(out, " = %s\n", cell_text(st, res, row_idx, col_idx));
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
