/* The tuning file on disk: the default per-user path, reading, the atomic write (temporary
 * file in the same directory, fsync, rename) and the locked read-merge-write that lets
 * several processes (tensor-parallel ranks) add their entries to one file. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune-file.h"

/* Far above any real table (a full one is tens of KB), and it bounds what a hostile or wrong
 * file costs: parsed entries and their sort take about 20 times the file's bytes (63 MiB took
 * 1.1 GB). */
#define MAX_FILE_BYTES (8u << 20)
#define PATH_LEN 4096

void bf16fp32__tune_default_path(char *buf, size_t len) {
  if (len == 0) return;
  buf[0] = '\0';
  /* XDG: a relative or empty XDG_CACHE_HOME is to be ignored. */
  const char *xdg = getenv("XDG_CACHE_HOME");
  const char *home = getenv("HOME");
  int n = -1;
  if (xdg && xdg[0] == '/')
    n = snprintf(buf, len, "%s/bf16fp32/tune.tsv", xdg);
  else if (home && home[0])
    n = snprintf(buf, len, "%s/.cache/bf16fp32/tune.tsv", home);
  if (n < 0 || (size_t)n >= len) buf[0] = '\0'; /* a cut path would name another file */
}

bf16fp32_status bf16fp32__tune_file_read(const char *path, bf16fp32__tune_file *f, int *err,
                                         bf16fp32__tune_warn_fn warn, void *user) {
  bf16fp32_status st = BF16FP32_OK;
  char *data = NULL;
  struct stat sb;
  memset(f, 0, sizeof *f);
  *err = 0;
  /* O_NONBLOCK: opening a FIFO would otherwise wait for a writer (S_ISREG refuses it below) */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return bf16fp32__fail(BF16FP32_TUNE_FILE, "tune file %s: %s", path, strerror(*err));
  }
  if (fstat(fd, &sb) != 0) {
    *err = errno;
    st = bf16fp32__fail(BF16FP32_TUNE_FILE, "tune file %s: %s", path, strerror(*err));
    goto cleanup;
  }
  if (!S_ISREG(sb.st_mode)) { /* a directory, a FIFO, a device */
    st = bf16fp32__fail(BF16FP32_TUNE_FILE, "tune file %s: not a regular file", path);
    goto cleanup;
  }
  if ((uint64_t)sb.st_size > MAX_FILE_BYTES) {
    st = bf16fp32__fail(BF16FP32_TUNE_FILE, "tune file %s: larger than %u MiB", path,
                        MAX_FILE_BYTES >> 20);
    goto cleanup;
  }
  size_t cap = (size_t)sb.st_size + 1, len = 0;
  if (!(data = malloc(cap))) {
    st = bf16fp32__fail(BF16FP32_OUT_OF_MEMORY, "tune file %s: %zu bytes", path, cap);
    goto cleanup;
  }
  /* Read to the end even if the file grew since fstat (an editor appending): up to cap. */
  for (;;) {
    ssize_t r = read(fd, data + len, cap - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      *err = errno;
      st = bf16fp32__fail(BF16FP32_TUNE_FILE, "tune file %s: read: %s", path, strerror(*err));
      goto cleanup;
    }
    if (r == 0 || (len += (size_t)r) == cap) break;
  }
  st = bf16fp32__tune_file_parse(data, len, f, warn, user);
cleanup:
  free(data);
  close(fd);
  return st;
}

bf16fp32_status bf16fp32__tune_file_read_checked(const char *path, bf16fp32__tune_file *f,
                                                 int *err, bf16fp32__tune_warn_fn warn,
                                                 void *user, const char *then) {
  char why[512];
  bf16fp32_status st = bf16fp32__tune_file_read(path, f, err, warn, user);
  if (st == BF16FP32_TUNE_FILE && *err == ENOENT) {
    bf16fp32__clear_error(); /* no file yet is no failure: leave no detail */
    return BF16FP32_OK;
  }
  if (st == BF16FP32_TUNE_FILE) { /* copied first: the detail is rewritten in its own buffer */
    snprintf(why, sizeof why, "%s", bf16fp32_last_error());
    return bf16fp32__fail(BF16FP32_TUNE_FILE, "%s: %s", why, then);
  }
  if (st == BF16FP32_OK && (st = bf16fp32__tune_file_check(f, path, then)) != BF16FP32_OK)
    bf16fp32__tune_file_clear(f);
  return st;
}

bf16fp32_status bf16fp32__tune_file_check_path(const char *path, const char *then) {
  bf16fp32__tune_file f;
  struct stat sb;
  int err = 0;
  /* No file yet is fine (the merge makes its directories); no way to it is no place to write */
  if (stat(path, &sb) != 0)
    return errno == ENOENT ? BF16FP32_OK
                           : bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: %s: %s", path,
                                            strerror(errno), then);
  bf16fp32_status st = bf16fp32__tune_file_read_checked(path, &f, &err, NULL, NULL, then);
  if (st == BF16FP32_OK) bf16fp32__tune_file_clear(&f);
  return st;
}

