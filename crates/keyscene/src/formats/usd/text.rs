//! The `.usda` text: indentation, numbers, strings, arrays and time samples, as the USD text
//! grammar (`sdf/textFileFormat.yy`) reads them. Non-finite numbers are written as `0` and
//! counted, so the caller can warn.

use std::fmt::Write as _;

use glam::{DMat4, DVec3};

/// The deepest indentation written, in levels of four spaces.
pub const MAX_INDENT: usize = 32;

/// A layer being written: the text and its current indentation.
#[derive(Debug, Default)]
pub struct Text {
    /// The text so far.
    pub out: String,
    depth: usize,
    /// How many non-finite numbers were written as 0.
    pub non_finite: usize,
}

impl Text {
    /// One line at the current indentation (at most [`MAX_INDENT`] levels shown, so that a
    /// deep hierarchy does not make the text quadratic in its depth).
    pub fn line(&mut self, s: &str) {
        for _ in 0..self.depth.min(MAX_INDENT) {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    /// One line of `parts` at the current indentation ([`Text::line`] of their concatenation).
    pub fn line_parts(&mut self, parts: &[&str]) {
        for _ in 0..self.depth.min(MAX_INDENT) {
            self.out.push_str("    ");
        }
        for p in parts {
            self.out.push_str(p);
        }
        self.out.push('\n');
    }

    /// Opens a prim: `head` (`def Xform "Name"`), its metadata lines (inside `( … )`, none
    /// for no parentheses), then `{`.
    pub fn open(&mut self, head: &str, metadata: &[String]) {
        self.line(head);
        if !metadata.is_empty() {
            self.line("(");
            self.depth += 1;
            for m in metadata {
                self.line(m);
            }
            self.depth -= 1;
            self.line(")");
        }
        self.line("{");
        self.depth += 1;
    }

    /// Opens a block whose head and braces share lines, as a variant set and its variants
    /// need (`variantSet "x" = {`, `"name" (` metadata `) {`); [`Text::close`] closes it.
    pub fn open_with(&mut self, head: &str, metadata: &[String]) {
        if metadata.is_empty() {
            self.line(&format!("{head} {{"));
        } else {
            self.line(&format!("{head} ("));
            self.depth += 1;
            for m in metadata {
                self.line(m);
            }
            self.depth -= 1;
            self.line(") {");
        }
        self.depth += 1;
    }

    /// An empty text one level deeper than this one: lines written to it belong inside the
    /// next prim opened here (to be inserted there, [`Text::insert_after_open`]).
    pub fn child(&self) -> Text {
        Text { out: String::new(), depth: self.depth + 1, non_finite: 0 }
    }

    /// An empty text at this one's indentation: lines written to it go where this text ends,
    /// once [`Text::append`]ed (so that parts can be written on threads).
    pub fn beside(&self) -> Text {
        Text { out: String::new(), depth: self.depth, non_finite: 0 }
    }

    /// Appends `other` ([`Text::beside`]'s text) and its count of non-finite numbers.
    pub fn append(&mut self, other: Text) {
        self.out.push_str(&other.out);
        self.non_finite += other.non_finite;
    }

    /// Inserts `lines` ([`Text::child`]'s text) right after the first `{` line at or after
    /// byte `at`: as the first lines of the prim opened there. Nothing when there is none.
    pub fn insert_after_open(&mut self, at: usize, lines: Text) {
        if let Some(brace) = self.out[at..].find("{\n") {
            self.out.insert_str(at + brace + 2, &lines.out);
            self.non_finite += lines.non_finite;
        }
    }

    /// Closes the prim [`Text::open`] opened.
    pub fn close(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.line("}");
    }

    /// A number as USD reads it back exactly (`f64` shortest round trip).
    pub fn num(&mut self, x: f64) -> String {
        let mut s = String::new();
        self.put(&mut s, x);
        s
    }

    /// [`Text::num`] of `x` appended to `s`: the shortest digits that read back as `x`
    /// (`zmij`, Schubfach: always a `.0` or an exponent, so USD never reads an integer that
    /// overflows), `0` for a non-finite number (counted).
    pub fn put(&mut self, s: &mut String, x: f64) {
        self.put_digits(s, x, x.is_finite());
    }

    /// The shortest digits of `x` (`f64` or `f32`) appended to `s` when `finite`, else `0`
    /// (counted): what [`Text::put`] and [`Text::put_f`] share.
    fn put_digits<F: zmij::Float>(&mut self, s: &mut String, x: F, finite: bool) {
        if finite {
            s.push_str(zmij::Buffer::new().format_finite(x));
        } else {
            self.non_finite += 1;
            s.push('0');
        }
    }

    /// `(a, b, …)` of `xs`, each appended by `put`: what [`Text::put_tuple`] and
    /// [`Text::put_tuple_f`] share.
    fn put_tuple_by(&mut self, s: &mut String, xs: &[f64], put: fn(&mut Text, &mut String, f64)) {
        s.push('(');
        for (k, &x) in xs.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            put(self, s, x);
        }
        s.push(')');
    }

    /// [`Text::put`] for a number of a single-precision attribute (`float`, `half`, `point3f`,
    /// `normal3f`, `vector3f`, `color3f`, `texCoord2f`, `quatf` and their arrays): `x` rounded
    /// to `f32` (to nearest, as USD rounds the `double` it parses into such an attribute) and
    /// written in the shortest digits that read back as that `f32` — what OpenUSD's own text
    /// writer writes for a `float` (`TfStringify`: shortest single-precision digits). USD
    /// reads the same `f32` as from [`Text::put`]'s digits of `x`, in about half the text. A
    /// number non-finite as `f32` (non-finite, or past `f32::MAX`) is written `0` and counted.
    pub fn put_f(&mut self, s: &mut String, x: f64) {
        let x = x as f32;
        self.put_digits(s, x, x.is_finite());
    }

    /// [`Text::put_f`] of `x` as a string.
    pub fn num_f(&mut self, x: f64) -> String {
        let mut s = String::new();
        self.put_f(&mut s, x);
        s
    }

    /// [`Text::put_tuple`] of a single-precision tuple ([`Text::put_f`]).
    pub fn put_tuple_f(&mut self, s: &mut String, xs: &[f64]) {
        self.put_tuple_by(s, xs, Text::put_f);
    }

    /// [`Text::vec3`] of a single-precision attribute (`float3`, `point3f`, `normal3f`,
    /// `vector3f`, `color3f`; [`Text::put_f`]).
    pub fn vec3_f(&mut self, v: DVec3) -> String {
        let mut s = String::with_capacity(40);
        self.put_tuple_f(&mut s, &[v.x, v.y, v.z]);
        s
    }

    /// [`Text::put_quat`] of a `quatf` ([`Text::put_f`]).
    pub fn put_quat_f(&mut self, s: &mut String, q: glam::DQuat) {
        self.put_tuple_f(s, &[q.w, q.x, q.y, q.z]);
    }

    /// [`Text::field`] of a single-precision attribute ([`Text::put_f`]).
    pub fn field_f(&mut self, decl: &str, x: f64) {
        let x = self.num_f(x);
        self.line(&format!("{decl} = {x}"));
    }

    /// `(a, b, …)` of `xs` ([`Text::put`]).
    pub fn tuple(&mut self, xs: &[f64]) -> String {
        let mut s = String::with_capacity(2 + xs.len() * 12);
        self.put_tuple(&mut s, xs);
        s
    }

    /// [`Text::tuple`] of `xs` appended to `s`.
    pub fn put_tuple(&mut self, s: &mut String, xs: &[f64]) {
        self.put_tuple_by(s, xs, Text::put);
    }

    /// One line `decl = x` ([`Text::num`]).
    pub fn field(&mut self, decl: &str, x: f64) {
        let x = self.num(x);
        self.line(&format!("{decl} = {x}"));
    }

    /// `(x, y, z)`.
    pub fn vec3(&mut self, v: DVec3) -> String {
        self.tuple(&[v.x, v.y, v.z])
    }

    /// A quaternion as USD writes `quatf`/`quatd`: `(w, x, y, z)`.
    pub fn quat(&mut self, q: glam::DQuat) -> String {
        let mut s = String::with_capacity(64);
        self.put_quat(&mut s, q);
        s
    }

    /// [`Text::quat`] of `q` appended to `s`.
    pub fn put_quat(&mut self, s: &mut String, q: glam::DQuat) {
        self.put_tuple(s, &[q.w, q.x, q.y, q.z]);
    }

    /// A matrix in USD's row-vector layout: row `i` is glam's column `i` (translation last).
    pub fn matrix(&mut self, m: DMat4) -> String {
        let mut s = String::with_capacity(200);
        s.push('(');
        for i in 0..4 {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(&self.tuple(&m.col(i).to_array()));
        }
        s.push(')');
        s
    }

    /// `[a, b, …]` of `items` each formatted by `f`.
    pub fn array<T>(&mut self, items: &[T], mut f: impl FnMut(&mut Text, &T) -> String) -> String {
        self.array_with(items, |t, s, it| {
            let v = f(t, it);
            s.push_str(&v);
        })
    }

    /// [`Text::array`] with each item appended by `f` to the array's text (no string per
    /// item: the large arrays, points and joint samples).
    pub fn array_with<T>(
        &mut self,
        items: &[T],
        mut f: impl FnMut(&mut Text, &mut String, &T),
    ) -> String {
        let mut s = String::with_capacity(items.len() * 8 + 2);
        s.push('[');
        for (k, it) in items.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            f(self, &mut s, it);
        }
        s.push(']');
        s
    }

