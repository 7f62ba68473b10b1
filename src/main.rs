//! The `roller` binary: parse, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not glibc's malloc: a tick at 2,000 agents parses tens of MB
/// of JSON and XML into strings that live one tick, and glibc spent a
/// quarter of roller's CPU allocating and consolidating them (docs/
/// benchmarks.md, "An allocator for answers that live one tick").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc.h's `mi_option_e` (the sys crate
/// names no constant for it): the one before `mi_option_use_numa_nodes`
/// (16), which it does name.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Freed memory goes back to the system at once: by default mimalloc keeps
/// it a second, and a tick that frees one answer and parses the next held
/// both (peak memory 220 MB at 2,000 agents, 164 MB without the delay and
/// the same CPU).
fn return_freed_memory_at_once() {
    // SAFETY: sets one of mimalloc's global options (an atomic store); it
    // reads or writes no memory of ours.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

fn main() -> ExitCode {
    return_freed_memory_at_once();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_delay_is_the_option_before_the_numa_nodes_and_is_set_to_zero() {
        assert_eq!(PURGE_DELAY + 1, libmimalloc_sys::mi_option_use_numa_nodes);
        // mimalloc's own default for it, read before this process sets it.
        // SAFETY: reads one of mimalloc's global options.
        let default = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        assert_eq!(default, 1000, "mimalloc's purge delay defaults to 1,000 ms");
        return_freed_memory_at_once();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 0);
    }
}
