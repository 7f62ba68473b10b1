//! The world's one source of randomness: a small seeded generator
//! (SplitMix64) owned by the world, so a seed reproduces a run exactly and
//! no library upgrade can change the sequence under a recorded scenario.

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough for
/// placement choices, jitter and ids; not for anything secret.
#[derive(Clone, Debug)]
pub(crate) struct SimRng {
    state: u64,
}

impl SimRng {
    pub(crate) fn new(seed: u64) -> SimRng {
        SimRng { state: seed }
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when n is 0), by multiply-shift: no modulo bias
    /// worth caring about at these sizes.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A duration `base_ms` spread by ±`jitter` (a fraction, 0 = exact).
    pub(crate) fn jittered(&mut self, base_ms: u64, jitter: f64) -> u64 {
        if jitter <= 0.0 || base_ms == 0 {
            return base_ms;
        }
        let spread = (base_ms as f64 * jitter) as u64;
        if spread == 0 {
            return base_ms;
        }
        base_ms - spread + self.below(2 * spread + 1)
    }

    /// A version-4 UUID drawn from this generator (deterministic per seed).
    pub(crate) fn uuid(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next_u64().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next_u64().to_le_bytes());
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }

    /// `n` hex digits, for EC2-style ids (`i-0abc…`).
    pub(crate) fn hex(&mut self, n: usize) -> String {
        let mut out = String::with_capacity(n);
        while out.len() < n {
            let word = self.next_u64();
            for shift in (0..16).rev() {
                if out.len() == n {
                    break;
                }
                let digit = ((word >> (shift * 4)) & 0xF) as u32;
                out.push(char::from_digit(digit, 16).unwrap_or('0'));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::SimRng;

    #[test]
    fn the_same_seed_gives_the_same_sequence_and_another_seed_does_not() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut r = SimRng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut r = SimRng::new(7);
                move |_| r.next_u64()
            })
            .collect();
        let c: Vec<u64> = (0..5)
            .map({
                let mut r = SimRng::new(8);
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn below_stays_in_range_and_jitter_stays_within_its_spread() {
        let mut r = SimRng::new(1);
        for _ in 0..1000 {
            assert!(r.below(3) < 3);
            let j = r.jittered(90_000, 0.1);
            assert!((81_000..=99_000).contains(&j), "{j}");
        }
        assert_eq!(r.jittered(90_000, 0.0), 90_000);
        assert_eq!(r.hex(17).len(), 17);
    }
}
