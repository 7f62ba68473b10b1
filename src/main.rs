//! The `roller` binary: parse, run, map the outcome to an exit code.

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, not glibc's malloc: a roll of 2,000 agents allocates and frees
/// tens of thousands of small strings a tick (the group's 4,000 instances,
/// Mesos' agents, the checkpoint), and glibc spent about a third of
/// roller's CPU in `malloc`, `free` and `malloc_consolidate` doing it.
/// Measured on `huge` at 30x: CPU a tick 157-166 ms -> 95-120 ms
/// (docs/benchmarks.md, 2026-12-07).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    memory::return_freed_memory_at_once();
    run()
}

/// mimalloc's options, set before the first roll allocates much.
mod memory {
    use std::ffi::{c_int, c_long};

    /// The mimalloc whose option numbers are below (`MI_MALLOC_VERSION`
    /// of libmimalloc-sys 0.1.49's v3 sources, pinned in Cargo.toml).
    pub(crate) const VERSION: c_int = 30302;
    /// `mi_option_arena_eager_commit` and `mi_option_purge_delay` in that
    /// version's `mi_option_e` (the Rust bindings name neither).
    pub(crate) const ARENA_EAGER_COMMIT: c_int = 4;
    pub(crate) const PURGE_DELAY: c_int = 15;
    /// Each option set to 0, and the variable an operator sets it with.
    const SET: [(c_int, &str); 2] = [
        (PURGE_DELAY, "MIMALLOC_PURGE_DELAY"),
        (ARENA_EAGER_COMMIT, "MIMALLOC_ARENA_EAGER_COMMIT"),
    ];

    /// Freed pages go back to the system at once, not a second later, and
    /// arenas commit memory as it is used: with mimalloc's defaults the
    /// peak resident memory of a `huge` roll rose from 178 MB (glibc) to
    /// 226-233 MB, over the 200 MB goal; with these (and no transparent
    /// huge pages, the crate's `no_thp`), 135 MB. An
    /// operator's `MIMALLOC_*` variable still wins, and another mimalloc
    /// version keeps its defaults rather than be given wrong numbers.
    pub(crate) fn return_freed_memory_at_once() {
        // SAFETY: plain reads and writes of mimalloc's option table.
        if unsafe { libmimalloc_sys::mi_version() } != VERSION {
            return;
        }
        for (option, variable) in SET {
            if std::env::var_os(variable).is_none() {
                // SAFETY: as above; `option` is below `_mi_option_last`.
                unsafe { libmimalloc_sys::mi_option_set(option, 0 as c_long) };
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Fails when mimalloc is upgraded: its option numbers must be
        /// read again from the new `mimalloc.h` before they are set. The
        /// numbers must name options whose defaults are those of 3.3.2's
        /// `options.c` (1000 ms and 2), and setting them must take.
        #[test]
        fn the_option_numbers_are_those_of_the_linked_mimalloc() {
            let get = |option| unsafe { libmimalloc_sys::mi_option_get(option) };
            assert_eq!(unsafe { libmimalloc_sys::mi_version() }, VERSION);
            let defaults = [1000, 2];
            let untouched: Vec<bool> = SET
                .iter()
                .map(|(_, variable)| std::env::var_os(variable).is_none())
                .collect();
            for (((option, _), default), untouched) in SET.iter().zip(defaults).zip(&untouched) {
                if *untouched {
                    assert_eq!(get(*option), default, "option {option}");
                }
            }
            return_freed_memory_at_once();
            for ((option, _), untouched) in SET.iter().zip(&untouched) {
                if *untouched {
                    assert_eq!(get(*option), 0, "option {option}");
                }
            }
        }
    }
}

fn run() -> ExitCode {
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
