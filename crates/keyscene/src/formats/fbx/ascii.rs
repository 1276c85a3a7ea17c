//! ASCII FBX: tokenizer and parser (text → [`Document`]).
//!
//! Grammar, as FBX 6.1 and 7.x writers produce it (seed 003, "ASCII files"):
//!
//! ```text
//! file   := node*
//! node   := NAME ':' values? ('{' node* '}')?
//! values := ','* value (',' value)*          FBX 6 lists may span lines after a comma
//! value  := "string" | number | bare-word | '*' N '{' 'a' ':' number (',' number)* '}'
//! ```
//!
//! - `;` starts a comment that runs to the end of the line (outside strings).
//! - Strings are bytes between double quotes; `&quot;` stands for `"` (the only escape the
//!   writers use). A string may not run to the end of the file.
//! - A name is any run of bytes other than white space and `:,{}";*`, directly followed by
//!   `:` (so `Pre-Extrapolation` and `d|X` are names).
//! - Numbers: decimal integers become [`Property::I64`]; everything Rust's float parser takes
//!   (`1.5e-3`, `inf`, `-Infinity`, `nan`), the C library forms `nan(…)`, `-nan(ind)`, and
//!   the MSVC forms `1.#INF`, `-1.#IND`, `1.#NAN`, `1.#QNAN` (digits may follow) become [`Property::F64`]. Other bare words (`T`, `Y`, `L` in FBX 6 files)
//!   become [`Property::String`].
//! - `*N { a: … }` becomes an [`Array`]: `i` when every value is an integer that fits 32
//!   bits, `l` when all are integers, otherwise `d`; the values are stored little-endian. A
//!   count other than N is kept with a [`Warning::ArrayCountMismatch`]. Leading or doubled
//!   commas inside arrays are skipped (`maya_leading_comma_7500_ascii.fbx`).
//! - FBX 6 bare number lists (`Vertices: 1,2,3,…`) of more than [`LIST_TO_ARRAY`] numbers
//!   (nothing but numbers) become one [`Array`] by the same rule, as FBX 7 writes such data:
//!   one 8-byte value per number instead of one [`Property`] each (a third of the memory).
//!   Shorter lists (vectors, 4×4 matrices, `Property:` values) stay scalar properties, as in
//!   the file.
//! - FBX 6 `Key:` lists of two or more bare words mixing numbers and letters
//!   (`Key: 0,0,L,1924423250,0.5,U,s,0,0,n,…`) become one [`Property::Raw`] borrowing the
//!   list's text from the first value to the last (commas, line breaks and comments included);
//!   `key_list_values` reads it back. They are most of the values of an FBX 6 file, and a
//!   [`Property`] per value cost four times the text (`knight.fbx`: 52,845 values).

use std::borrow::Cow;

use super::tree::{Array, ArrayType, Document, Encoding, NodeData, Property};
use super::{Error, ErrorKind, Warning};
use crate::limits::Limits;

/// Bare number lists longer than this become one array (see the module docs).
pub const LIST_TO_ARRAY: usize = 32;

/// Parses an ASCII FBX file.
pub fn parse<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Document<'a>, Error> {
    let mut p = Parser {
        lex: Lexer { s: bytes, pos: 0, peeked: None },
        limits,
        stack: Vec::new(),
        doc: Document::new(Encoding::Ascii),
    };
    match p.run() {
        // Nothing the grammar accepts before the first error, or nothing at all: these bytes
        // are no FBX (binary garbage, another format), and the parser's own words about the
        // first byte would only confuse.
        Err(e) if p.doc.nodes.is_empty() && !matches!(e.kind, ErrorKind::Limit { .. }) => {
            return Err(Error::new(0, ErrorKind::NotFbx));
        }
        Err(e) => return Err(e),
        Ok(()) if p.doc.nodes.is_empty() => return Err(Error::new(0, ErrorKind::NotFbx)),
        Ok(()) => {}
    }
    let mut doc = p.doc;
    // The comment line and FBXVersion can disagree (`synthetic_unsupported_cube_8000_ascii`
    // says 8.0.0 in the comment and 7500 in FBXVersion): the version is FBXVersion, and a
    // warning is given when either is outside the supported range (ufbx warns for that file).
    let comment = comment_version(bytes);
    doc.version = header_version(&doc).unwrap_or(comment);
    let supported = super::OLDEST_SUPPORTED..=super::NEWEST_SUPPORTED;
    if !supported.contains(&doc.version) {
        doc.warnings.insert(0, Warning::UnsupportedVersion(doc.version));
    } else if comment != 0 && !supported.contains(&comment) {
        doc.warnings.insert(0, Warning::UnsupportedVersion(comment));
    }
    Ok(doc)
}

