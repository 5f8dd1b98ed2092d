/*
 * One pass of the fused loss and gradient of boundcalc.validators.train on the CPU, for the
 * tanh activation: R̂(θ) = (1/n) Σ_j (f_j − y_j)² and the sums its gradient (Lemma 1) is made
 * of. Same mathematics as train._fused_range (see fused_loss_and_gradient's docstring), with
 * every per-(sample, token, head) quantity kept in vector registers: nothing of size n·T·m is
 * written to memory, which is what the torch path of that function cannot avoid.
 *
 * Several students at once. The heads of S students (S ≥ 1, the widths of one figure-1 seed,
 * say) are laid side by side, each student padded to whole blocks, and ``block_student[b]``
 * names the student of block b (blocks of one student are consecutive). Every student has its
 * own output f_js = Σ_{i∈s} c_i/√m_s σ(pre_ji), its own residual r_js = f_js − y_j and loss
 * Σ_j r_js²; a head's gradient sums use its own student's residual. Heads never interact, so
 * one pass over the samples serves every student: the samples are read once per step for all
 * of them, and a student's numbers are those of a pass over that student alone, bit for bit
 * (same blocks, same order of every sum).
 *
 * Built by cpu_kernel.py with the token dimension KD and the real type fixed at compile time
 * (-DKD=<d>, -DREAL_DOUBLE for float64), so that the short loops over a, e < KD unroll. Heads
 * are processed in blocks of VL (one vector register: 64 bytes where the compiler targets
 * AVX-512, 32 bytes otherwise; boundcalc_lanes() tells the caller), written with GCC's vector
 * extensions.
 *
 * Layouts (row-major; m_pad a multiple of VL, padded heads all zero; head i = VL·b + l lies in
 * block b, lane l, and every per-head array is block-major, a block's values contiguous):
 *   X (n, T, KD), q (n, KD), y (n),
 *   Wmap (m_pad/VL, KD_e, KD_a, VL) = log2(e) · W[i, a, e],   Ut (m_pad/VL, KD_a, VL) = U[i, a],
 *   cs (m_pad) = c_i / sqrt(m_s),  block_student (m_pad/VL) in 0 … S−1.
 * Outputs, summed over the n samples of the call:
 *   loss[s] = Σ_j r_js² (double), preds[j·S + s] = f_js, and if need_grad (buffers zeroed by
 *   the caller), for head i of student s:
 *   grad_c (m_pad)                  += Σ_j r_js h_ji,
 *   acc_a (m_pad/VL, KD_a, VL)      += Σ_j κ̃_ji (S a)_ji[a] / S_ji,
 *   acc_W (m_pad/VL, KD_e, KD_a, VL) += Σ_j q_j[e] κ̃_ji (S G_jU_i)[a] / S_ji,
 * with h = tanh(pre), κ̃_ji = r_js σ'(pre_ji): the partial sums of _fused_range (the caller
 * applies the per-head factor 2 c_i / (n √m_s)).
 *
 * Softmax: e_t = 2^(z'_t − max_t z'_t) (z' = log2(e) z), S = Σ_t e_t ≥ 1: the exact max shift.
 * exp2 and tanh are polynomials accurate to a few units in the last place (tested against
 * torch in tests/validators/kernel/test_cpu_kernel.py). Sums run in a fixed order: deterministic.
 */
#include <stdint.h>
#include <stdlib.h>

#ifndef KD
#error "compile with -DKD=<token dimension d>"
#endif

#ifdef REAL_DOUBLE
typedef double real;
typedef int64_t ireal;
#define EXP_SHIFT 52
#define EXP_BIAS 1023
#define EXP_MIN (-1020.0)
#define ROUND_MAGIC 6755399441055744.0          /* 1.5 · 2^52 */
#define TANH_SMALL 0.02
#define SIGN_BIT ((ireal)1 << 63)
#else
typedef float real;
typedef int32_t ireal;
#define EXP_SHIFT 23
#define EXP_BIAS 127
#define EXP_MIN (-125.0f)
#define ROUND_MAGIC 12582912.0f                 /* 1.5 · 2^23 */
#define TANH_SMALL 0.125f
#define SIGN_BIT ((ireal)1 << 31)
#endif

