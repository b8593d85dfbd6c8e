// Finite element assembly on the GPU: geometric factors at quadrature points (qdata), element
// matrix rows summed into CSR values through a binary search of the row, and symmetric Dirichlet
// elimination. One source; the element is chosen at JIT time with defines:
//   DIM     spatial dimension (1..3)       NV     geometry vertices per cell
//   NLOC    scalar basis functions/cell    NQ     quadrature points per cell
//   NCOMP   solution components            PHYSICS 0 diffusion, 1 mass, 2 elasticity
//   ATOMIC  1: atomicAdd (any cell order)  0: plain adds, cells launched one color at a time
#ifndef DIM
#define DIM 3
#endif
#ifndef NV
#define NV 4
#endif
#ifndef NLOC
#define NLOC 4
#endif
#ifndef NQ
#define NQ 1
#endif
#ifndef NCOMP
#define NCOMP 1
#endif
#ifndef PHYSICS
#define PHYSICS 0
#endif
#ifndef ATOMIC
#define ATOMIC 1
#endif

#define ND (NLOC * NCOMP)
// qdata per (cell, point): w |det J| followed by J^{-1} (DIM x DIM, row-major).
#define QD (1 + DIM * DIM)

// Geometric factors at every quadrature point: one thread per (cell, point).
// geo_grad[(q*NV + v)*3 + k] = d(geometry basis v)/d(xi_k) at point q.
extern "C" __global__ void qdata(int ncells, const double* __restrict__ coords,
                                 const unsigned* __restrict__ cells, const double* __restrict__ geo_grad,
                                 const double* __restrict__ weights, double* __restrict__ qd,
                                 int* __restrict__ bad_cell) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long)ncells * NQ) return;
  int e = (int)(t / NQ), q = (int)(t % NQ);
  double J[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  for (int v = 0; v < NV; ++v) {
    const double* x = coords + 3 * (long)cells[(long)e * NV + v];
    const double* g = geo_grad + (q * NV + v) * 3;
    for (int i = 0; i < DIM; ++i)
      for (int k = 0; k < DIM; ++k) J[i][k] += x[i] * g[k];
  }
  double inv[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
  double det;
#if DIM == 1
  det = J[0][0];
  inv[0][0] = 1.0 / det;
#elif DIM == 2
  det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  inv[0][0] = J[1][1] / det; inv[0][1] = -J[0][1] / det;
  inv[1][0] = -J[1][0] / det; inv[1][1] = J[0][0] / det;
#else
  det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
        J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
  inv[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / det;
  inv[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / det;
  inv[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / det;
  inv[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / det;
  inv[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / det;
  inv[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / det;
  inv[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / det;
  inv[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / det;
  inv[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / det;
#endif
  if (!(det != 0.0) || isinf(det)) atomicMax(bad_cell, e);
  double* out = qd + t * QD;
  out[0] = weights[q] * fabs(det);
  for (int i = 0; i < DIM; ++i)
    for (int k = 0; k < DIM; ++k) out[1 + i * DIM + k] = inv[i][k];
}

// Physical gradient of basis function j at point q: J^{-T} times the reference gradient.
__device__ __forceinline__ void phys_grad(const double* __restrict__ qd, const double* __restrict__ ref_grad, int q, int j,
                                          double g[DIM]) {
  const double* r = ref_grad + (q * NLOC + j) * 3;
  for (int k = 0; k < DIM; ++k) {
    double s = 0.0;
    for (int m = 0; m < DIM; ++m) s += qd[1 + m * DIM + k] * r[m];
    g[k] = s;
  }
}

// Position of column `col` in CSR row `row` (rows sorted); -1 if absent.
__device__ __forceinline__ long find_col(const long* __restrict__ row_ptr, const unsigned* __restrict__ col_idx, long row,
                                         unsigned col) {
  long lo = row_ptr[row], hi = row_ptr[row + 1] - 1;
  while (lo <= hi) {
    long mid = (lo + hi) >> 1;
    unsigned c = col_idx[mid];
    if (c == col) return mid;
    if (c < col) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

// One thread per (cell, local row): computes the element-matrix row and adds it into the CSR
// values. coef0/coef1 are per-(cell, point) coefficients: kappa, rho, or (lambda, mu).
// With ATOMIC == 0 the launch covers one color: `cell_list` names its cells.
extern "C" __global__ void assemble_rows(int ncells_launch, const unsigned* __restrict__ cell_list,
                                         const unsigned* __restrict__ cell_nodes, const double* __restrict__ qd_all,
                                         const double* __restrict__ ref_grad, const double* __restrict__ basis,
                                         const double* __restrict__ coef0, const double* __restrict__ coef1,
                                         const long* __restrict__ row_ptr, const unsigned* __restrict__ col_idx,
                                         double* __restrict__ values, int* __restrict__ missing) {
  long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long)ncells_launch * ND) return;
  int e = (int)(t / ND), r = (int)(t % ND);
  if (cell_list) e = (int)cell_list[e];
  const int i = r / NCOMP, a = r % NCOMP;
  double k[ND];
#pragma unroll
  for (int c = 0; c < ND; ++c) k[c] = 0.0;
  for (int q = 0; q < NQ; ++q) {
    const double* qd = qd_all + ((long)e * NQ + q) * QD;
    const double w = qd[0];
    const double c0 = coef0[(long)e * NQ + q];
#if PHYSICS == 1
    const double wi = w * c0 * basis[q * NLOC + i];
    for (int j = 0; j < NLOC; ++j) k[j * NCOMP + a] += wi * basis[q * NLOC + j];
#else
    double gi[DIM];
    phys_grad(qd, ref_grad, q, i, gi);
#if PHYSICS == 2
    const double c1 = coef1[(long)e * NQ + q];
#endif
    for (int j = 0; j < NLOC; ++j) {
      double gj[DIM];
      phys_grad(qd, ref_grad, q, j, gj);
      double dot = 0.0;
      for (int m = 0; m < DIM; ++m) dot += gi[m] * gj[m];
#if PHYSICS == 0
      k[j] += w * c0 * dot;
#else
      // sigma_{a m} = lambda div(u) delta_am + mu (du_a/dx_m + du_m/dx_a), tested with dv_a/dx_m.
      for (int b = 0; b < NCOMP; ++b)
        k[j * NCOMP + b] += w * (c0 * gi[a] * gj[b] + c1 * ((a == b ? dot : 0.0) + gi[b] * gj[a]));
#endif
    }
#endif
  }
  (void)coef1;
  const long row = (long)cell_nodes[(long)e * NLOC + i] * NCOMP + a;
  for (int j = 0; j < NLOC; ++j) {
    const unsigned node = cell_nodes[(long)e * NLOC + j];
    for (int b = 0; b < NCOMP; ++b) {
      long p = find_col(row_ptr, col_idx, row, node * NCOMP + b);
      if (p < 0) { atomicAdd(missing, 1); continue; }
#if ATOMIC
      atomicAdd(values + p, k[j * NCOMP + b]);
#else
      values[p] += k[j * NCOMP + b];
#endif
    }
  }
}

// Symmetric Dirichlet elimination, one thread per row: constrained rows become identity rows with
// b = g; free rows move constrained columns to the right-hand side. `g` is zero off constraints.
extern "C" __global__ void dirichlet_eliminate(long nrows, const long* __restrict__ row_ptr,
                                               const unsigned* __restrict__ col_idx, double* __restrict__ values,
                                               const unsigned char* __restrict__ constrained,
                                               const double* __restrict__ g, double* __restrict__ b) {
  long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  const long s = row_ptr[r], end = row_ptr[r + 1];
  if (constrained[r]) {
    for (long p = s; p < end; ++p) values[p] = (col_idx[p] == (unsigned)r) ? 1.0 : 0.0;
    b[r] = g[r];
  } else {
    double acc = b[r];
    for (long p = s; p < end; ++p) {
      const unsigned c = col_idx[p];
      if (constrained[c]) { acc -= values[p] * g[c]; values[p] = 0.0; }
    }
    b[r] = acc;
  }
}
