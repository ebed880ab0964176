/* The tuning file on disk: a TSV text with '#' header lines (format, library version, the
 * GPU's and the CPU's identity), parsed line by line, written atomically (temporary file,
 * fsync, rename) and merged under an exclusive lock (flock on PATH.lock) so that several
 * processes can add their entries to one file without losing any. */
#ifndef BF16FP32_TUNE_FILE_H
#define BF16FP32_TUNE_FILE_H

#include <stddef.h>

#include "tune-table.h"

/* A problem with one line (line 0: with the file as a whole). */
typedef void (*bf16fp32__tune_warn_fn)(void *user, int line, const char *msg);

typedef struct bf16fp32__tune_file {
  bf16fp32__tune_header header;
  bf16fp32__tune_table table; /* every well-formed data line, finished (a later duplicate wins) */
  int skipped;                /* malformed lines (the first 10 warned about one by one, the rest
                                 counted in one warning) */
  size_t bytes;               /* the text's length */
  char problem[300];          /* the first thing wrong with the text ("line 7: bad k"); "" if none */
} bf16fp32__tune_file;

/* Parses text (len bytes, may hold any bytes). A malformed line is skipped with a warning
 * and the rest kept; so is a last line without its newline (a truncated file). Returns OK,
 * or OUT_OF_MEMORY. Whether the header applies to this machine is the caller's question. */
bf16fp32_status bf16fp32__tune_file_parse(const char *text, size_t len, bf16fp32__tune_file *f,
                                          bf16fp32__tune_warn_fn warn, void *user);
void bf16fp32__tune_file_clear(bf16fp32__tune_file *f);

/* Reads and parses path. TUNE_FILE with the errno in *err (ENOENT: there is no file), or 0 where
 * no system call failed (not a regular file, too large): last_error says which. */
bf16fp32_status bf16fp32__tune_file_read(const char *path, bf16fp32__tune_file *f, int *err,
                                         bf16fp32__tune_warn_fn warn, void *user);

/* TUNE_FILE (last_error: the path, the first problem, then `then`) where f is not a tune file (text
 * without a '# format' line) or, written in this library's format and version, holds anything
 * malformed: a line, a header value, an identity left incomplete. A file of another format or
 * version is stale, not corrupt: OK (its entries are ignored when read, replaced when merged). */
bf16fp32_status bf16fp32__tune_file_check(const bf16fp32__tune_file *f, const char *path,
                                          const char *then);

/* bf16fp32__tune_file_read, then bf16fp32__tune_file_check: OK with *err ENOENT (and f empty,
 * no error detail left) where there is no file; TUNE_FILE, f cleared, where it cannot be read
 * or is corrupt, last_error ending with `then`; OUT_OF_MEMORY. */
bf16fp32_status bf16fp32__tune_file_read_checked(const char *path, bf16fp32__tune_file *f,
                                                 int *err, bf16fp32__tune_warn_fn warn,
                                                 void *user, const char *then);

/* bf16fp32__tune_file_check on the file at path, read first: OK where there is none yet;
 * TUNE_FILE where it is there but cannot be read or is corrupt; IO_ERROR where the path cannot
 * be reached (a file for a directory, one we may not enter). last_error ends with `then`. */
bf16fp32_status bf16fp32__tune_file_check_path(const char *path, const char *then);

/* The text of a file: header, then one line per entry. *text is malloc'ed. */
bf16fp32_status bf16fp32__tune_file_format(const bf16fp32__tune_header *h,
                                           const bf16fp32__tune_entry *e, int count, char **text,
                                           size_t *len);

/* True when the header's format and library version are this library's; else why. */
bool bf16fp32__tune_header_current(const bf16fp32__tune_header *h, char *why, size_t why_len);

/* Writes path atomically: creates its directory, a temporary file next to it, fsync,
 * rename over path, fsync of the directory. Readers see the old file or the new one. */
bf16fp32_status bf16fp32__tune_file_write_atomic(const char *path, const char *text, size_t len);

/* Exclusive lock on path + ".lock" (created; never removed, which would race). */
bf16fp32_status bf16fp32__tune_file_lock(const char *path, int *fd);
void bf16fp32__tune_file_unlock(int fd);

/* Under the lock: reads path, keeps its entries that still apply, adds `entries` (which
 * replace equal keys) and writes the result atomically. `mine` says who measured them: its
 * has_gpu / has_cpu sections replace the file's; a file section for another identity, or a
 * file of another format or library version, is dropped (with a warning). Sections mine
 * does not have are kept as they are. A symbolic link is followed: its target is locked and
 * replaced. TUNE_FILE, the file left as it was, where path cannot be read or is corrupt
 * (bf16fp32__tune_file_check); IO_ERROR where the merged table would not fit the size the
 * reader takes, or the lock or the write fails. */
bf16fp32_status bf16fp32__tune_file_merge(const char *path, const bf16fp32__tune_header *mine,
                                          const bf16fp32__tune_entry *entries, int count,
                                          bf16fp32__tune_warn_fn warn, void *user);

/* A C source file holding h and the entries as the built-in table (tune-builtin.c);
 * tune-emit.c. */
bf16fp32_status bf16fp32__tune_emit_c(const bf16fp32__tune_header *h, const bf16fp32__tune_entry *e,
                                      int count, char **text, size_t *len);

/* A growing text buffer for the writers; a failed allocation sticks (checked at the end). */
typedef struct bf16fp32__text {
  char *p;
  size_t len, cap;
  bool failed;
} bf16fp32__text;
void bf16fp32__text_printf(bf16fp32__text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A time in microseconds as "123.456": fixed point, whatever the process's locale. */
void bf16fp32__text_time(bf16fp32__text *t, double us);

#endif