/// `FBXHeaderExtension › FBXVersion`.
fn header_version(doc: &Document<'_>) -> Option<u32> {
    let v = doc.find(&["FBXHeaderExtension", "FBXVersion"])?.property(0)?.as_i64()?;
    u32::try_from(v).ok()
}

/// The `; FBX 7.5.0 project file` line: 7500. 0 when absent.
fn comment_version(bytes: &[u8]) -> u32 {
    let head = &bytes[..bytes.len().min(256)];
    let Some(at) = head.windows(6).position(|w| w == b"; FBX ") else { return 0 };
    let mut parts = head[at + 6..].split(|&b| b == b'.' || b == b' ' || b == b'\n').take(3);
    let mut num = |scale: u32| -> Option<u32> {
        std::str::from_utf8(parts.next()?).ok()?.trim().parse::<u32>().ok().map(|v| v * scale)
    };
    match (num(1000), num(100)) {
        (Some(a), Some(b)) => a + b,
        _ => 0,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    /// A name directly followed by `:` (range excludes the colon).
    Name(usize, usize),
    /// A bare word or number.
    Word(usize, usize),
    /// A quoted string (range inside the quotes); `escaped` when it holds `&quot;`.
    Str(usize, usize, bool),
    Comma,
    Open,
    Close,
    /// `*` (an array count follows as a word).
    Star,
    Eof,
}

struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
    peeked: Option<(Tok, usize)>,
}

/// `WORD[b]`: whether byte `b` can be part of a name, number or bare word.
static WORD: [bool; 256] = {
    let mut t = [true; 256];
    let stops = b" \t\r\n:,{}\";*\x0b\x0c";
    let mut i = 0;
    while i < stops.len() {
        t[stops[i] as usize] = false;
        i += 1;
    }
    t
};

fn is_word_byte(b: u8) -> bool {
    WORD[b as usize]
}

impl<'a> Lexer<'a> {
    /// The next token and its byte offset.
    fn next(&mut self) -> Result<(Tok, usize), Error> {
        if let Some(t) = self.peeked.take() {
            return Ok(t);
        }
        let s = self.s;
        let mut i = self.pos;
        loop {
            match s.get(i) {
                Some(b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c) => i += 1,
                Some(b';') => {
                    while i < s.len() && s[i] != b'\n' {
                        i += 1;
                    }
                }
                _ => break,
            }
        }
        let start = i;
        let Some(&b) = s.get(i) else {
            self.pos = i;
            return Ok((Tok::Eof, i));
        };
        let tok = match b {
            b',' => {
                i += 1;
                Tok::Comma
            }
            b'{' => {
                i += 1;
                Tok::Open
            }
            b'}' => {
                i += 1;
                Tok::Close
            }
            b'*' => {
                i += 1;
                Tok::Star
            }
            b':' => {
                return Err(Error::new(
                    i as u64,
                    ErrorKind::Syntax { expected: "a name or value", found: "':'".into() },
                ));
            }
            b'"' => {
                i += 1;
                let body = i;
                let Some(len) = s[body..].iter().position(|&c| c == b'"') else {
                    return Err(Error::new(start as u64, ErrorKind::UnterminatedString));
                };
                let text = &s[body..body + len];
                let escaped = text.contains(&b'&') && text.windows(6).any(|w| w == b"&quot;");
                i = body + len + 1;
                Tok::Str(body, body + len, escaped)
            }
            _ => {
                while i < s.len() && is_word_byte(s[i]) {
                    i += 1;
                }
                if s.get(i) == Some(&b':') {
                    i += 1;
                    Tok::Name(start, i - 1)
                } else {
                    Tok::Word(start, i)
                }
            }
        };
        self.pos = i;
        Ok((tok, start))
    }

