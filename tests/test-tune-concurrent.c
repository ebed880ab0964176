/* Concurrent writers of one tuning file (tensor-parallel ranks): forked processes each merge
 * their own entries at the same time, over and over, while another process keeps reading.
 * At the end every entry is there, and the reader never saw a partial or malformed file. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"
#include "tune-file.h"

#define WRITERS 8
#define ROUNDS 12
#define PER_ROUND 5

static const int64_t bucket_of[PER_ROUND] = {1, 2, 4, 16, 64};

static void count_warning(void *user, int line, const char *msg) {
  (void)line;
  (void)msg;
  ++*(int *)user;
}

static bf16fp32__tune_header header(void) {
  bf16fp32__tune_header h;
  memset(&h, 0, sizeof h);
  h.has_cpu = true;
  bf16fp32__cpu_identity_query(2, &h.cpu);
  return h;
}

/* Writer w, round r: entries n = 1000 + w, k = 64 + r, m over the buckets. */
static int writer(const char *path, int w, int start_fd) {
  char go;
  if (read(start_fd, &go, 1) < 0) return 3; /* returns 0 (EOF) when the parent opens the gate */
  bf16fp32__tune_header h = header();
  for (int r = 0; r < ROUNDS; r++) {
    bf16fp32__tune_entry e[PER_ROUND];
    for (int i = 0; i < PER_ROUND; i++) {
      memset(&e[i], 0, sizeof e[i]);
      e[i].where = BF16FP32_HOST;
      e[i].n = 1000 + w, e[i].k = 64 + r, e[i].m = bucket_of[i];
      snprintf(e[i].winner, sizeof e[i].winner, "cpu-ref");
      e[i].winner_us = w + r * 0.001;
      e[i].runner_up_us = -1;
    }
    if (bf16fp32__tune_file_merge(path, &h, e, PER_ROUND, NULL, NULL) != BF16FP32_OK) {
      fprintf(stderr, "writer %d round %d: %s\n", w, r, bf16fp32_last_error());
      return 1;
    }
  }
  return 0;
}

/* Reads the file until told to stop: every read must be a whole, well-formed file. */
static int reader(const char *path, int start_fd, int stop_fd) {
  char go;
  if (read(start_fd, &go, 1) < 0) return 3;
  int reads = 0, entries_seen = 0;
  for (;;) {
    fd_set set;
    FD_ZERO(&set);
    FD_SET(stop_fd, &set);
    struct timeval tv = {0, 0};
    if (select(stop_fd + 1, &set, NULL, NULL, &tv) > 0) break;
    bf16fp32__tune_file f;
    int err = 0, warnings = 0;
    bf16fp32_status st = bf16fp32__tune_file_read(path, &f, &err, count_warning, &warnings);
    if (st != BF16FP32_OK && err == ENOENT) continue; /* before the first rename */
    if (st != BF16FP32_OK || warnings || f.skipped || !f.header.has_cpu ||
        !bf16fp32__tune_header_current(&f.header, NULL, 0) || f.table.count < entries_seen) {
      fprintf(stderr, "reader: bad file after %d reads: %s, %d warnings, %d entries (saw %d)\n", reads,
              bf16fp32_status_name(st), warnings, f.table.count, entries_seen);
      return 1;
    }
    /* Entries are only ever added: a later read never has fewer. */
    entries_seen = f.table.count;
    bf16fp32__tune_file_clear(&f);
    reads++;
  }
  printf("reader: %d whole reads\n", reads);
  fflush(stdout);
  return 0;
}

int main(void) {
  char dir[512], path[600];
  if (sup_temp_dir(dir, sizeof dir, "tune-conc")) return 1;
  snprintf(path, sizeof path, "%s/ranks/tune.tsv", dir); /* the directory is made by the writers */

  int gate[2], stop[2];
  if (pipe(gate) || pipe(stop)) {
    perror("pipe");
    return 1;
  }
  fflush(stdout);
  pid_t pids[WRITERS + 1];
  for (int w = 0; w <= WRITERS; w++) {
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 1;
    }
    if (pid == 0) {
      close(gate[1]);
      close(stop[1]);
      _exit(w < WRITERS ? writer(path, w, gate[0]) : reader(path, gate[0], stop[0]));
    }
    pids[w] = pid;
  }
  close(gate[0]);
  close(stop[0]);
  close(gate[1]); /* all start at once */

  int failed = 0;
  for (int w = 0; w < WRITERS; w++) {
    int status = 0;
    waitpid(pids[w], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "writer %d failed (status %#x)\n", w, status);
      failed++;
    }
  }
  close(stop[1]); /* the reader stops */
  int status = 0;
  waitpid(pids[WRITERS], &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "reader failed (status %#x)\n", status);
    failed++;
  }

  bf16fp32__tune_file f;
  int err = 0, warnings = 0;
  if (bf16fp32__tune_file_read(path, &f, &err, count_warning, &warnings) != BF16FP32_OK) {
    fprintf(stderr, "final read: %s\n", bf16fp32_last_error());
    return 1;
  }
  int want = WRITERS * ROUNDS * PER_ROUND, missing = 0;
  for (int w = 0; w < WRITERS; w++)
    for (int r = 0; r < ROUNDS; r++)
      for (int i = 0; i < PER_ROUND; i++) {
        const bf16fp32__tune_entry *e = bf16fp32__tune_table_lookup(&f.table, BF16FP32_HOST, 0, 1000 + w, 64 + r, bucket_of[i]);
        if (!e || e->m != bucket_of[i] || (int)e->winner_us != w) missing++;
      }
  if (f.table.count != want || missing || warnings || f.skipped) {
    fprintf(stderr, "final file: %d entries (want %d), %d missing, %d warnings, %d skipped\n", f.table.count, want,
            missing, warnings, f.skipped);
    failed++;
  }
  bf16fp32__tune_file_clear(&f);

  /* No temporary file is left behind; the lock file stays (removing it would race). */
  char sub[700];
  snprintf(sub, sizeof sub, "%s/ranks", dir);
  DIR *d = opendir(sub);
  struct dirent *e;
  int temps = 0;
  while (d && (e = readdir(d))) {
    if (strstr(e->d_name, ".tmp.")) temps++;
  }
  if (d) closedir(d);
  sup_remove_tree(dir);
  if (temps) {
    fprintf(stderr, "%d temporary files left\n", temps);
    failed++;
  }
  if (failed) {
    fprintf(stderr, "test-tune-concurrent: FAILED\n");
    return 1;
  }
  printf("test-tune-concurrent: ok (%d writers x %d merges, %d entries)\n", WRITERS, ROUNDS, want);
  return 0;
}