#ifndef VBYTES
#ifdef __AVX512F__
#define VBYTES 64
#else
#define VBYTES 32
#endif
#endif
#define VL ((int)(VBYTES / sizeof(real)))
/* z_t and x_tᵀU_i in one pass over the tokens needs W_i q and U_i (2·KD vectors) in registers:
 * done where the 32 registers of AVX-512 hold them; with 16 (AVX2) two passes avoid spilling.
 * Both compute every value in the same order, so the numbers are the same. */
#ifndef FUSED_TOKEN_PASS
#define FUSED_TOKEN_PASS (VBYTES >= 64 && KD <= 12)
#endif
typedef real vec __attribute__((vector_size(VBYTES), aligned(sizeof(real))));
typedef ireal ivec __attribute__((vector_size(VBYTES), aligned(sizeof(real))));

static inline vec splat(real x) { return (vec){0} + x; }
static inline vec load(const real *p) { return *(const vec *)p; }
static inline void store(real *p, vec v) { *(vec *)p = v; }
static inline vec vselect(ivec mask, vec yes, vec no) {
    return (vec)(((ivec)yes & mask) | ((ivec)no & ~mask));
}

/* 2^x for x ≤ 0 (x below EXP_MIN gives 2^EXP_MIN, negligible next to S ≥ 1): 2^x = 2^k 2^g,
 * k = round(x) read off the low bits of x + 1.5·2^p, g = x − k ∈ [−½, ½], 2^g = e^(g ln 2) by
 * its Taylor series (to degree 7 in float, 13 in double: truncation below 1e-8 / 1e-16). */
static inline vec exp2v(vec x) {
    x = vselect(x < splat((real)EXP_MIN), splat((real)EXP_MIN), x);
    const vec shifted = x + splat(ROUND_MAGIC);
    const vec k = shifted - splat(ROUND_MAGIC);
    const ivec scale = ((ivec)shifted - (ivec)splat(ROUND_MAGIC) + EXP_BIAS) << EXP_SHIFT;
    const vec g = (x - k) * (real)0.69314718055994530942;
#ifdef REAL_DOUBLE
    vec s = splat((real)(1.0 / 6227020800.0));
    s = s * g + (real)(1.0 / 479001600.0);
    s = s * g + (real)(1.0 / 39916800.0);
    s = s * g + (real)(1.0 / 3628800.0);
    s = s * g + (real)(1.0 / 362880.0);
    s = s * g + (real)(1.0 / 40320.0);
    s = s * g + (real)(1.0 / 5040.0);
#else
    vec s = splat((real)(1.0 / 5040.0));
#endif
    s = s * g + (real)(1.0 / 720.0);
    s = s * g + (real)(1.0 / 120.0);
    s = s * g + (real)(1.0 / 24.0);
    s = s * g + (real)(1.0 / 6.0);
    s = s * g + (real)0.5;
    s = s * g + (real)1.0;
    s = s * g + (real)1.0;
    return s * (vec)scale;
}

/* tanh(x): |x| < TANH_SMALL by the odd Taylor series to x^11; else sign(x)(1 − e)/(1 + e),
 * e = exp(−2|x|) ≤ e^(−2·TANH_SMALL), so the cancellation in 1 − e costs a few ulps at most. */
static inline vec tanhv(vec x) {
    const ivec sign = (ivec)x & SIGN_BIT;
    const vec ax = (vec)((ivec)x & ~SIGN_BIT);
    const vec e = exp2v(ax * (real)-2.8853900817779268);   /* −2 log2(e) |x| */
    const vec large = (vec)((ivec)((splat(1) - e) / (splat(1) + e)) | sign);
    const vec x2 = x * x;
    vec s = splat((real)(1382.0 / 155925.0));
    s = s * x2 - (real)(62.0 / 2835.0);
    s = s * x2 + (real)(17.0 / 315.0);
    s = s * x2 - (real)(2.0 / 15.0);
    s = s * x2 + (real)(1.0 / 3.0);
    const vec small = x - x * x2 * s;
    return vselect(ax < splat((real)TANH_SMALL), small, large);
}

/* Per (sample, head) values kept between the forward sweep and the gradient of a chunk:
 * S a (KD), X^T(e∘P) (KD, later replaced by κ̃ G U / S), pre, 1/S, h. */
#define SLOTS (2 * KD + 3)