    fn peek(&mut self) -> Result<Tok, Error> {
        let t = self.next()?;
        self.peeked = Some(t);
        Ok(t.0)
    }
}

/// A number or word as a property.
fn word_value(w: &[u8]) -> Property<'_> {
    if let Some(v) = parse_int(w) {
        return Property::I64(v);
    }
    match parse_float(w) {
        Some(v) => Property::F64(v),
        None => Property::String(Cow::Borrowed(w)),
    }
}

/// The values of a `Key:` list kept as text (see the module docs), in order, as the parser
/// would have stored them: numbers as `f64`, any other word as its first byte (`L` → 76).
pub(crate) fn key_list_values(text: &[u8], out: &mut Vec<f64>) {
    let mut i = 0;
    while i < text.len() {
        if text[i] == b';' {
            while i < text.len() && text[i] != b'\n' {
                i += 1;
            }
        } else if !is_word_byte(text[i]) {
            i += 1;
        } else {
            let start = i;
            while i < text.len() && is_word_byte(text[i]) {
                i += 1;
            }
            out.push(match word_value(&text[start..i]) {
                Property::String(w) => f64::from(w[0]),
                p => p.as_f64().unwrap_or(0.0),
            });
        }
    }
}

/// Decimal integer with optional sign; `None` for anything else or on overflow.
fn parse_int(w: &[u8]) -> Option<i64> {
    let (neg, digits) = match w.first()? {
        b'-' => (true, &w[1..]),
        b'+' => (false, &w[1..]),
        _ => (false, w),
    };
    if digits.is_empty() || digits.len() > 18 {
        return if digits.len() > 18 && digits.iter().all(u8::is_ascii_digit) {
            std::str::from_utf8(w).ok()?.parse().ok()
        } else {
            None
        };
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (d - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

/// A float in Rust syntax (`1e5`, `inf`, `nan`), a C `nan(…)`, or an MSVC special
/// (`1.#INF`, `-1.#IND`, `1.#NAN`, `2.#IND12345678`).
fn parse_float(w: &[u8]) -> Option<f64> {
    let first = *w.first()?;
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.' | b'n' | b'N' | b'i' | b'I'))
    {
        return None;
    }
    let text = std::str::from_utf8(w).ok()?;
    if let Ok(v) = text.parse::<f64>() {
        return Some(v);
    }
    let neg = first == b'-';
    let upper = text.to_ascii_uppercase();
    let unsigned = upper.trim_start_matches(['-', '+']);
    if unsigned.starts_with("NAN") {
        Some(f64::NAN)
    } else if upper.contains("#INF") {
        Some(if neg { f64::NEG_INFINITY } else { f64::INFINITY })
    } else if upper.contains("#IND")
        || upper.contains("#NAN")
        || upper.contains("#QNAN")
        || upper.contains("#SNAN")
    {
        Some(f64::NAN)
    } else {
        None
    }
}

/// `&quot;` → `"`.
fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i..].starts_with(b"&quot;") {
            out.push(b'"');
            i += 6;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// Packs values into little-endian bytes.
fn to_le_bytes<T: Copy, const N: usize>(values: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * N);
    for &v in values {
        out.extend_from_slice(&f(v));
    }
    out
}

fn describe(s: &[u8], t: Tok) -> String {
    // Quoted, shortened to 40 bytes, control and non-UTF-8 bytes as `\xNN`.
    let text = |a: usize, b: usize| {
        let mut out = String::from("\"");
        super::write_escaped(&mut out, &s[a..b.min(a + 40)]);
        out.push('"');
        out
    };
    match t {
        Tok::Name(a, b) => format!("name {}", text(a, b)),
        Tok::Word(a, b) => text(a, b),
        Tok::Str(a, b, _) => format!("string {}", text(a, b)),
        Tok::Comma => "','".into(),
        Tok::Open => "'{'".into(),
        Tok::Close => "'}'".into(),
        Tok::Star => "'*'".into(),
        Tok::Eof => "the end of the file".into(),
    }
}

struct Parser<'a, 'l> {
    lex: Lexer<'a>,
    limits: &'l Limits,
    stack: Vec<u32>,
    doc: Document<'a>,
}

impl<'a> Parser<'a, '_> {
    fn err(&self, offset: usize, kind: ErrorKind) -> Error {
        let mut e = Error::new(offset as u64, kind);
        e.path = self.stack.iter().map(|&n| self.doc.nodes[n as usize].name.to_string()).collect();
        e
    }

    /// `expected` is missing at `offset`; the end of the file there is a truncation.
    fn syntax(&self, offset: usize, expected: &'static str, found: Tok) -> Error {
        if found == Tok::Eof {
            let file_len = self.lex.s.len() as u64;
            let expected = match self.stack.last() {
                Some(&n) if expected == "'}'" => {
                    format!("'}}' closing the record {}", self.doc.nodes[n as usize].name)
                }
                _ => expected.to_string(),
            };
            return self.err(offset, ErrorKind::FileTruncated { file_len, expected });
        }
        self.err(offset, ErrorKind::Syntax { expected, found: describe(self.lex.s, found) })
    }

    /// Adds an error's path to errors the lexer raised.
    fn lexed(&mut self) -> Result<(Tok, usize), Error> {
        self.lex.next().map_err(|e| self.err(e.offset as usize, e.kind))
    }

    fn peeked(&mut self) -> Result<Tok, Error> {
        self.lex.peek().map_err(|e| self.err(e.offset as usize, e.kind))
    }

    fn close(&mut self) {
        let n = self.stack.pop().expect("close with an open node");
        self.doc.nodes[n as usize].subtree_end = self.doc.nodes.len() as u32;
    }

    fn run(&mut self) -> Result<(), Error> {
        loop {
            let (tok, at) = self.lexed()?;
            match tok {
                Tok::Eof => {
                    if !self.stack.is_empty() {
                        return Err(self.syntax(at, "'}'", tok));
                    }
                    return Ok(());
                }
                Tok::Close if !self.stack.is_empty() => self.close(),
                Tok::Name(a, b) => self.node(a, b, at)?,
                _ => return Err(self.syntax(at, "a node name followed by ':'", tok)),
            }
        }
    }

    /// Reads the values (and opens the children) of the node whose name is `s[a..b]`.
    fn node(&mut self, a: usize, b: usize, at: usize) -> Result<(), Error> {
        let name =
            std::str::from_utf8(&self.lex.s[a..b]).map_err(|_| self.err(at, ErrorKind::BadName))?;
        let index = self.doc.nodes.len() as u32;
        if index as u64 >= self.limits.max_elements {
            return Err(self.err(
                at,
                ErrorKind::Limit {
                    what: "nodes",
                    requested: index as u64 + 1,
                    limit: self.limits.max_elements,
                },
            ));
        }
        let first = self.doc.props.len() as u32;
        self.doc.nodes.push(NodeData {
            name,
            props_start: first,
            props_end: first,
            subtree_end: index + 1,
            offset: at as u64,
        });
        let mut want_value = true;
        // The text span of the values while all are bare words (see `keep_key_text`).
        let mut words = Some((usize::MAX, 0usize));
        loop {
            match self.peeked()? {
                Tok::Open => {
                    self.lexed()?;
                    self.keep_key_text(name, first as usize, words);
                    self.list_to_array(first as usize);
                    self.doc.nodes[index as usize].props_end = self.doc.props.len() as u32;
                    if self.stack.len() as u64 >= self.limits.max_depth as u64 {
                        self.stack.push(index);
                        return Err(self.err(at, ErrorKind::TooDeep { max: self.limits.max_depth }));
                    }
                    self.stack.push(index);
                    return Ok(());
                }
                Tok::Comma => {
                    self.lexed()?;
                    want_value = true;
                }
                Tok::Str(..) | Tok::Word(..) | Tok::Star if want_value => {
                    let (tok, vat) = self.lexed()?;
                    if !matches!(tok, Tok::Word(..)) {
                        words = None;
                    }
                    let prop = match tok {
                        Tok::Str(x, y, escaped) => {
                            let s = &self.lex.s[x..y];
                            Property::String(if escaped {
                                Cow::Owned(unescape(s))
                            } else {
                                Cow::Borrowed(s)
                            })
                        }
                        Tok::Word(x, y) => {
                            if let Some((start, end)) = words.as_mut() {
                                *start = (*start).min(x);
                                *end = y;
                            }
                            word_value(&self.lex.s[x..y])
                        }
                        _ => {
                            self.stack.push(index);
                            let r = self.array(vat);
                            self.stack.pop();
                            Property::Array(Box::new(r?))
                        }
                    };
                    self.doc.props.push(prop);
                    want_value = false;
                }
                _ => {
                    self.keep_key_text(name, first as usize, words);
                    self.list_to_array(first as usize);
                    self.doc.nodes[index as usize].props_end = self.doc.props.len() as u32;
                    return Ok(());
                }
            }
        }
    }

    /// Replaces the values `props[first..]` of an FBX 6 `Key:` list by one
    /// [`Property::Raw`] borrowing their text `s[span]`, when they are two or more bare words
    /// of which at least one is not a number (`0,0,L,…,U,s,…`).
    /// Such lists are most of an FBX 6 file's values; the take reader decodes the text with
    /// [`key_list_values`] (see the module docs).
    fn keep_key_text(&mut self, name: &str, first: usize, words: Option<(usize, usize)>) {
        let Some((start, end)) = words else { return };
        let values = &self.doc.props[first..];
        if name != "Key"
            || values.len() < 2
            || values.iter().all(|p| matches!(p, Property::I64(_) | Property::F64(_)))
        {
            return;
        }
        self.doc.props.truncate(first);
        self.doc.props.push(Property::Raw(Box::new(Cow::Borrowed(&self.lex.s[start..end]))));
    }

    /// Replaces the values `props[first..]` by one array when they are more than
    /// [`LIST_TO_ARRAY`] numbers and nothing else (see the module docs).
    fn list_to_array(&mut self, first: usize) {
        let values = &self.doc.props[first..];
        if values.len() <= LIST_TO_ARRAY {
            return;
        }
        let mut float = false;
        let mut wide = false;
        for p in values {
            match *p {
                Property::I64(v) => wide |= i32::try_from(v).is_err(),
                Property::F64(_) => float = true,
                _ => return,
            }
        }
        let num = |p: &Property<'_>| match *p {
            Property::I64(v) => v as f64,
            Property::F64(v) => v,
            _ => 0.0,
        };
        let int = |p: &Property<'_>| match *p {
            Property::I64(v) => v,
            _ => 0,
        };
        let (ty, data): (ArrayType, Vec<u8>) = if float {
            (ArrayType::F64, values.iter().flat_map(|p| num(p).to_le_bytes()).collect())
        } else if wide {
            (ArrayType::I64, values.iter().flat_map(|p| int(p).to_le_bytes()).collect())
        } else {
            (ArrayType::I32, values.iter().flat_map(|p| (int(p) as i32).to_le_bytes()).collect())
        };
        self.doc.props.truncate(first);
        self.doc.props.push(Property::Array(Box::new(Array::new(
            ty,
            Cow::Owned(data),
            false,
            false,
        ))));
    }

    /// Reads the numbers after `a:` up to (not including) the closing `}`: a tight loop over
    /// the bytes instead of the token stream, since arrays are most of an ASCII file. Values
    /// stay integers until the first non-integer, then all become `f64`.
    fn array_values(
        &mut self,
        ints: &mut Vec<i64>,
        floats: &mut Option<Vec<f64>>,
    ) -> Result<(), Error> {
        debug_assert!(self.lex.peeked.is_none());
        let s = self.lex.s;
        let mut i = self.lex.pos;
        loop {
            while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\r' | b'\n' | b',') {
                i += 1;
            }
            if i >= s.len() || !is_word_byte(s[i]) {
                if s.get(i) == Some(&b';') {
                    while i < s.len() && s[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                self.lex.pos = i;
                return Ok(());
            }
            let start = i;
            while i < s.len() && is_word_byte(s[i]) {
                i += 1;
            }
            let w = &s[start..i];
            let count = ints.len() + floats.as_ref().map_or(0, Vec::len);
            if count as u64 >= self.limits.max_elements {
                return Err(self.err(
                    start,
                    ErrorKind::Limit {
                        what: "array elements",
                        requested: count as u64 + 1,
                        limit: self.limits.max_elements,
                    },
                ));
            }
            match (&mut *floats, parse_int(w)) {
                (None, Some(v)) => ints.push(v),
                (Some(f), Some(v)) => f.push(v as f64),
                (f, None) => {
                    let Some(v) = parse_float(w) else {
                        return Err(self.syntax(start, "a number", Tok::Word(start, i)));
                    };
                    let f = f.get_or_insert_with(|| ints.drain(..).map(|i| i as f64).collect());
                    f.push(v);
                }
            }
        }
    }

    /// Reads `N { a: v, v, … }` after a `*` at `at`.
    fn array(&mut self, at: usize) -> Result<Array<'a>, Error> {
        let (tok, wat) = self.lexed()?;
        let declared = match tok {
            Tok::Word(x, y) => parse_int(&self.lex.s[x..y]).filter(|&n| n >= 0),
            _ => None,
        };
        let Some(declared) = declared else {
            return Err(self.syntax(wat, "an array count after '*'", tok));
        };
        let (tok, oat) = self.lexed()?;
        if tok != Tok::Open {
            return Err(self.syntax(oat, "'{' after the array count", tok));
        }
        let mut ints: Vec<i64> = Vec::new();
        let mut floats: Option<Vec<f64>> = None;
        loop {
            let (tok, vat) = self.lexed()?;
            match tok {
                Tok::Close => break,
                Tok::Comma => {}
                Tok::Name(x, y) if &self.lex.s[x..y] == b"a" => {
                    self.array_values(&mut ints, &mut floats)?
                }
                _ => return Err(self.syntax(vat, "array values 'a: …' and '}'", tok)),
            }
        }
        let (ty, data): (ArrayType, Vec<u8>) = match floats {
            Some(f) => (ArrayType::F64, to_le_bytes(&f, f64::to_le_bytes)),
            None if ints.iter().all(|&v| i32::try_from(v).is_ok()) => {
                (ArrayType::I32, to_le_bytes(&ints, |v| (v as i32).to_le_bytes()))
            }
            None => (ArrayType::I64, to_le_bytes(&ints, i64::to_le_bytes)),
        };
        let found = (data.len() / ty.size()) as u64;
        if found != declared as u64 {
            self.doc.warnings.push(Warning::ArrayCountMismatch {
                offset: at as u64,
                declared: declared as u64,
                found,
            });
        }
        Ok(Array::new(ty, Cow::Owned(data), false, false))
    }
}

