//! Quoting names in messages: the one spelling every reader, writer and the CLI use for a
//! stored name inside a sentence.

/// A name as messages quote it: in double quotes, with quotes, backslashes and control
/// characters escaped (`"Box01"`, `"tab\there"`), so an empty or odd name is visible in a
/// sentence. Every message that names a node, material, texture, animation or file by its
/// stored text goes through this (`format!("node {}", quoted(&name))`) rather than Rust's
/// `Debug` formatting, so the wording is ours even where the output happens to agree.
pub fn quoted(text: &str) -> Quoted<'_> {
    Quoted(text)
}

/// The display form of [`quoted`].
pub struct Quoted<'a>(&'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::fmt::Write;
        f.write_char('"')?;
        for c in self.0.chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if c.is_control() => write!(f, "\\u{{{:x}}}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        f.write_char('"')
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn names_are_quoted_with_quotes_backslashes_and_control_characters_escaped() {
        assert_eq!(quoted("Box01").to_string(), r#""Box01""#);
        assert_eq!(quoted("").to_string(), r#""""#);
        assert_eq!(quoted("a \"b\" c\\d").to_string(), r#""a \"b\" c\\d""#);
        assert_eq!(quoted("tab\there\nnul\0").to_string(), r#""tab\there\nnul\u{0}""#);
        assert_eq!(quoted("Ünïcode ✓").to_string(), "\"Ünïcode ✓\"");
    }
}
