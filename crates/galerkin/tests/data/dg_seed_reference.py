#!/usr/bin/env python3
"""Reference coefficients of the seed's DG example, computed independently of galerkin.

Problem: -u'' = f on (0, 1), u(0) = 1, u(1) = 0, exact u = (1 - x) exp(-x^2), so
f = exp(-x^2) (2 - 6x - 4x^2 + 4x^3). Interior penalty DG (Riviere, "Discontinuous Galerkin
Methods for Solving Elliptic and Parabolic Equations", SIAM 2008, ch. 1) with epsilon = -1 (SIPG),
penalty sigma/h with sigma = 2, N = 10 uniform elements, the seed's scaled monomials
phi_j = (2 (x - x_m) / h)^j, j = 0, 1, 2, Dirichlet ends imposed weakly:

  a(u, v) = sum_E int_E u'v' - sum_f {u'}[v] + eps sum_f {v'}[u] + sum_f sigma/h [u][v]
  L(v)    = int f v - eps v'(0) u(0) + sigma/h v(0) u(0) + eps v'(1) u(1) + sigma/h v(1) u(1)

with [v] = v(x-) - v(x+), {v} = (v(x-) + v(x+))/2 on interior faces, [v] = -v(0), {v} = v(0)
at x = 0 and [v] = v(1), {v} = v(1) at x = 1.

The matrix is exact in rational arithmetic (fractions: polynomial integrals and traces in closed
form); the load vector integrals use a 20-point Gauss-Legendre rule per element in double precision
(error near 1e-16); the 30 x 30 system is then solved exactly in rational arithmetic. Only the
Python standard library is used. Run:  python3 dg_seed_reference.py > dg_seed_reference.json
"""
import json
import math
from fractions import Fraction as F

N, K, EPS, SIGMA = 10, 2, -1, 2
B = K + 1
H = F(1, N)


def f(x):
    return math.exp(-x * x) * (2.0 - 6.0 * x - 4.0 * x * x + 4.0 * x ** 3)


def gauss_legendre(n):
    """Nodes and weights on [-1, 1] by Newton's method on P_n."""
    nodes, weights = [], []
    for i in range(n):
        x = math.cos(math.pi * (i + 0.75) / (n + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, x
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * x * p1 - (k - 1) * p0) / k
            dp = n * (x * p1 - p0) / (x * x - 1.0)
            dx = p1 / dp
            x -= dx
            if abs(dx) < 1e-16:
                break
        nodes.append(x)
        weights.append(2.0 / ((1.0 - x * x) * dp * dp))
    return nodes, weights


def value(j, xi):
    """phi_j at reference point xi (exact for xi = +-1)."""
    return F(xi) ** j


def deriv(j, xi):
    """d phi_j / dx at reference point xi: (2/h) j xi^(j-1)."""
    return F(0) if j == 0 else 2 / H * j * F(xi) ** (j - 1)


def dof(e, j):
    return e * B + j


n = N * B
A = [[F(0)] * n for _ in range(n)]
rhs = [F(0)] * n

# Volume terms: int_E phi_i' phi_j' dx = (2/h) i j int_{-1}^{1} xi^(i+j-2) dxi.
for e in range(N):
    for i in range(B):
        for j in range(B):
            m = i + j - 2
            if i > 0 and j > 0 and m % 2 == 0:
                A[dof(e, i)][dof(e, j)] += 2 / H * i * j * F(2, m + 1)

# Face terms. A trace is (element, reference point, jump sign, average weight).
faces = []
for x in range(N + 1):
    if x == 0:
        faces.append([(0, -1, -1, F(1))])
    elif x == N:
        faces.append([(N - 1, 1, 1, F(1))])
    else:
        faces.append([(x - 1, 1, 1, F(1, 2)), (x, -1, -1, F(1, 2))])
for traces in faces:
    for (ev, xv, sv, wv) in traces:          # test function side
        for (eu, xu, su, wu) in traces:      # trial function side
            for i in range(B):
                for j in range(B):
                    avg_du = wu * deriv(j, xu)
                    jump_v = sv * value(i, xv)
                    avg_dv = wv * deriv(i, xv)
                    jump_u = su * value(j, xu)
                    A[dof(ev, i)][dof(eu, j)] += -avg_du * jump_v + EPS * avg_dv * jump_u + SIGMA / H * jump_u * jump_v

# Load: int_E f phi_i dx = (h/2) sum_q w_q f(x_q) xi_q^i.
xs, ws = gauss_legendre(20)
for e in range(N):
    xm = (e + 0.5) / N
    for i in range(B):
        s = sum(w * f(xm + 0.5 / N * xi) * xi ** i for xi, w in zip(xs, ws))
        rhs[dof(e, i)] += F(0.5 / N * s)

# Nitsche terms of the Dirichlet data u(0) = 1, u(1) = 0: the face terms with [u] = -g at 0, +g at 1.
for (traces, g) in ((faces[0], F(1)), (faces[N], F(0))):
    (e, xv, sv, wv) = traces[0]
    for i in range(B):
        jump_g = sv * g
        rhs[dof(e, i)] += EPS * wv * deriv(i, xv) * jump_g + SIGMA / H * jump_g * sv * value(i, xv)

# Exact solve (Gauss-Jordan over the rationals).
M = [row[:] + [rhs[r]] for r, row in enumerate(A)]
for c in range(n):
    p = next(r for r in range(c, n) if M[r][c] != 0)
    M[c], M[p] = M[p], M[c]
    piv = M[c][c]
    M[c] = [v / piv for v in M[c]]
    for r in range(n):
        if r != c and M[r][c] != 0:
            fac = M[r][c]
            M[r] = [a - fac * b for a, b in zip(M[r], M[c])]
coef = [float(M[r][n]) for r in range(n)]

print(json.dumps({
    "problem": "-u'' = f on (0,1), u = (1-x) exp(-x^2), u(0) = 1, u(1) = 0",
    "elements": N, "degree": K, "epsilon": EPS, "sigma": SIGMA, "penalty": "sigma/h",
    "basis": "monomial (2(x - x_m)/h)^j", "generator": "dg_seed_reference.py",
    "coefficients": coef,
}, indent=1))
