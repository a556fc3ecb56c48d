//! Conformance runners: each reads a file in the format of one of the
//! oracle files produced by PyTorch 2.15, computes the project's answers,
//! and counts agreements.
//!
//! Every runner is a plain function over text so that the tests run it on the
//! copied data in `conformance/data/` and the `aten conform ...` commands run
//! it on any file, including larger corpora of the same format.

pub mod grads;
pub mod keys;
pub mod keysets;
pub mod models;
pub mod ops;
pub mod schemas;
pub mod tables;

use std::fmt;

/// Pass/fail counts of a conformance run.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Checks that agreed with the expected data.
    pub passed: usize,
    /// Checks that did not.
    pub failed: usize,
}

impl Tally {
    /// Counts one check.
    pub fn record(&mut self, ok: bool) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }
}

/// The closing line: `N passed, M failed`.
impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} passed, {} failed", self.passed, self.failed)
    }
}

/// The outcome of a conformance run.
#[derive(Debug, Default)]
pub struct Report {
    /// Pass/fail counts; `None` when the input carried no expected values.
    pub tally: Option<Tally>,
    /// One line per failed check, for humans.
    pub failures: Vec<String>,
    /// Observations that are not failures (fidelity counts, layout
    /// differences), printed before the tally.
    pub notes: Vec<String>,
}

impl Report {
    /// Counts one check, remembering a description of a failure.
    pub fn check(&mut self, ok: bool, describe: impl FnOnce() -> String) {
        self.tally.get_or_insert_with(Tally::default).record(ok);
        if !ok {
            self.failures.push(describe());
        }
    }
}
