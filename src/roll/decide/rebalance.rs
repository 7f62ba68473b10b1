//! AZ rebalance moves: from how many instances an Auto Scaling group holds
//! in each Availability Zone, the fewest single-instance moves that leave it
//! balanced (any two AZs differ by at most one), and where they go.
//!
//! The roll runs with AZRebalance suspended, so that AWS never terminates
//! an instance behind its back; once the original instances are gone the
//! counts may be uneven (the Mesos Slave Roller write-up's appendix). When
//! AZRebalance is resumed, AWS launches in a low AZ and terminates in a high
//! one until the group is balanced. Each such move takes one agent away, so
//! the operator wants to know beforehand how many there will be and where.
//! This module answers that; it is pure (no I/O, the same answer for the
//! same input) and also parses the `AZ=COUNT,...` form the CLI takes.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use serde::Serialize;

/// One instance moved: a launch in `to`, a termination in `from`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Move {
    /// The AZ that loses an instance (AWS terminates one there).
    pub(crate) from: String,
    /// The AZ that gains one (AWS launches one there).
    pub(crate) to: String,
}

/// What rebalancing does to a group: the moves, then the counts they reach.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Rebalance {
    /// One per instance moved, as few as any balanced state allows; empty
    /// when the group is already balanced.
    pub(crate) moves: Vec<Move>,
    /// Every AZ of the input, zero counts included, with its count after
    /// the moves. Listing the empty AZs too shows that they were seen: an
    /// AZ left out of the input would not receive instances.
    pub(crate) balanced: BTreeMap<String, u32>,
}

/// The fewest single-instance moves that balance `counts`.
///
/// Balanced states all hold the same total, so with `n` AZs and `q`, `r`
/// the quotient and remainder of the total by `n`, each has exactly `r`
/// AZs at `q + 1` and the rest at `q`. A move takes one instance out of
/// one AZ, so reaching a state takes at least as many moves as the
/// instances the AZs hold above it; pairing every such instance with a
/// place missing one below it reaches the state in exactly that many.
///
/// Which AZs keep the `r` extra instances is the only choice, and it
/// decides the count: an AZ already above `q` that keeps one saves a move,
/// any other AZ saves nothing by it. So the AZs holding the most keep them,
/// ties going to the AZ whose name sorts first; as no state needs fewer
/// moves, this is the minimum (the tests compare it with a search).
///
/// Moves are listed in AZ name order on both sides: the first AZ with
/// instances to spare gives to the first AZ short of them, and so on. No
/// AZ both gives and receives, so no move undoes another.
pub(crate) fn rebalance(counts: &BTreeMap<String, u32>) -> Rebalance {
    let targets = targets(counts);
    let mut sources = Vec::new();
    let mut destinations = Vec::new();
    for ((az, &count), &target) in counts.iter().zip(&targets) {
        for _ in target..count {
            sources.push(az);
        }
        for _ in count..target {
            destinations.push(az);
        }
    }
    // Equal lengths: the targets hold the same total as the counts.
    let moves = sources
        .into_iter()
        .zip(destinations)
        .map(|(from, to)| Move {
            from: from.clone(),
            to: to.clone(),
        })
        .collect();
    let balanced = counts.keys().cloned().zip(targets).collect();
    Rebalance { moves, balanced }
}

/// Each AZ's count in the balanced state that needs the fewest moves, in
/// the order of `counts` (see [`rebalance`] for why these).
fn targets(counts: &BTreeMap<String, u32>) -> Vec<u32> {
    let n = counts.len();
    if n == 0 {
        return Vec::new();
    }
    // Summed in u64: many AZs near u32::MAX would overflow a u32.
    let total: u64 = counts.values().map(|&count| u64::from(count)).sum();
    let zones = n as u64;
    // The quotient never exceeds the largest count, so it fits a u32.
    let base = u32::try_from(total / zones).unwrap_or(u32::MAX);
    let extra = (total % zones) as usize;
    let mut by_need: Vec<(usize, (&String, &u32))> = counts.iter().enumerate().collect();
    // Most instances first, then by name: `counts` iterates names in
    // order and the sort is stable.
    by_need.sort_by_key(|&(_, (_, &count))| Reverse(count));
    let mut targets = vec![base; n];
    for &(index, _) in by_need.iter().take(extra) {
        targets[index] = base + 1;
    }
    targets
}

