#!/usr/bin/env python3
"""Registers, spills and stack of a kernel source's entry points by NVRTC's ptxas for sm_90, on a host
without a GPU (round 25: it gives the counts the driver reported on the H200, e.g. 79 for round 24's
mf_mapssbp_backward_2). Compiles common.cuh + the source as the crate does (jit.rs `options`, plus
--ptxas-options=-v). Needs libnvrtc.so.13 and its builtins on LD_LIBRARY_PATH.

usage: scripts/ptxas-registers.py [KERNEL_FILE (default multifrontal.cu)] [NAME_REGEX]"""
import ctypes, os, re, sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kdir = os.path.join(root, "crates", "galerkin", "kernels")
file = sys.argv[1] if len(sys.argv) > 1 else "multifrontal.cu"
pat = re.compile(sys.argv[2] if len(sys.argv) > 2 else ".")
lib = ctypes.CDLL("libnvrtc.so.13")
src = open(os.path.join(kdir, "common.cuh")).read() + f'\n\n\n#line 1 "{file}"\n' + open(os.path.join(kdir, file)).read()
prog = ctypes.c_void_p()
if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), file.encode(), 0, None, None) != 0:
    sys.exit("nvrtcCreateProgram failed")
opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-default-device", b"-DGALERKIN_BLOCK=256", b"--ptxas-options=-v"]
rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
size = ctypes.c_size_t()
lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value)
lib.nvrtcGetProgramLog(prog, log)
log = log.value.decode()
if rc != 0:
    sys.exit(f"NVRTC failed ({rc}):\n{log}")
entry = None
for line in log.splitlines():
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m:
        entry = m.group(1)
    elif entry and pat.search(entry) and ("registers" in line or "spill" in line):
        print(f"{entry:40s} {line.split(':', 1)[-1].strip()}")
    if "warning" in line.lower():
        print("WARNING", line)
