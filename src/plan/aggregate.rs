//! The status of a parent element (phase or plan), derived from its children.
//!
//! This is the SDK's `PlanUtils.getAggregateStatus`, rule for rule, in the
//! order our foundation issue fixes (the interrupted rule before the DELAYED
//! one), with one deliberate difference at the end: where no rule matches,
//! the SDK answers ERROR. That is an SDK bug: a serial phase of
//! `[DELAYED, PENDING]` has the single candidate DELAYED, matches nothing, and
//! would read ERROR although nothing failed. We answer DELAYED when there is
//! at least one candidate and every candidate is DELAYED, and IN_PROGRESS
//! otherwise (e.g. the only unfinished work is a STARTED step whose
//! interruption keeps it from being a candidate).

use super::status::Status;

/// Derives a parent's status. `candidates` are the statuses of the children
/// the parent's strategy would pick now; `errors` are the parent's own.
#[allow(
    clippy::if_same_then_else,
    reason = "one branch per SDK rule, in the SDK's order, so each can be checked against it"
)]
pub(crate) fn aggregate_status(
    children: &[Status],
    candidates: &[Status],
    has_errors: bool,
    interrupted: bool,
) -> Status {
    let any_child = |s: Status| children.contains(&s);
    let any_candidate = |s: Status| candidates.contains(&s);

    if has_errors || any_child(Status::Error) {
        Status::Error
    } else if children.iter().all(|&s| s == Status::Complete) {
        Status::Complete
    } else if interrupted {
        Status::Waiting
    } else if candidates.iter().all(|&s| s == Status::Delayed)
        && children.iter().all(|&s| s == Status::Delayed)
    {
        Status::Delayed
    } else if any_child(Status::Prepared) {
        Status::InProgress
    } else if any_candidate(Status::Waiting) {
        Status::Waiting
    } else if any_candidate(Status::InProgress) {
        Status::InProgress
    } else if any_child(Status::Complete)
        && (any_candidate(Status::Pending)
            || any_candidate(Status::Starting)
            || any_candidate(Status::Started))
    {
        Status::InProgress
    } else if any_candidate(Status::Pending) {
        Status::Pending
    } else if any_child(Status::Waiting) {
        Status::Waiting
    } else if any_candidate(Status::Starting) {
        Status::Starting
    } else if any_candidate(Status::Started) {
        Status::Started
    } else if !candidates.is_empty() && candidates.iter().all(|&s| s == Status::Delayed) {
        Status::Delayed
    } else {
        Status::InProgress
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Status::*;

    struct Row {
        rule: &'static str,
        children: &'static [Status],
        candidates: &'static [Status],
        errors: bool,
        interrupted: bool,
        expected: Status,
    }

    const fn row(
        rule: &'static str,
        children: &'static [Status],
        candidates: &'static [Status],
        errors: bool,
        interrupted: bool,
        expected: Status,
    ) -> Row {
        Row {
            rule,
            children,
            candidates,
            errors,
            interrupted,
            expected,
        }
    }

    /// One or more rows per rule of the list, each built so that the
    /// rules above it do not match and it does; several rows also show that
    /// an earlier rule wins over a later one.
    #[rustfmt::skip]
    const TABLE: &[Row] = &[
        row("1 errors", &[Pending], &[Pending], true, false, Error),
        row("1 ERROR child", &[Complete, Error], &[], false, false, Error),
        row("1 wins over 3", &[Error, Pending], &[], false, true, Error),
        row("2 all COMPLETE", &[Complete, Complete], &[], false, false, Complete),
        row("2 no children", &[], &[], false, false, Complete),
        row("2 wins over 3", &[Complete], &[], false, true, Complete),
        row("3 interrupted", &[Pending, Pending], &[], false, true, Waiting),
        row("3 wins over 4", &[Delayed], &[], false, true, Waiting),
        row("4 all DELAYED", &[Delayed, Delayed], &[Delayed], false, false, Delayed),
        row("4 no candidates", &[Delayed], &[], false, false, Delayed),
        row("5 PREPARED child", &[Prepared, Waiting], &[Waiting], false, false, InProgress),
        row("6 WAITING candidate", &[Waiting, Pending], &[Waiting, Pending], false, false, Waiting),
        row("7 IN_PROGRESS candidate", &[InProgress, Pending], &[InProgress, Pending], false, false, InProgress),
        row("8 COMPLETE + PENDING", &[Complete, Pending], &[Pending], false, false, InProgress),
        row("8 COMPLETE + STARTING", &[Complete, Starting], &[Starting], false, false, InProgress),
        row("8 COMPLETE + STARTED", &[Complete, Started], &[Started], false, false, InProgress),
        row("9 PENDING candidate", &[Pending, Pending], &[Pending], false, false, Pending),
        row("9 wins over 11", &[Starting, Pending], &[Starting, Pending], false, false, Pending),
        row("10 WAITING child", &[Waiting, Starting], &[Starting], false, false, Waiting),
        row("11 STARTING candidate", &[Starting, Started], &[Starting, Started], false, false, Starting),
        row("12 STARTED candidate", &[Started, Delayed], &[Started, Delayed], false, false, Started),
        row("fall-through: serial [DELAYED, PENDING]", &[Delayed, Pending], &[Delayed], false, false, Delayed),
        row("fall-through: parallel [COMPLETE, DELAYED]", &[Complete, Delayed], &[Delayed], false, false, Delayed),
        row("fall-through: no candidates", &[Started, Pending], &[], false, false, InProgress),
    ];

    #[test]
    fn every_rule_of_the_aggregate_status_table_holds() {
        for row in TABLE {
            assert_eq!(
                aggregate_status(row.children, row.candidates, row.errors, row.interrupted),
                row.expected,
                "rule {}",
                row.rule
            );
        }
    }
}
