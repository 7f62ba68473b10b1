//! `--target`: N for a one-group environment, NAME=N for a group of a
//! cluster (repeatable).

/// One `--target`: the bare N of a one-group environment, or NAME=N.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum TargetArg {
    Agents(u32),
    Group(String, u32),
}

pub(super) fn parse_target(text: &str) -> Result<TargetArg, String> {
    let number = |n: &str| {
        n.trim().parse::<u32>().map_err(|_| {
            format!(
                "'{text}' is not a target: give N (the number of agents when done) or NAME=N for \
                 the group NAME of an environment with [[group]] tables"
            )
        })
    };
    match text.split_once('=') {
        Some((name, n)) if !name.trim().is_empty() => {
            Ok(TargetArg::Group(name.trim().to_string(), number(n)?))
        }
        Some(_) => Err(format!("'{text}' names no group: give NAME=N")),
        None => number(text).map(TargetArg::Agents),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_n_or_name_equals_n_and_anything_else_says_which_it_wants() {
        assert_eq!(parse_target("55"), Ok(TargetArg::Agents(55)));
        assert_eq!(
            parse_target("mesos-agents-public=5"),
            Ok(TargetArg::Group("mesos-agents-public".to_string(), 5))
        );
        for bad in ["x", "a=", "a=-1", "=5", "5.5"] {
            let err = parse_target(bad).unwrap_err();
            assert!(err.contains("NAME=N"), "{bad}: {err}");
        }
    }
}
