//! Techland ChromeEngine `.3da` models (issue #4; spec: seed 002, decisions: `docs/3da.md`).
//!
//! Layers, each usable alone:
//! - [`layout`]: the engine's 32-bit little-endian structs, sizes and constants.
//! - [`model`]: a file as a resolved tree (entities, surfaces, streams, tracks), no offsets.
//! - [`read`](mod@read) / [`write`](mod@write): bytes ↔ [`model::File`]; write → read → write is byte-identical.
//! - [`check`](mod@check): every rule the file must satisfy, each violation with its byte offset.
//! - [`eval`]: tracks sampled at a frame, EULER as the seed composes it.
//! - [`colmap`]: the AABB-tree collision map (keyscene's layout), builder and ray query.
//! - [`export`](mod@export): [`crate::scene::Scene`] → [`File`] + material scripts; [`save`] writes them.
//! - [`import`]: [`File`] → [`crate::scene::Scene`] ([`load`] reads bytes straight to a scene).

pub mod check;
pub mod colmap;
pub mod eval;
pub mod export;
pub mod import;
mod issue;
mod keys;
pub mod layout;
pub mod model;
pub mod read;
pub mod write;

pub use check::{check, Issue, Report, Severity};
pub use export::{export, save, Axes, ExportOptions, ExportReport, MaterialScript};
pub use model::File;
pub use read::read;
pub use write::{write, write_to};

/// Reads a 3DA file into a scene: [`read()`] then [`import::import`]. The reader's warnings
/// (with their byte offsets) come first in the returned list, then the importer's.
pub fn load(
    bytes: &[u8],
    opts: &crate::ReadOptions,
) -> Result<(crate::scene::Scene, Vec<crate::scene::Warning>), Error> {
    let (file, issues) = read(bytes, &opts.limits)?;
    let mut warnings: Vec<crate::scene::Warning> = issues
        .into_iter()
        .map(|i| crate::scene::Warning {
            offset: Some(i.offset),
            place: "3da".into(),
            message: i.message,
        })
        .collect();
    let (scene, more) = import::import(&file);
    warnings.extend(more);
    Ok((scene, warnings))
}

/// A 3DA file that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The first four bytes are not `33 44 41 5F` ("3DA_").
    #[error(
        "3da: not a 3DA file: starts with {:02x} {:02x} {:02x} {:02x}, expected 33 44 41 5f (\"3DA_\")",
        found[0], found[1], found[2], found[3]
    )]
    NotThreeDa {
        /// The bytes found.
        found: [u8; 4],
    },
    /// `m_iVersion` is not 0x207.
    #[error("3da: version {found:#x} is not supported (only 0x207)")]
    Version {
        /// The version found.
        found: u32,
    },
    /// An offset, count or id does not fit the file.
    #[error("3da: at byte {offset:#x}: {message}")]
    Malformed {
        /// Byte offset of the field holding the bad value.
        offset: u64,
        /// What is wrong and where in the structure.
        message: String,
    },
    /// A [`model::File`] that cannot be written (stream length ≠ `s_size`, too large).
    #[error("3da: cannot write: {0}")]
    Invalid(String),
    /// The sink [`write::write_to`] writes into failed.
    #[error("3da: writing failed: {0}")]
    Io(#[source] std::io::Error),
}

/// The seed's traverse() order (§3): depth-first, each node followed by its children in
/// alphabetical (byte-wise) order of name, roots likewise. `parents[i]` is node `i`'s parent
/// (`None` for a root), `names[i]` its name. Returns node indices in file order. Nodes whose
/// parent chain is cyclic or out of range are treated as roots, so every node appears once.
pub fn traverse_order(parents: &[Option<usize>], names: &[&str]) -> Vec<usize> {
    let n = parents.len();
    // ok[i]: node i's parent chain reaches a root. Each chain is walked once (O(n)).
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Unknown,
        Walking,
        Ok,
        Bad,
    }
    let mut state = vec![State::Unknown; n];
    let mut path = Vec::new();
    for start in 0..n {
        let mut cur = start;
        let verdict = loop {
            match state[cur] {
                State::Ok => break State::Ok,
                State::Bad | State::Walking => break State::Bad,
                State::Unknown => {}
            }
            state[cur] = State::Walking;
            path.push(cur);
            match parents[cur] {
                None => break State::Ok,
                Some(p) if p < n => cur = p,
                Some(_) => break State::Bad,
            }
        };
        for &i in &path {
            state[i] = verdict;
        }
        path.clear();
    }
    let valid = |i: usize| parents[i].filter(|_| state[i] == State::Ok);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for i in 0..n {
        match valid(i) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let by_name = |v: &mut Vec<usize>| {
        v.sort_by(|&a, &b| names[a].as_bytes().cmp(names[b].as_bytes()).then(a.cmp(&b)))
    };
    by_name(&mut roots);
    for c in &mut children {
        by_name(c);
    }
    let mut out = Vec::with_capacity(n);
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        out.push(i);
        stack.extend(children[i].iter().rev());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traverse_order_matches_the_seed_example() {
        // Seed 002 §3: Node0, Node0.Child0, Node0.Child0.Child0, Node0.Child0.Child1,
        // Node0.Child1, Node0.Child2, Node1, Node1.Child0 — given here shuffled.
        let names = [
            "Node1.Child0",
            "Node0.Child2",
            "Node1",
            "Node0.Child0.Child1",
            "Node0",
            "Node0.Child0",
            "Node0.Child1",
            "Node0.Child0.Child0",
        ];
        let parents = [Some(2), Some(4), None, Some(5), None, Some(4), Some(4), Some(5)];
        let order: Vec<&str> =
            traverse_order(&parents, &names).into_iter().map(|i| names[i]).collect();
        assert_eq!(
            order,
            [
                "Node0",
                "Node0.Child0",
                "Node0.Child0.Child0",
                "Node0.Child0.Child1",
                "Node0.Child1",
                "Node0.Child2",
                "Node1",
                "Node1.Child0"
            ]
        );
    }

    #[test]
    fn traverse_order_of_a_deep_chain_is_linear_time() {
        let n: usize = 200_000;
        let parents: Vec<Option<usize>> = (0..n).map(|i| i.checked_sub(1)).collect();
        let names = vec!["n"; n];
        assert_eq!(traverse_order(&parents, &names), (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn traverse_order_survives_cycles() {
        let order = traverse_order(&[Some(1), Some(0), Some(9)], &["a", "b", "c"]);
        assert_eq!(order.len(), 3);
    }
}
