/* `bf16fp32 info`, `check` and `select`. Each returns the process exit code. */
#ifndef BF16FP32_CLI_CHECK_H
#define BF16FP32_CLI_CHECK_H

int cli_info(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_select(int argc, char **argv);

#endif
