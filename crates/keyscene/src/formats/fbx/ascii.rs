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
//! - Strings are bytes between double quotes; `&quot;` stands for `"`, `&cr;` for a carriage
//!   return and `&lf;` for a line feed (ufbx's ASCII lexer; there is no escape for `&` itself,
//!   any other `&` is itself). A string may not run to the end of the file.
//! - A name is any run of bytes other than white space and `:,{}";*`, directly followed by
//!   `:` (so `Pre-Extrapolation` and `d|X` are names).
//! - Numbers are read as ufbx 0.23 reads them (docs/fbx.md, "ASCII numbers"):
//!   a token starting with `0-9 + - .` must be all number — an integer (one sign, digits,
//!   under 30 characters, wrapped modulo 2^64 past 64 bits) becomes [`Property::I64`]; a
//!   float (digits with one `.`, an exponent whose digits may be missing, or an inf/NaN
//!   spelling: `inf`, `-infinity`, `nan`, `-nan(ind)`, MSVC `1.#INF`, `-1.#IND`, `1.#NAN`
//!   with trailing digits) becomes [`Property::F64`]; anything else (`1.#QNAN`, `1.2.3`,
//!   `3ds`, `--1`) is a syntax error with the line and column, as ufbx rejects it. A bare
//!   word that is a whole inf/NaN spelling (`nan`, `Infinity`) is that number; other bare
//!   words (`T`, `Y`, `L` in FBX 6 files, `snan`) become [`Property::String`], and inside a
//!   number array the code of their first byte, as ufbx reads them. Odd numbers load with
//!   one [`Warning::OddNumbers`] per kind.
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
//!   (`Key: 0,0,L,1924423250,0.5,U,s,0,0,n,…`) become one `f64` array: numbers as
//!   themselves, other words as the code of their first byte (`L` → 76), as ufbx reads bare
//!   words where numbers belong. They are most of the values of an FBX 6 file, and a
//!   [`Property`] per value cost three times the array (`knight.fbx`: 52,845 values).
//!   (Until stop 28 they were kept as their text and read again by `key_list_values`, which
//!   still reads a text `Key` list of a binary file's raw value.)

use std::borrow::Cow;

use super::decimal::{scan_number, Num};
use super::tree::{Array, ArrayType, Document, Encoding, NodeData, Property};
use super::{Error, ErrorKind, Warning};
use crate::limits::Limits;

/// Bare number lists longer than this become one array (see the module docs).
pub const LIST_TO_ARRAY: usize = 32;

