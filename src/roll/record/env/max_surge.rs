//! `--max-surge` (key `max_surge`): how many instances above its size a
//! group may hold during the roll, as a count or a share of its size.

/// `--max-surge` as given: a number of instances, or a share of the
/// group's size when the roll began.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MaxSurge {
    Instances(u32),
    Percent(u32),
}

impl MaxSurge {
    /// `6` or `10%`; at least one instance (a roll needs room for one new
    /// agent), a share above 0 % and at most 100 %.
    pub(crate) fn parse(text: &str) -> Result<MaxSurge, String> {
        let text = text.trim();
        let expected = "a number of instances (at least 1) or a share of the group's size \
                        (1% to 100%), such as 6 or 10%";
        let surge = match text.strip_suffix('%') {
            Some(share) => share
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|p| (1..=100).contains(p))
                .map(MaxSurge::Percent),
            None => text
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1)
                .map(MaxSurge::Instances),
        };
        surge.ok_or_else(|| format!("'{text}' is not {expected}"))
    }

    /// The cap in instances for a group of `size`: a share is rounded up
    /// (10 % of 55 is 6), and is at least one.
    pub(crate) fn instances(self, size: u32) -> u32 {
        match self {
            MaxSurge::Instances(n) => n,
            MaxSurge::Percent(p) => (u64::from(size) * u64::from(p)).div_ceil(100).max(1) as u32,
        }
    }
}

impl std::fmt::Display for MaxSurge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MaxSurge::Instances(n) => write!(f, "{n}"),
            MaxSurge::Percent(p) => write!(f, "{p}%"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_surge_reads_a_count_or_a_share_and_refuses_the_rest() {
        assert_eq!(MaxSurge::parse("6"), Ok(MaxSurge::Instances(6)));
        assert_eq!(MaxSurge::parse(" 10% "), Ok(MaxSurge::Percent(10)));
        for bad in ["0", "0%", "101%", "-1", "ten", "", "%", "1.5"] {
            let err = MaxSurge::parse(bad).expect_err(bad);
            assert!(err.contains("such as 6 or 10%"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_share_is_rounded_up_and_is_at_least_one_instance() {
        assert_eq!(MaxSurge::Percent(10).instances(55), 6);
        assert_eq!(MaxSurge::Percent(10).instances(50), 5);
        assert_eq!(MaxSurge::Percent(1).instances(3), 1);
        assert_eq!(MaxSurge::Percent(100).instances(55), 55);
        assert_eq!(MaxSurge::Instances(4).instances(55), 4);
    }
}
