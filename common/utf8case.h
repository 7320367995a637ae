/*
 * utf8case.h - upper and lower case of UTF-8 text, independent of the locale,
 * and the decoding and encoding of one character.
 *
 * Used by the upper/lower kernels (executor/func_string.c).  ASCII letters map
 * as usual; outside ASCII, the Unicode simple case mappings (one code point to
 * one, UnicodeData.txt) of these blocks are applied:
 *   U+00C0-U+00FF Latin-1 Supplement (and U+00B5 micro sign -> U+039C; U+00DF
 *                 sharp s has no one-letter upper case and stays),
 *   U+0100-U+017F Latin Extended-A (U+0130 -> 'i', U+0131 -> 'I', U+017F -> 'S'),
 *   U+0180-U+024F Latin Extended-B: its alternating pairs, and the digraphs
 *                 DŽ LJ NJ DZ, whose title case (U+01C5 ...) maps to each of
 *                 the other two; the rest of the block stays,
 *   U+0370-U+03FF Greek and Coptic (final sigma upper-cases to U+03A3; U+03A3
 *                 always lower-cases to U+03C3),
 *   U+0400-U+04FF Cyrillic.
 * Every other code point, and any byte that is not part of a well-formed
 * two-byte sequence, is copied unchanged.  All these mappings stay within
 * one- and two-byte sequences, so the result is never longer than the input.
 * Pure and thread-safe.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes the upper (is_upper) or lower case of s[0..n) into out (room for n
 * bytes; must not overlap s) and returns its length, at most n. */
size_t cm_utf8_case(const char *s, size_t n, bool is_upper, char *out);

/* Decodes the character at s[0..n), n >= 1, into *cp and returns its length in
 * bytes.  An invalid or truncated sequence (a stray continuation byte, a lead
 * byte without its continuation bytes within n, a byte 0xF8..0xFF) counts as
 * one byte and decodes to U+FFFD, the replacement character; text from files
 * and literals is not validated, so every reader of code points must cope. */
size_t cm_utf8_decode(const char *s, size_t n, uint32_t *cp);

/* Writes the UTF-8 bytes of c, a Unicode scalar value (0..0x10FFFF outside the
 * surrogates; the caller checks), into b (room for 4) and returns their count. */
size_t cm_utf8_encode(uint32_t c, char *b);
