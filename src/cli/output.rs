//! A command's JSON answer (`--json`): one pretty-printed document on
//! stdout, ended by a newline.

use std::io::Write;

use serde::Serialize;

use super::error::CliError;

/// The CloudWatch alarms a roll watches, as `--dry-run` and `status`
/// print them: their names, or `none`.
pub(super) fn alarm_names(alarms: &[String]) -> String {
    if alarms.is_empty() {
        "none".to_string()
    } else {
        alarms.join(", ")
    }
}

pub(super) fn write_json(out: &mut dyn Write, value: &impl Serialize) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}
