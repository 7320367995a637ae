/*
 * outfile.h - a file written by COPY ... TO, replaced whole or not at all.
 *
 * A regular file (or a new one) is written to a temporary file in the same
 * directory, created with O_EXCL under a fresh name, and renamed over the
 * target only by st_outfile_commit, so a failed COPY leaves the old file as it
 * was and no temporary behind.  A replaced file keeps its permission bits; a
 * new one gets 0666 less the umask.  A symbolic link is followed: the file it
 * points to is replaced and the link stays a link.  Anything that is not a
 * regular file (a FIFO, a character device such as /dev/null) is opened and
 * written through, never replaced.  One StOutFile is used by one thread.
 */
#pragma once

#include <stdio.h>

#include "common/err.h"

typedef struct StOutFile {
    FILE *f;      /* the stream to write; owned until commit or abort */
    char *path;   /* the file written: the link's target for a symlink; owned */
    char *tmp;    /* temporary file renamed onto `path`; NULL when writing through; owned */
    const char *name; /* the path as the user gave it, for messages; borrowed */
} StOutFile;

/* Opens `path` for writing as described above.  On failure (CM_IO, CM_OOM,
 * naming `path`) nothing was created and `o` needs no abort. */
CmStatus st_outfile_open(StOutFile *o, const char *path, CmErr *err);

/* Flushes and closes the stream and renames the temporary file into place.
 * On failure the temporary file is removed and the target is unchanged.
 * Always releases `o`. */
CmStatus st_outfile_commit(StOutFile *o, CmErr *err);

/* Closes the stream and removes the temporary file; the target is unchanged. */
void st_outfile_abort(StOutFile *o);
