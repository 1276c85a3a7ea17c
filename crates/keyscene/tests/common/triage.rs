//! The triage table, `tests/triage.tsv`: corpus trials that fail today, each with the defect
//! class that makes it fail (issue 12, "start with one triage commit").
//!
//! Every corpus test binary runs its trials through [`apply`] (from `common::run`). A trial the
//! table names is reported **ignored**, with its class in the trial's kind, so `cargo test`
//! shows it as `test [known defect: CLASS] NAME ... ignored` and
//! `cargo test -- --include-ignored "known defect: CLASS"` runs one class. Fixing a class means
//! deleting its rows; a row that matches no trial of a full run (corpus present, no name filter)
//! fails the run, so the table cannot keep rows for trials that were renamed or removed.
//!
//! Columns (tab-separated; `#` starts a comment line): test binary (the file name under
//! `tests/` without `.rs`), the trial's exact name, the defect class (a short kebab-case name,
//! the same for every trial one general fix repairs), and what the trial reported.

use libtest_mimic::{Arguments, Trial};

/// The table, compiled in so that editing it rebuilds the tests that read it.
const TABLE: &str = include_str!("../triage.tsv");

/// One row of the table.
pub struct Row {
    /// Test binary (its crate name: the `tests/` file name without `.rs`).
    pub binary: &'static str,
    /// The trial's exact name, as libtest-mimic lists it (without the kind).
    pub trial: &'static str,
    /// The defect class.
    pub class: &'static str,
}

/// Every row of the table, comments and blank lines left out. Panics on a row without three
/// columns: the table is part of the test suite.
pub fn rows() -> Vec<Row> {
    TABLE
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut c = l.split('\t');
            let (Some(binary), Some(trial), Some(class)) = (c.next(), c.next(), c.next()) else {
                panic!("triage.tsv: row without binary, trial and class columns: {l:?}");
            };
            Row { binary: binary.trim(), trial, class: class.trim() }
        })
        .collect()
}

/// `trials` with every trial that the table lists for `binary` marked ignored under kind
/// `known defect: CLASS`, plus one failing trial naming the rows for `binary` that match no
/// trial when the run is complete (`corpus` present, no filter or skip on the command line).
pub fn apply(binary: &str, trials: Vec<Trial>, corpus: bool, args: &Arguments) -> Vec<Trial> {
    let rows: Vec<Row> = rows().into_iter().filter(|r| r.binary == binary).collect();
    if rows.is_empty() {
        return trials;
    }
    let mut used = vec![false; rows.len()];
    let mut out: Vec<Trial> = trials
        .into_iter()
        .map(|t| match rows.iter().position(|r| r.trial == t.name()) {
            Some(i) => {
                used[i] = true;
                let class = rows[i].class;
                t.with_kind(format!("known defect: {class}")).with_ignored_flag(true)
            }
            None => t,
        })
        .collect();
    let complete = corpus && args.filter.is_none() && args.skip.is_empty();
    let stale: Vec<String> = rows
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(r, _)| format!("  {}\t{}", r.trial, r.class))
        .collect();
    if complete && !stale.is_empty() {
        let msg = format!(
            "tests/triage.tsv lists {} trial(s) of {binary} that this run does not have \
             (renamed or removed: delete or rename the rows):\n{}",
            stale.len(),
            stale.join("\n")
        );
        out.push(Trial::test("triage table rows match trials", move || Err(msg.into())));
    }
    out
}
