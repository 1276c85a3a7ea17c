//! Which nodes become entities, their written names and their file order (docs/3da.md,
//! "Exporter"): mesh, null and bone nodes in the seed's traverse() order of their shortened
//! names, each hanging from its nearest kept ancestor.

use std::collections::HashMap;

use super::ExportReport;
use crate::formats::three_da::layout::NAME_LEN;
use crate::formats::three_da::Error;
use crate::quoting::quoted;
use crate::scene::{Node, NodeId, NodeKind, Scene};

/// The nodes written as entities. A *slot* `k` is an index into [`Entities::nodes`] (kept
/// nodes in scene order); the file index of slot `k` is `file_index[k]`.
pub(super) struct Entities {
    /// The source node of each slot.
    pub nodes: Vec<NodeId>,
    /// Slot of each kept node.
    pub slot_of: HashMap<NodeId, usize>,
    /// Per slot: the slot of its nearest kept ancestor (`None`: a root).
    pub parents: Vec<Option<usize>>,
    /// Per slot: the name as written (at most 31 bytes, unique).
    pub names: Vec<String>,
    /// Slots in file order (the seed's traverse()).
    pub order: Vec<usize>,
    /// Per slot: its index in the file.
    pub file_index: Vec<usize>,
}

/// Chooses the entities: mesh, null (helper) and bone nodes; every other node is reported
/// dropped. Names are shortened ([`unique_names`]) and the slots put in traverse() order.
///
/// Errors: [`Error::Invalid`] when there are more entities than a `u16` parent index holds.
pub(super) fn entities(scene: &Scene, report: &mut ExportReport) -> Result<Entities, Error> {
    let keep = |n: &Node| matches!(n.kind, NodeKind::Mesh | NodeKind::Null | NodeKind::Bone);
    let nodes: Vec<NodeId> = (0..scene.nodes.len()).filter(|&i| keep(&scene.nodes[i])).collect();
    for (i, n) in scene.nodes.iter().enumerate() {
        if !keep(n) {
            report.dropped.push(format!(
                "node {i} {} ({}): 3DA has no {}",
                quoted(&n.name),
                n.kind.name(),
                n.kind.name()
            ));
        }
    }
    let mut slot_of: HashMap<NodeId, usize> = HashMap::new();
    for (k, &i) in nodes.iter().enumerate() {
        slot_of.insert(i, k);
    }
    let parents: Vec<Option<usize>> =
        nodes.iter().map(|&i| kept_parent(scene, &slot_of, i)).collect();
    let names =
        unique_names(nodes.iter().map(|&i| display_name(&scene.nodes[i])).collect(), report);
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let order = crate::formats::three_da::traverse_order(&parents, &name_refs);
    let mut file_index = vec![0usize; nodes.len()];
    for (f, &k) in order.iter().enumerate() {
        file_index[k] = f;
    }
    if nodes.len() > usize::from(u16::MAX) {
        return Err(Error::Invalid(format!(
            "{} entities do not fit a u16 parent index",
            nodes.len()
        )));
    }
    Ok(Entities { nodes, slot_of, parents, names, order, file_index })
}

/// The slot of node `i`'s nearest kept ancestor; `None` for none (or a parent chain longer
/// than the scene, i.e. a cycle).
fn kept_parent(scene: &Scene, slot_of: &HashMap<NodeId, usize>, i: NodeId) -> Option<usize> {
    let mut p = scene.nodes[i].parent;
    let mut guard = 0;
    while let Some(q) = p {
        if let Some(&k) = slot_of.get(&q) {
            return Some(k);
        }
        p = scene.nodes[q].parent;
        guard += 1;
        if guard > scene.nodes.len() {
            return None;
        }
    }
    None
}

/// The name a node is written under: its own, or for a 3DS dummy (`$$$DUMMY`) its instance name.
fn display_name(n: &Node) -> String {
    if n.name == "$$$DUMMY" && !n.instance.is_empty() {
        n.instance.clone()
    } else {
        n.name.clone()
    }
}

/// Cuts `s` to at most `max` bytes at a character boundary.
pub(super) fn cut(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Names of at most 31 bytes: longer ones are cut, and a cut name that collides with another
/// name gets `~N` appended (within the 31 bytes). Each shortening is a warning.
fn unique_names(names: Vec<String>, report: &mut ExportReport) -> Vec<String> {
    let max = NAME_LEN - 1;
    let mut taken: std::collections::HashSet<String> =
        names.iter().filter(|n| n.len() <= max).cloned().collect();
    names
        .into_iter()
        .map(|n| {
            if n.len() <= max {
                return n;
            }
            let mut short = cut(&n, max).to_string();
            let mut k = 1;
            while taken.contains(&short) {
                let suffix = format!("~{k}");
                short = format!("{}{suffix}", cut(&n, max - suffix.len()));
                k += 1;
            }
            taken.insert(short.clone());
            report.warnings.push(format!(
                "name {n} is longer than 31 bytes: written as {short}",
                n = quoted(&n),
                short = quoted(&short)
            ));
            short
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_names_are_shortened_uniquely() {
        let long = "a".repeat(40);
        let mut r = ExportReport::default();
        let names = unique_names(vec![long.clone(), long.clone(), "b".into()], &mut r);
        assert_eq!(names[0], "a".repeat(31));
        assert_eq!(names[1], format!("{}~1", "a".repeat(29)));
        assert_eq!(names[2], "b");
        assert_eq!(r.warnings.len(), 2);
    }
}
