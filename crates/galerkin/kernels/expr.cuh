// Problem-file expressions on the device (`expr::cuda`): every function overloaded for `double`
// and for `Dual3`, a value with its gradient in (x, y, z) (forward-mode differentiation), so one
// generated text gives values and exact gradients. Mirrors `src/expr/compile.rs`.

struct Dual3 {
    double v, d[3];
};

__device__ __forceinline__ Dual3 dual_const(double v) { return Dual3{v, {0.0, 0.0, 0.0}}; }
// The chain rule: f(a) with f'(a) = df.
__device__ __forceinline__ Dual3 chain(const Dual3& a, double v, double df) {
    return Dual3{v, {df * a.d[0], df * a.d[1], df * a.d[2]}};
}

__device__ __forceinline__ Dual3 operator+(const Dual3& a, const Dual3& b) {
    return Dual3{a.v + b.v, {a.d[0] + b.d[0], a.d[1] + b.d[1], a.d[2] + b.d[2]}};
}
__device__ __forceinline__ Dual3 operator-(const Dual3& a, const Dual3& b) {
    return Dual3{a.v - b.v, {a.d[0] - b.d[0], a.d[1] - b.d[1], a.d[2] - b.d[2]}};
}
__device__ __forceinline__ Dual3 operator*(const Dual3& a, const Dual3& b) {
    return Dual3{a.v * b.v, {a.d[0] * b.v + a.v * b.d[0], a.d[1] * b.v + a.v * b.d[1], a.d[2] * b.v + a.v * b.d[2]}};
}
__device__ __forceinline__ Dual3 operator/(const Dual3& a, const Dual3& b) {
    const double q = a.v / b.v;
    return Dual3{q, {(a.d[0] - q * b.d[0]) / b.v, (a.d[1] - q * b.d[1]) / b.v, (a.d[2] - q * b.d[2]) / b.v}};
}
__device__ __forceinline__ Dual3 operator-(const Dual3& a) { return Dual3{-a.v, {-a.d[0], -a.d[1], -a.d[2]}}; }
// Mixed with numbers (literals of the generated text are doubles).
__device__ __forceinline__ Dual3 operator+(const Dual3& a, double b) { return a + dual_const(b); }
__device__ __forceinline__ Dual3 operator+(double a, const Dual3& b) { return dual_const(a) + b; }
__device__ __forceinline__ Dual3 operator-(const Dual3& a, double b) { return a - dual_const(b); }
__device__ __forceinline__ Dual3 operator-(double a, const Dual3& b) { return dual_const(a) - b; }
__device__ __forceinline__ Dual3 operator*(const Dual3& a, double b) { return Dual3{a.v * b, {a.d[0] * b, a.d[1] * b, a.d[2] * b}}; }
__device__ __forceinline__ Dual3 operator*(double a, const Dual3& b) { return b * a; }
__device__ __forceinline__ Dual3 operator/(const Dual3& a, double b) { return a * (1.0 / b); }
__device__ __forceinline__ Dual3 operator/(double a, const Dual3& b) { return dual_const(a) / b; }

__device__ __forceinline__ double value_of(double a) { return a; }
__device__ __forceinline__ double value_of(const Dual3& a) { return a.v; }
__device__ __forceinline__ Dual3 as_dual(double a) { return dual_const(a); }
__device__ __forceinline__ Dual3 as_dual(const Dual3& a) { return a; }

// One-argument functions: the double version and the Dual3 one from (value, derivative).
#define EX_FN1(NAME, VALUE, DERIV)                                                                 \
    __device__ __forceinline__ double NAME(double a) { return VALUE; }                            \
    __device__ __forceinline__ Dual3 NAME(const Dual3& A) {                                       \
        const double a = A.v;                                                                     \
        const double v = VALUE;                                                                   \
        (void)v;                                                                                  \
        return chain(A, v, DERIV);                                                                \
    }