/* mkdir -p of the directory part of path. */
static bf16fp32_status make_parents(const char *path) {
  char dir[PATH_LEN];
  if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
    return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file path too long: %.64s...", path);
  char *slash = strrchr(dir, '/');
  if (!slash || slash == dir) return BF16FP32_OK;
  *slash = '\0';
  for (char *p = dir + 1; ; p++) {
    if (*p == '/' || *p == '\0') {
      char c = *p;
      *p = '\0';
      if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file directory %s: %s", dir, strerror(errno));
      *p = c;
      if (c == '\0') break;
    }
  }
  return BF16FP32_OK;
}

static bf16fp32_status write_all(int fd, const char *p, size_t len, const char *what) {
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return bf16fp32__fail(BF16FP32_IO_ERROR, "%s: write: %s", what, strerror(errno));
    p += w;
    len -= (size_t)w;
  }
  return BF16FP32_OK;
}

bf16fp32_status bf16fp32__tune_file_write_atomic(const char *path, const char *text, size_t len) {
  bf16fp32_status st = BF16FP32_OK;
  char tmp[PATH_LEN + 16] = "";
  int fd = -1;
  struct stat old;
  if (strlen(path) >= PATH_LEN)
    return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file path too long: %.64s...", path);
  BF16FP32__TRY(make_parents(path));
  /* Same directory, so that rename is atomic (one file system). */
  snprintf(tmp, sizeof tmp, "%s.tmp.XXXXXX", path);
  if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
    tmp[0] = '\0';
    st = bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: temporary file: %s", path, strerror(errno));
    goto cleanup;
  }
  BF16FP32__TRY(write_all(fd, text, len, tmp));
  /* mkstemp makes it 0600; keep the mode of the file it replaces, else the usual 0644. */
  if (fchmod(fd, stat(path, &old) == 0 ? (old.st_mode & 07777) : 0644) != 0 || fsync(fd) != 0) {
    st = bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: fchmod/fsync: %s", tmp, strerror(errno));
    goto cleanup;
  }
  if (close(fd) != 0) {
    fd = -1;
    st = bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: close: %s", tmp, strerror(errno));
    goto cleanup;
  }
  fd = -1;
  if (rename(tmp, path) != 0) {
    st = bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: rename: %s", path, strerror(errno));
    goto cleanup;
  }
  tmp[0] = '\0';
  /* The rename itself is durable once the directory is synced; a failure here loses nothing. */
  char dir[PATH_LEN];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
  int dfd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
cleanup:
  if (fd >= 0) close(fd);
  if (tmp[0]) unlink(tmp);
  return st;
}

/* The file a path names in the end: each symbolic link replaced by its target (a relative one
 * taken from the link's directory), so that a merge locks and replaces the file itself, not the
 * link. A path that is missing or not a link is its own. */
static bf16fp32_status follow_links(const char *path, char *out, size_t len) {
  if (snprintf(out, len, "%s", path) >= (int)len)
    return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file path too long: %.64s...", path);
  for (int hops = 0;; hops++) {
    struct stat sb;
    if (lstat(out, &sb) != 0 || !S_ISLNK(sb.st_mode)) return BF16FP32_OK;
    if (hops == 40) return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: %s", path, strerror(ELOOP));
    char target[PATH_LEN];
    ssize_t n = readlink(out, target, sizeof target);
    if (n < 0 || (size_t)n >= sizeof target)
      return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: link %s: %s", path, out,
                            n < 0 ? strerror(errno) : "target too long");
    target[n] = '\0';
    char *slash = strrchr(out, '/');
    int dir_len = target[0] == '/' || !slash ? 0 : (int)(slash - out) + 1;
    char next[PATH_LEN];
    if (snprintf(next, sizeof next, "%.*s%s", dir_len, out, target) >= (int)sizeof next ||
        strlen(next) >= len)
      return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: link target path too long", path);
    snprintf(out, len, "%s", next);
  }
}

