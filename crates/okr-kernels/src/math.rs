//! Elementwise math for the tile transforms.

/// $e^x$, within 2 ulp of `f64::exp` for every finite `x` (NaN for NaN).
///
/// Why not `f64::exp`: glibc dispatches `exp` to an FMA (VEX-encoded)
/// routine, while this crate is compiled for baseline x86-64 (SSE2). Right
/// after faer's AVX-512 GEMM has left the upper register state dirty, every
/// call then pays an SSE/AVX transition; on the Bibtex Gram it made the
/// transform 15x slower than the sparse product itself. This version is
/// branch-free, inlined and vectorizes with the surrounding loop.
///
/// Method: $x = n \ln 2 + r$ with $|r| \le \ln 2 / 2$ (Cody-Waite split of
/// $\ln 2$), $e^r$ by its degree-13 Taylor polynomial (truncation error
/// below $10^{-17}$ relative, evaluated by Estrin's scheme), then $2^n$ applied as two exact powers of two
/// so that subnormal results and overflow to infinity come out right.
#[inline(always)]
pub(crate) fn exp(x: f64) -> f64 {
    // fdlibm's split: LN2_HI has 32 trailing zero bits, so n * LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // Adding 1.5 * 2^52 rounds to an integer, which lands in the low mantissa bits.
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    const INV_FACT: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    // Written as selects so that they compile to `maxpd`/`minpd` (NaN is
    // restored at the end).
    let xc = if x > -746.0 { x } else { -746.0 };
    let xc = if xc < 710.0 { xc } else { 710.0 };
    let t = xc * std::f64::consts::LOG2_E + MAGIC;
    let nf = t - MAGIC;
    let r = (xc - nf * LN2_HI) - nf * LN2_LO;
    // Estrin's scheme: a short dependency chain, so that the loop around
    // this function is throughput-bound rather than latency-bound.
    let c = &INV_FACT;
    let (r2, r4) = (r * r, r * r * (r * r));
    let r8 = r4 * r4;
    let (q0, q1, q2, q3) = (c[0] + c[1] * r, c[2] + c[3] * r, c[4] + c[5] * r, c[6] + c[7] * r);
    let (q4, q5, q6) = (c[8] + c[9] * r, c[10] + c[11] * r, c[12] + c[13] * r);
    let (s0, s1, s2) = (q0 + q1 * r2, q2 + q3 * r2, q4 + q5 * r2);
    let p = (s0 + s1 * r4) + (s2 + q6 * r4) * r8;
    let magic_bits = MAGIC.to_bits() as i64;
    let n = t.to_bits() as i64 - magic_bits;
    let n1 = (nf * 0.5 + MAGIC).to_bits() as i64 - magic_bits;
    let n2 = n - n1;
    let s1 = f64::from_bits(((n1 + 1023) as u64) << 52);
    let s2 = f64::from_bits(((n2 + 1023) as u64) << 52);
    let y = p * s1 * s2;
    if x.is_nan() { x } else { y }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn exp_matches_std_within_two_ulp() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut xs: Vec<f64> = (0..200_000).map(|_| rng.random::<f64>() * 1417.0 - 708.0).collect();
        xs.extend((0..100_000).map(|_| rng.random::<f64>() * 2.0 - 1.0));
        xs.extend([0.0, -0.0, 1.0, -1.0, 0.5 * std::f64::consts::LN_2, -708.0, 709.0, 1e-300, -1e-20]);
        for x in xs {
            let (a, b) = (exp(x), x.exp());
            assert!((a - b).abs() <= 2.0 * f64::EPSILON * b, "exp({x}) = {a}, std {b}");
        }
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn exp_edge_cases() {
        assert_eq!(exp(-746.0), 0.0);
        assert_eq!(exp(-1e300), 0.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert_eq!(exp(f64::INFINITY), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
        // Subnormal results keep their magnitude.
        for x in [-709.0, -720.0, -740.0, -745.0] {
            let (a, b) = (exp(x), x.exp());
            assert!((a - b).abs() <= 1e-3 * b + f64::from_bits(1), "exp({x}) = {a}, std {b}");
        }
    }
}
