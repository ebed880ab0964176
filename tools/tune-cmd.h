/* `bf16fp32 tune`: measure every backend on a suite and merge the winners into a tuning file;
 * or turn a tuning file into the built-in table's C source (--emit-c). */
#ifndef BF16FP32_TUNE_CMD_H
#define BF16FP32_TUNE_CMD_H

/* argv[0] is the command's name ("tune"); returns the process exit code (0, 1 failure, 2 usage). */
int tune_main(int argc, char **argv);

#endif
