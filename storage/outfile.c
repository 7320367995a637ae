/*
 * outfile.c - COPY ... TO output files (see outfile.h).
 *
 * The kind of target is decided by stat(), which follows symbolic links: a
 * regular file is replaced through a temporary file and rename(2), which is
 * atomic within one directory, so the temporary lives beside the file that is
 * replaced (the link's target, found by realpath, not the link).  Anything
 * else that exists is written through, since renaming over a device or FIFO
 * would replace it with a regular file.
 */
#include "storage/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = cm_malloc(n);
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

static void release(StOutFile *o)
{
    cm_free(o->path);
    cm_free(o->tmp);
    o->path = o->tmp = NULL;
    o->f = NULL;
}

/* Creates the temporary file beside o->path; mode < 0 keeps the umask's default. */
static CmStatus open_tmp(StOutFile *o, int mode, CmErr *err)
{
    static atomic_uint counter;
    size_t cap = strlen(o->path) + 64;
    int fd = -1;
    o->tmp = cm_malloc(cap);
    if (o->tmp == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory writing '%s'", o->name);
    }
    for (int attempt = 0; fd < 0 && attempt < 100; attempt++) {
        snprintf(o->tmp, cap, "%s.%ld-%u.tmp", o->path, (long)getpid(),
                 atomic_fetch_add(&counter, 1));
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) {
            break;
        }
    }
    if (fd < 0) {
        return cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", o->name, strerror(errno));
    }
    if ((mode >= 0 && fchmod(fd, (mode_t)mode) != 0) || (o->f = fdopen(fd, "wb")) == NULL) {
        cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", o->name, strerror(errno));
        close(fd);
        unlink(o->tmp);
    }
    return err->code;
}

CmStatus st_outfile_open(StOutFile *o, const char *path, CmErr *err)
{
    struct stat sb, lsb;
    *o = (StOutFile){.name = path};
    bool exists = stat(path, &sb) == 0;
    if (!exists && errno != ENOENT) {
        return cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", path, strerror(errno));
    }
    bool is_link = lstat(path, &lsb) == 0 && S_ISLNK(lsb.st_mode);
    if (exists && S_ISDIR(sb.st_mode)) {
        return cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", path, strerror(EISDIR));
    }
    if ((exists && !S_ISREG(sb.st_mode)) || (!exists && is_link)) {
        /* A FIFO or device, or a dangling link whose target open() creates. */
        o->f = fopen(path, "wb");
        if (o->f == NULL) {
            return cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", path, strerror(errno));
        }
        return CM_OK;
    }
    if (exists && access(path, W_OK) != 0) {
        /* rename() would replace a file the user may not write. */
        return cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", path, strerror(errno));
    }
    char resolved[PATH_MAX];
    if (is_link && realpath(path, resolved) == NULL) {
        return cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", path, strerror(errno));
    }
    o->path = dup_str(is_link ? resolved : path);
    if (o->path == NULL) {
        return cm_err_set(err, CM_OOM, -1, "out of memory writing '%s'", path);
    }
    if (open_tmp(o, exists ? (int)(sb.st_mode & 07777) : -1, err) != CM_OK) {
        release(o);
    }
    return err->code;
}

CmStatus st_outfile_commit(StOutFile *o, CmErr *err)
{
    int failed = 0; /* errno of the first failure */
    errno = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) {
        failed = errno ? errno : EIO;
    }
    if (fclose(o->f) != 0 && failed == 0) {
        failed = errno;
    }
    if (failed == 0 && o->tmp != NULL && rename(o->tmp, o->path) != 0) {
        failed = errno;
    }
    if (failed != 0) {
        cm_err_set(err, CM_IO, -1, "cannot write '%s': %s", o->name, strerror(failed));
        if (o->tmp != NULL) {
            unlink(o->tmp);
        }
    }
    release(o);
    return err->code;
}

void st_outfile_abort(StOutFile *o)
{
    if (o->f != NULL) {
        fclose(o->f);
    }
    if (o->tmp != NULL) {
        unlink(o->tmp);
    }
    release(o);
}
