/*
 * edit.c - `.edit` (see edit.h).
 */
#include "cli/edit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/exec.h"

/* The editor's command line: "EDITOR 'path'" with path single-quoted for
 * the shell.  Owned (free); NULL on OOM. */
static char *editor_command(const char *path)
{
    const char *editor = getenv("EDITOR");
    if (editor == NULL || editor[0] == '\0') {
        editor = getenv("VISUAL");
    }
    if (editor == NULL || editor[0] == '\0') {
        editor = "vi";
    }
    size_t cap = strlen(editor) + strlen(path) * 4 + 4;
    char *cmd = malloc(cap);
    if (cmd == NULL) {
        return NULL;
    }
    size_t at = (size_t)snprintf(cmd, cap, "%s '", editor);
    for (const char *ch = path; *ch != '\0'; ch++) {
        if (*ch == '\'') {
            memcpy(cmd + at, "'\\''", 4);
            at += 4;
        } else {
            cmd[at++] = *ch;
        }
    }
    cmd[at++] = '\'';
    cmd[at] = '\0';
    return cmd;
}

/* Writes the last statement to a new temp file; its name goes into path. */
static bool write_temp(CliState *st, char *path, size_t cap)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, cap, "%s/sluice-edit-XXXXXX.sql", dir != NULL && dir[0] ? dir : "/tmp");
    int fd = mkstemps(path, 4);
    FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (fp == NULL) {
        cli_exec_error(st, ".edit: cannot create a temp file: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        return false;
    }
    bool ok = st->last_sql == NULL || fprintf(fp, "%s\n", st->last_sql) >= 0;
    ok = fclose(fp) == 0 && ok;
    if (!ok) {
        cli_exec_error(st, ".edit: cannot write '%s': %s", path, strerror(errno));
        unlink(path);
    }
    return ok;
}

/* Runs the editor on path; true when it exited 0. */
static bool run_editor(CliState *st, const char *path)
{
    char *cmd = editor_command(path);
    if (cmd == NULL) {
        cli_exec_error(st, "out of memory");
        return false;
    }
    fflush(stdout);
    int status = system(cmd);
    bool ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok) {
        cli_exec_error(st, ".edit: the editor (%s) failed%s", cmd,
                       status != -1 && WIFEXITED(status) ? "" : " to run");
    }
    free(cmd);
    return ok;
}

/* The saved file's text, NUL-terminated.  Owned (free); NULL after an error. */
static char *read_all(CliState *st, const char *path)
{
    FILE *fp = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    if (fp == NULL) {
        cli_exec_error(st, ".edit: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    FILE *mem = open_memstream(&text, &len);
    char chunk[4096];
    size_t n;
    while (mem != NULL && (n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        fwrite(chunk, 1, n, mem);
    }
    bool ok = mem != NULL && !ferror(fp);
    if (mem != NULL) {
        ok = fclose(mem) == 0 && ok;
    }
    fclose(fp);
    if (!ok) {
        free(text);
        cli_exec_error(st, ".edit: cannot read '%s'", path);
        return NULL;
    }
    return text;
}

void cli_edit_run(CliState *st)
{
    char path[4096];
    if (!write_temp(st, path, sizeof path)) {
        return;
    }
    char *text = run_editor(st, path) ? read_all(st, path) : NULL;
    unlink(path);
    if (text != NULL) {
        cli_exec_text(st, text); /* errors count lines from the start of the saved text */
        free(text);
    }
}
