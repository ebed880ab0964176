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
          "  select [--suite F] [--m L] [--cpu]\n"
          "                               the backend auto picks for each shape, and why\n"
          "  bench  [--suite F] [--backends a,b] [--m L] [--csv F] [--cpu]\n"
          "         --decode-step dsv4-flash|dsv4-pro --batch 1,4,16\n"
          "                               timing by the protocol of MEASURING.md\n"
          "  tune   [--suite F] [--m L] [--out F] [--cpu] [--only PREFIX] [--emit-c F] [--from F]\n"
          "                               measure every backend, write a tuning file\n"
          "Default suite: ../shared/shapes/dsv4.txt beside the source tree.\n");
  return f == stderr ? 2 : 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return usage(stderr);
  const char *cmd = argv[1];
  if (strcmp(cmd, "info") == 0) return cli_info(argc - 1, argv + 1);
  if (strcmp(cmd, "check") == 0) return cli_check(argc - 1, argv + 1);
  if (strcmp(cmd, "select") == 0) return cli_select(argc - 1, argv + 1);
  if (strcmp(cmd, "bench") == 0) return bench_main(argc - 1, argv + 1);
  if (strcmp(cmd, "tune") == 0) return tune_main(argc - 1, argv + 1);
  if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return usage(stdout);
  fprintf(stderr, "bf16fp32: unknown command '%s'\n", cmd);
  return usage(stderr);
}
