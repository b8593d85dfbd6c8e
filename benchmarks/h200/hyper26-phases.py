#!/usr/bin/env python3
"""Static SASS instructions of the hyperelastic Jacobian kernel by phase (round 26, host, no GPU): reads the SASS
with source lines that `scripts/ptxas-registers.py --sass-lines DIR` writes (NVRTC for sm_90 with -lineinfo,
nvdisasm -c -gi; `benchmarks/h200/hyper26-sass.sh` makes round 26's), puts each instruction of `hyper_assemble`
under the kernel-body line it is inlined at and groups them into the phases that markers in the source delimit.
usage: python3 benchmarks/h200/hyper26-phases.py DIR/*.sass"""
import collections, os, re, sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
body = open(os.path.join(root, "crates", "galerkin", "kernels", "hyperelastic_tc.cu")).read().splitlines()


def line(pat, after=0):
    return next(i + 1 for i, l in enumerate(body) if i + 1 > after and pat in l)


k0 = line("void HK_BOUNDS hyper_assemble(")
gather = line("hk_gather(c, tid, TPC", line("const u64 c = (u64)blockIdx.x * WPB + wp;", k0))
geo = line("const double adet", gather) - 3
res = line("#ifndef HK_SCATTER_ONLY", geo)
acc = line("const int g8 = lane / 4, t4 = lane % 4;", res)
y = line("Y with the law (HK_FUSE)", acc)
kk = line("// K: the chunk", y)
rs = line("the residual from the fragments", kk)
stg = line("#if defined(HK_PATCH) && !defined(HK_PATCH_TURNS)", rs)
sc = line("hk_scatter_staged(st, cell, c", stg)
end = line("#endif  // WPB", sc)
PHASES = [(k0, gather - 1, "setup"), (gather, geo - 1, "gather"), (geo, res - 1, "geometry, g'"), (res, acc - 1, "residual-only path"),
          (acc, y - 1, "accumulators"), (y, kk - 1, "Y: law, entries, Y"), (kk, rs - 1, "K: mma"), (rs, stg - 1, "residual adds"),
          (stg, sc - 1, "staging (or no-scatter stores)"), (sc, sc, "scatter"), (sc + 1, end, "tail: slow paths")]
CLASSES = [("fp64", r"^D(FMA|MUL|ADD|SETP|MNMX)"), ("mma", r"^DMMA"), ("ld.global", r"^LDG"), ("st.global", r"^STG"),
           ("red/atom", r"^(RED|ATOM)"), ("ld.shared", r"^LDS"), ("st.shared", r"^STS"), ("local", r"^(LDL|STL)"),
           ("sel", r"^(FSEL|SEL)"), ("mov", r"^(MOV|IMAD\.MOV|UMOV|CS2R)"), ("branch", r"^(BRA|EXIT|BSSY|BSYNC|CALL|RET)")]


def counts(path):
    text = open(path).read()
    text = text[text.index(".text.hyper_assemble:"):]
    per, cur = collections.defaultdict(collections.Counter), None
    for l in text.splitlines():
        if l.strip().startswith("//##"):
            outer = [int(n) for f, n in re.findall(r'"(?:[^"]*/)?([\w.]+)", line (\d+)', l) if f == "hyperelastic_tc.cu" and k0 <= int(n) <= end]
            cur = outer[-1] if outer else None
            continue
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", l)
        if m:
            ph = next((n for a, b, n in PHASES if cur is not None and a <= cur <= b), "other")
            per[ph][next((c for c, r in CLASSES if re.match(r, m.group(1))), "int/other")] += 1
    return per


for path in sys.argv[1:]:
    print(f"== {os.path.basename(path)}")
    per, tot = counts(path), collections.Counter()
    for _, _, n in PHASES + [(0, 0, "other")]:
        if n in per:
            tot += per[n]
            print(f"  {n:32s} {sum(per[n].values()):5d}  " + ", ".join(f"{k} {v}" for k, v in per[n].most_common()))
    print(f"  {'total':32s} {sum(tot.values()):5d}")
