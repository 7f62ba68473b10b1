//! Why an environment was refused (`EnvError`), and where a refused value
//! came from (`Origin`), so every message can send the operator to the one
//! place to fix.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// Where a value came from: the operator fixes it there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The environment file, by the path it was given as.
    File(PathBuf),
    /// A process variable, by name (`ROLLER_TIME_SCALE`).
    Variable(String),
    /// A command-line flag, by its long name without dashes
    /// (`time-scale`).
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "file '{}'", path.display()),
            Origin::Variable(name) => write!(f, "variable {name}"),
            Origin::Flag(name) => write!(f, "flag --{name}"),
        }
    }
}

/// Why `Environment::resolve` refused. Nothing has been done when this is
/// returned: the roll has not started.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// The caller reads the file (`resolve` takes its text) and reports a
    /// failure to read it with this variant, so every environment problem
    /// has one label family.
    #[error(
        "cannot read the environment file '{}': {source}; check the path given to --env and its permissions",
        path.display()
    )]
    Read { path: PathBuf, source: io::Error },

    /// Only toml's message and the position are kept, never the offending
    /// line: that line may hold a secret someone pasted in.
    #[error(
        "the environment file '{}' is not valid TOML ({}): {message}; fix the syntax there",
        path.display(),
        position(*at)
    )]
    Syntax {
        path: PathBuf,
        /// 1-based line and column, when toml knows them.
        at: Option<(usize, usize)>,
        message: String,
    },

    #[error("unknown key `{key}` in {origin}; remove or correct it (known keys: {known})")]
    UnknownKey {
        /// Dotted for keys inside a table: `timeouts.healthy`.
        key: String,
        origin: Origin,
        /// The keys allowed where this one was found.
        known: String,
    },

    #[error(
        "missing `{key}` ({meaning}); set it in {}, in variable {} or with flag --{}",
        file.as_ref().map_or_else(|| "the environment file (--env)".to_string(), |path| format!("'{}'", path.display())),
        super::variable_name(key),
        super::flag_name(key)
    )]
    MissingKey {
        key: String,
        /// What the key is for, so the operator knows what to put there.
        meaning: &'static str,
        file: Option<PathBuf>,
    },

    #[error(
        "`{key}` = {given} in {origin} is not valid: expected {expected}; correct it in {origin}"
    )]
    BadValue {
        key: String,
        origin: Origin,
        expected: String,
        /// The value as given, cut short and with any `user:password@` of
        /// a URL removed.
        given: String,
    },

    /// The value is never kept: only the key's name is reported.
    #[error(
        "`{key}` in {origin} looks like a secret, and secrets never go in the environment file or on the command line (files get copied and committed, flags show in process lists); remove it and use {instead}"
    )]
    SecretKey {
        key: String,
        origin: Origin,
        /// Where this secret belongs instead.
        instead: &'static str,
    },
}

impl EnvError {
    /// A stable name for logs and metrics; never changes once released.
    #[cfg(test)]
    pub(crate) fn label(&self) -> &'static str {
        match self {
            EnvError::Read { .. } => "env_unreadable",
            EnvError::Syntax { .. } => "env_syntax",
            EnvError::UnknownKey { .. } => "env_unknown_key",
            EnvError::MissingKey { .. } => "env_missing_key",
            EnvError::BadValue { .. } => "env_bad_value",
            EnvError::SecretKey { .. } => "env_secret_key",
        }
    }
}

fn position(at: Option<(usize, usize)>) -> String {
    match at {
        Some((line, column)) => format!("line {line}, column {column}"),
        None => "position unknown".to_string(),
    }
}
