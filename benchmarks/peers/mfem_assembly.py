"""MFEM (PyMFEM, serial: one thread): whole assembly (matrix with its sparsity, finalized to CSR, and
load vector) of Poisson on the unit cube. The source is a numba-compiled coefficient, called from C++."""
from math import pi, sin
import mfem.ser as mfem
from common import CASES, parse_args, report, timed


@mfem.jit.scalar
def source(p):
    return 3 * pi * pi * sin(pi * p[0]) * sin(pi * p[1]) * sin(pi * p[2])


def main():
    args, cases = parse_args(default_threads=1)
    if args.threads != 1:
        raise SystemExit("serial MFEM runs on one thread")
    for name, n in cases:
        cell, k = CASES[name]
        geom = mfem.Element.TETRAHEDRON if cell == "tet" else mfem.Element.HEXAHEDRON
        mesh = mfem.Mesh.MakeCartesian3D(n, n, n, geom, 1.0, 1.0, 1.0, False)
        fec = mfem.H1_FECollection(k, 3)
        fes = mfem.FiniteElementSpace(mesh, fec)
        one = mfem.ConstantCoefficient(1.0)
        total, matrix, load = [], [], []
        for r in range(args.repeats + 1):  # the first run warms up
            a = mfem.BilinearForm(fes)
            a.AddDomainIntegrator(mfem.DiffusionIntegrator(one))
            b = mfem.LinearForm(fes)
            b.AddDomainIntegrator(mfem.DomainLFIntegrator(source))

            def matrix_assembly():
                a.Assemble()
                a.Finalize()

            tm, _ = timed(matrix_assembly)
            tl, _ = timed(b.Assemble)
            if r > 0:
                matrix.append(tm)
                load.append(tl)
                total.append(tm + tl)
        report("pymfem", name, n, mesh.GetNE(), fes.GetNDofs(), 1, total, matrix, load)


if __name__ == "__main__":
    main()
