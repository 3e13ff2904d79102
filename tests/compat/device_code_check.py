#!/usr/bin/env python3
"""Every kernel an nvcc translation unit's host code can launch is compiled for the device in that TU.

nvcc compiles a TU twice. A kernel template that only the host pass instantiates (say, reached from the host branch
of an NV_IF_TARGET, which the device pass never sees) gets a host stub but no device code, and CUDA refuses its
launch at run time ("invalid resource handle"). This check compiles the TU both ways and names every kernel whose
host stub has no entry in the TU's PTX.

Only kernel templates can go missing (a plain kernel is a definition both passes compile), so a SOURCE whose host
code instantiates none fails too: the check would be empty.

Usage: device_code_check.py NVCC SOURCE [nvcc flags...]   (exit 0: every stub has its entry; 1: names the others)
"""
import os
import re
import subprocess
import sys
import tempfile

STUB = "__wrapper__device_stub_"


def demangled(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def kernel_key(signature):
    """'void ns::kernel<args>(params)' -> 'ns::kernel<args>' (the parameters differ between a stub and its entry)."""
    signature = re.sub(r"^void ", "", signature)
    depth = 0
    for i, c in enumerate(signature):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            return signature[:i]
    return signature


def main():
    nvcc, source, flags = sys.argv[1], sys.argv[2], sys.argv[3:]
    with tempfile.TemporaryDirectory() as tmp:
        ptx, obj = os.path.join(tmp, "tu.ptx"), os.path.join(tmp, "tu.o")
        # PTX for one virtual architecture, unoptimised: which kernels exist does not depend on either.
        common = [nvcc, "-x", "cu", "-arch=compute_90", "-Xcicc", "-O0", *flags, source]
        subprocess.run(common[:1] + ["-ptx", "-o", ptx] + common[1:], check=True)
        subprocess.run(common[:1] + ["-c", "-o", obj] + common[1:], check=True)
        entries = re.findall(r"^(?:\.(?:visible|weak)\s+)?\.entry\s+([^\s(]+)\(", open(ptx).read(), re.M)
        symbols = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout.split()
    stubs = sorted({s for s in symbols if STUB in s})
    compiled = {kernel_key(e) for e in demangled(entries)}
    missing = [k for k in (kernel_key(s).replace(STUB, "") for s in demangled(stubs)) if k not in compiled]
    print(f"{source}: {len(stubs)} kernel templates instantiated by host code, {len(entries)} kernels compiled for "
          "the device")
    for k in missing:
        print(f"  no device code for {k}: its host stub exists, so a launch of it is refused at run time")
    return 1 if missing or not stubs else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as failed:  # nvcc's own errors are above
        print(f"device_code_check: {failed.cmd[0]} failed (status {failed.returncode}); its errors are above")
        sys.exit(2)
