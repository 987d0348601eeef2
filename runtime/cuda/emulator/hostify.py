#!/usr/bin/env python3
"""Rewrites a CUDA source (.cu or a kernel header) into C++ that the host
compiler builds against the CUDA emulation (Emulator.h; docs/cuda.md,
"The CUDA emulation"):

  kernel<<<grid, block[, shared[, stream]]>>>(args);
      -> ::ampc::emu::launchKernel(grid, block[, shared[, stream]])(
             [=](auto... a) { kernel(a...); }, args);
  extern __shared__ [__align__(N)] T name[];
      -> T *name = reinterpret_cast<T *>(::ampc::emu::dynamicShared());
  __shared__ T name...;   -> static T name...;  (one block runs at a time)
                             ::ampc::emu::staleShared(&name, sizeof name);
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
                          -> t = ::ampc::emu::globalTimer();  (the one PTX read)
  #include <cub/...>      -> the emulation's cub (Cub.h)

and puts the emulation's header first. Usage: hostify.py IN OUT.
"""
import re
import sys


def matching(text, start, open_ch, close_ch, step):
    """The index of the bracket that closes (step 1) or opens (step -1) the
    one at `start`."""
    depth = 0
    i = start
    while 0 <= i < len(text):
        if text[i] == open_ch:
            depth += step
        elif text[i] == close_ch:
            depth -= step
        if depth == 0:
            return i
        i += step
    raise SystemExit(f"hostify: unbalanced {open_ch}{close_ch} at offset {start}")


def kernel_start(text, end):
    """Where the kernel expression that ends just before `end` starts: a
    qualified name with template arguments."""
    i = end - 1
    while text[i].isspace():
        i -= 1
    if text[i] == ">":
        i = matching(text, i, ">", "<", -1) - 1
    while i >= 0 and (text[i].isalnum() or text[i] in "_:"):
        i -= 1
    return i + 1


def rewrite_launches(text):
    while True:
        at = text.find("<<<")
        if at < 0:
            return text
        close = text.index(">>>", at)
        config = text[at + 3:close]
        paren = close + 3
        while text[paren].isspace():
            paren += 1
        if text[paren] != "(":
            raise SystemExit(f"hostify: no arguments after a launch at offset {at}")
        args_end = matching(text, paren, "(", ")", 1)
        start = kernel_start(text, at)
        kernel = text[start:at].strip()
        args = text[paren + 1:args_end].strip()
        # A generic lambda: a kernel template's arguments are deduced from
        # the call, as nvcc deduces them.
        call = (f"::ampc::emu::launchKernel({config})("
                f"[=](auto... a) {{ {kernel}(a...); }}{', ' + args if args else ''})")
        text = text[:start] + call + text[args_end + 1:]


def hostify(text, source):
    text = re.sub(r"#include\s*<cub/[^>]*>", '#include "runtime/cuda/emulator/Cub.h"', text)
    text = re.sub(
        r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w:]+)\s+(\w+)\s*\[\s*\]\s*;",
        r"\1 *\2 = reinterpret_cast<\1 *>(::ampc::emu::dynamicShared());", text)
    # A block's first thread to reach a static one fills it as dynamic
    # shared memory starts (0xff: NaN), so no block reads the last one's.
    text = re.sub(r"\b__shared__\s+([\w:<>, ]+?)\s+(\w+)((?:\s*\[[^\]]*\])*)\s*;",
                  r"static \1 \2\3; ::ampc::emu::staleShared(&\2, sizeof \2);", text)
    text = re.sub(r"\b__shared__\b", "static", text)
    text = re.sub(r'asm\s+volatile\("mov\.u64 %0, %%globaltimer;"\s*:\s*"=l"\((\w+)\)\);',
                  r"\1 = ::ampc::emu::globalTimer();", text)
    text = rewrite_launches(text)
    # Errors and warnings name the original file and line.
    return f'#include "runtime/cuda/emulator/Emulator.h"\n#line 1 "{source}"\n' + text


def main():
    source, target = sys.argv[1], sys.argv[2]
    with open(source) as f:
        text = f.read()
    out = hostify(text, source)
    with open(target, "w") as f:
        f.write(out)


if __name__ == "__main__":
    main()