#[cfg(test)]
mod tests {
    use super::key_list_values;
    use crate::formats::fbx::{self, ArrayType, Encoding, ErrorKind, Property, Warning};
    use crate::limits::Limits;

    fn parse(text: &str) -> fbx::Document<'_> {
        fbx::parse(text.as_bytes(), &Limits::default()).unwrap()
    }

    fn err(text: &str) -> fbx::Error {
        fbx::parse(text.as_bytes(), &Limits::default()).unwrap_err()
    }

    const FBX7: &str = r#"; FBX 7.4.0 project file
; comment line: { not a brace
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}
Objects:  {
	Geometry: 140, "Geometry::Cube &quot;A&quot;", "Mesh" {
		Vertices: *6 {
			a: -0.5,0.5,1e2,,0,-1.25,3
		} 
		PolygonVertexIndex: *3 {
			a: 0,1,-3
		}
		KeyTime: *2 {
			a: 0,46186158000
		}
		Properties70:  {
			P: "Lcl Translation", "Lcl Translation", "", "A",1.5,-2,3 ; trailing comment
		}
	}
}
"#;

    #[test]
    fn nodes_values_arrays_and_comments() {
        let doc = parse(FBX7);
        assert_eq!((doc.version, doc.encoding), (7400, Encoding::Ascii));
        let geo = doc.find(&["Objects", "Geometry"]).unwrap();
        assert_eq!(geo.property(0), Some(&Property::I64(140)));
        assert_eq!(geo.property(1).unwrap().as_str(), Some("Geometry::Cube \"A\""));
        let v = geo.child_array("Vertices").unwrap();
        assert_eq!(v.ty(), ArrayType::F64);
        assert_eq!(v.to_f64_vec(), [-0.5, 0.5, 100.0, 0.0, -1.25, 3.0]);
        assert_eq!(geo.child_array("PolygonVertexIndex").unwrap().ty(), ArrayType::I32);
        let kt = geo.child_array("KeyTime").unwrap();
        assert_eq!((kt.ty(), kt.to_i64_vec()), (ArrayType::I64, vec![0, 46_186_158_000]));
        let p = geo.child("Properties70").unwrap().child("P").unwrap();
        assert_eq!(p.properties().len(), 7);
        assert_eq!(p.property(4), Some(&Property::F64(1.5)));
        assert_eq!(p.property(5), Some(&Property::I64(-2)));
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    }

    #[test]
    fn special_float_spellings_parse_to_inf_and_nan() {
        let doc = parse(
            "V: *9 { a: 1.#INF,-1.#INF,-1.#IND,1.#QNAN,-nan(ind),nan,inf,-Infinity,2.#IND1234 }",
        );
        let v = doc.root("V").unwrap().child_array("__none__");
        assert!(v.is_none());
        let a = doc.root("V").unwrap().property(0).unwrap().as_array().unwrap().to_f64_vec();
        assert_eq!(&a[..2], [f64::INFINITY, f64::NEG_INFINITY]);
        assert!(a[2..6].iter().all(|x| x.is_nan()));
        assert_eq!(a[6..8], [f64::INFINITY, f64::NEG_INFINITY]);
        assert!(a[8].is_nan());
    }

    #[test]
    fn fbx6_bare_lists_span_lines_and_names_may_contain_dashes() {
        let doc = parse(
            "FBXHeaderExtension: { FBXVersion: 6100 }\nModel: \"Model::Cube\", \"Mesh\" {\n\tVertices: 1,2,3,\n\t\t4,5,6\n\tShading: Y\n\tPre-Extrapolation: {\n\t\tType: C\n\t}\n\tKey: 0,1,L,\n\t\t5,2,L\n}\n",
        );
        assert_eq!(doc.version, 6100);
        let m = doc.root("Model").unwrap();
        let v: Vec<f64> =
            m.child("Vertices").unwrap().properties().iter().filter_map(Property::as_f64).collect();
        assert_eq!(v, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(m.child("Shading").unwrap().property(0).unwrap().as_str(), Some("Y"));
        assert_eq!(
            m.child("Pre-Extrapolation")
                .unwrap()
                .child("Type")
                .unwrap()
                .property(0)
                .unwrap()
                .as_str(),
            Some("C")
        );
        let [Property::Raw(t)] = m.child("Key").unwrap().properties() else { panic!() };
        assert_eq!(&t[..], b"0,1,L,\n\t\t5,2,L");
    }

    #[test]
    fn long_bare_number_lists_become_one_array_key_lists_stay_text_short_lists_stay() {
        let ints: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let mut floats = ints.clone();
        floats[7] = "0.5".into();
        let keys: Vec<String> =
            (0..40).map(|i| if i % 3 == 2 { "L".into() } else { i.to_string() }).collect();
        let text = format!(
            "PolygonVertexIndex: {}\nVertices: {}\nKey: {}\nOther: {}\nMatrix: {}\n",
            ints.join(","),
            floats.join(","),
            keys.join(",\n ; comment, 1\n"),
            keys.join(","),
            ints[..16].join(",")
        );
        let doc = parse(&text);
        let one = |name: &str| doc.root(name).unwrap().properties().to_vec();
        let [Property::Array(a)] = &one("PolygonVertexIndex")[..] else { panic!() };
        assert_eq!((a.ty(), a.len(), a.get_i64(39)), (ArrayType::I32, 40, Some(39)));
        let [Property::Array(a)] = &one("Vertices")[..] else { panic!() };
        assert_eq!((a.ty(), a.get_f64(7), a.get_f64(8)), (ArrayType::F64, Some(0.5), Some(8.0)));
        let [Property::Raw(t)] = &one("Key")[..] else { panic!() };
        let mut values = Vec::new();
        key_list_values(t, &mut values);
        let expected: Vec<f64> =
            (0..40).map(|i| if i % 3 == 2 { f64::from(b'L') } else { i as f64 }).collect();
        assert_eq!(values, expected);
        assert_eq!(one("Other").len(), 40);
        assert_eq!(one("Matrix").len(), 16);
    }

    #[test]
    fn empty_nodes_and_leading_commas() {
        let doc = parse("A:\nB: {\n}\nC: , \"x\"\nD: *3 { a: ,1,2,3 }\n");
        let names: Vec<_> = doc.roots().map(|n| (n.name(), n.properties().len())).collect();
        assert_eq!(names, [("A", 0), ("B", 0), ("C", 1), ("D", 1)]);
        assert_eq!(
            doc.root("D").unwrap().property(0).unwrap().as_array().unwrap().to_i32_vec(),
            [1, 2, 3]
        );
    }

    #[test]
    fn array_count_mismatch_keeps_values_with_a_warning() {
        let doc = parse("D: *4 { a: 1,2,3 }");
        assert_eq!(
            doc.warnings,
            [
                Warning::UnsupportedVersion(0),
                Warning::ArrayCountMismatch { offset: 3, declared: 4, found: 3 }
            ]
        );
    }

    #[test]
    fn comment_version_disagreeing_with_fbxversion_warns() {
        let doc = parse("; FBX 8.0.0 project file\nFBXHeaderExtension: { FBXVersion: 7500 }\n");
        assert_eq!(doc.version, 7500);
        assert_eq!(doc.warnings, [Warning::UnsupportedVersion(8000)]);
    }

    #[test]
    fn string_cut_off_by_the_end_of_file_is_an_error() {
        let e = err("Objects: {\n  Model: \"Model::Cu");
        assert_eq!(e.kind, ErrorKind::UnterminatedString);
        assert_eq!(e.path, ["Objects"]);
        assert_eq!(e.offset, 20);
    }

    #[test]
    fn unbalanced_braces_are_syntax_errors() {
        // Issue 17 §1: the end of the file inside a record is a truncation, named so.
        let e = err("A: {\n B: 1\n");
        assert_eq!(
            e.kind,
            ErrorKind::FileTruncated { file_len: 11, expected: "'}' closing the record A".into() }
        );
        assert_eq!(e.to_string(), "fbx: A at byte 0xb: the file is truncated at byte 11: expected '}' closing the record A");
        assert_eq!(err("}").kind, ErrorKind::NotFbx);
        assert!(matches!(err("A: *x { a: 1 }").kind, ErrorKind::Syntax { .. }));
    }

    /// Issue 17 §1: binary garbage (a fuzz input) is "not an FBX file", not its raw bytes.
    #[test]
    fn bytes_with_no_ascii_record_are_not_an_fbx_file() {
        for bytes in
            [&b"L\x1d\xff\x00\x01garbage"[..], b"   \n\n", b"; FBX 7.4.0 project file\n", b"{ x"]
        {
            let e = fbx::parse(bytes, &Limits::default()).unwrap_err();
            assert_eq!(e.kind, ErrorKind::NotFbx, "{bytes:?}");
            assert_eq!(
                e.to_string(),
                "fbx: at byte 0x0: not an FBX file (no binary header, no ASCII records)"
            );
        }
    }

    #[test]
    fn nesting_beyond_the_depth_limit_is_an_error() {
        let text = "A: {".repeat(100) + &"}".repeat(100);
        assert_eq!(err(&text).kind, ErrorKind::TooDeep { max: 64 });
    }

    #[test]
    fn dump_shows_the_tree_with_arrays_summarised() {
        let doc = parse(FBX7);
        let text = fbx::dump(&doc);
        assert!(text.starts_with("FBX 7400 (ASCII), 10 nodes, 15 properties\n"), "{text}");
        assert!(text.contains("\n  Geometry: 140, \"Geometry::Cube \\\"A\\\"\", \"Mesh\"\n    Vertices: d[6] -0.5, 0.5, 100, 0, -1.25, 3\n"), "{text}");
        assert!(
            text.contains(
                "\n      P: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\", 1.5, -2, 3\n"
            ),
            "{text}"
        );
    }
}
