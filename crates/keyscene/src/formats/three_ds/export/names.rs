//! Names as 3D Studio holds them: object, keyframer and material names shortened to printable
//! ASCII and made unique ([`Names`]), and the name a camera's or light's target node carries
//! ([`Builder::target_name`]). (Texture file names in 8.3 form: [`crate::output::FileNames`].)

use std::collections::{HashMap, HashSet};

use super::{Builder, Report, MAX_OBJECT_NAME};

/// Unique short names per kind.
#[derive(Default)]
pub(super) struct Names {
    used: HashMap<&'static str, HashSet<String>>,
    /// Per kind, cleaned name and length limit: the last clash number given to it. Names are
    /// never taken back, so every smaller number was found taken and still is: the next clash
    /// of that name starts after it (10,000 nodes of one name cost 10,000 tries, not 50
    /// million: `synthetic_id_collision` → 3DS).
    last_clash: HashMap<(&'static str, String, usize), usize>,
}

impl Names {
    /// `name` as printable ASCII (others → `_`), at most `max` bytes, unique among the names of
    /// `kind` given so far (a clash ends in `~N` / a number); renames are reported.
    pub(super) fn unique(
        &mut self,
        kind: &'static str,
        name: &str,
        max: usize,
        report: &mut Report,
    ) -> String {
        let mut clean: String =
            name.chars().map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' }).collect();
        if clean.is_empty() {
            clean = if kind == "material" { "Material".into() } else { "Object".into() };
        }
        let used = self.used.entry(kind).or_default();
        let mut out: String = clean.chars().take(max).collect();
        let last = self.last_clash.get(&(kind, clean.clone(), max)).copied();
        let mut n = last.map_or(1, |l| l + 1);
        let mut clashed = last.is_some();
        while clashed
            || used.contains(&out.to_ascii_lowercase())
            || (kind == "object" && out == "$$$DUMMY")
        {
            let suffix = format!("~{n}");
            let keep = max.saturating_sub(suffix.len());
            out = clean.chars().take(keep).collect::<String>() + &suffix;
            clashed = false;
            n += 1;
        }
        if n > 1 {
            self.last_clash.insert((kind, clean, max), n - 1);
        }
        used.insert(out.to_ascii_lowercase());
        if out != name {
            report.renamed.push((kind, name.to_string(), out.clone()));
        }
        out
    }
}

impl Builder {
    /// The keyframer name of a target node: its camera's or light's written name (`owner`),
    /// else its own (`own`), cleaned as [`Names::unique`] cleans names.
    pub(super) fn target_name(&mut self, owner: Option<&String>, own: &str) -> String {
        // A target carries its camera's or light's written name.
        let want = owner.map_or(own, |s| s.as_str());
        let clean: String = want
            .chars()
            .map(|c| if c.is_ascii_graphic() || c == ' ' { c } else { '_' })
            .take(MAX_OBJECT_NAME)
            .collect();
        // Same renaming as the owner got.
        self.report
            .renamed
            .iter()
            .find(|(k, from, _)| *k == "object" && from == want)
            .map(|(_, _, to)| to.clone())
            .unwrap_or(clean)
    }
}
