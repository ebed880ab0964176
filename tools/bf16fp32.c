/* The command-line program: info, check, select here; bench and tune in their own files. */
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "cli-check.h"
#include "tune-cmd.h"

static int usage(FILE *f) {
  fprintf(f,
          "usage: bf16fp32 COMMAND [options]\n"
          "  info                         device, CPU features, each backend available or why not\n"
          "  check  [--suite F] [--m L] [--cpu]\n"
          "                               every available backend against the fp64 oracle\n"
          "                               (M = 1, 7, 16, 64, 256 unless --m gives a list)\n"
          "  select [--suite F] [--m L] [--cpu]\n"
          "                               the backend auto picks for each shape, and why\n"
          "  bench  [--suite F] [--backends a,b] [--m L] [--csv F] [--cpu]\n"
          "         --decode-step dsv4-flash|dsv4-pro --batch 1,4,16\n"
          "                               timing by the protocol of MEASURING.md\n"
          "  tune   [--suite F] [--m L] [--out F] [--cpu] [--only PREFIX] [--emit-c F] [--from F]\n"
          "                               measure every backend, write a tuning file\n"
          "bench --help and tune --help list all of their options.\n"
          "Default suite: ../shared/shapes/dsv4.txt beside the source tree.\n");
  return f == stderr ? 2 : 0;
}

static int is_help_flag(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

int main(int argc, char **argv) {
  if (argc < 2) return usage(stderr);
  const char *cmd = argv[1];
  if (strcmp(cmd, "help") == 0 || is_help_flag(cmd)) return usage(stdout);
  /* info, check and select have no help of their own: the usage above is theirs */
  if (argc == 3 && is_help_flag(argv[2]) &&
      (strcmp(cmd, "info") == 0 || strcmp(cmd, "check") == 0 || strcmp(cmd, "select") == 0))
    return usage(stdout);
  if (strcmp(cmd, "info") == 0) return cli_info(argc - 1, argv + 1);
  if (strcmp(cmd, "check") == 0) return cli_check(argc - 1, argv + 1);
  if (strcmp(cmd, "select") == 0) return cli_select(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0) return bench_main(argc - 1, argv + 1);
  if (strcmp(cmd, "tune") == 0) return tune_main(argc - 1, argv + 1);
  fprintf(stderr, "bf16fp32: unknown command '%s'\n", cmd);
  return usage(stderr);
}
