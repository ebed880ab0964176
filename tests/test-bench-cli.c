/* `bf16fp32 bench` on bad input (unknown backend, unreadable suite, malformed lines, bad
 * options: a clear message naming the file and line, non-zero exit; `tune`'s filler options too),
 * one tiny CPU run (with the oneDNN baseline's rows) and, where there is a GPU, a tiny decode step
 * with fillers, plainly and under PDL with each filler trigger; `tune`'s command line, tiny CPU
 * tunes and `tune --from FILE --emit-c`. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"
#include "testing.h"

#define OUT_CAP (1 << 16)

static char bin[4096];
static char out_buf[OUT_CAP], err_buf[OUT_CAP];
static char tmpdir[256];

static void slurp(const char *path, char *buf) {
  buf[0] = '\0';
  FILE *f = fopen(path, "r");
  if (!f) return;
  size_t n = fread(buf, 1, OUT_CAP - 1, f);
  buf[n] = '\0';
  fclose(f);
}

/* Runs `bf16fp32 CMD ARGS...` (args NULL-terminated), stdout and stderr into out_buf / err_buf.
 * Returns the exit status, or -1 when it did not exit normally. */
static int run_cli(const char *cmd, const char *const *args) {
  const char *argv[64];
  int argc = 0;
  argv[argc++] = bin;
  argv[argc++] = cmd;
  for (const char *const *a = args; *a && argc < 62; a++) argv[argc++] = *a;
  argv[argc] = NULL;
  char out_path[512], err_path[512];
  snprintf(out_path, sizeof out_path, "%s/stdout", tmpdir);
  snprintf(err_path, sizeof err_path, "%s/stderr", tmpdir);
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    int fo = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int fe = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fo < 0 || fe < 0) _exit(126);
    dup2(fo, 1);
    dup2(fe, 2);
    alarm(300); /* a hung run fails the test instead of blocking it */
    execv(bin, (char *const *)argv);
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  slurp(out_path, out_buf);
  slurp(err_path, err_buf);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The argument list's end is added here: a NULL passed through `...` is not a pointer everywhere. */
#define run_bench(...) run_cli("bench", (const char *const[]){__VA_ARGS__, NULL})
#define run_tune(...) run_cli("tune", (const char *const[]){__VA_ARGS__, NULL})

#define EXPECT_IN(buf, text)                                                              \
  do {                                                                                    \
    CHECK(strstr((buf), (text)) != NULL);                                                 \
    if (!strstr((buf), (text))) fprintf(stderr, "  expected \"%s\" in:\n%s\n", (text), (buf)); \
  } while (0)

/* A sanitizer build aborts on an allocation larger than it supports unless told to fail it, as
 * malloc does: the runs after this one see the allocation fail. */
static void let_huge_allocations_fail(void) {
  static const char *const vars[] = {"ASAN_OPTIONS", "TSAN_OPTIONS"};
  for (int i = 0; i < 2; i++) {
    const char *old = getenv(vars[i]);
    char value[1024];
    snprintf(value, sizeof value, "%s%sallocator_may_return_null=1", old ? old : "",
             old && *old ? ":" : "");
    setenv(vars[i], value, 1);
  }
}

/* Makes a directory under tmpdir whose path is longer than 1023 bytes (five levels of 200-byte
 * names, each within NAME_MAX) and writes its path to dir. */
static void make_deep_dir(char *dir, size_t len) {
  snprintf(dir, len, "%s", tmpdir);
  for (int i = 0; i < 5; i++) {
    size_t used = strlen(dir);
    snprintf(dir + used, len - used, "/%0200d", i);
    if (mkdir(dir, 0700) != 0) perror(dir);
  }
}

/* The fields of one CSV line: commas outside double quotes, plus one (a quoted field may hold
 * commas, as a failed backend's message does). */
static int csv_fields(const char *line) {
  int fields = 1, quoted = 0;
  for (const char *p = line; *p && *p != '\n'; p++) {
    if (*p == '"') quoted = !quoted;
    else if (*p == ',' && !quoted) fields++;
  }
  return fields;
}

/* Field i (from 0) of one CSV line, unquoted fields only, into buf ("" when empty or quoted). */
static const char *csv_text(const char *line, int i, char *buf, size_t len) {
  int field = 0, quoted = 0;
  size_t n = 0;
  for (const char *p = line; *p && *p != '\n'; p++) {
    if (*p == '"') quoted = !quoted;
    if (*p == ',' && !quoted) {
      if (field++ == i) break;
    } else if (field == i && !quoted && *p != '"' && n + 1 < len) {
      buf[n++] = *p;
    }
  }
  buf[n] = '\0';
  return buf;
}

/* A bench table's cell (N, K, M): the least time of its rows and the time of the row marked
 * "<- fastest" (< 0: none yet). */
typedef struct table_cell {
  long long n, k, m;
  double least, marked;
} table_cell;

static void cell_done(const table_cell *c) {
  if (c->least < 0) return;
  EXPECT(c->marked >= 0 && c->marked <= c->least, "N=%lld K=%lld M=%lld: marked %.2f, least %.2f",
         c->n, c->k, c->m, c->marked, c->least);
}

/* In bench's table the row marked "<- fastest" has its cell's least time; in the summary each
 * geometric mean lies within its min and max (printed to 3 decimals), and the min is a ratio. */
static void check_table(const char *out) {
  table_cell c = {-1, -1, -1, -1, -1};
  for (const char *p = out; *p;) {
    const char *nl = strchr(p, '\n');
    const int len = nl ? (int)(nl - p) : (int)strlen(p);
    char line[512], backend[64], us[32];
    snprintf(line, sizeof line, "%.*s", len, p);
    p += len + (nl != NULL);
    long long n, k, m;
    double mean, lo, hi;
    const char *fmt = line[0] == ' ' ? " %lld %lld %lld %63s %31s" : "%*s %lld %lld %lld %63s %31s";
    if (sscanf(line, fmt, &n, &k, &m, backend, us) == 5) {
      if (n != c.n || k != c.k || m != c.m) {
        cell_done(&c);
        c = (table_cell){n, k, m, -1, -1};
      }
      if (strcmp(us, "-") == 0) continue;
      const double t = atof(us);
      if (c.least < 0 || t < c.least) c.least = t;
      if (strstr(line, "<- fastest")) c.marked = t;
    } else if (sscanf(line, " %*s %lf (min %lf, max %lf", &mean, &lo, &hi) == 3) {
      EXPECT(lo > 0 && lo <= mean + 0.0015 && mean <= hi + 0.0015, "summary: %s", line);
    }
  }
  cell_done(&c);
}