/// More instances in one AZ than any Auto Scaling group holds. A count
/// above it is a typo, and every move would be listed on its own line.
pub(crate) const MAX_COUNT: u32 = 100_000;

/// Why `--counts` text is not a list of `AZ=COUNT` entries. Each names the
/// entry it is about, as the operator typed it (less surrounding spaces).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CountsError {
    #[error("no counts given")]
    Empty,
    #[error("entry {position} is empty (two commas in a row, or one at an end)")]
    EmptyEntry { position: usize },
    #[error("'{entry}' is not AZ=COUNT")]
    NotAnEntry { entry: String },
    #[error("'{entry}' names no AZ")]
    NoAz { entry: String },
    #[error("'{entry}' gives AZ '{az}' a second count")]
    DuplicateAz { entry: String, az: String },
    #[error("'{entry}' has a negative count")]
    Negative { entry: String },
    #[error("'{entry}' has a count that is not a whole number")]
    NotACount { entry: String },
    #[error("'{entry}' has a count above {MAX_COUNT}")]
    TooLarge { entry: String },
}

/// Parses `us-east-1a=5,us-east-1b=3,us-east-1c=4`: comma-separated
/// `AZ=COUNT` entries, each AZ once, each count a whole number from 0 to
/// [`MAX_COUNT`]. Spaces around names, counts and entries are ignored, so a
/// list pasted with `, ` still reads.
pub(crate) fn parse_counts(text: &str) -> Result<BTreeMap<String, u32>, CountsError> {
    if text.trim().is_empty() {
        return Err(CountsError::Empty);
    }
    let mut counts = BTreeMap::new();
    for (index, raw) in text.split(',').enumerate() {
        let entry = raw.trim();
        if entry.is_empty() {
            return Err(CountsError::EmptyEntry {
                position: index + 1,
            });
        }
        let (az, count) = entry
            .split_once('=')
            .ok_or_else(|| CountsError::NotAnEntry {
                entry: entry.to_owned(),
            })?;
        let az = az.trim();
        if az.is_empty() {
            return Err(CountsError::NoAz {
                entry: entry.to_owned(),
            });
        }
        let count = parse_count(entry, count.trim())?;
        if counts.insert(az.to_owned(), count).is_some() {
            return Err(CountsError::DuplicateAz {
                entry: entry.to_owned(),
                az: az.to_owned(),
            });
        }
    }
    Ok(counts)
}

