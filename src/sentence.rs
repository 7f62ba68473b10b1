//! An error as one readable sentence: its message, then each cause its
//! message does not already carry, joined by `: `. No `Debug` dump (the
//! AWS SDK's `DisplayErrorContext` ends with one, struct fields and all).

use std::error::Error;

pub fn sentence(err: &(dyn Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(inner) = cause {
        let said = inner.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("cannot reach Marathon")]
    struct Outer(#[source] std::io::Error);

    #[derive(Debug, thiserror::Error)]
    #[error("plan file 'p.json': {0}")]
    struct Says(#[source] std::io::Error);

    #[test]
    fn causes_are_appended_once_each() {
        let refused =
            || std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
        assert_eq!(
            sentence(&Outer(refused())),
            "cannot reach Marathon: connection refused"
        );
        // A message that already says its cause does not say it twice.
        assert_eq!(
            sentence(&Says(refused())),
            "plan file 'p.json': connection refused"
        );
    }
}
