"""NGSolve: whole assembly (matrix with its sparsity, and load vector) of Poisson on the unit cube."""
import ngsolve as ng
from ngsolve.meshes import MakeStructured3DMesh
from common import CASES, parse_args, report, timed


def main():
    args, cases = parse_args(default_threads=2)
    ng.SetNumThreads(args.threads)
    for name, n in cases:
        cell, k = CASES[name]
        mesh = MakeStructured3DMesh(hexes=(cell == "hex"), nx=n)
        fes = ng.H1(mesh, order=k, dirichlet=".*")
        u, v = fes.TnT()
        pi = ng.pi
        f = 3 * pi * pi * ng.sin(pi * ng.x) * ng.sin(pi * ng.y) * ng.sin(pi * ng.z)
        total, matrix, load = [], [], []
        with ng.TaskManager():
            for r in range(args.repeats + 1):  # the first run warms up
                a = ng.BilinearForm(ng.grad(u) * ng.grad(v) * ng.dx)
                lf = ng.LinearForm(f * v * ng.dx)
                tm, _ = timed(a.Assemble)
                tl, _ = timed(lf.Assemble)
                if r > 0:
                    matrix.append(tm)
                    load.append(tl)
                    total.append(tm + tl)
        report("ngsolve " + ng.__version__, name, n, mesh.ne, fes.ndof, args.threads, total, matrix, load)


if __name__ == "__main__":
    main()