/* The start of a check or select row for (name, N, K, M), as they print it. */
static const char *table_row(const char *name, int n, int k, int m) {
  static char buf[128];
  snprintf(buf, sizeof buf, "\n%-18s %5d %5d %5d ", name, n, k, m);
  return buf;
}

/* Word i (from 0) of one line, into word ("" past the line's last). */
static const char *line_word(const char *line, int i, char *word, size_t len) {
  word[0] = '\0';
  for (int w = 0; *line && *line != '\n'; w++) {
    line += strspn(line, " ");
    const size_t n = strcspn(line, " \n");
    if (w == i) {
      snprintf(word, len, "%.*s", (int)n, line);
      break;
    }
    line += n;
  }
  return word;
}

/* check's cell in column col of the row table_row gave ("" when either is missing): its header
 * and rows have one word a column. */
static const char *check_cell(const char *out, const char *row, const char *col, char *cell, size_t len) {
  const char *header = strstr(out, "\nshape "), *line = strstr(out, row);
  char word[64];
  cell[0] = '\0';
  if (!header || !line) return cell;
  for (int i = 0; *line_word(header + 1, i, word, sizeof word); i++)
    if (strcmp(word, col) == 0) return line_word(line + 1, i, cell, len);
  return cell;
}

/* The oneDNN baseline's rows in a `bench --cpu` CSV, where the program was built with oneDNN
 * (bench_out, its table, says which matmul runs): one a cell, each "ok" with a time (oneDNN has
 * an f32 matmul on any CPU) and its output's worst error within the bound (checked like the
 * candidates'), noted "f32" exactly when the header says the f32 one runs; where
 * cpu-simd runs an AVX-512 BF16 or AMX kernel (bf16_cpu) oneDNN has a bf16 matmul, and that runs. */
static void check_onednn_rows(const char *csv_path, const char *bench_out, int bf16_cpu, int cells) {
  if (strstr(bench_out, "not found at build time")) return;
  const int f32 = strstr(bench_out, "f32 matmul, no bf16 one") != NULL;
  EXPECT(f32 || strstr(bench_out, "bf16 matmul with fp32 output"), "oneDNN's matmul not named:\n%s", bench_out);
  if (bf16_cpu) EXPECT(!f32, "the f32 matmul where cpu-simd has a bf16 kernel:\n%s", bench_out);
  FILE *f = fopen(csv_path, "r");
  CHECK(f != NULL);
  if (!f) return;
  char line[2048];
  int rows = 0, ok = 0;
  while (fgets(line, sizeof line, f)) {
    char field[5][64];
    if (strcmp(csv_text(line, 5, field[0], sizeof field[0]), "onednn-baseline") != 0) continue;
    rows++;
    const double us = atof(csv_text(line, 6, field[1], sizeof field[1]));
    csv_text(line, 16, field[3], sizeof field[3]);
    const char *worst = csv_text(line, 15, field[4], sizeof field[4]);
    if (strcmp(csv_text(line, 14, field[2], sizeof field[2]), "ok") == 0 && us > 0 && us < 1e6 &&
        worst[0] && atof(worst) >= 0 && atof(worst) <= 1 && (strncmp(field[3], "(f32 ", 5) == 0) == f32)
      ok++;
    else
      fprintf(stderr, "  oneDNN row: %s", line);
  }
  fclose(f);
  EXPECT(rows == cells && ok == cells, "oneDNN rows: %d, %d of them ok, of %d cells", rows, ok, cells);
}

/* tune's command line: --help, unknown and incomplete options, empty values, the option rules
 * of --decode-step and --from, and its numbers at their bounds, all before anything is
 * measured; a context it cannot create, no GPU, no tuning file, a suite it cannot use. */
static void test_tune_options(const char *ok, const char *missing) {
  char tsv[600], emitted[600];
  snprintf(tsv, sizeof tsv, "%s/options.tsv", tmpdir);
  snprintf(emitted, sizeof emitted, "%s/options.c", tmpdir);
  /* --help: the usage on stdout, exit 0, nothing measured */
  CHECK(run_tune("--help") == 0);
  EXPECT_IN(out_buf, "usage: bf16fp32 tune");
  CHECK(strstr(out_buf, "weight shapes x") == NULL && err_buf[0] == '\0');
  CHECK(run_tune("--no-such-option") == 2);
  EXPECT_IN(err_buf, "unknown or incomplete option '--no-such-option'");
  /* an option without its value is refused, not taken for none (the default file) */
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--replays", "1", "--out") == 2);
  EXPECT_IN(err_buf, "incomplete option '--out'");
  static const char *const text_options[] = {"--suite", "--m", "--only", "--out", "--emit-c", "--from",
                                             "--decode-step"};
  for (size_t i = 0; i < sizeof text_options / sizeof *text_options; i++) {
    char want[64];
    snprintf(want, sizeof want, "%s needs a value", text_options[i]);
    CHECK(run_tune("--cpu", text_options[i], "") == 2);
    EXPECT_IN(err_buf, want);
  }
  /* --decode-step: a known model, and the GPU's tuning alone */
  CHECK(run_tune("--decode-step", "dsv4-mega") == 2);
  EXPECT_IN(err_buf, "unknown model 'dsv4-mega'");
  /* (a NULL value ends the argument list there: an option without one) */
  static const char *const not_with_step[][2] = {{"--cpu", NULL}, {"--only", "flash."}, {"--from", "x.tsv"}};
  for (int i = 0; i < 3; i++) {
    char want[64];
    snprintf(want, sizeof want, "not with %s", not_with_step[i][0]);
    CHECK(run_tune("--decode-step", "dsv4-flash", "--emit-c", emitted, not_with_step[i][0], not_with_step[i][1]) == 2);
    EXPECT_IN(err_buf, want);
  }
  /* the largest filler is 2^20 KB */
  CHECK(run_tune("--decode-step", "dsv4-flash", "--filler-kb", "1048577") == 2);
  EXPECT_IN(err_buf, "--filler-kb '1048577': expected an integer from 1 to 1048576");
  /* --from measures nothing: every measuring option is refused with it */
  static const char *const measuring[][2] = {{"--suite", "s.txt"}, {"--m", "1"}, {"--only", "tiny"},
                                             {"--out", "o.tsv"}, {"--cpu", NULL}, {"--device", "0"},
                                             {"--replays", "3"}};
  for (size_t i = 0; i < sizeof measuring / sizeof *measuring; i++) {
    char want[64];
    snprintf(want, sizeof want, "measures nothing: not with %s", measuring[i][0]);
    CHECK(run_tune("--from", tsv, "--emit-c", emitted, measuring[i][0], measuring[i][1]) == 2);
    EXPECT_IN(err_buf, want);
  }
  /* numbers at their bounds are taken: the run goes on to the suite, which is missing */
  static const char *const tune_good_numbers[][2] = {
      {"--device", "0"}, {"--device", "1023"}, {"--replays", "1"}, {"--replays", "1000"}};
  for (size_t i = 0; i < sizeof tune_good_numbers / sizeof *tune_good_numbers; i++) {
    CHECK(run_tune("--cpu", "--suite", missing, tune_good_numbers[i][0], tune_good_numbers[i][1]) == 2);
    CHECK(strstr(err_buf, "expected an integer") == NULL);
    EXPECT_IN(err_buf, missing);
  }
  /* --device is the context's: no machine has a device 1023 (even under --cpu) */
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--replays", "1", "--device", "1023", "--out", tsv) == 1);
  EXPECT_IN(err_buf, "cannot create a context");
  EXPECT_IN(err_buf, "device 1023");
  CHECK(access(tsv, F_OK) != 0);
  /* without --cpu it tunes the GPU: none here is an error */
  if (!sup_gpu_available()) {
    CHECK(run_tune("--suite", ok, "--m", "1", "--replays", "1", "--out", tsv) == 1);
    EXPECT_IN(err_buf, "no CUDA device here");
    CHECK(access(tsv, F_OK) != 0);
  }
  /* no --out and no tuning file for contexts (BF16FP32_TUNE_FILE empty): nowhere to write */
  const char *old = getenv("BF16FP32_TUNE_FILE");
  char saved[1024];
  snprintf(saved, sizeof saved, "%s", old ? old : "");
  setenv("BF16FP32_TUNE_FILE", "", 1);
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--replays", "1") == 2);
  EXPECT_IN(err_buf, "no tuning file");
  if (old) setenv("BF16FP32_TUNE_FILE", saved, 1);
  else unsetenv("BF16FP32_TUNE_FILE");
  /* a suite it cannot use: no entry of --only's prefix, no M line without --m, a bad --m */
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--only", "nosuch", "--out", tsv) == 2);
  EXPECT_IN(err_buf, "no entry of");
  EXPECT_IN(err_buf, "starts with 'nosuch'");
  char no_m[512];
  snprintf(no_m, sizeof no_m, "%s/no-m.txt", tmpdir);
  sup_write_text(no_m, "tiny.a 64 96 3\n");
  CHECK(run_tune("--cpu", "--suite", no_m, "--out", tsv) == 2);
  EXPECT_IN(err_buf, "has no M line: pass --m");
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1,0", "--out", tsv) == 2);
  EXPECT_IN(err_buf, "--m: ");
  CHECK(access(tsv, F_OK) != 0);
}

