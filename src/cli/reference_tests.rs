//! docs/reference.md against the code it documents: its table of exit
//! codes says what `roller --help` says (`EXIT_CODES`), code for code and
//! word for word, so the codes are written once, in the help text, and the
//! reference cannot drift from it.

use std::collections::BTreeMap;

use super::EXIT_CODES;
use super::exit_code;

const REFERENCE: &str = include_str!("../../docs/reference.md");

/// Each code of the help text's "Exit codes:" list with its meaning, the
/// meaning's lines joined by single spaces.
fn help_exit_codes(help: &str) -> BTreeMap<u8, String> {
    let list = help
        .split_once("Exit codes:\n")
        .expect("the help text has an \"Exit codes:\" list")
        .1;
    let mut codes = BTreeMap::new();
    let mut current: Option<(u8, Vec<&str>)> = None;
    for line in list.lines().take_while(|line| !line.trim().is_empty()) {
        let indented = line.trim_start();
        let code = indented
            .split_once(' ')
            .and_then(|(code, _)| code.parse::<u8>().ok());
        // A code starts at the list's indentation; its meaning may go on
        // over lines indented further.
        match code {
            Some(code) if line.len() - indented.len() == 2 => {
                if let Some((code, words)) = current.take() {
                    codes.insert(code, words.join(" "));
                }
                let meaning = indented.split_once(' ').unwrap().1;
                current = Some((code, meaning.split_whitespace().collect()));
            }
            _ => {
                let (_, words) = current
                    .as_mut()
                    .unwrap_or_else(|| panic!("a meaning before any code: {line:?}"));
                words.extend(line.split_whitespace());
            }
        }
    }
    if let Some((code, words)) = current {
        codes.insert(code, words.join(" "));
    }
    codes
}

/// Each row of the first table under the document's "## Exit codes":
/// `| code | meaning |`.
fn reference_exit_codes(document: &str) -> BTreeMap<u8, String> {
    let section = document
        .split_once("\n## Exit codes\n")
        .expect("docs/reference.md has an \"Exit codes\" section")
        .1;
    let section = section.split("\n## ").next().unwrap();
    let table: Vec<&str> = section
        .lines()
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .collect();
    assert!(
        table.len() > 2,
        "the \"Exit codes\" section opens with a table"
    );
    let header: Vec<&str> = cells(table[0]);
    assert_eq!(header, ["code", "meaning"], "the table's header");
    let mut codes = BTreeMap::new();
    for row in &table[2..] {
        let cells = cells(row);
        assert_eq!(cells.len(), 2, "a row of two cells: {row}");
        let code: u8 = cells[0]
            .parse()
            .unwrap_or_else(|_| panic!("an exit code: {row}"));
        let meaning = cells[1].split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            codes.insert(code, meaning).is_none(),
            "exit code {code} twice in the table"
        );
    }
    codes
}

fn cells(row: &str) -> Vec<&str> {
    row.trim()
        .trim_start_matches('|')
        .trim_end_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// Where two lists of codes differ: codes on one side only, meanings that
/// are not the same words.
fn differences(help: &BTreeMap<u8, String>, reference: &BTreeMap<u8, String>) -> Vec<String> {
    let mut found = Vec::new();
    for (code, meaning) in help {
        match reference.get(code) {
            None => found.push(format!("{code}: in --help, not in the reference")),
            Some(theirs) if theirs != meaning => found.push(format!(
                "{code}: --help says {meaning:?}, the reference {theirs:?}"
            )),
            Some(_) => {}
        }
    }
    for code in reference.keys().filter(|code| !help.contains_key(code)) {
        found.push(format!("{code}: in the reference, not in --help"));
    }
    found
}

#[test]
fn the_references_exit_codes_are_the_help_texts() {
    let help = help_exit_codes(EXIT_CODES);
    let reference = reference_exit_codes(REFERENCE);
    let found = differences(&help, &reference);
    assert!(
        found.is_empty(),
        "docs/reference.md's exit codes differ from `roller --help` (src/cli/mod.rs):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_help_text_lists_every_exit_code_roller_uses() {
    let listed: Vec<u8> = help_exit_codes(EXIT_CODES).into_keys().collect();
    let mut used = vec![
        exit_code::DONE,
        exit_code::FAILED,
        exit_code::REFUSED,
        exit_code::PAUSED,
        exit_code::PARTLY_DONE,
        exit_code::ROLLED_BACK,
        exit_code::INTERRUPTED,
    ];
    used.sort_unstable();
    assert_eq!(listed, used);
}

/// The check above must be able to fail: a code missing, added or
/// reworded on either side is found.
#[test]
fn a_code_missing_added_or_reworded_on_either_side_is_found() {
    let help = help_exit_codes(
        "Exit codes:\n  0    done\n  3    paused: a wait\n       timed out\n\nafter",
    );
    assert_eq!(
        help,
        BTreeMap::from([
            (0, "done".to_string()),
            (3, "paused: a wait timed out".to_string())
        ])
    );
    let table = |rows: &str| {
        reference_exit_codes(&format!(
            "# r\n\n## Exit codes\n\ntext\n\n| code | meaning |\n|---|---|\n{rows}\n## Next\n"
        ))
    };
    let same = table("| 0 | done |\n| 3 | paused: a wait timed out |\n");
    assert!(differences(&help, &same).is_empty());
    for (rows, expected) in [
        ("| 0 | done |\n", "3: in --help, not in the reference"),
        (
            "| 0 | done |\n| 3 | paused: a wait timed out |\n| 4 | partly |\n",
            "4: in the reference, not in --help",
        ),
        (
            "| 0 | done |\n| 3 | paused: a wait ran out |\n",
            "3: --help says \"paused: a wait timed out\", the reference \"paused: a wait ran out\"",
        ),
        (
            "| 0 | done |\n| 5 | paused: a wait timed out |\n",
            "3: in --help, not in the reference",
        ),
    ] {
        let found = differences(&help, &table(rows));
        assert!(
            found.iter().any(|line| line == expected),
            "{rows}: expected {expected:?}, found {found:?}"
        );
    }
}