    /// `name.timeSamples = { f: v, … }` with each value formatted by `f`, one sample a line.
    pub fn time_samples<T>(
        &mut self,
        decl: &str,
        frames: &[f64],
        values: &[T],
        mut f: impl FnMut(&mut Text, &T) -> String,
    ) {
        self.line(&format!("{decl}.timeSamples = {{"));
        self.depth += 1;
        let mut head = String::new();
        for (&t, v) in frames.iter().zip(values) {
            head.clear();
            self.put(&mut head, t);
            head.push_str(": ");
            let v = f(self, v);
            // One line `t: v,` written in place (`v` may be a large array).
            self.line_parts(&[&head, &v, ","]);
        }
        self.depth -= 1;
        self.line("}");
    }
}

/// `s` as a USD string literal (double quotes, backslash escapes).
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `p` as a USD asset path (`@…@`; a path holding `@` is written `@@@…@@@`).
pub fn asset(p: &str) -> String {
    if p.contains('@') {
        format!("@@@{p}@@@")
    } else {
        format!("@{p}@")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_and_non_finite_are_counted() {
        let mut t = Text::default();
        assert_eq!(t.num(1.0), "1.0");
        assert_eq!(t.num(0.1), "0.1");
        assert_eq!(t.num(-2.5e-12), "-2.5e-12");
        assert_eq!(t.num(f64::NAN), "0");
        assert_eq!(t.num(f64::INFINITY), "0");
        assert_eq!(t.non_finite, 2);
        // Shortest round trip: every value reads back bit for bit (Rust's own parser, as
        // USD's `strtod` reads them).
        let mut x = 0.123_456_789_f64;
        for k in 0..2000 {
            x = (x * 7.31 + k as f64 * 1e-3).sin() * 10f64.powi(k % 40 - 20);
            assert_eq!(t.num(x).parse::<f64>().unwrap().to_bits(), x.to_bits(), "{x:?}");
        }
    }

    #[test]
    fn single_precision_numbers_are_the_f32_usd_reads() {
        let mut t = Text::default();
        // The shortest digits of the nearest `f32`, not of the `f64` (the expected digits are
        // numpy's `repr(np.float32(x))`).
        assert_eq!(t.num_f(0.1), "0.1");
        assert_eq!(t.num_f(f64::from(0.1f32)), "0.1");
        assert_eq!(t.num(f64::from(0.1f32)), "0.10000000149011612");
        assert_eq!(t.num_f(0.499_999_978_145_429_8), "0.49999997");
        assert_eq!(t.num_f(5.338_667_419_852_785_6e-8), "5.3386675e-8");
        assert_eq!(t.num_f(1.0), "1.0");
        // Past f32::MAX USD would read infinity: written 0 and counted, as a NaN is.
        assert_eq!(t.num_f(1e39), "0");
        assert_eq!(t.num_f(f64::NAN), "0");
        assert_eq!(t.non_finite, 2);
        // USD parses the digits as a `double` (`strtod`) and rounds that to `float`: the digits
        // must give back the `f32` of the value through that double rounding, for values of
        // every magnitude (here 200,000 of them, halves and subnormals included).
        let mut x = 0.123_456_789_f64;
        for k in 0..200_000 {
            x = (x * 7.31 + k as f64 * 1e-3).sin() * 10f64.powi(k % 90 - 45);
            let want = x as f32;
            let got = t.num_f(x).parse::<f64>().unwrap() as f32;
            if want.is_finite() {
                assert_eq!(got.to_bits(), want.to_bits(), "{x:?}");
            }
        }
    }

    #[test]
    fn matrices_are_written_row_vector_with_translation_last() {
        let mut t = Text::default();
        let m = DMat4::from_translation(DVec3::new(1.0, 2.0, 3.0));
        assert_eq!(
            t.matrix(m),
            "((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), (1.0, 2.0, 3.0, 1.0))"
        );
    }

    #[test]
    fn strings_and_assets_are_escaped() {
        assert_eq!(string("a\"b\\c\n"), "\"a\\\"b\\\\c\\n\"");
        assert_eq!(asset("./tex.png"), "@./tex.png@");
        assert_eq!(asset("a@b.png"), "@@@a@b.png@@@");
    }
}