/* The entry of (n, k, m) in a tuning file's text: "host\tN\tK\tM\t". */
static const char *host_entry(const char *text, int n, int k, int m) {
  char key[64];
  snprintf(key, sizeof key, "\nhost\t%d\t%d\t%d\t", n, k, m);
  return strstr(text, key);
}

/* What tune --cpu measures and says: each (N, K) once (the names that share it together, shapes
 * sharing N alone apart), each M bucket once (the suite's M line without --m), its progress
 * rows unless --quiet, and how to use a file other than the context's. */
static void test_tune_runs(const char *ok, const char *same_n) {
  char tsv[600], suite_path[600], use[700];
  snprintf(tsv, sizeof tsv, "%s/runs.tsv", tmpdir);
  snprintf(use, sizeof use, "\nto use them: BF16FP32_TUNE_FILE=%s (or", tsv);
  /* shapes sharing N: two, each named alone */
  CHECK(run_tune("--cpu", "--suite", same_n, "--m", "1", "--replays", "1", "--out", tsv) == 0);
  EXPECT_IN(out_buf, "tuning 2 weight shapes x 1 M buckets");
  EXPECT_IN(out_buf, "[  1/2] same.k96 ");
  EXPECT_IN(out_buf, "[  2/2] same.k160 ");
  EXPECT_IN(out_buf, use);
  slurp(tsv, out_buf);
  CHECK(host_entry(out_buf, 64, 96, 1) && host_entry(out_buf, 64, 160, 1));
  /* two names of one shape: one shape, named by both; two M of one bucket: one bucket */
  snprintf(suite_path, sizeof suite_path, "%s/one-shape.txt", tmpdir);
  sup_write_text(suite_path, "one.a 64 96 1\none.b 64 96 2\n");
  CHECK(run_tune("--cpu", "--suite", suite_path, "--m", "17,24", "--replays", "1", "--out", tsv) == 0);
  EXPECT_IN(out_buf, "tuning 1 weight shapes x 1 M buckets");
  EXPECT_IN(out_buf, "[  1/1] one.a,one.b ");
  CHECK(strstr(out_buf, "[  2/") == NULL);
  /* no --m: the suite's M line, every M of it; --quiet: no progress rows */
  remove(tsv);
  CHECK(run_tune("--cpu", "--suite", ok, "--only", "tiny.a", "--replays", "1", "--quiet", "--out", tsv) == 0);
  EXPECT_IN(out_buf, "tuning 1 weight shapes x 2 M buckets");
  CHECK(strstr(out_buf, "[  1/2]") == NULL && strstr(out_buf, "tiny.a") == NULL);
  EXPECT_IN(out_buf, "2 entries merged into");
  slurp(tsv, out_buf);
  CHECK(host_entry(out_buf, 64, 96, 1) && host_entry(out_buf, 64, 96, 3));
}

/* --from FILE --emit-c: the entries of every section the file names a machine for, device and
 * host, the entries of a section without one left out; a file it cannot read or a destination
 * it cannot write is an error (exit 1). */
