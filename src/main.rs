//! The `roller` binary: parse, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = roller::cli::Cli::parse();
    roller::report::logging::init(&cli.log_settings());
    match roller::cli::run(cli, &mut std::io::stdout().lock()) {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stops early (`roller demo | head`) is not a failure.
        Err(roller::cli::CliError::Output(err)) if err.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("roller: {}", roller::cli::sentence(&err));
            ExitCode::from(err.exit_code())
        }
    }
}
