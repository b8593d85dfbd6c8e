#!/usr/bin/env python3
"""The peer of `galerkin bench --heat`: CuPy's cuSPARSE CG on the assembled step matrix.

The backward-Euler step matrix M/dt + K of Q1 hexahedra on an n×n×n-cell cube (27-point stencil,
built exactly as Kronecker products of the 1D P1 mass and stiffness matrices) and the 7-point
finite-difference one, on the GPU as cupyx CSR matrices; `cupyx.scipy.sparse.linalg.cg` with
tol=0 runs a fixed number of iterations. Timed with CUDA events after a warm-up; median of runs.

    python3 benchmarks/heat_cupy.py --n 215 --iters 200 --runs 5   # ≈ 10^7 unknowns
"""
import argparse, json, sys

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[215])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        import cupy as cp
        import cupyx.scipy.sparse as sp
        from cupyx.scipy.sparse.linalg import cg
    except ImportError as e:
        print(f"cupy not available: {e}"); sys.exit(2)
    rows = []
    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {dev}; cupy {cp.__version__}")
    for n in a.n:
        h = 1.0 / n
        N = n + 1
        def tri(d, o):
            return sp.diags([cp.full(N - 1, o), cp.full(N, d), cp.full(N - 1, o)], [-1, 0, 1], format="csr")
        m1 = tri(4 * h / 6, h / 6); m1[0, 0] = m1[n, n] = 2 * h / 6
        k1 = tri(2 / h, -1 / h); k1[0, 0] = k1[n, n] = 1 / h
        kr = lambda a, b, c: sp.kron(sp.kron(a, b), c, format="csr")
        mats = {
            "q1-27pt": (kr(m1, m1, m1) / a.dt + kr(k1, m1, m1) + kr(m1, k1, m1) + kr(m1, m1, k1)).tocsr(),
        }
        # The pattern of P1 on 6 Kuhn tetrahedra per cube (galerkin bench --heat's mesh): 15 points,
        # neighbours along the 7 edge directions of the split cube; SPD values (mass-dominated).
        offs = [1, N, N * N, 1 + N, N + N * N, 1 + N * N, 1 + N + N * N]
        nn = N ** 3
        diags = [cp.full(nn - o, -1.0) for o in offs for _ in (0, 1)]
        kuhn = sp.diags([cp.full(nn, 1.0 / a.dt + 14.0)] + diags, [0] + [s * o for o in offs for s in (1, -1)], format="csr")
        mats["p1-kuhn-15pt"] = kuhn
        i1 = sp.identity(N, format="csr")
        l1 = tri(2 / h**2, -1 / h**2)
        mats["fd-7pt"] = (kr(i1, i1, i1) / a.dt + kr(l1, i1, i1) + kr(i1, l1, i1) + kr(i1, i1, l1)).tocsr()
        for name, A in mats.items():
            A.sum_duplicates()
            b = cp.ones(A.shape[0])
            dinv = 1.0 / A.diagonal()
            M = sp.diags(dinv, format="csr")
            cg(A, b, rtol=0, atol=0, maxiter=10, M=M)  # warm-up (cupy ≥ 14: rtol)
            times = []
            for _ in range(a.runs):
                s, e = cp.cuda.Event(), cp.cuda.Event()
                s.record()
                cg(A, b, rtol=0, atol=0, maxiter=a.iters, M=M)
                e.record(); e.synchronize()
                times.append(cp.cuda.get_elapsed_time(s, e) / a.iters)
            times.sort()
            med = times[len(times) // 2]
            r = dict(matrix=name, n=n, unknowns=A.shape[0], nnz=int(A.nnz), ms_per_iteration=med,
                     spread=(times[-1] - times[0]) / med, device=dev)
            rows.append(r)
            print(f"{name:8} n={n:4} unknowns={A.shape[0]:>10} nnz={A.nnz:>11} {med:8.4f} ms/it (spread {100*r['spread']:.1f}%)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)

if __name__ == "__main__":
    main()
