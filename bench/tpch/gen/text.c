/*
 * text.c - the word lists of TPC-H (clause 4.2.2.13 and 4.2.3) and the text
 * of the comment columns.
 *
 * Comments follow the spec's sentence grammar (clause 4.2.2.10): a sentence
 * is a noun phrase, a verb phrase, optionally a prepositional phrase or a
 * second noun phrase, and a terminator.  Simplified: the spec draws each word
 * class and sentence form from weighted distributions and cuts comments out
 * of one 300 MB text pool; here every choice is uniform and each comment is
 * generated on its own from its row's draw, then cut to a length uniform in
 * [min, max].
 */
#include <string.h>

#include "bench/tpch/gen/tpch.h"

#define LIST(name, ...)                                                                            \
    static const char *const name##_v[] = {__VA_ARGS__};                                           \
    const TpchList name = {name##_v, (int)(sizeof(name##_v) / sizeof(name##_v[0]))}

LIST(tpch_segments, "AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD");
LIST(tpch_priorities, "1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW");
LIST(tpch_instructions, "DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN");
LIST(tpch_modes, "REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB");
LIST(tpch_type_s1, "STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO");
LIST(tpch_type_s2, "ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED");
LIST(tpch_type_s3, "TIN", "NICKEL", "BRASS", "STEEL", "COPPER");
LIST(tpch_container_s1, "SM", "LG", "MED", "JUMBO", "WRAP");
LIST(tpch_container_s2, "CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM");
LIST(tpch_colors, "almond", "antique", "aquamarine", "azure", "beige", "bisque", "black",
     "blanched", "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon",
     "chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim",
     "dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost",
     "goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace",
     "lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
     "metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange",
     "orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple", "red",
     "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky", "slate",
     "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato", "turquoise", "violet", "wheat",
     "white", "yellow");

LIST(nouns, "foxes", "ideas", "theodolites", "pinto beans", "instructions", "dependencies",
     "excuses", "platelets", "asymptotes", "courts", "dolphins", "multipliers", "sauternes",
     "warthogs", "frets", "dinos", "attainments", "somas", "Tiresias", "patterns", "forges",
     "braids", "hockey players", "frays", "warhorses", "dugouts", "notornis", "epitaphs", "pearls",
     "tithes", "waters", "orbits", "gifts", "sheaves", "depths", "sentiments", "decoys", "realms",
     "pains", "grouches", "escapades", "packages", "requests", "accounts", "deposits");
LIST(verbs, "sleep", "wake", "are", "cajole", "haggle", "nag", "use", "boost", "affix", "detect",
     "integrate", "maintain", "nod", "was", "lose", "sublate", "solve", "thrash", "promise",
     "engage", "hinder", "print", "x-ray", "breach", "eat", "grow", "impress", "mold", "poach",
     "serve", "run", "dazzle", "snooze", "doze", "unwind", "kindle", "play", "hang", "believe",
     "doubt");
LIST(adjectives, "special", "pending", "unusual", "express", "furious", "sly", "careful", "blithe",
     "quick", "fluffy", "slow", "quiet", "ruthless", "thin", "close", "dogged", "daring", "brave",
     "stealthy", "permanent", "enticing", "idle", "busy", "regular", "final", "ironic", "even",
     "bold", "silent");
LIST(adverbs, "sometimes", "always", "never", "furiously", "slyly", "carefully", "blithely",
     "quickly", "fluffily", "slowly", "quietly", "ruthlessly", "thinly", "closely", "doggedly",
     "daringly", "bravely", "stealthily", "permanently", "enticingly", "idly", "busily",
     "regularly", "finally", "ironically", "evenly", "boldly", "silently");
LIST(prepositions, "about", "above", "according to", "across", "after", "against", "along",
     "alongside of", "among", "around", "at", "atop", "before", "behind", "beneath", "beside",
     "besides", "between", "beyond", "by", "despite", "during", "except", "for", "from",
     "in place of", "inside", "instead of", "into", "near", "of", "on", "outside", "over", "past",
     "since", "through", "throughout", "to", "toward", "under", "until", "up", "upon", "without",
     "with", "within");
LIST(auxiliaries, "do", "may", "might", "shall", "will", "would", "can", "could", "should",
     "ought to", "must", "will have to", "shall have to", "could have to", "should have to",
     "must have to", "need to", "try to");
LIST(terminators, ".", ";", ":", "?", "!", "--");

const char *tpch_pick(const TpchList *l, uint64_t r)
{
    return l->v[gen_uniform(r, 0, l->n - 1)];
}

/* A text under construction: words are appended until cap is reached. */
typedef struct Text {
    char *out;
    int len;
    int cap;      /* stop once len >= cap */
    uint64_t rng; /* splitmix64 state */
} Text;

static uint64_t next(Text *t)
{
    t->rng += 0x9e3779b97f4a7c15ULL;
    return cm_hash_u64(t->rng);
}

/* Appends s (with a space before it unless it is a terminator or the start). */
static void put(Text *t, const char *s, bool is_glued)
{
    if (t->len > 0 && !is_glued && t->len < t->cap) {
        t->out[t->len++] = ' ';
    }
    size_t n = strlen(s);
    if (n > (size_t)(t->cap - t->len)) {
        n = (size_t)(t->cap - t->len);
    }
    memcpy(t->out + t->len, s, n);
    t->len += (int)n;
}

static void word(Text *t, const TpchList *l)
{
    put(t, tpch_pick(l, next(t)), false);
}

static void noun_phrase(Text *t)
{
    switch (next(t) % 4) {
    case 1:
        word(t, &adjectives);
        break;
    case 2:
        word(t, &adjectives);
        put(t, ",", true);
        word(t, &adjectives);
        break;
    case 3:
        word(t, &adverbs);
        word(t, &adjectives);
        break;
    default:
        break;
    }
    word(t, &nouns);
}

static void verb_phrase(Text *t)
{
    uint64_t form = next(t) % 4;
    if (form & 1) {
        word(t, &auxiliaries);
    }
    word(t, &verbs);
    if (form & 2) {
        word(t, &adverbs);
    }
}

static void prep_phrase(Text *t)
{
    word(t, &prepositions);
    put(t, "the", false);
    noun_phrase(t);
}

static void sentence(Text *t)
{
    uint64_t form = next(t) % 5;
    noun_phrase(t);
    if (form >= 3) {
        prep_phrase(t);
    }
    verb_phrase(t);
    if (form == 1 || form == 4) {
        prep_phrase(t);
    } else if (form == 2 || form == 3) {
        noun_phrase(t);
    }
    put(t, tpch_pick(&terminators, next(t)), true);
}

void tpch_text(char *out, int min_len, int max_len, uint64_t r)
{
    Text t = {.out = out, .len = 0, .cap = (int)gen_uniform(r, min_len, max_len), .rng = r};
    while (t.len < t.cap) {
        sentence(&t);
    }
    out[t.len] = '\0';
}

void tpch_vstring(char *out, int min_len, int max_len, uint64_t r)
{
    static const char chars[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,. ";
    Text t = {.rng = r};
    int n = (int)gen_uniform(r, min_len, max_len);
    for (int i = 0; i < n; i++) {
        out[i] = chars[gen_uniform(next(&t), 0, (int)sizeof chars - 2)];
    }
    out[n] = '\0';
}

void tpch_part_name(char *out, uint64_t r)
{
    Text t = {.rng = r};
    int picked[5];
    out[0] = '\0';
    for (int i = 0; i < 5; i++) {
        bool is_dup;
        do {
            picked[i] = (int)gen_uniform(next(&t), 0, tpch_colors.n - 1);
            is_dup = false;
            for (int j = 0; j < i; j++) {
                is_dup = is_dup || picked[j] == picked[i];
            }
        } while (is_dup);
        if (i > 0) {
            strcat(out, " ");
        }
        strcat(out, tpch_colors.v[picked[i]]);
    }
}