/* Heads per block: the caller pads every student to a multiple of this. */
int boundcalc_lanes(void) { return VL; }

/* Forward sweep of one sample over all head blocks; writes f_js into f[s]. With keep, the
 * per-head values of the gradient are stored in slot. */
static void sample_forward(const real *restrict x, const real *restrict qj, int64_t T,
                           int64_t m_pad, int64_t S_count, const int32_t *restrict student,
                           const real *restrict Wmap, const real *restrict Ut,
                           const real *restrict cs, real *restrict slot, vec *restrict zbuf,
                           vec *restrict fv, real *restrict f, int keep) {
    for (int64_t s = 0; s < S_count; s++) fv[s] = splat(0);
    for (int64_t off = 0; off < m_pad; off += VL) {
        const real *Wb = Wmap + off * KD * KD, *Ubk = Ut + off * KD;
        real *sl = slot + off * SLOTS;
        vec Wq[KD];                                   /* log2(e) W_i q_j */
        for (int a = 0; a < KD; a++) Wq[a] = splat(0);
        for (int e = 0; e < KD; e++) {
            const real qe = qj[e];
            for (int a = 0; a < KD; a++) Wq[a] += qe * load(Wb + (e * KD + a) * VL);
        }
        vec Ub[KD];
        for (int a = 0; a < KD; a++) Ub[a] = load(Ubk + a * VL);
        vec zmax = splat((real)-1e30);
#if FUSED_TOKEN_PASS
        for (int64_t t = 0; t < T; t++) {             /* z'_t = log2(e) x_tᵀ W_i q_j, x_tᵀU_i */
            const real *xt = x + t * KD;
            vec z = splat(0), P = splat(0);
            for (int a = 0; a < KD; a++) {
                z += xt[a] * Wq[a];
                P += xt[a] * Ub[a];
            }
            zbuf[t] = z;
            zbuf[T + t] = P;
            zmax = vselect(z > zmax, z, zmax);
        }
        vec S = splat(0), SP = splat(0);
        for (int64_t t = 0; t < T; t++) {             /* e_t = S s_t, and e_t x_tᵀU_i */
            const vec ev = exp2v(zbuf[t] - zmax);
            const vec P = zbuf[T + t] * ev;
            S += ev;
            SP += P;
            zbuf[t] = ev;
            zbuf[T + t] = P;
        }
#else
        for (int64_t t = 0; t < T; t++) {             /* z'_t = log2(e) x_tᵀ W_i q_j */
            const real *xt = x + t * KD;
            vec z = splat(0);
            for (int a = 0; a < KD; a++) z += xt[a] * Wq[a];
            zbuf[t] = z;
            zmax = vselect(z > zmax, z, zmax);
        }
        vec S = splat(0), SP = splat(0);
        for (int64_t t = 0; t < T; t++) {             /* e_t = S s_t, and e_t x_tᵀU_i */
            const real *xt = x + t * KD;
            const vec ev = exp2v(zbuf[t] - zmax);
            vec P = splat(0);
            for (int a = 0; a < KD; a++) P += xt[a] * Ub[a];
            P *= ev;
            S += ev;
            SP += P;
            zbuf[t] = ev;
            zbuf[T + t] = P;
        }
#endif
        const vec sinv = splat(1) / S;
        const vec pre = SP * sinv;                    /* a_iᵀU_i */
        const vec h = tanhv(pre);
        fv[student[off / VL]] += load(cs + off) * h;
        if (!keep) continue;
        vec acc[KD];                                  /* S a = Σ_t e_t x_t */
        for (int a = 0; a < KD; a++) acc[a] = splat(0);
        for (int64_t t = 0; t < T; t++)
            for (int a = 0; a < KD; a++) acc[a] += x[t * KD + a] * zbuf[t];
        for (int a = 0; a < KD; a++) store(sl + a * VL, acc[a]);
        for (int a = 0; a < KD; a++) acc[a] = splat(0);   /* Xᵀ(e∘P) */
        for (int64_t t = 0; t < T; t++)
            for (int a = 0; a < KD; a++) acc[a] += x[t * KD + a] * zbuf[T + t];
        for (int a = 0; a < KD; a++) store(sl + (KD + a) * VL, acc[a]);
        store(sl + 2 * KD * VL, pre);
        store(sl + (2 * KD + 1) * VL, sinv);
        store(sl + (2 * KD + 2) * VL, h);
    }
    for (int64_t s = 0; s < S_count; s++) {
        real out = 0;
        for (int ii = 0; ii < VL; ii++) out += fv[s][ii];
        f[s] = out;
    }
}

