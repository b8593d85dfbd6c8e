#!/usr/bin/env python3
"""Registers, spills and stack of kernel entry points by NVRTC's ptxas for sm_90, on a host without a GPU
(round 25: it gives the counts the driver reported on the H200, e.g. 79 for round 24's mf_mapssbp_backward_2).
Compiles common.cuh + the kernel files as the crate does (jit.rs: each file after a #line, --ptxas-options=-v).
Needs libnvrtc.so.13 and its builtins on LD_LIBRARY_PATH (e.g. pip's nvidia-cuda-nvrtc: nvidia/cu13/lib).

usage: scripts/ptxas-registers.py [--regex R] [--variant 'NAME: DEF DEF=V ...']... [FILE ...]
  FILE     kernel files under crates/galerkin/kernels, in the crate's order (default multifrontal.cu)
  --regex  only entries whose name matches R
  --variant one compilation per variant with its -D defines (default: one, no defines)"""
import argparse, ctypes, os, re, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kdir = os.path.join(root, "crates", "galerkin", "kernels")
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("files", nargs="*", default=["multifrontal.cu"])
ap.add_argument("--regex", default=".")
ap.add_argument("--variant", action="append", default=[])
args = ap.parse_args()
pat = re.compile(args.regex)
lib = ctypes.CDLL("libnvrtc.so.13")
src = open(os.path.join(kdir, "common.cuh")).read() + "\n\n" + "".join(
    f'\n#line 1 "{f}"\n' + open(os.path.join(kdir, f)).read() for f in args.files)


def ptxas(defines):
    """ptxas -v's lines of the matching entries (and every warning) for one set of defines."""
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), args.files[0].encode(), 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-default-device", b"-DGALERKIN_BLOCK=256",
            b"--ptxas-options=-v"] + [f"-D{d}".encode() for d in defines]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    log = log.value.decode()
    if rc != 0:
        return [f"NVRTC failed ({rc}):", log[-3000:]]
    out, entry = [], None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            entry = m.group(1)
        elif entry and pat.search(entry) and ("registers" in line or "spill" in line or "stack" in line):
            out.append(f"{entry:40s} {line.split(':', 1)[-1].strip()}")
        if "warning" in line.lower():
            out.append("WARNING " + line)
    return out


for v in args.variant or [":"]:
    name, _, defs = v.partition(":")
    if name:
        print(f"== {name}")
    print("\n".join(ptxas(defs.split())))
