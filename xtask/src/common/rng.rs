//! Seeded standard-normal draws shared by the stand-ins and synthetic
//! studies. Both are Box-Muller on two uniforms, kept (rather than
//! `rand_distr`) because the published records were drawn with them.

use rand::{Rng, RngExt};

/// One standard normal draw from `rng`: Box-Muller on `u1 = 1 - u` (in
/// `(0, 1]`, so the logarithm is finite) and `u2`, one of the pair kept.
pub fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>();
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A 64-bit LCG: draws that depend on nothing but the seed, on every
/// platform and `rand` version.
pub struct Lcg(pub u64);

impl Lcg {
    /// A uniform draw in `(0, 1)` from the top 53 bits of the next state.
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 + 0.5) / ((1u64 << 53) as f64)
    }

    /// A standard normal draw: Box-Muller on two uniforms.
    pub fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn normal_draws_have_unit_moments() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let v: Vec<f64> = (0..20000).map(|_| normal(&mut rng)).collect();
        let (m, s) = crate::common::stats::mean_std(&v);
        assert!(m.abs() < 0.03 && (s - 1.0).abs() < 0.03, "{m} {s}");
        let mut lcg = Lcg(3);
        let w: Vec<f64> = (0..20000).map(|_| lcg.normal()).collect();
        let (m, s) = crate::common::stats::mean_std(&w);
        assert!(m.abs() < 0.03 && (s - 1.0).abs() < 0.03, "{m} {s}");
    }

    #[test]
    fn lcg_is_the_published_sequence() {
        // The first state after seed 0 is the LCG's increment.
        let mut lcg = Lcg(0);
        let u = lcg.uniform();
        assert_eq!(lcg.0, 1442695040888963407);
        assert_eq!(u, ((1442695040888963407u64 >> 11) as f64 + 0.5) / ((1u64 << 53) as f64));
        assert!((0.0..1.0).contains(&Lcg(u64::MAX).uniform()));
    }
}