/* Samples 0 … n−1 (see the header). Returns 0, or 1 if out of memory. */
int boundcalc_fused_tanh(int64_t n, int64_t T, int64_t m_pad, int64_t chunk, int64_t S_count,
                         const int32_t *restrict student, const real *restrict X,
                         const real *restrict q, const real *restrict y,
                         const real *restrict Wmap, const real *restrict Ut,
                         const real *restrict cs, int need_grad, real *restrict preds,
                         double *restrict loss, real *restrict grad_c, real *restrict acc_a,
                         real *restrict acc_W) {
    if (chunk < 1) chunk = 1;
    if (S_count < 1) return 1;
    const int64_t per = SLOTS * m_pad;
    real *slots = (real *)aligned_alloc(VBYTES, sizeof(real) * (size_t)(per * chunk));
    vec *zbuf = (vec *)aligned_alloc(VBYTES, sizeof(vec) * (size_t)(2 * T));
    vec *fv = (vec *)aligned_alloc(VBYTES, sizeof(vec) * (size_t)S_count);
    real *rs = (real *)malloc(sizeof(real) * (size_t)(chunk * S_count));
    if (!slots || !zbuf || !fv || !rs) {
        free(slots); free(zbuf); free(fv); free(rs);
        return 1;
    }
    for (int64_t s = 0; s < S_count; s++) loss[s] = 0.0;
    for (int64_t j0 = 0; j0 < n; j0 += chunk) {
        const int64_t jn = n - j0 < chunk ? n - j0 : chunk;
        for (int64_t jj = 0; jj < jn; jj++) {
            const int64_t j = j0 + jj;
            real *f = preds + j * S_count;
            sample_forward(X + j * T * KD, q + j * KD, T, m_pad, S_count, student, Wmap, Ut,
                           cs, slots + jj * per, zbuf, fv, f, need_grad);
            for (int64_t s = 0; s < S_count; s++) {
                const real r = f[s] - y[j];
                rs[jj * S_count + s] = r;
                loss[s] += (double)r * (double)r;
            }
        }
        if (!need_grad) continue;
        for (int64_t off = 0; off < m_pad; off += VL) {
            const int64_t s = student[off / VL];
            real *aW = acc_W + off * KD * KD, *aA = acc_a + off * KD;
            vec gc = load(grad_c + off), aa[KD];
            for (int a = 0; a < KD; a++) aa[a] = load(aA + a * VL);
            for (int64_t jj = 0; jj < jn; jj++) {
                real *sl = slots + jj * per + off * SLOTS;
                const real r = rs[jj * S_count + s];
                const vec h = load(sl + (2 * KD + 2) * VL), pre = load(sl + 2 * KD * VL);
                const vec kap = r * (splat(1) - h * h) * load(sl + (2 * KD + 1) * VL);
                gc += r * h;
                for (int a = 0; a < KD; a++) {           /* κ̃ G U / S, in place of Xᵀ(e∘P) */
                    const vec sa = load(sl + a * VL);
                    real *bx = sl + (KD + a) * VL;
                    store(bx, (load(bx) - pre * sa) * kap);
                    aa[a] += sa * kap;
                }
            }
            store(grad_c + off, gc);
            for (int a = 0; a < KD; a++) store(aA + a * VL, aa[a]);
            for (int a = 0; a < KD; a++) {               /* acc_W[·][a] += Σ_j q_j ⊗ G_j[a] */
                vec w[KD];
                for (int e = 0; e < KD; e++) w[e] = load(aW + (e * KD + a) * VL);
                for (int64_t jj = 0; jj < jn; jj++) {
                    const vec g = load(slots + jj * per + off * SLOTS + (KD + a) * VL);
                    const real *qj = q + (j0 + jj) * KD;
                    for (int e = 0; e < KD; e++) w[e] += qj[e] * g;
                }
                for (int e = 0; e < KD; e++) store(aW + (e * KD + a) * VL, w[e]);
            }
        }
    }
    free(slots);
    free(zbuf);
    free(fv);
    free(rs);
    return 0;
}
