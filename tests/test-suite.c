/* Shape suite files (tools/suite.c, built in here): what a loaded suite holds, each malformed
 * line refused with its file:line and reason, the limits at and one past their ends, the
 * comma-separated integer lists of --m, the entry lookup and prefix filter, the default path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support.h"
#include "testing.h"

/* The default path's candidates relative to a directory of the test's own (test_default_path). */
#undef BF16FP32_SOURCE_DIR
#define BF16FP32_SOURCE_DIR "src"
#include "../tools/suite.c"

static char dir[512];
static char err[SUITE_ERR_LEN];
static suite s;

/* Writes text to dir/bad.txt and loads it into s; suite_load's result, the reason in err. */
static int load_text(const char *text) {
  char path[600];
  snprintf(path, sizeof path, "%s/bad.txt", dir);
  sup_write_text(path, text);
  err[0] = '\0';
  return suite_load(path, &s, err, sizeof err);
}

/* text is refused with "bad.txt:LINE: " and reason in the message */
static void expect_refused(const char *what, const char *text, int line, const char *reason) {
  char where[64];
  snprintf(where, sizeof where, "bad.txt:%d: ", line);
  int rc = load_text(text);
  EXPECT(rc == -1 && strstr(err, where) && strstr(err, reason), "%s: rc %d, \"%s\", expected \"%s...%s\"",
         what, rc, err, where, reason);
}

/* `lines` entries "eI 64 96 1", then, where first is given, a line of first and the values 1 to
 * `values`; the caller frees it */
static char *repeat_lines(int lines, const char *first, int values) {
  char *text = testing_alloc((size_t)lines * 64 + (size_t)values * 8 + 64);
  size_t used = 0;
  for (int i = 0; i < lines; i++) used += (size_t)sprintf(text + used, "e%d 64 96 1\n", i);
  if (first) {
    used += (size_t)sprintf(text + used, "%s", first);
    for (int i = 0; i < values; i++) used += (size_t)sprintf(text + used, " %d", i + 1);
    sprintf(text + used, "\n");
  }
  return text;
}

/* Entry i of s has these fields and came from this line. */
static void expect_entry(int i, const char *name, int64_t n, int64_t k, int calls, int line) {
  const suite_entry *e = &s.entries[i];
  EXPECT(strcmp(e->name, name) == 0 && e->n == n && e->k == k && e->calls == calls && e->line == line,
         "entry %d: %s %lld %lld %d at line %d, expected %s %lld %lld %d at line %d", i, e->name,
         (long long)e->n, (long long)e->k, e->calls, e->line, name, (long long)n, (long long)k, calls, line);
}

/* The fields of each entry in file order, with the line it came from; the M list in file order;
 * comments, blank lines and any whitespace between fields; calls 0 and N at 2^31 - 1 taken; a
 * name that starts with M is a name, not the "M" line. */
static void test_loaded(void) {
  int rc = load_text("# header\n\n  flash.a  256 4096 44  # comment\nflash.b\t2147483647 1 0\n \t\n"
                     "M 1 16 256 # sizes\nMx.c 7 9 1");
  EXPECT(rc == 0 && s.count == 3, "rc %d count %d: %s", rc, s.count, err);
  if (rc != 0 || s.count != 3) return;
  expect_entry(0, "flash.a", 256, 4096, 44, 3);
  expect_entry(1, "flash.b", 2147483647, 1, 0, 4);
  expect_entry(2, "Mx.c", 7, 9, 1, 7);
  EXPECT(s.m_count == 3 && s.m[0] == 1 && s.m[1] == 16 && s.m[2] == 256, "M: %d values, %lld %lld %lld",
         s.m_count, (long long)s.m[0], (long long)s.m[1], (long long)s.m[2]);
  /* without an "M" line the list is empty */
  rc = load_text("a 64 96 1\n");
  EXPECT(rc == 0 && s.count == 1 && s.m_count == 0, "rc %d count %d m_count %d", rc, s.count, s.m_count);
}