/// The count of `entry`. Digits only: `u32`'s own parser would also take
/// `+5`, and would call `-1` merely invalid.
fn parse_count(entry: &str, text: &str) -> Result<u32, CountsError> {
    let entry = entry.to_owned();
    let all_digits = |text: &str| !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    if text.strip_prefix('-').is_some_and(all_digits) {
        return Err(CountsError::Negative { entry });
    }
    if !all_digits(text) {
        return Err(CountsError::NotACount { entry });
    }
    match text.parse::<u32>() {
        Ok(count) if count <= MAX_COUNT => Ok(count),
        // All digits, so only overflow is left to fail.
        _ => Err(CountsError::TooLarge { entry }),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use proptest::prelude::*;
    use serde_json::json;

    use super::{CountsError, MAX_COUNT, Move, Rebalance, parse_counts, rebalance};

    fn counts(pairs: &[(&str, u32)]) -> BTreeMap<String, u32> {
        pairs
            .iter()
            .map(|&(az, count)| (az.to_owned(), count))
            .collect()
    }

    fn moves(pairs: &[(&str, &str)]) -> Vec<Move> {
        pairs
            .iter()
            .map(|&(from, to)| Move {
                from: from.to_owned(),
                to: to.to_owned(),
            })
            .collect()
    }

    /// A known input, what it must give, and why.
    struct Case {
        why: &'static str,
        input: &'static [(&'static str, u32)],
        moves: &'static [(&'static str, &'static str)],
        balanced: &'static [(&'static str, u32)],
    }

    #[test]
    fn known_cases_give_the_fewest_moves_in_name_order() {
        let cases = [
            Case {
                why: "one high and one low: one move",
                input: &[("a", 5), ("b", 3), ("c", 4)],
                moves: &[("a", "b")],
                balanced: &[("a", 4), ("b", 4), ("c", 4)],
            },
            Case {
                why: "already balanced",
                input: &[("a", 4), ("b", 5), ("c", 4)],
                moves: &[],
                balanced: &[("a", 4), ("b", 5), ("c", 4)],
            },
            Case {
                why: "the appendix's worst case: half highs, half lows, n/2 moves",
                input: &[("a", 5), ("b", 5), ("c", 3), ("d", 3)],
                moves: &[("a", "c"), ("b", "d")],
                balanced: &[("a", 4), ("b", 4), ("c", 4), ("d", 4)],
            },
            Case {
                why: "empty AZs receive, and stay in the result",
                input: &[("a", 0), ("b", 0), ("c", 6)],
                moves: &[("c", "a"), ("c", "a"), ("c", "b"), ("c", "b")],
                balanced: &[("a", 2), ("b", 2), ("c", 2)],
            },
            Case {
                why: "the AZ that already has more keeps the remainder",
                input: &[("a", 0), ("b", 7), ("c", 0)],
                moves: &[("b", "a"), ("b", "a"), ("b", "c"), ("b", "c")],
                balanced: &[("a", 2), ("b", 3), ("c", 2)],
            },
            Case {
                why: "a tie for the remainder goes to the first name",
                input: &[("a", 3), ("b", 3), ("c", 1)],
                moves: &[("b", "c")],
                balanced: &[("a", 3), ("b", 2), ("c", 2)],
            },
            Case {
                why: "names decide, not the order of the input",
                input: &[("b", 3), ("a", 1), ("c", 3)],
                moves: &[("c", "a")],
                balanced: &[("a", 2), ("b", 3), ("c", 2)],
            },
            Case {
                why: "sources and destinations pair in name order",
                input: &[("a", 6), ("b", 6), ("c", 0), ("d", 0)],
                moves: &[
                    ("a", "c"),
                    ("a", "c"),
                    ("a", "c"),
                    ("b", "d"),
                    ("b", "d"),
                    ("b", "d"),
                ],
                balanced: &[("a", 3), ("b", 3), ("c", 3), ("d", 3)],
            },
            Case {
                why: "one AZ is always balanced",
                input: &[("a", 9)],
                moves: &[],
                balanced: &[("a", 9)],
            },
            Case {
                why: "an empty group is balanced",
                input: &[("a", 0), ("b", 0)],
                moves: &[],
                balanced: &[("a", 0), ("b", 0)],
            },
            Case {
                why: "no AZs, nothing to do",
                input: &[],
                moves: &[],
                balanced: &[],
            },
        ];
        for case in cases {
            assert_eq!(
                rebalance(&counts(case.input)),
                Rebalance {
                    moves: moves(case.moves),
                    balanced: counts(case.balanced),
                },
                "{}: {:?}",
                case.why,
                case.input
            );
        }
    }

    #[test]
    fn counts_near_u32_max_do_not_overflow_the_total() {
        // Already balanced, so no move is listed (a move per instance of
        // billions would not fit in memory; parse_counts caps real input).
        let input = counts(&[("a", u32::MAX), ("b", u32::MAX - 1), ("c", u32::MAX)]);
        assert_eq!(
            rebalance(&input),
            Rebalance {
                moves: Vec::new(),
                balanced: input.clone(),
            }
        );
    }

    #[test]
    fn the_json_shape_is_moves_then_balanced_counts() {
        let result = rebalance(&counts(&[
            ("us-east-1a", 5),
            ("us-east-1b", 3),
            ("us-east-1c", 4),
        ]));
        assert_eq!(
            serde_json::to_value(&result).expect("serializable"),
            json!({
                "moves": [{"from": "us-east-1a", "to": "us-east-1b"}],
                "balanced": {"us-east-1a": 4, "us-east-1b": 4, "us-east-1c": 4},
            })
        );
    }

    #[test]
    fn well_formed_counts_parse_with_spaces_and_zeros() {
        assert_eq!(
            parse_counts("us-east-1a=5,us-east-1b=3,us-east-1c=4"),
            Ok(counts(&[
                ("us-east-1a", 5),
                ("us-east-1b", 3),
                ("us-east-1c", 4)
            ]))
        );
        assert_eq!(
            parse_counts(" use1-az1 = 0 , use1-az2=100000 "),
            Ok(counts(&[("use1-az1", 0), ("use1-az2", MAX_COUNT)]))
        );
    }

    #[test]
    fn malformed_counts_are_refused_naming_the_entry() {
        let not_a_count = |entry: &str| CountsError::NotACount {
            entry: entry.to_owned(),
        };
        let cases = [
            ("", CountsError::Empty),
            ("  ", CountsError::Empty),
            ("a=1,,b=2", CountsError::EmptyEntry { position: 2 }),
            ("a=1,", CountsError::EmptyEntry { position: 2 }),
            (
                "a=1,b",
                CountsError::NotAnEntry {
                    entry: "b".to_owned(),
                },
            ),
            (
                "a=1, =2",
                CountsError::NoAz {
                    entry: "=2".to_owned(),
                },
            ),
            (
                "a=1,b=2,a=3",
                CountsError::DuplicateAz {
                    entry: "a=3".to_owned(),
                    az: "a".to_owned(),
                },
            ),
            (
                "a=-1",
                CountsError::Negative {
                    entry: "a=-1".to_owned(),
                },
            ),
            ("a=1.5", not_a_count("a=1.5")),
            ("a=five", not_a_count("a=five")),
            ("a=", not_a_count("a=")),
            ("a=+5", not_a_count("a=+5")),
            ("a=-", not_a_count("a=-")),
            ("a=b=3", not_a_count("a=b=3")),
            (
                "a=100001",
                CountsError::TooLarge {
                    entry: "a=100001".to_owned(),
                },
            ),
            (
                "a=99999999999999999999",
                CountsError::TooLarge {
                    entry: "a=99999999999999999999".to_owned(),
                },
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_counts(text), Err(expected), "{text:?}");
        }
    }

    #[test]
    fn a_counts_error_message_quotes_the_entry() {
        let message = parse_counts("us-east-1a=5,us-east-1b=-3")
            .expect_err("negative")
            .to_string();
        assert_eq!(message, "'us-east-1b=-3' has a negative count");
    }

    fn is_balanced(counts: &[u32]) -> bool {
        match (counts.iter().min(), counts.iter().max()) {
            (Some(min), Some(max)) => max - min <= 1,
            _ => true,
        }
    }

    /// The fewest single-instance moves to any balanced state, by
    /// breadth-first search over every move from every state: no reasoning
    /// about quotients shared with the code under test.
    fn brute_force_moves(start: &[u32]) -> usize {
        let mut seen = HashSet::from([start.to_vec()]);
        let mut frontier = vec![start.to_vec()];
        let mut depth = 0;
        loop {
            if frontier.iter().any(|state| is_balanced(state)) {
                return depth;
            }
            let mut next = Vec::new();
            for state in &frontier {
                for from in 0..state.len() {
                    for to in 0..state.len() {
                        if from == to || state[from] == 0 {
                            continue;
                        }
                        let mut moved = state.clone();
                        moved[from] -= 1;
                        moved[to] += 1;
                        if seen.insert(moved.clone()) {
                            next.push(moved);
                        }
                    }
                }
            }
            frontier = next;
            depth += 1;
        }
    }

    fn small_counts() -> impl Strategy<Value = BTreeMap<String, u32>> {
        proptest::collection::vec(0u32..=8, 1..=4).prop_map(|values| {
            // Names out of alphabetical order, so that the map's order and
            // the order generated differ.
            ["us-east-1d", "us-east-1b", "us-east-1c", "us-east-1a"]
                .into_iter()
                .map(str::to_owned)
                .zip(values)
                .collect()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn random_small_counts_rebalance_in_the_fewest_moves(input in small_counts()) {
            let result = rebalance(&input);
            let values: Vec<u32> = input.values().copied().collect();
            prop_assert_eq!(result.moves.len(), brute_force_moves(&values));

            let balanced: Vec<u32> = result.balanced.values().copied().collect();
            prop_assert!(is_balanced(&balanced), "{:?}", result.balanced);
            prop_assert!(result.balanced.keys().eq(input.keys()));
            prop_assert_eq!(
                balanced.iter().sum::<u32>(),
                values.iter().sum::<u32>()
            );

            let mut applied = input.clone();
            for step in &result.moves {
                prop_assert_ne!(&step.from, &step.to);
                let from = applied.get_mut(&step.from).expect("a known AZ");
                prop_assert!(*from > 0, "moved out of an empty AZ: {:?}", step);
                *from -= 1;
                *applied.get_mut(&step.to).expect("a known AZ") += 1;
            }
            prop_assert_eq!(&applied, &result.balanced);

            let givers: HashSet<&str> = result.moves.iter().map(|m| m.from.as_str()).collect();
            prop_assert!(
                result.moves.iter().all(|m| !givers.contains(m.to.as_str())),
                "an AZ both gives and receives: {:?}", result.moves
            );
        }
    }
}
