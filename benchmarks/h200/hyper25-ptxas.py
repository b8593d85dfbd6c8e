# ptxas -v of the hyperelastic Jacobian kernel for sm_90 through NVRTC (host, no GPU): registers, spills and
# stack a variant, to check that the node-block scatter (`HK_SCATTER_BLOCKS`) needs no more registers than the
# default it extends. Source as `jit::full_source` builds it (common.cuh, then hyperelastic_kernel_source!'s files).
# Usage: python3 benchmarks/h200/hyper25-ptxas.py [REPO]   (LD path: /work/nvrtc-venv/…/nvidia/cu13/lib)
import ctypes, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else "."
lib = ctypes.CDLL("/work/nvrtc-venv/lib/python3.11/site-packages/nvidia/cu13/lib/libnvrtc.so.13")
k = f"{root}/crates/galerkin/kernels"
files = ["hyperelastic_law.cuh", "hyperelastic.cu", "hyperelastic_gather.cu", "hyperelastic_upper.cu", "hyperelastic_blocks.cu"]
body = "".join(f"\n#line 1 \"{f}\"\n" + open(f"{k}/{f}").read() for f in files)
src = (open(f"{k}/common.cuh").read() + "\n\n\n#line 1 \"hyperelastic.cu\"\n" + body).encode()
# P2 tetrahedra, the stiffness rule (4 points), the fibre law: the round-24 default and its variants
p2 = ["DIM=3", "NLOC=10", "NQ=4", "NV=4", "AFFINE=1", "LAW=2"]
default = p2 + ["WPB=1", "QC=4", "WPC=1", "HK_FUSE", "HK_RES_MMA=1", "HK_ST_Y", "HK_MINB=20", "HK_SCATTER_COLS"]
tc = p2 + ["WPB=1", "QC=3", "WPC=1", "HK_SCATTER_COLS"]
rows = {
    "tc cols fuse sty minb20 (default)": default,
    "tc blocks fuse sty minb20": default + ["HK_SCATTER_BLOCKS"],
    "tc no-scatter fuse sty minb20": [d for d in default if d != "HK_SCATTER_COLS"] + ["HK_NO_SCATTER"],
    "tc cols": tc,
    "tc blocks": tc + ["HK_SCATTER_BLOCKS"],
}
for name, defs in rows.items():
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"hyperelastic.cu", 0, None, None) == 0
    opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-default-device", b"-DGALERKIN_BLOCK=256", b"--ptxas-options=-v"] + [f"-D{d}".encode() for d in defs]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    n = ctypes.c_size_t(); lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
    buf = ctypes.create_string_buffer(n.value); lib.nvrtcGetProgramLog(prog, buf)
    log = buf.value.decode()
    if rc != 0:
        print(name, "rc", rc); print(log[-3000:]); continue
    cur, out = None, []
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m: cur = m.group(1); continue
        if cur in ("hyper_assemble", "hyper_blocks_spmv", "hyper_blocks_to_csr") and ("registers" in line or "spill" in line or "stack" in line):
            out.append(f"{cur}: {line.split(':', 1)[-1].strip()}")
        if "warning" in line.lower(): out.append("WARN " + line)
    print(f"== {name}"); print("\n".join(out))
