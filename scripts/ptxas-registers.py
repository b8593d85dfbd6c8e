#!/usr/bin/env python3
"""Registers, spills and stack of kernel entry points by NVRTC's ptxas for sm_90, on a host without a GPU
(round 25: it gives the counts the driver reported on the H200, e.g. 79 for round 24's mf_mapssbp_backward_2).
Compiles common.cuh + the kernel files as the crate does (jit.rs: each file after a #line, --ptxas-options=-v).
Needs libnvrtc.so.13 and its builtins on LD_LIBRARY_PATH (e.g. pip's nvidia-cuda-nvrtc: nvidia/cu13/lib).

usage: scripts/ptxas-registers.py [--regex R] [--variant 'NAME: DEF DEF=V ...']... [--sass] [--sass-lines DIR] [FILE ...]
  FILE     kernel files under crates/galerkin/kernels, in the crate's order (default multifrontal.cu)
  --regex  only entries whose name matches R
  --variant one compilation per variant with its -D defines (default: one, no defines)
  --sass   also each entry's static SASS instruction counts by class (round 26: nvdisasm, from pip's
           nvidia-cuda-nvdisasm, found on PATH or beside libnvrtc in nvidia/cu13/bin) — a host proxy for the
           instruction work of unrolled kernels; counts are static, not executed
  --sass-lines DIR  also compile with -lineinfo and write each variant's SASS with its source lines and
           inlining (nvdisasm -c -gi) to DIR/<variant>.sass (round 26: for per-phase counts, e.g.
           benchmarks/h200/hyper26-phases.py)"""
import argparse, collections, ctypes, os, re, shutil, subprocess, sys, tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
kdir = os.path.join(root, "crates", "galerkin", "kernels")
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("files", nargs="*", default=["multifrontal.cu"])
ap.add_argument("--regex", default=".")
ap.add_argument("--variant", action="append", default=[])
ap.add_argument("--sass", action="store_true")
ap.add_argument("--sass-lines", default=None)
args = ap.parse_args()
pat = re.compile(args.regex)
lib = ctypes.CDLL("libnvrtc.so.13")
src = open(os.path.join(kdir, "common.cuh")).read() + "\n\n" + "".join(
    f'\n#line 1 "{f}"\n' + open(os.path.join(kdir, f)).read() for f in args.files)


def ptxas(defines, name):
    """ptxas -v's lines of the matching entries (and every warning) for one set of defines."""
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), args.files[0].encode(), 0, None, None) != 0:
        sys.exit("nvrtcCreateProgram failed")
    opts = [b"--gpu-architecture=sm_90", b"-std=c++17", b"-default-device", b"-DGALERKIN_BLOCK=256",
            b"--ptxas-options=-v"] + [b"-lineinfo"] * bool(args.sass_lines) + [f"-D{d}".encode() for d in defines]
    rc = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    log = log.value.decode()
    if rc != 0:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        return [f"NVRTC failed ({rc}):", log[-3000:]]
    sass = sass_counts(prog) if args.sass else []
    if args.sass_lines:
        os.makedirs(args.sass_lines, exist_ok=True)
        with open(os.path.join(args.sass_lines, re.sub(r"\W+", "-", name or "default").strip("-") + ".sass"), "w") as f:
            f.write(disassemble(prog, "-gi"))
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    out, entry = [], None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            entry = m.group(1)
        elif entry and pat.search(entry) and ("registers" in line or "spill" in line or "stack" in line):
            out.append(f"{entry:40s} {line.split(':', 1)[-1].strip()}")
        if "warning" in line.lower():
            out.append("WARNING " + line)
    return out + sass


# SASS opcode classes worth comparing between variants (the rest counted as "other").
CLASSES = [("fp64", r"^D(FMA|MUL|ADD|SETP|MNMX)"), ("mma", r"^(DMMA|HMMA)"), ("ld.global", r"^LDG"),
           ("st.global", r"^STG"), ("red/atom", r"^(RED|ATOM)"), ("ld.shared", r"^LDS"), ("st.shared", r"^STS"),
           ("local", r"^(LDL|STL)"), ("const", r"^LDC"), ("sync", r"^(BAR|SYNCS)"), ("shfl", r"^SHFL"),
           ("int/addr", r"^(IMAD|IADD|LEA|ISETP|SHF|LOP|IMNMX|SEL|MOV|S2R|CS2R|PRMT)"), ("branch", r"^(BRA|EXIT|BSSY|BSYNC|CALL|RET)")]


def nvdisasm():
    found = shutil.which("nvdisasm")
    if found:
        return found
    for d in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
        cand = os.path.join(os.path.dirname(d.rstrip("/")), "bin", "nvdisasm")
        if d and os.path.exists(cand):
            return cand
    sys.exit("--sass needs nvdisasm (pip install nvidia-cuda-nvdisasm) on PATH or in nvidia/cu13/bin")


def disassemble(prog, *flags):
    """nvdisasm -c (and flags) of the program's cubin."""
    size = ctypes.c_size_t()
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    cubin = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetCUBIN(prog, cubin)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin.raw)
        f.flush()
        return subprocess.run([nvdisasm(), "-c", *flags, f.name], capture_output=True, text=True, check=True).stdout


def sass_counts(prog):
    """Static instruction counts by class of each matching entry in the program's cubin."""
    text = disassemble(prog)
    counts, entry = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*\.text\.(\w+):", line)
        if m:
            entry = m.group(1) if pat.search(m.group(1)) else None
            if entry:
                counts[entry] = collections.Counter()
            continue
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
        if entry and m:
            op = m.group(1).split(".")[0]
            cls = next((c for c, r in CLASSES if re.match(r, op)), "other")
            counts[entry][cls] += 1
            counts[entry]["total"] += 1
    return [f"{e:40s} SASS " + ", ".join(f"{k} {v}" for k, v in sorted(c.items(), key=lambda kv: -kv[1]))
            for e, c in counts.items()]


for v in args.variant or [":"]:
    name, _, defs = v.partition(":")
    if name:
        print(f"== {name}")
    print("\n".join(ptxas(defs.split(), name)))