/// Parses an ASCII FBX file.
pub fn parse<'a>(bytes: &'a [u8], limits: &Limits) -> Result<Document<'a>, Error> {
    let mut p = Parser {
        lex: Lexer { s: bytes, pos: 0 },
        limits,
        stack: Vec::new(),
        doc: Document::new(Encoding::Ascii),
        odd: Vec::new(),
    };
    let run = p.run().map_err(|mut e| {
        e.line_column = Some(line_column(bytes, e.offset as usize));
        e
    });
    match run {
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
    for &(kind, a, count, b) in &p.odd {
        let (line, column) = line_column(bytes, a);
        p.doc.warnings.push(Warning::OddNumbers {
            kind,
            offset: a as u64,
            line,
            column,
            first: String::from_utf8_lossy(&bytes[a..b.min(a + 40)]).into_owned(),
            count,
        });
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

/// The 1-based line and column (in bytes) of byte `offset`.
pub fn line_column(bytes: &[u8], offset: usize) -> (u32, u32) {
    let before = &bytes[..offset.min(bytes.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
    (line as u32, column as u32)
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
        std::str::from_utf8(parts.next()?).ok()?.trim().parse::<u32>().ok()?.checked_mul(scale)
    };
    // A version too large for a u32 (`; FBX 6666666.0`, found by fuzzing) counts as absent.
    match (num(1000), num(100)) {
        (Some(a), Some(b)) => a.checked_add(b).unwrap_or(0),
        _ => 0,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Tok {
    /// A name directly followed by `:` (range excludes the colon).
    Name(usize, usize),
    /// A bare word, or a number the fast path of [`scan_number`] does not read.
    Word(usize, usize),
    /// A plain integer (value, end of the token) as [`scan_number`] reads it.
    Int(i64, usize),
    /// A plain float (value, end of the token) as [`scan_number`] reads it.
    Float(f64, usize),
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

/// [`scan_number`] at `s[i]` when the number is the whole token: it ends at the end of the
/// file or at a byte that cannot continue a word.
#[inline(always)]
fn plain_number(s: &[u8], i: usize) -> Option<(Num, usize)> {
    scan_number(s, i).filter(|&(_, end)| !s.get(end).is_some_and(|&b| is_word_byte(b)))
}

impl<'a> Lexer<'a> {
    /// The next token and its byte offset. Inlined into its callers, which keeps the token
    /// in registers: returned through memory (the `Result` is as large as [`Error`]), its
    /// copies stalled on store forwarding, a fifth of loading an ASCII file. There is no
    /// look-ahead: the parser hands the token that ends a record's values back up instead
    /// (a `peek` stored each token and loaded it again, 30 % of the parser's own time).
    #[inline(always)]
    fn next(&mut self) -> Result<(Tok, usize), Error> {
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
                let Some((end, amp)) = closing_quote(s, body) else {
                    return Err(Error::new(start as u64, ErrorKind::UnterminatedString));
                };
                let text = &s[body..end];
                let escaped = amp && ESCAPES.iter().any(|(e, _)| contains(text, e));
                i = end + 1;
                Tok::Str(body, end, escaped)
            }
            b'0'..=b'9' | b'-' | b'+' | b'.' => match plain_number(s, i) {
                // A number directly followed by `:` is a name (`1:`), read below.
                Some((n, end)) if s.get(end) != Some(&b':') => {
                    self.pos = end;
                    return Ok((
                        match n {
                            Num::Int(v) => Tok::Int(v, end),
                            Num::Float(v) => Tok::Float(v, end),
                        },
                        start,
                    ));
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
            },
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
}

/// The first `"` at or after `s[from]` and whether an `&` comes before it (a string may hold
/// an escape only then), eight bytes at a time: strings are long in some files (base64
/// `Content` and `BinaryData`, a script in a property).
fn closing_quote(s: &[u8], from: usize) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Bit 7 of each byte equal to `b`: exact up to the lowest such byte (a borrow can mark
    // bytes above it only), which is all that is read of it.
    let equal = |v: u64, b: u8| {
        let x = v ^ (ONES * u64::from(b));
        x.wrapping_sub(ONES) & !x & HIGH
    };
    let mut amp = false;
    let mut i = from;
    while let Some(chunk) = s.get(i..i + 8) {
        let v = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let q = equal(v, b'"');
        let a = equal(v, b'&');
        if q != 0 {
            // The lowest `&` mark is exact; below the quote it is a real `&`.
            amp |= a != 0 && a.trailing_zeros() < q.trailing_zeros();
            return Some((i + q.trailing_zeros() as usize / 8, amp));
        }
        amp |= a != 0;
        i += 8;
    }
    let len = s.get(i..)?.iter().position(|&c| c == b'"')?;
    amp |= s[i..i + len].contains(&b'&');
    Some((i + len, amp))
}

/// What one bare token (not a string) reads as, following ufbx 0.23's ASCII tokenizer and
/// number parser (`ufbxi_ascii_next_token`, `ufbxi_parse_double`, `ufbxi_parse_inf_nan`; see
/// the module docs and docs/fbx.md, "ASCII numbers").
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Lit {
    /// A decimal integer (wrapped modulo 2^64 past 64 bits, as ufbx does).
    Int(i64),
    /// A float, inf or NaN.
    Float(f64),
    /// A bare word that is not a number (`T`, `Y`, `L`, `snan`).
    Word,
}

/// Why a number loaded but deserves a warning ([`Warning::OddNumbers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OddNumber {
    /// `inf`, `-nan(ind)`, `1.#INF`, `1.#IND`, …, or a literal past f64's range (`1e400`).
    NonFinite,
    /// An integer of 19 to 29 digits that does not fit 64 bits: wrapped modulo 2^64.
    Wrapped,
    /// A float with no digits (`.`, `-.`) or an exponent without digits (`1e`): read as
    /// ufbx reads it (0, or the number before the `e`).
    MissingDigits,
    /// A bare word inside a number array: read as the code of its first byte (`snan` → 115),
    /// as ufbx reads bare words where numbers belong.
    WordAsNumber,
}

impl std::fmt::Display for OddNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OddNumber::NonFinite => "not a finite number (inf or NaN)",
            OddNumber::Wrapped => "an integer past 64 bits, read wrapped modulo 2^64 as ufbx does",
            OddNumber::MissingDigits => "a number with missing digits, read as ufbx reads it",
            OddNumber::WordAsNumber => {
                "a word where a number belongs, read as the code of its first byte as ufbx does"
            }
        })
    }
}

/// `NUMBER_BYTE[b]`: 0 for a byte that cannot be in the number part of ufbx's number token,
/// [`DIGIT_OR_SIGN`] for `0-9 + -`, [`POINT_OR_EXPONENT`] for `. e E`.
static NUMBER_BYTE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = b'0';
    while b <= b'9' {
        t[b as usize] = DIGIT_OR_SIGN;
        b += 1;
    }
    t[b'+' as usize] = DIGIT_OR_SIGN;
    t[b'-' as usize] = DIGIT_OR_SIGN;
    t[b'.' as usize] = POINT_OR_EXPONENT;
    t[b'e' as usize] = POINT_OR_EXPONENT;
    t[b'E' as usize] = POINT_OR_EXPONENT;
    t
};
const DIGIT_OR_SIGN: u8 = 1;
const POINT_OR_EXPONENT: u8 = 2;

/// Reads a bare token as ufbx 0.23 does. `Err` when ufbx rejects it (a token that starts
/// like a number, `0-9 + - .`, but is none: `1.2.3`, `--1`, `1.#QNAN`, `3ds`, an integer of
/// 30 or more characters).
pub(crate) fn literal(w: &[u8]) -> Result<(Lit, Option<OddNumber>), ()> {
    let Some(&first) = w.first() else { return Ok((Lit::Word, None)) };
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        // ufbx: a bare word; a whole `inf`/`nan`/`infinity`/`nan(…)` is that value.
        if w.len() > 1 && w.len() < 64 && inf_nan(w).is_some() {
            return Ok((Lit::Float(inf_nan(w).unwrap_or(f64::NAN)), Some(OddNumber::NonFinite)));
        }
        return Ok((Lit::Word, None));
    }
    // ufbx's number token: [0-9+-.eE]* then [A-Za-z0-9#()]*; it is an integer when only
    // digits and signs appear. One pass over the bytes tells the common token, all of it in
    // [0-9+-.eE] (`NUMBER_BYTE`), from the rest.
    let mut kinds = 0u8;
    let mut core = 0;
    while let Some(&b) = w.get(core) {
        let k = NUMBER_BYTE[b as usize];
        if k == 0 {
            break;
        }
        kinds |= k;
        core += 1;
    }
    let rest = &w[core..];
    if !rest.iter().all(|&b| b.is_ascii_alphanumeric() || b"#()".contains(&b)) {
        return Err(());
    }
    let int = rest.is_empty() && kinds & POINT_OR_EXPONENT == 0;
    if int {
        // ufbxi_parse_int64: one sign, then digits, fewer than 30 characters in all; the sum
        // wraps in 64 bits.
        let digits = if matches!(first, b'-' | b'+') { &w[1..] } else { w };
        if digits.is_empty() || w.len() >= 30 || !digits.iter().all(u8::is_ascii_digit) {
            return Err(());
        }
        let mut v: u64 = 0;
        let mut wrapped = false;
        for &d in digits {
            let (m, o1) = v.overflowing_mul(10);
            let (a, o2) = m.overflowing_add(u64::from(d - b'0'));
            wrapped |= o1 | o2;
            v = a;
        }
        let v = if first == b'-' { 0u64.wrapping_sub(v) as i64 } else { v as i64 };
        let wrapped = wrapped || (first == b'-') != (v < 0) && v != 0;
        return Ok((Lit::Int(v), wrapped.then_some(OddNumber::Wrapped)));
    }
    // The common case first: a short decimal, exact in one rounding (`exact_decimal`); then
    // Rust's float syntax, which over these bytes is a subset of ufbx's.
    if rest.is_empty() {
        if let Some(v) = exact_decimal(w) {
            return Ok((Lit::Float(v), None));
        }
        if let Some(v) = std::str::from_utf8(w).ok().and_then(|t| t.parse::<f64>().ok()) {
            if v.is_finite() {
                return Ok((Lit::Float(v), None));
            }
        }
    }
    // ufbxi_parse_double: sign, digits with at most one '.', then 'e' [sign] digits (the
    // exponent stops growing at 10000); an inf/NaN spelling when '#', 'i' or 'n' follows.
    let mut i = usize::from(matches!(first, b'-' | b'+'));
    let (mut int_digits, mut frac_digits, mut dot) = (String::new(), String::new(), false);
    while let Some(&b) = w.get(i) {
        if b.is_ascii_digit() {
            if dot {
                frac_digits.push(b as char)
            } else {
                int_digits.push(b as char)
            }
        } else if b == b'.' && !dot {
            dot = true;
        } else {
            break;
        }
        i += 1;
    }
    let mut missing = int_digits.is_empty() && frac_digits.is_empty();
    let mut exp: i32 = 0;
    if matches!(w.get(i), Some(b'e' | b'E')) {
        i += 1;
        let neg = w.get(i) == Some(&b'-');
        if matches!(w.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        let digits_at = i;
        while let Some(&b) = w.get(i).filter(|b| b.is_ascii_digit()) {
            i += 1;
            exp = exp * 10 + i32::from(b - b'0');
            if exp >= 10_000 {
                break;
            }
        }
        missing |= i == digits_at;
        if neg {
            exp = -exp;
        }
    }
    if i < w.len() {
        return match w[i] {
            b'#' | b'i' | b'I' | b'n' | b'N' => {
                inf_nan(w).map(|v| (Lit::Float(v), Some(OddNumber::NonFinite))).ok_or(())
            }
            _ => Err(()),
        };
    }
    let text = format!(
        "{}{}.{}e{exp}",
        if first == b'-' { "-" } else { "" },
        if int_digits.is_empty() { "0" } else { &int_digits },
        if frac_digits.is_empty() { "0" } else { &frac_digits },
    );
    let v: f64 = text.parse().map_err(|_| ())?;
    let odd = if !v.is_finite() {
        Some(OddNumber::NonFinite)
    } else if missing {
        Some(OddNumber::MissingDigits)
    } else {
        None
    };
    Ok((Lit::Float(v), odd))
}

/// `[+-] digits [. digits] [(e|E) [+-] digits]` (digits on at least one side of the point)
/// as the nearest `f64`, when that takes one rounding: the digits, point left out, make an
/// integer `m` below 2^53 and the power of ten `k` that scales it is within ±22, so `m` and
/// `10^|k|` are exact doubles and one IEEE multiplication or division rounds their product
/// correctly (Clinger's fast path, which Rust's own parser and ufbx's take too). `None` for
/// anything else, which the caller parses the general way; the results agree bit for bit.
fn exact_decimal(w: &[u8]) -> Option<f64> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let (neg, mut i) = match w.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    let mut m: u64 = 0;
    let mut digits = 0;
    let mut scale: i32 = 0;
    let mut point = false;
    while let Some(&b) = w.get(i) {
        match b {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(b - b'0');
                if m >= 1 << 53 {
                    return None;
                }
                digits += 1;
                scale -= i32::from(point);
            }
            b'.' if !point => point = true,
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if let Some(b'e' | b'E') = w.get(i) {
        i += 1;
        let eneg = match w.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i32 = 0;
        while let Some(&b) = w.get(i).filter(|b| b.is_ascii_digit()) {
            e = e * 10 + i32::from(b - b'0');
            if e > 1000 {
                return None;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        scale += if eneg { -e } else { e };
    }
    if i != w.len() || !(-22..=22).contains(&scale) {
        return None;
    }
    let p = POW10[scale.unsigned_abs() as usize];
    let v = if scale < 0 { m as f64 / p } else { m as f64 * p };
    Some(if neg { -v } else { v })
}

/// The whole of `w` as ufbx's `ufbxi_parse_inf_nan` reads it: `[sign]` then `nan`,
/// `nan(` letters/digits `)`, `inf`, `infinity` (any case), or the MSVC forms
/// `D.#INF`, `D.#NAN`, `D.#IND` (one digit D, any digits after). `1.#QNAN` and `1.#SNAN`
/// are not among them: ufbx 0.23 rejects those tokens.
fn inf_nan(w: &[u8]) -> Option<f64> {
    let neg = w.first() == Some(&b'-');
    let mut p = &w[usize::from(matches!(w.first(), Some(b'-' | b'+')))..];
    let starts = |p: &[u8], s: &[u8]| p.len() >= s.len() && p[..s.len()].eq_ignore_ascii_case(s);
    let inf = if neg { f64::NEG_INFINITY } else { f64::INFINITY };
    let v;
    if p.len() >= 3 && p[0].is_ascii_digit() && p[1] == b'.' && p[2] == b'#' {
        p = &p[3..];
        v = if starts(p, b"inf") {
            inf
        } else if starts(p, b"nan") || starts(p, b"ind") {
            f64::NAN
        } else {
            return None;
        };
        p = &p[3..];
        let digits = p.iter().take_while(|b| b.is_ascii_digit()).count();
        p = &p[digits..];
    } else if starts(p, b"nan") {
        v = f64::NAN;
        p = &p[3..];
        if p.first() == Some(&b'(') {
            let close = p.iter().position(|&b| b == b')')?;
            if !p[1..close].iter().all(u8::is_ascii_alphanumeric) {
                return None;
            }
            p = &p[close + 1..];
        }
    } else if starts(p, b"inf") {
        v = inf;
        p = if starts(&p[3..], b"inity") { &p[8..] } else { &p[3..] };
    } else {
        return None;
    }
    p.is_empty().then_some(v)
}

/// A number or word as a property, with why it is odd; `Err` when ufbx rejects the token.
fn word_value(w: &[u8]) -> Result<(Property<'_>, Option<OddNumber>), ()> {
    Ok(match literal(w)? {
        (Lit::Int(v), odd) => (Property::I64(v), odd),
        (Lit::Float(v), odd) => (Property::F64(v), odd),
        (Lit::Word, _) => (Property::String(Cow::Borrowed(w)), None),
    })
}

/// The values of a `Key:` list kept as text (see the module docs), in order, as the parser
/// would have stored them: numbers as `f64`, any other word as its first byte (`L` → 76).
/// The parser checked every word when it kept the text; a word that is no number reads as 0.
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
            let w = &text[start..i];
            out.push(match literal(w) {
                Ok((Lit::Int(v), _)) => v as f64,
                Ok((Lit::Float(v), _)) => v,
                Ok((Lit::Word, _)) => f64::from(w[0]),
                Err(()) => 0.0,
            });
        }
    }
}