/* Each kind of malformed line: the file:line and what is wrong. */
static void test_refused(void) {
  static const struct {
    const char *what, *text;
    int line;
    const char *reason;
  } cases[] = {
      {"N 0", "a 64 96 1\nb 0 96 1\n", 2, "N \"0\" is not an integer in [1, 2^31)"},
      {"K 0", "b 64 0 1\n", 1, "K \"0\" is not an integer in [1, 2^31)"},
      {"calls -1", "b 64 96 -1\n", 1, "calls \"-1\" is not an integer in [0, 2^31)"},
      {"N past 2^31 - 1", "b 2147483648 96 1\n", 1, "N \"2147483648\""},
      /* a number followed by more, or with a sign, is not a number */
      {"N 64x", "b 64x 96 1\n", 1, "N \"64x\""},
      {"N +64", "b +64 96 1\n", 1, "N \"+64\""},
      {"five fields", "b 64 96 1 2\n", 1, "got 5 fields"},
      {"three fields", "b 64 96\n", 1, "got 3 fields"},
      {"numeric name", "12 64 96 1\n", 1, "the first field must be a name, got \"12\""},
      {"a second M line", "a 64 96 1\nM 1 2\nM 4\n", 3, "a second \"M\" line"},
      {"M alone", "a 64 96 1\nM\n", 2, "\"M\" line without values"},
      {"M 0", "a 64 96 1\nM 1 0\n", 2, "M value \"0\""},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    expect_refused(cases[i].what, cases[i].text, cases[i].line, cases[i].reason);
  /* a line longer than the buffer is refused, not read as several lines */
  char *text = testing_alloc(6000);
  snprintf(text, 6000, "a 64 96 1 # ");
  memset(text + strlen(text), 'x', 5000);
  snprintf(text + 5012, 6000 - 5012, "\nb 64 96 1\n");
  expect_refused("a line of 5012 characters", text, 1, "line too long");
  free(text);
  /* a NUL byte inside a line: refused, not the rest of the line dropped unread */
  char path[600];
  snprintf(path, sizeof path, "%s/bad.txt", dir);
  static const char with_nul[] = "a 64 96 1\0 garbage !!\nM 1\n";
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(with_nul, 1, sizeof with_nul - 1, f) == sizeof with_nul - 1);
  if (f) fclose(f);
  err[0] = '\0';
  EXPECT(suite_load(path, &s, err, sizeof err) == -1 && strstr(err, "bad.txt:1: a NUL byte"),
         "a NUL byte: \"%s\"", err);
}

/* Names up to 63 characters, 64 M values and 128 entries are taken; one more of each is refused
 * (a 64-character name was cut to 63, past the duplicate check). */
static void test_limits(void) {
  char text[256], name[80];
  memset(name, 'n', 63);
  name[63] = '\0';
  snprintf(text, sizeof text, "%s 64 96 1\n", name);
  int rc = load_text(text);
  EXPECT(rc == 0 && strcmp(s.entries[0].name, name) == 0, "63 characters: rc %d, \"%s\"", rc, err);
  snprintf(text, sizeof text, "%sn 64 96 1\n", name);
  expect_refused("a 64-character name", text, 1, "longer than 63 characters");

  char *m64 = repeat_lines(1, "M", SUITE_MAX_M), *m65 = repeat_lines(1, "M", SUITE_MAX_M + 1);
  rc = load_text(m64);
  EXPECT(rc == 0 && s.m_count == SUITE_MAX_M && s.m[SUITE_MAX_M - 1] == SUITE_MAX_M,
         "64 M values: rc %d, %d taken: %s", rc, s.m_count, err);
  expect_refused("65 M values", m65, 2, "more than 64 M values");
  free(m64), free(m65);

  char *e128 = repeat_lines(SUITE_MAX_ENTRIES, NULL, 0), *e129 = repeat_lines(SUITE_MAX_ENTRIES + 1, NULL, 0);
  rc = load_text(e128);
  EXPECT(rc == 0 && s.count == SUITE_MAX_ENTRIES, "128 entries: rc %d, %d taken: %s", rc, s.count, err);
  expect_refused("129 entries", e129, 129, "more than 128 entries");
  free(e128), free(e129);
}

/* --m's lists: values in order; empty items, signs, spaces, zero and trailing text refused; at
 * most cap values (none written past cap) and items of at most 31 characters. */