static void test_emit_from(void) {
  static const char gpu_header[] =
      "# format\t1\n# library\t" BF16FP32_VERSION "\n# gpu.name\tNVIDIA H200\n# gpu.sm_count\t132\n"
      "# gpu.compute_capability\t9.0\n# gpu.cuda_runtime\t13.0\n# gpu.cuda_driver\t13.0\n# gpu.cublas\t13.1.0\n";
  static const char entries[] = "device\t256\t4096\t1\tsmallm\t3.453\tcublas\t6.080\n"
                                "host\t64\t96\t1\tcpu-simd\t0.500\tcpu-ref\t7.000\n";
  char both[600], gpu_only[600], emitted[600], text[2048];
  snprintf(both, sizeof both, "%s/both.tsv", tmpdir);
  snprintf(gpu_only, sizeof gpu_only, "%s/gpu-only.tsv", tmpdir);
  snprintf(emitted, sizeof emitted, "%s/from.c", tmpdir);
  snprintf(text, sizeof text, "%s# cpu.model\tTest CPU\n# cpu.features\tavx2 fma\n# cpu.threads\t4\n%s",
           gpu_header, entries);
  sup_write_text(both, text);
  snprintf(text, sizeof text, "%s%s", gpu_header, entries);
  sup_write_text(gpu_only, text);
  CHECK(run_tune("--from", both, "--emit-c", emitted) == 0);
  EXPECT_IN(out_buf, ": 2 built-in entries from");
  slurp(emitted, out_buf);
  EXPECT_IN(out_buf, "{BF16FP32_DEVICE, 0, 0, 256, 4096, 1, \"smallm\", 3.453, \"cublas\", 6.080},");
  EXPECT_IN(out_buf, "{BF16FP32_HOST, 0, 0, 64, 96, 1, \"cpu-simd\", 0.500, \"cpu-ref\", 7.000},");
  EXPECT_IN(out_buf, ".has_gpu = true,\n            .has_cpu = true,");
  /* the host entry has no CPU named: it could never match a machine */
  CHECK(run_tune("--from", gpu_only, "--emit-c", emitted) == 0);
  EXPECT_IN(out_buf, ": 1 built-in entries from");
  slurp(emitted, out_buf);
  EXPECT_IN(out_buf, "{BF16FP32_DEVICE, 0, 0, 256, 4096, 1, ");
  CHECK(strstr(out_buf, "BF16FP32_HOST") == NULL);
  EXPECT_IN(out_buf, ".has_cpu = false,");
  /* a missing file; a destination under a regular file */
  char missing[600], under_file[700];
  snprintf(missing, sizeof missing, "%s/no-such.tsv", tmpdir);
  CHECK(run_tune("--from", missing, "--emit-c", emitted) == 1);
  EXPECT_IN(err_buf, "no-such.tsv");
  snprintf(under_file, sizeof under_file, "%s/x.c", both);
  CHECK(run_tune("--from", both, "--emit-c", under_file) == 1);
  EXPECT_IN(err_buf, "--emit-c");
  CHECK(access(under_file, F_OK) != 0);
}

