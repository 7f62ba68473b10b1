//! `roller rebalance`: the moves AWS's AZRebalance would make on a group
//! with the given per-AZ counts (computed by `crate::roll::decide::rebalance`),
//! printed one line per move or as JSON. Reads no cluster: the counts are
//! typed in, so it answers before AZRebalance is resumed, offline.

use std::io::Write;

use super::RebalanceArgs;
use super::error::CliError;
use crate::roll::decide::rebalance::{Rebalance, parse_counts, rebalance};

pub(super) const HELP: &str = "\
AWS's AZRebalance, once resumed, launches an instance in the AZ with the
fewest and terminates one in the AZ with the most, until no two AZs differ
by more than one. Each such move takes an agent away. This lists the fewest
moves that balance the group, and the counts they reach; list an AZ with no
instances as AZ=0, or it will not be counted.

Example:
  $ roller rebalance --counts us-east-1a=5,us-east-1b=3,us-east-1c=4
  move 1 instance: us-east-1a -> us-east-1b
  balanced: us-east-1a=4,us-east-1b=4,us-east-1c=4

--json prints:
  {\"moves\": [{\"from\": \"us-east-1a\", \"to\": \"us-east-1b\"}],
   \"balanced\": {\"us-east-1a\": 4, \"us-east-1b\": 4, \"us-east-1c\": 4}}

Exit codes:
  0    the moves were printed (none when already balanced)
  2    refused: --counts is not AZ=COUNT[,AZ=COUNT...]";

pub(super) fn run(args: &RebalanceArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let counts = parse_counts(&args.counts).map_err(CliError::Counts)?;
    let result = rebalance(&counts);
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &result).map_err(std::io::Error::from)?;
        out.write_all(b"\n")?;
    } else {
        out.write_all(human(&result).as_bytes())?;
    }
    Ok(())
}

/// One line per move, then the counts reached, written as `--counts`
/// takes them so they can be pasted back.
fn human(result: &Rebalance) -> String {
    let mut text = String::new();
    for step in &result.moves {
        text.push_str(&format!("move 1 instance: {} -> {}\n", step.from, step.to));
    }
    let counts = result
        .balanced
        .iter()
        .map(|(az, count)| format!("{az}={count}"))
        .collect::<Vec<_>>()
        .join(",");
    if result.moves.is_empty() {
        text.push_str(&format!("already balanced: {counts}\n"));
    } else {
        text.push_str(&format!("balanced: {counts}\n"));
    }
    text
}
