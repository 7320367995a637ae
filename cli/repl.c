/*
 * repl.c - the interactive loop of the `sluice` shell on libedit (see repl.h).
 *
 * Each complete entry (one statement however many lines it took, or one dot
 * command) becomes one history entry, its lines joined by spaces, and the
 * history file is rewritten after each entry so a killed shell keeps it.  Tab
 * completes keywords and names (complete.h).
 */
#include "cli/repl.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <editline/readline.h>

#include "cli/complete.h"
#include "cli/exec.h"
#include "cli/interrupt.h"

#define CLI_HISTORY_MAX 1000
#define CLI_PROMPT "sluice> "
#define CLI_PROMPT_MORE "   ...> "

/* The lines of the entry being typed, joined by spaces, for the history. */
typedef struct CliEntry {
    char *text; /* owned, NUL-terminated; NULL before the first line */
    size_t len; /* bytes of text */
} CliEntry;

/* ~/.sluice_history, owned; NULL when HOME is not set. */
static char *history_path(void)
{
    const char *home = getenv("HOME");
    const char *name = "/.sluice_history";

    if (home == NULL || *home == '\0') {
        return NULL;
    }
    char *path = malloc(strlen(home) + strlen(name) + 1);
    if (path != NULL) {
        strcpy(path, home);
        strcat(path, name);
    }
    return path;
}

static void entry_add_line(CliEntry *entry, const char *line)
{
    size_t len = strlen(line);
    char *text = realloc(entry->text, entry->len + len + 2);

    if (text == NULL) {
        return; /* the history only loses this line */
    }
    if (entry->len > 0) {
        text[entry->len++] = ' ';
    }
    memcpy(text + entry->len, line, len + 1);
    entry->text = text;
    entry->len += len;
}

/* Adds the finished entry to the history (unless blank) and starts a new one. */
static void entry_commit(CliEntry *entry, const char *hist_path)
{
    if (entry->text != NULL && entry->text[strspn(entry->text, " \t")] != '\0') {
        add_history(entry->text);
        if (hist_path != NULL) {
            write_history(hist_path);
        }
    }
    free(entry->text);
    entry->text = NULL;
    entry->len = 0;
}

/* Feeds one line read by libedit, which has no line end, with its '\n'. */
static void feed_line(CliState *st, CliFeed *feed, const char *line)
{
    size_t len = strlen(line);
    char *with_nl = malloc(len + 2);

    if (with_nl == NULL) {
        cli_exec_error(st, "out of memory");
        return;
    }
    memcpy(with_nl, line, len);
    with_nl[len] = '\n';
    with_nl[len + 1] = '\0';
    cli_exec_feed_line(st, feed, with_nl, len + 1);
    free(with_nl);
}

static void history_open(const char *hist_path)
{
    setlocale(LC_CTYPE, "");
    rl_readline_name = "sluice";
    using_history();
    stifle_history(CLI_HISTORY_MAX);
    if (hist_path != NULL) {
        read_history(hist_path);
    }
    rl_bind_key('\t', rl_complete);
}

void cli_repl_run(CliState *st)
{
    char *hist_path = history_path();
    CliEntry entry = {NULL, 0};
    CliFeed feed;
    bool was_interrupted = false; /* the last prompt ended in Ctrl+C */

    history_open(hist_path);
    cli_complete_install(st);
    st->is_interactive = true;
    printf("Sluice %s\nEnter \".help\" for usage hints.\n", sluice_version());
    cli_exec_feed_init(&feed);
    feed.is_repl = true;
    while (!st->is_done) {
        fflush(stdout);
        char *line = readline(cli_exec_feed_is_pending(&feed) ? CLI_PROMPT_MORE : CLI_PROMPT);
        if (cli_interrupt_take() > 0) {
            /* Ctrl+C at the prompt (libedit returns no line): the line and any
             * pending statement are dropped; a second one in a row ends the shell. */
            free(line);
            fputs("^C\n", stdout);
            if (was_interrupted) {
                break;
            }
            was_interrupted = true;
            cli_exec_feed_fini(&feed);
            cli_exec_feed_init(&feed);
            feed.is_repl = true;
            free(entry.text);
            entry = (CliEntry){NULL, 0};
            continue;
        }
        was_interrupted = false;
        if (line == NULL) {
            putchar('\n');
            break;
        }
        entry_add_line(&entry, line);
        feed_line(st, &feed, line);
        free(line);
        if (!cli_exec_feed_is_pending(&feed)) {
            entry_commit(&entry, hist_path);
        }
    }
    cli_exec_feed_finish(st, &feed);
    cli_exec_feed_fini(&feed);
    entry_commit(&entry, hist_path);
    free(hist_path);
}