static void test_int_list(void) {
  int64_t v[SUITE_MAX_M + 1];
  char msg[256];
  int n = suite_parse_int_list("1,16,2147483647", v, SUITE_MAX_M, msg, sizeof msg);
  EXPECT(n == 3 && v[0] == 1 && v[1] == 16 && v[2] == 2147483647, "n %d: %lld %lld %lld", n, (long long)v[0],
         (long long)v[1], (long long)v[2]);
  static const char *const bad[] = {"", "1,", ",1", "1,,4", "+4", " 4", "4 ", "0", "4x", "2147483648"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    n = suite_parse_int_list(bad[i], v, SUITE_MAX_M, msg, sizeof msg);
    EXPECT(n == -1, "\"%s\": %d values", bad[i], n);
  }
  v[2] = -7;
  n = suite_parse_int_list("1,2,3", v, 2, msg, sizeof msg);
  EXPECT(n == -1 && strstr(msg, "more than 2 values") && v[2] == -7, "cap 2: n %d, v[2] %lld, \"%s\"", n,
         (long long)v[2], msg);
  char item[40];
  snprintf(item, sizeof item, "%031d", 1);
  n = suite_parse_int_list(item, v, SUITE_MAX_M, msg, sizeof msg);
  EXPECT(n == 1 && v[0] == 1, "31 characters: n %d, \"%s\"", n, msg);
  snprintf(item, sizeof item, "%032d", 1);
  n = suite_parse_int_list(item, v, SUITE_MAX_M, msg, sizeof msg);
  EXPECT(n == -1, "32 characters: n %d", n);
}

/* suite_find names whole entries; the prefix filter keeps every entry of the prefix, in order. */
static void test_find_and_filter(void) {
  int rc = load_text("tiny.a 64 96 1\nother 8 8 1\ntiny.b 32 160 1\n");
  EXPECT(rc == 0 && s.count == 3, "rc %d count %d: %s", rc, s.count, err);
  EXPECT(suite_find(&s, "tiny.a") == 0 && suite_find(&s, "tiny.b") == 2 && suite_find(&s, "tiny") == -1,
         "find: %d %d %d", suite_find(&s, "tiny.a"), suite_find(&s, "tiny.b"), suite_find(&s, "tiny"));
  int kept = suite_filter_prefix(&s, "tiny.");
  EXPECT(kept == 2 && s.count == 2 && strcmp(s.entries[0].name, "tiny.a") == 0 &&
             strcmp(s.entries[1].name, "tiny.b") == 0,
         "prefix tiny.: kept %d, count %d, %s %s", kept, s.count, s.entries[0].name, s.entries[1].name);
  kept = suite_filter_prefix(&s, "tiny.b");
  EXPECT(kept == 1 && s.count == 1 && strcmp(s.entries[0].name, "tiny.b") == 0, "prefix tiny.b: %d, %s",
         kept, s.entries[0].name);
}

/* The default path, from a directory where src/shapes, ./shapes and src/../shared/shapes
 * appear one by one: the first readable of src/../shared, ., src. */
static void test_default_path(void) {
  char old[4096], home[600], buf[256];
  if (!getcwd(old, sizeof old)) {
    CHECK(0);
    return;
  }
  snprintf(home, sizeof home, "%s/default", dir);
  if (mkdir(home, 0700) != 0 || chdir(home) != 0) {
    perror(home);
    CHECK(0);
    return;
  }
  static const char *const dirs[] = {"src", "src/shapes", "shapes", "shared", "shared/shapes"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
    if (mkdir(dirs[i], 0700) != 0) perror(dirs[i]);
  /* none readable: the last, as suite.h says (it was the first, outside the source tree) */
  suite_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "src/shapes/dsv4.txt") == 0, "none: %s", buf);
  sup_write_text("src/shapes/dsv4.txt", "a 64 96 1\n");
  suite_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "src/shapes/dsv4.txt") == 0, "src's alone: %s", buf);
  sup_write_text("shapes/dsv4.txt", "a 64 96 1\n");
  suite_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "shapes/dsv4.txt") == 0, "./shapes's too: %s", buf);
  sup_write_text("shared/shapes/dsv4.txt", "a 64 96 1\n");
  suite_default_path(buf, sizeof buf);
  EXPECT(strcmp(buf, "src/../shared/shapes/dsv4.txt") == 0, "shared's too: %s", buf);
  if (chdir(old) != 0) perror(old);
}

int main(void) {
  if (sup_temp_dir(dir, sizeof dir, "suite")) return 1;
  test_loaded();
  test_refused();
  test_limits();
  test_int_list();
  test_find_and_filter();
  test_default_path();
  sup_remove_tree(dir);
  return testing_summary("test-suite");
}