int main(void) {
  const char *env = getenv("BF16FP32_CLI");
  if (env && *env) {
    snprintf(bin, sizeof bin, "%s", env);
  } else {
#ifdef BF16FP32_BINARY_DIR
    snprintf(bin, sizeof bin, "%s/bf16fp32", BF16FP32_BINARY_DIR);
#else
    return testing_skip("test-bench-cli", "BF16FP32_BINARY_DIR not defined and BF16FP32_CLI not set");
#endif
  }
  if (access(bin, X_OK) != 0) return testing_skip("test-bench-cli", "the bf16fp32 program is not built");
  if (sup_temp_dir(tmpdir, sizeof tmpdir, "bench-cli")) return 1;
  char ok[512], bad_field[512], bad_m[512], bad_count[512], dup[512], empty[512], csv[512];
  snprintf(ok, sizeof ok, "%s/ok.txt", tmpdir);
  snprintf(bad_field, sizeof bad_field, "%s/bad-field.txt", tmpdir);
  snprintf(bad_m, sizeof bad_m, "%s/bad-m.txt", tmpdir);
  snprintf(bad_count, sizeof bad_count, "%s/bad-count.txt", tmpdir);
  snprintf(dup, sizeof dup, "%s/dup.txt", tmpdir);
  snprintf(empty, sizeof empty, "%s/empty.txt", tmpdir);
  snprintf(csv, sizeof csv, "%s/out.csv", tmpdir);
  sup_write_text(ok, "# tiny suite\ntiny.a  64  96  3   # trailing comment\ntiny.b 32 160 1\nM 1 3\n");
  sup_write_text(bad_field, "# comment\ntiny.a 64 96 3\ntiny.b 32 abc 1\nM 1\n");
  sup_write_text(bad_m, "tiny.a 64 96 3\n\nM 1 0 4\n");
  sup_write_text(bad_count, "tiny.a 64 96\n");
  sup_write_text(dup, "tiny.a 64 96 3\ntiny.a 64 96 3\n");
  sup_write_text(empty, "# nothing\nM 1 2\n");
  char loc[600];

  /* --help: usage on stdout, exit 0. */
  CHECK(run_bench("--help") == 0);
  EXPECT_IN(out_buf, "usage: bf16fp32 bench");
  /* info, check and select answer --help with the program's usage */
  static const char *const plain_cmds[] = {"info", "check", "select"};
  for (int i = 0; i < 3; i++) {
    CHECK(run_cli(plain_cmds[i], (const char *const[]){"--help", NULL}) == 0);
    EXPECT_IN(out_buf, "usage: bf16fp32 COMMAND");
  }
  CHECK(run_cli("check", (const char *const[]){"--no-such-option", NULL}) == 2);
  EXPECT_IN(err_buf, "unknown or incomplete option");
  /* check on the host backends: every cell within the bound, exit 0 (test-dispatcher has it
   * fail on a wrong answer) */
  CHECK(run_cli("check", (const char *const[]){"--cpu", "--suite", ok, "--m", "1,3", NULL}) == 0);
  EXPECT_IN(out_buf, "cpu-ref");
  EXPECT_IN(out_buf, "all within bound: 0 failure(s)");
  /* ... a row for each entry at each M of --m, cpu-ref run (not skipped) on these small shapes,
   * and no device column under --cpu */
  char cell[32];
  EXPECT_IN(out_buf, table_row("tiny.a", 64, 96, 1));
  check_cell(out_buf, table_row("tiny.b", 32, 160, 3), "cpu-ref", cell, sizeof cell);
  EXPECT(cell[0] >= '0' && cell[0] <= '9', "cpu-ref at tiny.b M=3: \"%s\" in\n%s", cell, out_buf);
  CHECK(strstr(out_buf, "auto-dev") == NULL);
  /* ... but skipped above 2e9 multiply-adds a call (2001 x 1000 x 1000), where auto still runs */
  char big[512];
  snprintf(big, sizeof big, "%s/big.txt", tmpdir);
  sup_write_text(big, "big 1000 1000 1\n");
  CHECK(run_cli("check", (const char *const[]){"--cpu", "--suite", big, "--m", "2001", NULL}) == 0);
  check_cell(out_buf, table_row("big", 1000, 1000, 2001), "cpu-ref", cell, sizeof cell);
  EXPECT(strcmp(cell, "skip(slow)") == 0, "cpu-ref at 2001 x 1000 x 1000: \"%s\" in\n%s", cell, out_buf);
  check_cell(out_buf, table_row("big", 1000, 1000, 2001), "auto-host", cell, sizeof cell);
  EXPECT(cell[0] >= '0' && cell[0] <= '9', "auto at 2001 x 1000 x 1000: \"%s\" in\n%s", cell, out_buf);
  /* select: a backend for each entry at each M of --m, on the host under --cpu; without --m, at
   * the default M list */
  CHECK(run_cli("select", (const char *const[]){"--cpu", "--suite", ok, "--m", "1,3", NULL}) == 0);
  EXPECT_IN(out_buf, "select: host calls");
  EXPECT_IN(out_buf, table_row("tiny.a", 64, 96, 1));
  EXPECT_IN(out_buf, table_row("tiny.b", 32, 160, 3));
  CHECK(strstr(out_buf, "(none)") == NULL && strstr(out_buf, table_row("tiny.a", 64, 96, 7)) == NULL);
  CHECK(run_cli("select", (const char *const[]){"--cpu", "--suite", ok, NULL}) == 0);
  static const int default_ms[] = {1, 7, 16, 64, 256};
  for (int i = 0; i < 5; i++) EXPECT_IN(out_buf, table_row("tiny.b", 32, 160, default_ms[i]));
  /* an option without its value is refused (a last --m ran the default list) and so is a bad
   * --m, for check and select alike */
  for (int i = 1; i < 3; i++) {
    CHECK(run_cli(plain_cmds[i], (const char *const[]){"--cpu", "--suite", ok, "--m", NULL}) == 2);
    EXPECT_IN(err_buf, "incomplete option '--m'");
    CHECK(run_cli(plain_cmds[i], (const char *const[]){"--cpu", "--suite", NULL}) == 2);
    EXPECT_IN(err_buf, "incomplete option '--suite'");
    CHECK(run_cli(plain_cmds[i], (const char *const[]){"--cpu", "--suite", ok, "--m", "1,0", NULL}) == 2);
    EXPECT_IN(err_buf, "--m: \"1,0\"");
  }

  /* Unknown backend: names it, lists the known ones, exit 2, before any work. */
  CHECK(run_bench("--cpu", "--suite", ok, "--backends", "cpu-ref,no-such-backend") == 2);
  EXPECT_IN(err_buf, "unknown backend \"no-such-backend\"");
  EXPECT_IN(err_buf, "cpu-ref");

  /* Unreadable suite: names the file. */
  char missing[600];
  snprintf(missing, sizeof missing, "%s/does-not-exist.txt", tmpdir);
  CHECK(run_bench("--cpu", "--suite", missing) == 1);
  EXPECT_IN(err_buf, missing);
  EXPECT_IN(err_buf, "cannot read");

  /* Malformed lines: file:line and what is wrong. */
  CHECK(run_bench("--cpu", "--suite", bad_field) == 1);
  snprintf(loc, sizeof loc, "%s:3:", bad_field);
  EXPECT_IN(err_buf, loc);
  EXPECT_IN(err_buf, "\"abc\"");
  CHECK(run_bench("--cpu", "--suite", bad_m) == 1);
  snprintf(loc, sizeof loc, "%s:3:", bad_m);
  EXPECT_IN(err_buf, loc);
  CHECK(run_bench("--cpu", "--suite", bad_count) == 1);
  snprintf(loc, sizeof loc, "%s:1:", bad_count);
  EXPECT_IN(err_buf, loc);
  CHECK(run_bench("--cpu", "--suite", dup) == 1);
  snprintf(loc, sizeof loc, "%s:2:", dup);
  EXPECT_IN(err_buf, loc);
  CHECK(run_bench("--cpu", "--suite", empty) == 1);
  EXPECT_IN(err_buf, empty);

  /* Bad options: usage errors, exit 2. */
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1,,4") == 2);
  EXPECT_IN(err_buf, "--m");
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "0") == 2);
  CHECK(run_bench("--no-such-option") == 2);
  EXPECT_IN(err_buf, "--no-such-option");
  /* an option's name with more after it is no such option, not the option (--mx 1 ran --m 1) */
  CHECK(run_bench("--cpu", "--suite", ok, "--mx", "1", "--replays", "5") == 2);
  EXPECT_IN(err_buf, "unknown argument \"--mx\"");
  CHECK(run_bench("--cpu", "--suite", missing, "--replays", "100001") == 2); /* refused before the suite is read */
  CHECK(run_bench("--suite") == 2);
  CHECK(run_bench("--threads", "many") == 2);
  /* past what a context takes: a usage error with the library's bound, not a failed context */
  CHECK(run_bench("--threads", "1025") == 2);
  EXPECT_IN(err_buf, "is not in [1, 1024]");
  CHECK(run_bench("--decode-step", "dsv4-mega") == 2);
  EXPECT_IN(err_buf, "dsv4-mega");
  CHECK(run_bench("--batch", "1,4") == 2);
  CHECK(run_bench("--filler-kb", "64") == 2);
  EXPECT_IN(err_buf, "only goes with --decode-step");
  CHECK(run_bench("--decode-step", "dsv4-flash", "--filler-kb", "0") == 2);
  EXPECT_IN(err_buf, "--filler-kb");
  CHECK(run_bench("--decode-step", "dsv4-flash", "--filler-kb", "4k") == 2);
  EXPECT_IN(err_buf, "\"4k\"");
  CHECK(run_bench("--decode-step", "dsv4-flash", "--filler-kb", "64", "--filler-trigger", "late") == 2);
  EXPECT_IN(err_buf, "\"late\"");
  CHECK(run_bench("--decode-step", "dsv4-flash", "--filler-trigger", "entry") == 2);
  EXPECT_IN(err_buf, "only goes with --filler-kb");
  /* The one-shape table's options are refused with a step, not ignored (no CSV written, the
   * GPU used under --cpu). */
  CHECK(run_bench("--decode-step", "dsv4-flash", "--csv", csv) == 2);
  EXPECT_IN(err_buf, "--csv does not go with --decode-step");
  CHECK(run_bench("--cpu", "--decode-step", "dsv4-flash") == 2);
  EXPECT_IN(err_buf, "--cpu does not go");
  CHECK(run_bench("--decode-step", "dsv4-flash", "--m=1") == 2);
  EXPECT_IN(err_buf, "--m does not go");
  CHECK(run_bench("--decode-step", "dsv4-flash", "--cpu-ref-limit", "5") == 2); /* not --cpu's */
  EXPECT_IN(err_buf, "--cpu-ref-limit does not go");
  /* The step tuner takes the same fillers, with the same checks. */
  CHECK(run_tune("--filler-kb", "64") == 2);
  EXPECT_IN(err_buf, "--decode-step");
  CHECK(run_tune("--decode-step", "dsv4-flash", "--filler-kb", "0") == 2);
  EXPECT_IN(err_buf, "--filler-kb");
  CHECK(run_tune("--decode-step", "dsv4-flash", "--filler-kb", "64", "--filler-trigger", "late") == 2);
  EXPECT_IN(err_buf, "'late'");
  CHECK(run_tune("--decode-step", "dsv4-flash", "--filler-trigger", "end") == 2);
  EXPECT_IN(err_buf, "only goes with --filler-kb");
  /* tune's numbers outside their ranges, or not numbers, are refused before anything runs */
  static const char *const tune_bad_numbers[][2] = {
      {"--device", "-1"}, {"--device", "1024"}, {"--device", "0x"},  {"--device", ""},
      {"--replays", "0"}, {"--replays", "1001"}, {"--replays", "5 "}, {"--replays", "99999999999999999999"}};
  for (size_t i = 0; i < sizeof tune_bad_numbers / sizeof *tune_bad_numbers; i++) {
    CHECK(run_tune("--cpu", "--suite", missing, tune_bad_numbers[i][0], tune_bad_numbers[i][1]) == 2);
    EXPECT_IN(err_buf, "expected an integer from");
    EXPECT_IN(err_buf, tune_bad_numbers[i][0]);
  }
  CHECK(run_bench("--cpu", "--suite", missing, "--replays", "0") == 2);
  EXPECT_IN(err_buf, "--replays: \"0\" is not in [1, 100000]");
  CHECK(run_bench("--cpu", "--suite", ok, "--shapes", "tiny.zzz") == 2);
  EXPECT_IN(err_buf, "tiny.zzz");
  /* lists of commas alone: no shape was timed (exit 0), or the baseline alone */
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "5", "--shapes", ",") == 2);
  EXPECT_IN(err_buf, "--shapes needs suite entry names");
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "5", "--backends", ",,") == 2);
  EXPECT_IN(err_buf, "--backends needs a comma-separated list");
  CHECK(run_bench("--cpu", "--suite", ok, "--csv", "/nonexistent-dir/x.csv") == 1);
  EXPECT_IN(err_buf, "/nonexistent-dir/x.csv");

  /* A tiny real run: every CPU backend, auto and the baseline row for each (N, K, M). */
  CHECK(run_cli("info", (const char *const[]){NULL}) == 0);
  const int bf16_cpu = strstr(out_buf, "avx512bf16 kernel") || strstr(out_buf, "amx kernel");
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1,3", "--replays", "5", "--csv", csv) == 0);
  check_onednn_rows(csv, out_buf, bf16_cpu, 4);
  EXPECT_IN(out_buf, "vs-oneDNN");
  EXPECT_IN(out_buf, "tiny.a");
  EXPECT_IN(out_buf, "auto");
  EXPECT_IN(out_buf, "cpu-ref");
  check_table(out_buf);
  FILE *f = fopen(csv, "r");
  CHECK(f != NULL);
  if (f) {
    char line[2048];
    int rows = 0, auto_ok = 0, ref_ok = 0, header = 0, timed = 0;
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "mode,shape,n,k,m,backend,", 25) == 0) {
        header++;
        continue;
      }
      rows++;
      CHECK(csv_fields(line) == 20);
      /* a timed library row (not the baseline's, which times itself): its median within its
       * fastest and slowest rounds */
      char field[4][64];
      csv_text(line, 5, field[0], sizeof field[0]);
      const double us = atof(csv_text(line, 6, field[1], sizeof field[1]));
      const double lo = atof(csv_text(line, 18, field[2], sizeof field[2]));
      const double hi = atof(csv_text(line, 19, field[3], sizeof field[3]));
      if (strcmp(field[0], "onednn-baseline") != 0 && field[1][0]) {
        timed++;
        CHECK(lo > 0 && lo <= us && us <= hi);
      }
      /* a timed row's ratio to the baseline (baseline us / us) and its GFLOP/s (2 M N K / us) */
      char num[4][64];
      const double flops = 2.0 * atof(csv_text(line, 2, num[0], sizeof num[0])) *
                           atof(csv_text(line, 3, num[1], sizeof num[1])) *
                           atof(csv_text(line, 4, num[2], sizeof num[2]));
      const double base = atof(csv_text(line, 8, num[3], sizeof num[3]));
      const double vs = atof(csv_text(line, 9, num[0], sizeof num[0]));
      const double gflops = atof(csv_text(line, 12, num[1], sizeof num[1]));
      if (us > 0)
        EXPECT(fabs(gflops - flops / (us * 1e3)) <= 1e-3 * gflops + 2e-3, "GFLOP/s: %s", line);
      if (us > 0 && base > 0)
        EXPECT(fabs(vs - base / us) <= 1e-3 * vs + 2e-4, "ratio: %s", line);
      if (strstr(line, ",auto,") && strstr(line, ",ok,")) auto_ok++;
      if (strstr(line, ",cpu-ref,") && strstr(line, ",ok,")) ref_ok++;
    }
    fclose(f);
    CHECK(header == 1);
    CHECK(rows >= 2 * 2 * 2); /* 2 shapes x 2 M x (cpu-ref, auto at least) */
    CHECK(auto_ok == 4);
    CHECK(ref_ok == 4);
    CHECK(timed >= 8); /* cpu-ref and auto at least, each with its range */
  }

  /* one timed call: the baseline's median is that call's time */
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "1", "--backends", "auto", "--shapes",
                  "tiny.a", "--csv", csv) == 0);
  check_onednn_rows(csv, out_buf, bf16_cpu, 1);
  const int has_onednn = strstr(out_buf, "not found at build time") == NULL;
  /* ... and auto's median, fastest and slowest round are that call's */
  char *text = sup_read_text(csv);
  const char *auto_row = text ? strstr(text, ",auto,") : NULL;
  char times[3][64];
  if (auto_row) {
    while (auto_row > text && auto_row[-1] != '\n') auto_row--;
    csv_text(auto_row, 6, times[0], sizeof times[0]);
  }
  EXPECT(auto_row && times[0][0] && strcmp(times[0], csv_text(auto_row, 18, times[1], 64)) == 0 &&
             strcmp(times[0], csv_text(auto_row, 19, times[2], 64)) == 0,
         "one timed call:\n%s", text ? text : "(no file)");
  free(text);
  /* options as --name=value; auto's row names its choice; --backends auto times no other
   * backend; the last cell's progress line */
  CHECK(run_bench("--cpu", "--suite", ok, "--m=1", "--replays=1", "--backends=auto",
                  "--shapes=tiny.a") == 0);
  EXPECT_IN(out_buf, "(-> ");
  CHECK(strstr(out_buf, " cpu-ref ") == NULL && strstr(out_buf, " cpu-simd ") == NULL);
  EXPECT_IN(err_buf, "[bench] 1/1 done");
  /* without --replays and --m: 7 rounds, and on the CPU the M values 1, 16, 256 (not the
   * suite's) */
  CHECK(run_bench("--cpu", "--suite", ok, "--backends", "auto", "--shapes", "tiny.a") == 0);
  EXPECT_IN(out_buf, "median of 7 interleaved runs");
  EXPECT_IN(out_buf, "; M: 1 16 256\n");
  /* --backends cpu-ref: no auto row; oneDNN, far faster than the fp64 oracle (100x on the
   * development machine; 5 rounds, as one oneDNN call took 8 ms beside another test), is the
   * fastest, counted in the summary, which lists cpu-ref's ratio and not the baseline's */
  char wide[512];
  snprintf(wide, sizeof wide, "%s/wide.txt", tmpdir);
  sup_write_text(wide, "wide 256 1024 1\n");
  CHECK(run_bench("--cpu", "--suite", wide, "--m", "64", "--replays", "5", "--backends",
                  "cpu-ref") == 0);
  CHECK(strstr(out_buf, " auto ") == NULL);
  if (has_onednn) {
    EXPECT_IN(out_buf, "  onednn-baseline  fastest in 1 cells\n");
    CHECK(strstr(out_buf, "(no cell") == NULL);
  }
  /* the baseline's row alone (a GPU backend named in CPU mode) is not marked fastest */
  const int lone = run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "1", "--backends",
                             "cublas", "--shapes", "tiny.a");
  EXPECT(has_onednn ? lone == 0 && !strstr(out_buf, "<- fastest") : lone == 1, "exit %d:\n%s", lone,
         out_buf);
  /* names holding a comma or a quote are quoted in the CSV, the quote doubled */
  char quoted[512];
  snprintf(quoted, sizeof quoted, "%s/quoted.txt", tmpdir);
  sup_write_text(quoted, "c,d 64 96 1\nq\"e 32 160 1\n");
  CHECK(run_bench("--cpu", "--suite", quoted, "--m", "1", "--replays", "1", "--backends", "auto",
                  "--csv", csv) == 0);
  text = sup_read_text(csv);
  int fields_ok = text != NULL;
  for (const char *l = text; fields_ok && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    fields_ok = csv_fields(l) == 20;
  EXPECT(fields_ok && strstr(text, ",\"c,d\",") && strstr(text, ",\"q\"\"e\","), "%s",
         text ? text : "(no file)");
  free(text);
  /* numbers at their bounds: 100000 replays taken (the suite is then missing), a limit past
   * int64 refused; a --backends list of 512 characters is too long (not cut to 511) */
  CHECK(run_bench("--cpu", "--suite", missing, "--replays", "100000") == 1);
  CHECK(run_bench("--cpu", "--suite", missing, "--cpu-ref-limit", "99999999999999999999") == 2);
  EXPECT_IN(err_buf, "--cpu-ref-limit");
  char long_list[520];
  memset(long_list, ',', 507); /* 507 empty names, then one */
  strcpy(long_list + 507, "auto,");
  CHECK(strlen(long_list) == 512);
  CHECK(run_bench("--cpu", "--suite", ok, "--backends", long_list) == 2);
  EXPECT_IN(err_buf, "--backends: list too long");
  /* --shapes with a trailing '*' takes the entries of that prefix */
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "5", "--backends", "auto", "--shapes",
                  "tiny.b*") == 0);
  EXPECT_IN(out_buf, "tiny.b");
  CHECK(strstr(out_buf, "tiny.a") == NULL);
  /* entries sharing N (or K) alone are two shapes, not one */
  char same_n[512];
  snprintf(same_n, sizeof same_n, "%s/same-n.txt", tmpdir);
  sup_write_text(same_n, "same.k96 64 96 1\nsame.k160 64 160 1\n");
  CHECK(run_bench("--cpu", "--suite", same_n, "--m", "1", "--replays", "5", "--backends", "auto") == 0);
  EXPECT_IN(out_buf, "same.k160 ");
  CHECK(strstr(out_buf, "same.k96/") == NULL);
  /* --cpu-ref-limit N times cpu-ref up to M*N*K <= N: 1 x 64 x 96 at 6144 */
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "5", "--backends", "cpu-ref", "--shapes",
                  "tiny.a", "--cpu-ref-limit", "6144") == 0);
  CHECK(strstr(out_buf, "skipped") == NULL);
  /* cpu-ref beyond its size limit is shown as skipped, not timed. */
  CHECK(run_bench("--cpu", "--suite", ok, "--m", "1", "--replays", "5", "--backends",
                  "cpu-ref,auto", "--cpu-ref-limit", "100") == 0);
  EXPECT_IN(out_buf, "skipped (too slow");

  /* A shape whose operands cannot be allocated: the measure fails as a whole, and the rows
   * say so (they said "ok", with no time and no reason). */
  char huge[512];
  snprintf(huge, sizeof huge, "%s/huge.txt", tmpdir);
  sup_write_text(huge, "huge 2147483647 2147483647 1\n");
  let_huge_allocations_fail();
  CHECK(run_bench("--cpu", "--suite", huge, "--m", "1", "--replays", "5", "--backends", "auto") == 1);
  EXPECT_IN(out_buf, "OUT_OF_MEMORY");
  CHECK(strstr(out_buf, "  ok") == NULL);
  /* The same through tune: the host measure left its candidates at OK, listed as "cpu-simd OK"
   * under "no valid time". */
  char huge_tsv[600];
  snprintf(huge_tsv, sizeof huge_tsv, "%s/huge.tsv", tmpdir);
  CHECK(run_tune("--cpu", "--suite", huge, "--m", "1", "--replays", "1", "--out", huge_tsv) == 1);
  EXPECT_IN(out_buf, "OUT_OF_MEMORY");
  CHECK(strstr(out_buf, " OK\n") == NULL);
  CHECK(access(huge_tsv, F_OK) != 0); /* nothing measured: no file written */
  /* A shape too big for memory is passed over: the tune goes on to the next one and keeps it,
   * and the candidates timed there are not listed OK at the next shape too big. */
  sup_write_text(huge, "huge.a 2147483647 2147483647 1\ntiny.a 64 96 1\n"
                      "huge.b 2147483646 2147483647 1\n");
  CHECK(run_tune("--cpu", "--suite", huge, "--m", "1", "--replays", "1", "--out", huge_tsv) == 0);
  CHECK(strstr(out_buf, " OK\n") == NULL);
  slurp(huge_tsv, out_buf);
  CHECK(host_entry(out_buf, 64, 96, 1) != NULL);
  sup_write_text(huge, "huge 2147483647 2147483647 1\n");
  /* ... and through check: a failure, exit 1 */
  CHECK(run_cli("check", (const char *const[]){"--cpu", "--suite", huge, "--m", "1", NULL}) == 1);
  EXPECT_IN(err_buf, "out of memory for huge M=1");
  EXPECT_IN(out_buf, "FAILED: 1 failure(s)");

  /* Paths longer than 1023 bytes are used whole: tune wrote its file under the name cut there
   * ("tun" for "tune.tsv") and said it had merged into it. */
  char deep[1536], deep_file[1600];
  make_deep_dir(deep, sizeof deep);
  snprintf(deep_file, sizeof deep_file, "%s/tune.tsv", deep);
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--only", "tiny.a", "--replays", "1", "--quiet",
                 "--out", deep_file) == 0);
  CHECK(access(deep_file, R_OK) == 0);
  /* --from converts a tuning file and measures nothing: the measuring options are refused with
   * it, not ignored (--cpu emitted the GPU entries too, --out wrote nothing) */
  char emitted[600];
  snprintf(emitted, sizeof emitted, "%s/builtin.c", tmpdir);
  CHECK(run_tune("--from", deep_file, "--emit-c", emitted) == 0);
  CHECK(run_tune("--from", deep_file, "--emit-c", emitted, "--cpu") == 2);
  EXPECT_IN(err_buf, "not with --cpu");
  CHECK(run_tune("--out", emitted, "--from", deep_file, "--emit-c", emitted) == 2);
  EXPECT_IN(err_buf, "not with --out");
  /* --emit-c onto the tuning file itself replaced the table with C source, exit 0 */
  CHECK(run_tune("--from", deep_file, "--emit-c", deep_file) == 2);
  EXPECT_IN(err_buf, "would be replaced by C source");
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--only", "tiny.a", "--replays", "1", "--quiet",
                 "--out", deep_file, "--emit-c", deep_file) == 2);
  CHECK(run_tune("--from", deep_file, "--emit-c", emitted) == 0); /* still a tuning file */
  /* ... refused before measuring: a new file named twice is not created by the run */
  char fresh[1700];
  snprintf(fresh, sizeof fresh, "%s/fresh.tsv", deep);
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--only", "tiny.a", "--replays", "1", "--quiet",
                 "--out", fresh, "--emit-c", fresh) == 2);
  CHECK(access(fresh, F_OK) != 0);
  /* ... and so is one named two ways (it was tuned, then replaced by C source) */
  char fresh_again[1800];
  snprintf(fresh_again, sizeof fresh_again, "%s/./fresh.tsv", deep);
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--only", "tiny.a", "--replays", "1", "--quiet",
                 "--out", fresh, "--emit-c", fresh_again) == 2);
  EXPECT_IN(err_buf, "would be replaced by C source");
  CHECK(access(fresh, F_OK) != 0);
  /* tune --cpu merges into a file that holds another machine's GPU section and keeps it; its
   * --emit-c writes the CPU entries alone (the GPU ones are not this run's) */
  char mixed[600];
  snprintf(mixed, sizeof mixed, "%s/mixed.tsv", tmpdir);
  sup_write_text(mixed, "# format\t1\n# library\t" BF16FP32_VERSION "\n# gpu.name\tNVIDIA H200\n"
                        "# gpu.sm_count\t132\n# gpu.compute_capability\t9.0\n# gpu.cuda_runtime\t13.0\n"
                        "# gpu.cuda_driver\t13.0\n# gpu.cublas\t13.1.0\n"
                        "device\t256\t4096\t1\tsmallm\t3.453\tcublas\t6.080\n");
  CHECK(run_tune("--cpu", "--suite", ok, "--m", "1", "--only", "tiny.a", "--replays", "1", "--quiet",
                 "--out", mixed, "--emit-c", emitted) == 0);
  slurp(mixed, out_buf);
  EXPECT_IN(out_buf, "device\t256\t4096\t1\tsmallm\t3.453\tcublas\t6.080\n");
  EXPECT_IN(out_buf, "\nhost\t64\t96\t1\t");
  slurp(emitted, out_buf);
  EXPECT_IN(out_buf, "{BF16FP32_HOST, 0, 0, 64, 96, 1, ");
  EXPECT_IN(out_buf, ".has_gpu = false");
  CHECK(strstr(out_buf, "BF16FP32_DEVICE") == NULL && strstr(out_buf, "H200") == NULL);
  /* --from converts into --emit-c's file alone */
  CHECK(run_tune("--from", deep_file) == 2);
  EXPECT_IN(err_buf, "--from needs --emit-c");
  /* an empty --out was taken for none: "BF16FP32_TUNE_FILE is empty or HOME unset" */
  CHECK(run_tune("--cpu", "--out", "") == 2);
  EXPECT_IN(err_buf, "--out needs a value");
  test_tune_options(ok, missing);
  test_tune_runs(ok, same_n);
  test_emit_from();
  /* bench read its suite from the cut name */
  snprintf(deep_file, sizeof deep_file, "%s/suite.txt", deep);
  sup_write_text(deep_file, "tiny.a 64 96 3\n");
  CHECK(run_bench("--cpu", "--suite", deep_file, "--m", "1", "--replays", "5", "--backends", "auto") == 0);
  EXPECT_IN(out_buf, "tiny.a");
  /* a malformed line of such a file: the message kept the path and lost the line and reason;
   * check, select and tune exit 2 on it, bench 1 */
  snprintf(deep_file, sizeof deep_file, "%s/bad.txt", deep);
  sup_write_text(deep_file, "tiny.a 64 abc 3\n");
  static const char *const suite_cmds[] = {"check", "select", "tune", "bench"};
  static const int suite_codes[] = {2, 2, 2, 1};
  for (int i = 0; i < 4; i++) {
    const int rc = run_cli(suite_cmds[i], (const char *const[]){"--cpu", "--suite", deep_file, NULL});
    EXPECT(rc == suite_codes[i], "%s on a malformed suite: exit %d", suite_cmds[i], rc);
    EXPECT_IN(err_buf, "bad.txt:1: K \"abc\" is not an integer");
  }

  /* A decode step of two GEMMs (one of K not a multiple of 64) with a filler before each call,
   * plainly and under PDL with each filler trigger: every output checked, the fillers timed. */
  if (sup_gpu_available()) {
    char step[512];
    snprintf(step, sizeof step, "%s/step.txt", tmpdir);
    sup_write_text(step, "flash.a 256 4096 2\nflash.b 512 1000 1\nM 1\n");
    const char *trigger[] = {"end", "end", "entry", "none"};
    for (int t = 0; t < 4; t++) {
      if (t) setenv("BF16FP32_PDL", "1", 1);
      CHECK(run_bench("--decode-step", "dsv4-flash", "--suite", step, "--batch", "1,3",
                      "--filler-kb", "256", "--filler-trigger", trigger[t]) == 0);
      unsetenv("BF16FP32_PDL");
      EXPECT_IN(out_buf, "fillers us");
      EXPECT_IN(out_buf, "flash.a=");
      CHECK(strstr(out_buf, "WRONG") == NULL && strstr(out_buf, "failed") == NULL);
    }
  }

  sup_remove_tree(tmpdir);
  return testing_summary("test-bench-cli");
}
