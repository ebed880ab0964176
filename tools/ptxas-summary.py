#!/usr/bin/env python3
"""Registers, shared memory and spills of smallm's kernels, from `nvcc -Xptxas -v`.

Compiles each smallm .cu file as the build does (sm_90, or sm_90a for the -sm90a files), one
kernel template per row: its instances, the range of their registers, the largest static shared
memory and stack frame, and every instance that spills. Needs nvcc only (no GPU).
Usage: tools/ptxas-summary.py [SOURCE.cu ...]   (default: src/backends/smallm/*.cu)
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(sm_\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
SMEM = re.compile(r"(\d+) bytes smem")


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return dict(zip(names, out))


def compile_info(src):
    arch = "compute_90a,code=sm_90a" if src.endswith("-sm90a.cu") else "compute_90,code=sm_90"
    cmd = ["nvcc", "-O3", "-c", "-o", os.devnull, f"-gencode=arch={arch}", "-Xptxas", "-v",
           "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "src"), src]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"nvcc failed on {src}:\n{run.stderr[-2000:]}")
    kernels, current = [], None
    for line in run.stderr.splitlines():
        if m := ENTRY.search(line):
            current = {"name": m.group(1), "frame": 0, "spill": (0, 0), "regs": 0, "smem": 0}
            kernels.append(current)
        elif current and (m := FRAME.search(line)):
            current["frame"] = int(m.group(1))
            current["spill"] = (int(m.group(2)), int(m.group(3)))
        elif current and (m := USED.search(line)):
            current["regs"] = int(m.group(1))
            if s := SMEM.search(line):  # ptxas names static shared memory only when there is some
                current["smem"] = int(s.group(1))
    return kernels


def main():
    sources = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "src/backends/smallm/*.cu")))
    print("| file | kernel | instances | registers | static smem B | stack B | spills |")
    print("|---|---|---|---|---|---|---|")
    for src in sources:
        kernels = compile_info(src)
        names = demangle([k["name"] for k in kernels])
        groups = {}
        for k in kernels:
            full = names[k["name"]].removeprefix("void ").replace("(anonymous namespace)::", "")
            groups.setdefault(full.split("<")[0].split("(")[0], []).append((full, k))
        for base, items in groups.items():
            regs = [k["regs"] for _, k in items]
            spills = [f"{full.split('(')[0]}: {k['spill'][0]} B stored, {k['spill'][1]} B loaded"
                      for full, k in items if any(k["spill"])]
            print(f"| {os.path.basename(src)} | {base.split('::')[-1]} | {len(items)} | "
                  f"{min(regs)}-{max(regs)} | {max(k['smem'] for _, k in items)} | "
                  f"{max(k['frame'] for _, k in items)} | {'; '.join(spills) or 'none'} |")


if __name__ == "__main__":
    main()
