// The CUDA twin of a QFunction on given inputs, for the parity test against its Rust body
// (tests/qfunction_parity.rs): one thread evaluates `apply` on a field vector and `block` on a
// pair of basis functions. Defines: QF, DIM, NCOMP.
constexpr int MF = FieldSize<QF, DIM, NCOMP>::value;

// pair = [w, vi, vj, gi[0..3], gj[0..3]]
extern "C" __global__ void qf_parity(const double* __restrict__ p, const double* __restrict__ in,
                                     const double* __restrict__ pair, double* __restrict__ out_apply,
                                     double* __restrict__ out_block) {
    if (global_thread() != 0) return;
    double x[MF], y[MF];
    for (int f = 0; f < MF; ++f) {
        x[f] = in[f];
        y[f] = 0.0;
    }
    QF::template apply<DIM, NCOMP>(p, x, y);
    for (int f = 0; f < MF; ++f) out_apply[f] = y[f];
    const PointPair<DIM> pr{pair[0], pair[1], pair[2], pair + 3, pair + 6};
    double e[NCOMP][NCOMP];
    for (int a = 0; a < NCOMP; ++a)
        for (int b = 0; b < NCOMP; ++b) e[a][b] = 0.0;
    QF::template block<DIM, NCOMP>(p, pr, e);
    for (int a = 0; a < NCOMP; ++a)
        for (int b = 0; b < NCOMP; ++b) out_block[a * NCOMP + b] = e[a][b];
}