bf16fp32_status bf16fp32__tune_file_lock(const char *path, int *fd) {
  char lock[PATH_LEN + 8];
  *fd = -1;
  if (strlen(path) >= PATH_LEN)
    return bf16fp32__fail(BF16FP32_IO_ERROR, "tune file path too long: %.64s...", path);
  bf16fp32_status st = make_parents(path);
  if (st != BF16FP32_OK) return st;
  snprintf(lock, sizeof lock, "%s.lock", path);
  /* O_NONBLOCK: a FIFO in the lock's place must not block the open (flock takes any file) */
  int f = open(lock, O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0644);
  if (f < 0 && errno == EACCES) /* another user's: flock still works */
    f = open(lock, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f < 0) return bf16fp32__fail(BF16FP32_IO_ERROR, "lock file %s: %s", lock, strerror(errno));
  while (flock(f, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    close(f);
    return bf16fp32__fail(BF16FP32_IO_ERROR, "lock file %s: flock: %s", lock, strerror(e));
  }
  *fd = f;
  return BF16FP32_OK;
}

void bf16fp32__tune_file_unlock(int fd) {
  if (fd >= 0) close(fd); /* closing the last descriptor releases the flock */
}

static void note(bf16fp32__tune_warn_fn warn, void *user, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void note(bf16fp32__tune_warn_fn warn, void *user, const char *fmt, ...) {
  if (!warn) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  warn(user, 0, msg);
}

bf16fp32_status bf16fp32__tune_file_merge(const char *given, const bf16fp32__tune_header *mine,
                                          const bf16fp32__tune_entry *entries, int count,
                                          bf16fp32__tune_warn_fn warn, void *user) {
  bf16fp32_status st = BF16FP32_OK;
  char path[PATH_LEN];
  bf16fp32__tune_file old;
  bf16fp32__tune_table merged = {0};
  bf16fp32__tune_header out = *mine;
  char *text = NULL, why[256], desc[320];
  size_t len = 0;
  int lock = -1, err = 0;
  memset(&old, 0, sizeof old);
  for (int i = 0; i < count; i++) {
    bool dev = entries[i].where == BF16FP32_DEVICE;
    if (dev ? !mine->has_gpu : !mine->has_cpu)
      return bf16fp32__fail(BF16FP32_INTERNAL, "tune merge: a %s entry without that identity",
                            dev ? "device" : "host");
  }
  out.format = BF16FP32__TUNE_FORMAT;
  snprintf(out.library, sizeof out.library, "%s", BF16FP32_VERSION);

  BF16FP32__TRY(follow_links(given, path, sizeof path));
  BF16FP32__TRY(bf16fp32__tune_file_lock(path, &lock));
  /* a file named by mistake (BF16FP32_TUNE_FILE, --out), or one edited wrong: not ours to
   * replace, nor its lines ours to drop */
  BF16FP32__TRY(bf16fp32__tune_file_read_checked(path, &old, &err, warn, user, "left as it was"));
  if (err == ENOENT) {
    /* no file yet: nothing of it to keep */
  } else if (!bf16fp32__tune_header_current(&old.header, why, sizeof why)) {
    if (old.table.count) note(warn, user, "%s: its %d entries are replaced", why, old.table.count);
  } else {
    const bf16fp32__tune_header *h = &old.header;
    /* Per section: keep the file's entries when they were measured on the identity they
     * will be merged with (ours when we bring that section, else the file's own). */
    bool keep_gpu = h->has_gpu && (!mine->has_gpu || bf16fp32__gpu_identity_match(&h->gpu, &mine->gpu, false));
    bool keep_cpu = h->has_cpu && (!mine->has_cpu || bf16fp32__cpu_identity_match(&h->cpu, &mine->cpu, false));
    if (!mine->has_gpu && h->has_gpu) out.gpu = h->gpu, out.has_gpu = true;
    if (!mine->has_cpu && h->has_cpu) out.cpu = h->cpu, out.has_cpu = true;
    int dropped_gpu = 0, dropped_cpu = 0;
    for (int i = 0; i < old.table.count; i++) {
      const bf16fp32__tune_entry *e = &old.table.entries[i];
      bool dev = e->where == BF16FP32_DEVICE;
      if (dev ? !keep_gpu : !keep_cpu) {
        dev ? dropped_gpu++ : dropped_cpu++;
        continue;
      }
      bf16fp32__tune_entry copy = *e;
      copy.line = 0;
      BF16FP32__TRY(bf16fp32__tune_table_add(&merged, &copy));
    }
    if (dropped_gpu) {
      if (h->has_gpu)
        bf16fp32__gpu_identity_describe(&h->gpu, desc, sizeof desc);
      else
        snprintf(desc, sizeof desc, "an incomplete GPU identity");
      note(warn, user, "%d device entries measured on %s are replaced", dropped_gpu, desc);
    }
    if (dropped_cpu) {
      if (h->has_cpu)
        bf16fp32__cpu_identity_describe(&h->cpu, desc, sizeof desc);
      else
        snprintf(desc, sizeof desc, "an incomplete CPU identity");
      note(warn, user, "%d host entries measured on %s are replaced", dropped_cpu, desc);
    }
  }
  /* Ours come last, so they replace the file's equal keys; those marked line -1 only fill keys
   * the file lacks. */
  for (int i = 0; i < count; i++) {
    bf16fp32__tune_entry copy = entries[i];
    if (copy.line < 0 && bf16fp32__tune_table_has_key(&merged, &copy)) continue;
    copy.line = 0;
    BF16FP32__TRY(bf16fp32__tune_table_add(&merged, &copy));
  }
  bf16fp32__tune_table_finish(&merged);
  BF16FP32__TRY(bf16fp32__tune_file_format(&out, merged.entries, merged.count, &text, &len));
  if (len > MAX_FILE_BYTES) { /* what is written must read back */
    st = bf16fp32__fail(BF16FP32_IO_ERROR, "tune file %s: %d entries would take %zu bytes, more "
                        "than the %u MiB a tune file may hold: left as it was", path,
                        merged.count, len, MAX_FILE_BYTES >> 20);
    goto cleanup;
  }
  BF16FP32__TRY(bf16fp32__tune_file_write_atomic(path, text, len));
cleanup:
  bf16fp32__tune_file_unlock(lock);
  bf16fp32__tune_file_clear(&old);
  bf16fp32__tune_table_clear(&merged);
  free(text);
  return st;
}
