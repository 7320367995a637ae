/*
 * csv_int.h - what csv.c shares with csv_sniff.c: splitting one record into
 * fields.  Never included outside storage/.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct StCsvField {
    const char *p;   /* the field's bytes, quotes stripped; borrowed from the text */
    size_t n;
    bool quoted;
    bool has_escape; /* holds an escape (or a doubled quote) still to undo */
    bool has_junk;   /* text follows the closing quote before the delimiter (ignored) */
} StCsvField;

/* Splits the record at d[*pos] (up to `end`) into fields (the first `cap`
 * stored) and returns how many it has; moves *pos past the record's newline
 * and adds to *lines the newlines inside quotes.  esc is the escape byte (the
 * quote when a doubled quote is the escape); q 0 means no quoting.
 * *bad_quote: a quoted field runs past `end`. */
int st_csv_split(const char *d, size_t *pos, size_t end, char delim, char q, char esc,
                 StCsvField *fields, int cap, int64_t *lines, bool *bad_quote);