/// The escapes of ASCII FBX strings and the bytes they stand for (ufbx's lexer).
const ESCAPES: [(&[u8], u8); 3] = [(b"&quot;", b'"'), (b"&cr;", b'\r'), (b"&lf;", b'\n')];

fn contains(text: &[u8], what: &[u8]) -> bool {
    text.windows(what.len()).any(|w| w == what)
}

/// `&quot;` → `"`, `&cr;` → CR, `&lf;` → LF.
fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    'bytes: while i < s.len() {
        for (e, b) in ESCAPES {
            if s[i..].starts_with(e) {
                out.push(b);
                i += e.len();
                continue 'bytes;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Token `t`, which starts at `s[at]`, in words for an error.
fn describe(s: &[u8], at: usize, t: Tok) -> String {
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
        Tok::Int(_, b) | Tok::Float(_, b) => text(at, b),
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
    /// Odd numbers by kind: (kind, first token's start, count, first token's end).
    odd: Vec<(OddNumber, usize, u64, usize)>,
}

/// What the parser expected where ufbx rejects a token that starts like a number.
const NUMBER: &str = "a number (ufbx 0.23's ASCII number syntax, docs/fbx.md \"ASCII numbers\")";

impl<'a> Parser<'a, '_> {
    /// Counts an odd number at `s[a..b]` for one [`Warning::OddNumbers`] per kind.
    fn note_odd(&mut self, odd: Option<OddNumber>, a: usize, b: usize) {
        let Some(kind) = odd else { return };
        if let Some(o) = self.odd.iter_mut().find(|o| o.0 == kind) {
            o.2 += 1;
        } else {
            self.odd.push((kind, a, 1, b));
        }
    }

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
        self.err(offset, ErrorKind::Syntax { expected, found: describe(self.lex.s, offset, found) })
    }

    /// Adds an error's path to errors the lexer raised.
    #[inline(always)]
    fn lexed(&mut self) -> Result<(Tok, usize), Error> {
        self.lex.next().map_err(|e| self.err(e.offset as usize, e.kind))
    }

    fn close(&mut self) {
        let n = self.stack.pop().expect("close with an open node");
        self.doc.nodes[n as usize].subtree_end = self.doc.nodes.len() as u32;
    }

    fn run(&mut self) -> Result<(), Error> {
        let mut next = self.lexed()?;
        loop {
            let (tok, at) = next;
            next = match tok {
                Tok::Eof => {
                    if !self.stack.is_empty() {
                        return Err(self.syntax(at, "'}'", tok));
                    }
                    return Ok(());
                }
                Tok::Close if !self.stack.is_empty() => {
                    self.close();
                    self.lexed()?
                }
                Tok::Name(a, b) => self.node(a, b, at)?,
                _ => return Err(self.syntax(at, "a node name followed by ':'", tok)),
            };
        }
    }

    /// Reads the values (and opens the children) of the node whose name is `s[a..b]`, and
    /// returns the token after them (after the `{` that opens the children, if any).
    /// Inlined into [`Self::run`], its one caller, so the token comes back in registers, as
    /// [`Lexer::next`]'s does (returned through memory, its load stalled on store forwarding:
    /// a fifth of `synthetic_string_collision_7500_ascii`'s parse).
    #[inline(always)]
    fn node(&mut self, a: usize, b: usize, at: usize) -> Result<(Tok, usize), Error> {
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
        // Whether every value so far is a bare word (see `key_words_to_array`).
        let mut all_words = true;
        loop {
            let (tok, vat) = self.lexed()?;
            match tok {
                Tok::Open => {
                    self.key_words_to_array(name, first as usize, all_words);
                    self.list_to_array(first as usize);
                    self.doc.nodes[index as usize].props_end = self.doc.props.len() as u32;
                    if self.stack.len() as u64 >= self.limits.max_depth as u64 {
                        self.stack.push(index);
                        return Err(self.err(at, ErrorKind::TooDeep { max: self.limits.max_depth }));
                    }
                    self.stack.push(index);
                    return self.lexed();
                }
                Tok::Comma => want_value = true,
                Tok::Int(v, _) if want_value => {
                    self.doc.props.push(Property::I64(v));
                    want_value = false;
                }
                Tok::Float(v, _) if want_value => {
                    self.doc.props.push(Property::F64(v));
                    want_value = false;
                }
                Tok::Str(..) | Tok::Word(..) | Tok::Star if want_value => {
                    if !matches!(tok, Tok::Word(..)) {
                        all_words = false;
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
                        Tok::Word(x, y) => match word_value(&self.lex.s[x..y]) {
                            Ok((p, odd)) => {
                                self.note_odd(odd, x, y);
                                p
                            }
                            Err(()) => {
                                return Err(self.syntax(x, NUMBER, tok));
                            }
                        },
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
                    self.key_words_to_array(name, first as usize, all_words);
                    self.list_to_array(first as usize);
                    self.doc.nodes[index as usize].props_end = self.doc.props.len() as u32;
                    return Ok((tok, vat));
                }
            }
        }
    }

    /// Replaces the values `props[first..]` of an FBX 6 `Key:` list by one `f64` array, when
    /// they are two or more bare words of which at least one is not a number
    /// (`0,0,L,…,U,s,…`): each number as itself, each other word as the code of its first byte
    /// (`L` → 76), what the take reader reads them as (see the module docs). The words were
    /// read once already, to check them; the array keeps the take reader from reading them
    /// again (kept as text, they were read twice: a quarter of loading knight.fbx).
    fn key_words_to_array(&mut self, name: &str, first: usize, all_words: bool) {
        let values = &self.doc.props[first..];
        if !all_words
            || name != "Key"
            || values.len() < 2
            || values.iter().all(|p| matches!(p, Property::I64(_) | Property::F64(_)))
        {
            return;
        }
        let value = |p: &Property<'_>| match p {
            Property::I64(v) => *v as f64,
            Property::F64(v) => *v,
            Property::String(w) => f64::from(w.first().copied().unwrap_or(0)),
            _ => 0.0,
        };
        let data = pack(values, |p: &Property<'_>| value(p).to_le_bytes());
        self.doc.props.truncate(first);
        let array = Array::new(ArrayType::F64, Cow::Owned(data), false, 0);
        self.doc.props.push(Property::Array(Box::new(array)));
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
        let (ty, data) = if float {
            (ArrayType::F64, pack(values, |p: &Property<'_>| num(p).to_le_bytes()))
        } else if wide {
            (ArrayType::I64, pack(values, |p: &Property<'_>| int(p).to_le_bytes()))
        } else {
            (ArrayType::I32, pack(values, |p: &Property<'_>| (int(p) as i32).to_le_bytes()))
        };
        self.doc.props.truncate(first);
        self.doc.props.push(Property::Array(Box::new(Array::new(ty, Cow::Owned(data), false, 0))));
    }

    /// Reads the numbers after `a:` up to (not including) the closing `}` into `values`: a
    /// tight loop over the bytes instead of the token stream, since arrays are most of an
    /// ASCII file. Plain numbers are read in one pass ([`scan_number`]), the rest as
    /// [`literal`] reads them. `values` holds each value's `i64` bits while `float` is false;
    /// at the first non-integer every value becomes the `f64` bits, and `float` true.
    fn array_values(&mut self, values: &mut Vec<u64>, float: &mut bool) -> Result<(), Error> {
        let s = self.lex.s;
        let mut i = self.lex.pos;
        loop {
            while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\r' | b'\n' | b',') {
                i += 1;
            }
            if values.len() as u64 >= self.limits.max_elements {
                // Only an error when another value follows.
                if i < s.len() && is_word_byte(s[i]) {
                    return Err(self.err(
                        i,
                        ErrorKind::Limit {
                            what: "array elements",
                            requested: values.len() as u64 + 1,
                            limit: self.limits.max_elements,
                        },
                    ));
                }
            }
            let Some(&b) = s.get(i) else {
                self.lex.pos = i;
                return Ok(());
            };
            if matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.') {
                if let Some((n, end)) = plain_number(s, i) {
                    match (n, *float) {
                        (Num::Int(v), false) => values.push(v as u64),
                        (Num::Int(v), true) => values.push((v as f64).to_bits()),
                        (Num::Float(v), _) => {
                            self.to_floats(values, float);
                            values.push(v.to_bits());
                        }
                    }
                    i = end;
                    continue;
                }
            }
            if !is_word_byte(b) {
                if b == b';' {
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
            let Ok((lit, odd)) = literal(w) else {
                return Err(self.syntax(start, NUMBER, Tok::Word(start, i)));
            };
            let lit = match lit {
                Lit::Word => {
                    self.note_odd(Some(OddNumber::WordAsNumber), start, i);
                    Lit::Int(i64::from(w[0]))
                }
                lit => {
                    self.note_odd(odd, start, i);
                    lit
                }
            };
            match (lit, *float) {
                (Lit::Int(v), false) => values.push(v as u64),
                (Lit::Int(v), true) => values.push((v as f64).to_bits()),
                (Lit::Float(v), _) => {
                    self.to_floats(values, float);
                    values.push(v.to_bits());
                }
                (Lit::Word, _) => {}
            }
        }
    }

    /// Turns the `i64` bits of `values` into `f64` bits, once.
    #[inline(always)]
    fn to_floats(&self, values: &mut [u64], float: &mut bool) {
        if !*float {
            *float = true;
            for v in values {
                *v = (*v as i64 as f64).to_bits();
            }
        }
    }

    /// Reads `N { a: v, v, … }` after a `*` at `at`.
    fn array(&mut self, at: usize) -> Result<Array<'a>, Error> {
        let (tok, wat) = self.lexed()?;
        let declared = match tok {
            Tok::Int(n, _) if n >= 0 => Some(n),
            Tok::Word(x, y) => match literal(&self.lex.s[x..y]) {
                Ok((Lit::Int(n), None)) if n >= 0 => Some(n),
                _ => None,
            },
            _ => None,
        };
        let Some(declared) = declared else {
            return Err(self.syntax(wat, "an array count after '*'", tok));
        };
        let (tok, oat) = self.lexed()?;
        if tok != Tok::Open {
            return Err(self.syntax(oat, "'{' after the array count", tok));
        }
        // Room for the declared count (no regrowing), but no more than the rest of the file
        // can hold (a value and a comma take two bytes) and no more than 2^20 values: past
        // that the array grows as its values come (room reserved for the whole count of
        // `mesh_heavy_7500_ascii`'s largest arrays raised `keyscene check`'s peak RSS by 7 MB,
        // the allocator's doing).
        let room = (self.lex.s.len() - self.lex.pos) / 2 + 1;
        let reserve = (declared as u64).min(room as u64).min(1 << 20);
        let mut values: Vec<u64> = Vec::with_capacity(reserve as usize);
        let mut float = false;
        loop {
            let (tok, vat) = self.lexed()?;
            match tok {
                Tok::Close => break,
                Tok::Comma => {}
                Tok::Name(x, y) if &self.lex.s[x..y] == b"a" => {
                    self.array_values(&mut values, &mut float)?
                }
                _ => return Err(self.syntax(vat, "array values 'a: …' and '}'", tok)),
            }
        }
        let (ty, data) = if float {
            (ArrayType::F64, pack(&values, |v| v.to_le_bytes()))
        } else if values.iter().all(|&v| i32::try_from(v as i64).is_ok()) {
            (ArrayType::I32, pack(&values, |&v| (v as i32).to_le_bytes()))
        } else {
            (ArrayType::I64, pack(&values, |v| v.to_le_bytes()))
        };
        let found = values.len() as u64;
        if found != declared as u64 {
            self.doc.warnings.push(Warning::ArrayCountMismatch {
                offset: at as u64,
                declared: declared as u64,
                found,
            });
        }
        Ok(Array::new(ty, Cow::Owned(data), false, 0))
    }
}

/// Packs values into little-endian bytes, `N` per value: a plain allocation filled with zeros
/// (`vec![0; n]` asks the allocator for zeroed memory, which took fresh pages: 9 MB more peak
/// RSS on `mesh_heavy_7500_ascii`), then each value's bytes in place (a third fewer
/// instructions than extending a `Vec` value by value).
fn pack<'v, T, const N: usize>(values: &'v [T], f: impl Fn(&'v T) -> [u8; N]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * N);
    out.resize(values.len() * N, 0);
    for (chunk, v) in out.chunks_exact_mut(N).zip(values) {
        chunk.copy_from_slice(&f(v));
    }
    out
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
    fn exact_decimals_are_the_correctly_rounded_parse() {
        // Rust's parser rounds correctly (an independent path): the fast path must give the
        // same bits wherever it answers, and answer for the common FBX spellings.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut answered = 0;
        for _ in 0..20_000 {
            let int: String = (0..next(9)).map(|_| char::from(b'0' + next(10) as u8)).collect();
            let frac: String = (0..next(12)).map(|_| char::from(b'0' + next(10) as u8)).collect();
            let sign = ["", "-", "+"][next(3) as usize];
            let exp = match next(4) {
                0 => format!("e{}", next(40) as i64 - 20),
                1 => format!("E+{}", next(30)),
                _ => String::new(),
            };
            let text = format!("{sign}{int}.{frac}{exp}");
            let want = text.parse::<f64>().ok();
            if let Some(got) = super::exact_decimal(text.as_bytes()) {
                answered += 1;
                assert_eq!(Some(got.to_bits()), want.map(f64::to_bits), "{text}");
            }
        }
        assert!(answered > 10_000, "{answered}");
        for (text, v) in
            [("0.1", 0.1), ("-0.0", -0.0), ("1.5e-05", 1.5e-5), ("7.", 7.0), (".5", 0.5)]
        {
            assert_eq!(
                super::exact_decimal(text.as_bytes()).map(f64::to_bits),
                Some(f64::to_bits(v))
            );
        }
        // Past the fast path: 2^53, 23 places, a lone point, a bare exponent.
        for text in ["9007199254740993.0", "1e23", "0.00000000000000000000001", ".", "1e", "1.2.3"]
        {
            assert_eq!(super::exact_decimal(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn nodes_values_arrays_and_comments() {
        let doc = parse(FBX7);
        assert_eq!((doc.version, doc.encoding), (7400, Encoding::Ascii));
        let geo = doc.find(&["Objects", "Geometry"]).unwrap();
        assert_eq!(geo.property(0), Some(&Property::I64(140)));
        assert_eq!(geo.property(1).unwrap().as_str(), Some("Geometry::Cube \"A\""));
        let v = geo.child_array("Vertices").unwrap();
        assert_eq!(v.ty(), ArrayType::F64);
        assert_eq!(v.to_f64_vec().unwrap(), [-0.5, 0.5, 100.0, 0.0, -1.25, 3.0]);
        assert_eq!(geo.child_array("PolygonVertexIndex").unwrap().ty(), ArrayType::I32);
        let kt = geo.child_array("KeyTime").unwrap();
        assert_eq!((kt.ty(), kt.to_i64_vec().unwrap()), (ArrayType::I64, vec![0, 46_186_158_000]));
        let p = geo.child("Properties70").unwrap().child("P").unwrap();
        assert_eq!(p.properties().len(), 7);
        assert_eq!(p.property(4), Some(&Property::F64(1.5)));
        assert_eq!(p.property(5), Some(&Property::I64(-2)));
        assert!(doc.warnings.is_empty(), "{:?}", doc.warnings);
    }

    fn floats(doc: &fbx::Document<'_>) -> Vec<f64> {
        doc.root("V").unwrap().property(0).unwrap().as_array().unwrap().to_f64_vec().unwrap()
    }

    #[test]
    fn inf_and_nan_spellings_read_as_ufbx_reads_them_with_one_warning() {
        // Every spelling ufbxi_parse_inf_nan accepts (ufbx 0.23): C99 `inf`/`nan`/`nan(…)`
        // with a sign, `infinity`, the MSVC `D.#INF`/`D.#IND`/`D.#NAN` with trailing digits,
        // bare words `nan`, `inf`, `Infinity`, and a literal past f64's range.
        let doc = parse(
            "V: *14 {\n a: 1.#INF,-1.#INF,-1.#IND,1.#NAN,-nan(ind),nan,inf,-Infinity,\n  2.#IND1234,0.#INF00,+nan(snan),NaN,1e400,-inf }",
        );
        let a = floats(&doc);
        assert_eq!(a.len(), 14);
        assert_eq!(&a[..2], [f64::INFINITY, f64::NEG_INFINITY]);
        assert!(a[2..6].iter().all(|x| x.is_nan()));
        assert_eq!(a[6..8], [f64::INFINITY, f64::NEG_INFINITY]);
        assert!(a[8].is_nan());
        assert_eq!(a[9], f64::INFINITY);
        assert!(a[10].is_nan() && a[11].is_nan());
        assert_eq!(a[12..], [f64::INFINITY, f64::NEG_INFINITY]);
        let odd: Vec<_> = doc
            .warnings
            .iter()
            .filter_map(|w| match w {
                Warning::OddNumbers { kind, line, column, first, count, .. } => {
                    Some((*kind, *line, *column, first.as_str(), *count))
                }
                _ => None,
            })
            .collect();
        assert_eq!(odd, [(fbx::ascii::OddNumber::NonFinite, 2, 5, "1.#INF", 14)]);
        assert!(doc.warnings.iter().any(|w| w.to_string().contains("14 number(s) not a finite")));
    }

    #[test]
    fn scalar_inf_and_nan_words_are_numbers_other_words_stay_words() {
        let doc = parse("P: \"a\", nan, inf, -inf, snan, T, 1.#IND\n");
        let p = doc.root("P").unwrap().properties();
        assert!(p[1].as_f64().unwrap().is_nan());
        assert_eq!((p[2].as_f64(), p[3].as_f64()), (Some(f64::INFINITY), Some(f64::NEG_INFINITY)));
        assert_eq!((p[4].as_str(), p[5].as_str()), (Some("snan"), Some("T")));
        assert!(p[6].as_f64().unwrap().is_nan());
    }

    #[test]
    fn words_in_number_arrays_read_as_their_first_byte_like_ufbx() {
        // ufbx 0.23 reads a bare word where a number belongs as its first byte's code.
        let doc = parse("V: *3 { a: 1.5,snan,x }");
        assert_eq!(floats(&doc), [1.5, 115.0, 120.0]);
        assert!(doc.warnings.iter().any(|w| matches!(
            w,
            Warning::OddNumbers { kind: fbx::ascii::OddNumber::WordAsNumber, count: 2, .. }
        )));
    }

    #[test]
    fn over_long_and_digitless_literals_read_as_ufbx_reads_them() {
        // 60 significant digits: correctly rounded (ufbx's bigint parser, Rust's parser).
        let long = format!("0.{}", "3".repeat(60));
        // 2^64 + 5 wraps to 5 in ufbxi_parse_int64's u64 sum; 29 characters is its limit.
        let text = format!(
            "V: *6 {{ a: {long},18446744073709551621,.,-.,1e,2.5E+ }}\nW: 12345678901234567890123456789\n"
        );
        let doc = parse(&text);
        let a = floats(&doc);
        assert_eq!(a[0], 1.0 / 3.0);
        assert_eq!(a[1], 5.0);
        assert_eq!(a[2].to_bits(), 0.0f64.to_bits());
        assert_eq!(a[3].to_bits(), (-0.0f64).to_bits());
        assert_eq!(a[4..], [1.0, 2.5]);
        let w = doc.root("W").unwrap().property(0).unwrap().as_i64().unwrap();
        assert_eq!(w as u64, (12345678901234567890123456789u128 % (1u128 << 64)) as u64);
        let kinds: Vec<_> = doc
            .warnings
            .iter()
            .filter_map(|w| match w {
                Warning::OddNumbers { kind, count, .. } => Some((*kind, *count)),
                _ => None,
            })
            .collect();
        use fbx::ascii::OddNumber::{MissingDigits, Wrapped};
        assert_eq!(kinds, [(Wrapped, 2), (MissingDigits, 4)]);
    }

    #[test]
    fn tokens_ufbx_rejects_are_errors_with_line_and_column() {
        // `1.#QNAN`/`1.#SNAN`: ufbxi_parse_inf_nan knows only INF, NAN and IND after `#`.
        for (text, column) in [
            ("1.#QNAN", 8),
            ("1.#SNAN", 8),
            ("1.2.3", 8),
            ("--1", 8),
            ("3ds", 8),
            ("1e5e5", 8),
            ("-", 8),
            ("1.5x", 8),
            ("-nan(", 8),
            ("123456789012345678901234567890", 8),
        ] {
            let e = err(&format!("A: {{\n V: 1, {text}, 2\n}}\n"));
            assert!(matches!(e.kind, ErrorKind::Syntax { .. }), "{text}: {e}");
            assert_eq!(e.line_column, Some((2, column)), "{text}: {e}");
            assert!(e.to_string().contains("at line 2, column 8"), "{text}: {e}");
            let e = err(&format!("V: *2 {{ a: 1,{text} }}"));
            assert_eq!(e.line_column, Some((1, 14)), "{text}: {e}");
        }
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
        let [Property::Array(a)] = m.child("Key").unwrap().properties() else { panic!() };
        assert_eq!(a.ty(), ArrayType::F64);
        assert_eq!(a.to_f64_vec().unwrap(), [0.0, 1.0, f64::from(b'L'), 5.0, 2.0, f64::from(b'L')]);
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
        assert_eq!(
            (a.ty(), a.len(), a.to_i64_vec().unwrap().get(39).copied()),
            (ArrayType::I32, 40, Some(39))
        );
        let [Property::Array(a)] = &one("Vertices")[..] else { panic!() };
        assert_eq!(
            (
                a.ty(),
                a.to_f64_vec().unwrap().get(7).copied(),
                a.to_f64_vec().unwrap().get(8).copied()
            ),
            (ArrayType::F64, Some(0.5), Some(8.0))
        );
        let [Property::Array(k)] = &one("Key")[..] else { panic!() };
        let values = k.to_f64_vec().unwrap();
        // A binary file's raw text `Key` value is read the same way, comments skipped.
        let mut text_values = Vec::new();
        key_list_values(b"0,1,L,\n ; 9, comment\n 5,2.5,U", &mut text_values);
        assert_eq!(text_values, [0.0, 1.0, f64::from(b'L'), 5.0, 2.5, f64::from(b'U')]);
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
            doc.root("D").unwrap().property(0).unwrap().as_array().unwrap().to_i32_vec().unwrap(),
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
        // Byte 11 is the end of the file, just after the second newline: line 3, column 1.
        assert_eq!(
            e.to_string(),
            "fbx: A at line 3, column 1 (byte 0xb): the file is truncated at byte 11: expected \
             '}' closing the record A"
        );
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