EX_FN1(ex_abs, fabs(a), (a > 0.0) - (a < 0.0))
EX_FN1(ex_signum, (isnan(a) ? a : (signbit(a) ? -1.0 : 1.0)), 0.0)
EX_FN1(ex_sin, sin(a), cos(a))
EX_FN1(ex_cos, cos(a), -sin(a))
EX_FN1(ex_tan, tan(a), 1.0 + v * v)
EX_FN1(ex_asin, asin(a), 1.0 / sqrt(1.0 - a * a))
EX_FN1(ex_acos, acos(a), -1.0 / sqrt(1.0 - a * a))
EX_FN1(ex_atan, atan(a), 1.0 / (1.0 + a * a))
EX_FN1(ex_sinh, sinh(a), cosh(a))
EX_FN1(ex_cosh, cosh(a), sinh(a))
EX_FN1(ex_tanh, tanh(a), 1.0 - v * v)
EX_FN1(ex_asinh, asinh(a), 1.0 / sqrt(a * a + 1.0))
EX_FN1(ex_acosh, acosh(a), 1.0 / sqrt(a * a - 1.0))
EX_FN1(ex_atanh, atanh(a), 1.0 / (1.0 - a * a))
EX_FN1(ex_floor, floor(a), 0.0)
EX_FN1(ex_round, round(a), 0.0)
EX_FN1(ex_ceil, ceil(a), 0.0)
EX_FN1(ex_trunc, trunc(a), 0.0)
EX_FN1(ex_fract, a - trunc(a), 1.0)
EX_FN1(ex_exp, exp(a), v)
EX_FN1(ex_sqrt, sqrt(a), 0.5 / v)
EX_FN1(ex_cbrt, cbrt(a), 1.0 / (3.0 * v * v))
EX_FN1(ex_log, log(a), 1.0 / a)
EX_FN1(ex_log2, log2(a), 1.0 / (a * 0.6931471805599453))
EX_FN1(ex_log10, log10(a), 1.0 / (a * 2.302585092994046))

__device__ __forceinline__ double ex_pow(double a, double b) { return b == 2.0 ? a * a : pow(a, b); }
// a^b: a constant exponent keeps negative bases (x^2 at x < 0).
__device__ __forceinline__ Dual3 ex_pow(const Dual3& a, const Dual3& b) {
    const double v = ex_pow(a.v, b.v);
    const double da = b.v == 0.0 ? 0.0 : b.v * pow(a.v, b.v - 1.0);
    const bool const_exp = b.d[0] == 0.0 && b.d[1] == 0.0 && b.d[2] == 0.0;
    const double db = const_exp ? 0.0 : v * log(a.v);
    Dual3 r{v, {0.0, 0.0, 0.0}};
    for (int k = 0; k < 3; ++k) r.d[k] = da * a.d[k] + db * b.d[k];
    return r;
}
__device__ __forceinline__ Dual3 ex_pow(const Dual3& a, double b) { return ex_pow(a, dual_const(b)); }
__device__ __forceinline__ Dual3 ex_pow(double a, const Dual3& b) { return ex_pow(dual_const(a), b); }

__device__ __forceinline__ double ex_atan2(double y, double x) { return atan2(y, x); }
__device__ __forceinline__ Dual3 ex_atan2(const Dual3& y, const Dual3& x) {
    const double r2 = y.v * y.v + x.v * x.v;
    Dual3 r{atan2(y.v, x.v), {0.0, 0.0, 0.0}};
    for (int k = 0; k < 3; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) / r2;
    return r;
}
template <class A, class B>
__device__ __forceinline__ auto ex_atan2(const A& y, const B& x) { return ex_atan2(as_dual(y), as_dual(x)); }

// min/max follow the values (Rust's f64::min/max: a NaN operand yields the other).
__device__ __forceinline__ double ex_min(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ double ex_max(double a, double b) { return fmax(a, b); }
template <class A, class B>
__device__ __forceinline__ Dual3 ex_min(const A& a, const B& b) {
    return fmin(value_of(a), value_of(b)) == value_of(a) ? as_dual(a) : as_dual(b);
}
template <class A, class B>
__device__ __forceinline__ Dual3 ex_max(const A& a, const B& b) {
    return fmax(value_of(a), value_of(b)) == value_of(a) ? as_dual(a) : as_dual(b);
}
