#!/usr/bin/env python3
"""Round 28 (tidy28, item 5): host seconds of one kernel build of gpu_fuse_equals_the_cpu — NVRTC 13 on the whole
hyperelastic module (the files of `HYPERELASTIC` after common.cuh, as jit.rs joins them), P2 tetrahedra at the
stiffness rule in tc_fuse's shape with the column scatter, each law: to PTX (compute_90, what the crate asks of
NVRTC) and to a cubin (sm_90: PTX + ptxas, a stand-in for the driver's load).
Usage: LD_LIBRARY_PATH=…/nvidia/cu13/lib python3 benchmarks/h200/tidy28-fuse-build-time.py"""
import ctypes, os, time

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
kdir = os.path.join(root, "crates", "galerkin", "kernels")
assemble = [l for l in open(os.path.join(kdir, "hyper_assemble.files")).read().splitlines() if l and not l.startswith("#")]
files = ["hyperelastic_law.cuh", *assemble, "hyperelastic_gather.cu", "hyperelastic_upper.cu", "hyperelastic_blocks.cu"]
src = open(os.path.join(kdir, "common.cuh")).read() + "\n\n" + "".join(f'\n#line 1 "{f}"\n' + open(os.path.join(kdir, f)).read() for f in files)
lib = ctypes.CDLL("libnvrtc.so.13")


def build(arch, defines):
    """Seconds of one nvrtcCompileProgram and its result code."""
    prog = ctypes.c_void_p()
    lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"hyperelastic.cu", 0, None, None)
    opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"-default-device", b"-DGALERKIN_BLOCK=256"] + [f"-D{d}".encode() for d in defines]
    t = time.time()
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    dt = time.time() - t
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return dt, rc


for law in (0, 1, 2):
    d = f"DIM=3 NLOC=10 NQ=4 NV=4 AFFINE=1 LAW={law} WPB=1 QC=4 WPC=1 HK_FUSE HK_RES_MMA=1 HK_SCATTER_COLS".split()
    (tp, rp), (tc, rc) = build("compute_90", d), build("sm_90", d)
    print(f"LAW={law}: PTX {tp:.2f} s (rc {rp}), cubin {tc:.2f} s (rc {rc})")
