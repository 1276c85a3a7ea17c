//! Decimal numbers of ASCII FBX files, read in one pass: the token's bytes are scanned, its
//! digits summed and its value found together ([`scan_number`]), instead of finding the
//! token's end, classifying it and parsing it in three passes.
//!
//! A float's value is correctly rounded, bit for bit what Rust's `str::parse::<f64>` gives:
//! - digits that make an integer `m` below 2^53 and a power of ten `k` within ±22 (`m` and
//!   `10^|k|` exact doubles): one IEEE multiplication or division (Clinger's fast path);
//! - up to 19 digits and a power of ten within [`MIN_Q`]..=[`MAX_Q`]: the Eisel–Lemire
//!   algorithm ([`eisel_lemire`]; Lemire, "Number Parsing at a Gigabyte per Second", 2021),
//!   with a table of 128-bit powers of five made for this range (the Python that made it is
//!   in [`POW5`]'s doc comment);
//! - anything else (more digits, a larger exponent, the rare case Eisel–Lemire cannot
//!   decide, an odd spelling): `None`, and the caller takes the general path.
//!
//! Unit tests check both paths against Rust's parser on random and edge-case decimals.

/// Smallest power of ten [`eisel_lemire`] takes (the first entry of [`POW5`]).
pub(crate) const MIN_Q: i32 = -64;
/// Largest power of ten [`eisel_lemire`] takes (the last entry of [`POW5`]).
pub(crate) const MAX_Q: i32 = 63;

/// A number token as the fast path reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Num {
    /// An integer of at most 18 digits (no wrapping can happen).
    Int(i64),
    /// A float (it has a point or an exponent), finite.
    Float(f64),
}

/// Reads a plain number at `s[i..]`: `[+-] digits [. digits] [(e|E) [+-] 1–3 digits]` with 1
/// to 19 digits in all (a point or an exponent makes it a float; an integer has at most 18
/// digits). Returns the value and the index just past the number; the caller checks that the
/// token ends there (`1.5x` reads as 1.5 up to the `x`). `None` for everything else — what
/// the general path must read (`1.#INF`, `1e`, `.`, long integers, over-long decimals, large
/// exponents) — and where the value would take more than one correctly rounded step. Where
/// it answers for a whole token, the answer is the general path's: the same integer, or for a
/// float the nearest `f64` (ties to even), as `str::parse::<f64>`.
#[inline(always)]
pub(crate) fn scan_number(s: &[u8], i: usize) -> Option<(Num, usize)> {
    let mut p = i;
    let neg = match s.get(p) {
        Some(b'-') => {
            p += 1;
            true
        }
        Some(b'+') => {
            p += 1;
            false
        }
        _ => false,
    };
    let mut m: u64 = 0;
    let start = p;
    // The integer part one digit at a time: mostly short (array indices, `0.`), where the
    // eight-byte test would cost more than it saves.
    while let Some(d) = s.get(p).map(|b| b.wrapping_sub(b'0')).filter(|&d| d < 10) {
        m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        p += 1;
    }
    let int_digits = p - start;
    let mut float = false;
    let mut frac_digits = 0;
    if s.get(p) == Some(&b'.') {
        float = true;
        p += 1;
        let f = p;
        p = digits(s, p, &mut m);
        frac_digits = p - f;
    }
    let digits = int_digits + frac_digits;
    if digits == 0 || digits > 19 {
        return None;
    }
    let mut exp: i32 = 0;
    if let Some(b'e' | b'E') = s.get(p) {
        float = true;
        p += 1;
        let eneg = match s.get(p) {
            Some(b'-') => {
                p += 1;
                true
            }
            Some(b'+') => {
                p += 1;
                false
            }
            _ => false,
        };
        let e = p;
        // At most 3 exponent digits: a fourth is a word byte and sends the token back.
        while let Some(d) = s.get(p).map(|b| b.wrapping_sub(b'0')).filter(|&d| d < 10) {
            if p - e == 3 {
                return None;
            }
            exp = exp * 10 + i32::from(d);
            p += 1;
        }
        if p == e {
            return None;
        }
        if eneg {
            exp = -exp;
        }
    }
    if !float {
        if digits > 18 {
            return None;
        }
        let v = m as i64;
        return Some((Num::Int(if neg { -v } else { v }), p));
    }
    let q = exp - frac_digits as i32;
    let v = if m < 1 << 53 && (-22..=22).contains(&q) {
        exact(m, q)
    } else if m == 0 {
        0.0
    } else {
        eisel_lemire(m, q)?
    };
    Some((Num::Float(if neg { -v } else { v }), p))
}

/// Adds the decimal digits at `s[p..]` to `m` (`m · 10 + d` each, wrapping: the caller
/// rejects more than 19 digits) and returns the index after them. Eight at a time while eight
/// bytes are all digits (`m · 10^8` plus their value in three multiplications), then one by
/// one: FBX writers put 15 to 17 digits in a float.
#[inline(always)]
fn digits(s: &[u8], mut p: usize, m: &mut u64) -> usize {
    while let Some(chunk) = s.get(p..p + 8) {
        let v = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        // Every byte in b'0'..=b'9': neither adding 0x46 nor subtracting 0x30 sets bit 7.
        let a = v.wrapping_add(0x4646_4646_4646_4646);
        let b = v.wrapping_sub(0x3030_3030_3030_3030);
        if (a | b) & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        // Pairs, then fours, then the eight: the first byte is the most significant digit.
        let v = b.wrapping_mul(10).wrapping_add(b >> 8);
        let lo = (v & 0x0000_00ff_0000_00ff).wrapping_mul(0x000f_4240_0000_0064);
        let hi = ((v >> 16) & 0x0000_00ff_0000_00ff).wrapping_mul(0x0000_2710_0000_0001);
        let eight = u64::from((lo.wrapping_add(hi) >> 32) as u32);
        *m = m.wrapping_mul(100_000_000).wrapping_add(eight);
        p += 8;
    }
    while let Some(d) = s.get(p).map(|b| b.wrapping_sub(b'0')).filter(|&d| d < 10) {
        *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        p += 1;
    }
    p
}

/// `m · 10^q` for `m < 2^53` and `|q| <= 22`: both are exact doubles, so one multiplication
/// or division rounds correctly (Clinger's fast path).
#[inline(always)]
fn exact(m: u64, q: i32) -> f64 {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let p = POW10[q.unsigned_abs() as usize];
    if q < 0 {
        m as f64 / p
    } else {
        m as f64 * p
    }
}

/// The nearest `f64` to `w · 10^q` (ties to even) for `w > 0` and `q` in
/// [`MIN_Q`]..=[`MAX_Q`], by the Eisel–Lemire algorithm: `w`, shifted to fill 64 bits, times
/// a 128-bit approximation of `5^q` gives the 54 leading bits of the product and whether the
/// approximation could have moved them; the power of two is found from `q` directly. `None`
/// when `q` is outside the table or the approximation cannot decide the rounding (rare;
/// Rust's parser then uses its slow path too).
pub(crate) fn eisel_lemire(w: u64, q: i32) -> Option<f64> {
    // f64: 52 explicit mantissa bits, exponent bias 1023.
    const SIG_BITS: i32 = 52;
    const MIN_EXPONENT: i32 = -1023;
    const INFINITE_POWER: i32 = 0x7ff;
    if w == 0 || !(MIN_Q..=MAX_Q).contains(&q) {
        return None;
    }
    let lz = w.leading_zeros() as i32;
    let w = w << lz;
    let (hi5, lo5) = POW5[(q - MIN_Q) as usize];
    // The leading 64 bits of w · 5^q; a second product only when the bits below the 55 that
    // count are all ones (a carry from below could change them).
    let mask = u64::MAX >> (SIG_BITS + 3);
    let first = u128::from(w) * u128::from(hi5);
    let (mut lo, mut hi) = (first as u64, (first >> 64) as u64);
    if hi & mask == mask {
        let second_hi = ((u128::from(w) * u128::from(lo5)) >> 64) as u64;
        lo = lo.wrapping_add(second_hi);
        if second_hi > lo {
            hi += 1;
        }
    }
    if lo == u64::MAX && !(-27..=55).contains(&q) {
        // The product could round either way: undecided.
        return None;
    }
    let upper = (hi >> 63) as i32;
    let mut mantissa = hi >> (upper + 64 - SIG_BITS - 3);
    // floor(log2(10^q)) + 63, exactly over this range (Lemire's `power`).
    let mut power2 = ((q.wrapping_mul(152_170 + 65_536)) >> 16) + 63 + upper - lz - MIN_EXPONENT;
    if power2 <= 0 {
        // Subnormal results are left to the general path (none in this range of q and w).
        return None;
    }
    // Exactly halfway between two doubles (only possible for small q, where 5^q fits 64 bits
    // and the product is exact): round to even, that is down when the kept bits are even.
    if lo <= 1
        && (-4..=23).contains(&q)
        && mantissa & 3 == 1
        && (mantissa << (upper + 64 - SIG_BITS - 3)) == hi
    {
        mantissa &= !1;
    }
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if mantissa >= 2 << SIG_BITS {
        mantissa = 1 << SIG_BITS;
        power2 += 1;
    }
    mantissa &= !(1 << SIG_BITS);
    if power2 >= INFINITE_POWER {
        return None;
    }
    Some(f64::from_bits(mantissa | (power2 as u64) << SIG_BITS))
}

/// `(high, low)` 64-bit halves of a 128-bit approximation of `5^q` for `q` in
/// [`MIN_Q`]..=[`MAX_Q`], the leading bit set: for `q >= 0`, `5^q` shifted to 128 bits and
/// truncated; for `-27 <= q < 0`, `floor(2^(z + 127) / 5^-q) + 1`, and for `q < -27`,
/// `floor(2^(2z + 128) / 5^-q) + 1` truncated to its leading 128 bits, where `2^z` is the
/// least power of two not below `5^-q` (the table of the Eisel–Lemire papers). Made with
/// this Python, exact integer arithmetic:
///
/// ```text
/// for q in range(-64, 64):
///     if q < 0:
///         p = 5 ** -q; z = 0
///         while (1 << z) < p: z += 1
///         c = 2 ** (z + 127) // p + 1 if q >= -27 else 2 ** (2 * z + 128) // p + 1
///         while c >= 1 << 128: c //= 2
///     else:
///         c = 5 ** q
///         while c < 1 << 127: c *= 2
///         while c >= 1 << 128: c //= 2
///     print(hex(c >> 64), hex(c & (2 ** 64 - 1)))
/// ```
#[rustfmt::skip]
static POW5: [(u64, u64); (MAX_Q - MIN_Q + 1) as usize] = [
    (0xa87fea27a539e9a5, 0x3f2398d747b36224), // 5^-64
    (0xd29fe4b18e88640e, 0x8eec7f0d19a03aad), // 5^-63
    (0x83a3eeeef9153e89, 0x1953cf68300424ac), // 5^-62
    (0xa48ceaaab75a8e2b, 0x5fa8c3423c052dd7), // 5^-61
    (0xcdb02555653131b6, 0x3792f412cb06794d), // 5^-60
    (0x808e17555f3ebf11, 0xe2bbd88bbee40bd0), // 5^-59
    (0xa0b19d2ab70e6ed6, 0x5b6aceaeae9d0ec4), // 5^-58
    (0xc8de047564d20a8b, 0xf245825a5a445275), // 5^-57
    (0xfb158592be068d2e, 0xeed6e2f0f0d56712), // 5^-56
    (0x9ced737bb6c4183d, 0x55464dd69685606b), // 5^-55
    (0xc428d05aa4751e4c, 0xaa97e14c3c26b886), // 5^-54
    (0xf53304714d9265df, 0xd53dd99f4b3066a8), // 5^-53
    (0x993fe2c6d07b7fab, 0xe546a8038efe4029), // 5^-52
    (0xbf8fdb78849a5f96, 0xde98520472bdd033), // 5^-51
    (0xef73d256a5c0f77c, 0x963e66858f6d4440), // 5^-50
    (0x95a8637627989aad, 0xdde7001379a44aa8), // 5^-49
    (0xbb127c53b17ec159, 0x5560c018580d5d52), // 5^-48
    (0xe9d71b689dde71af, 0xaab8f01e6e10b4a6), // 5^-47
    (0x9226712162ab070d, 0xcab3961304ca70e8), // 5^-46
    (0xb6b00d69bb55c8d1, 0x3d607b97c5fd0d22), // 5^-45
    (0xe45c10c42a2b3b05, 0x8cb89a7db77c506a), // 5^-44
    (0x8eb98a7a9a5b04e3, 0x77f3608e92adb242), // 5^-43
    (0xb267ed1940f1c61c, 0x55f038b237591ed3), // 5^-42
    (0xdf01e85f912e37a3, 0x6b6c46dec52f6688), // 5^-41
    (0x8b61313bbabce2c6, 0x2323ac4b3b3da015), // 5^-40
    (0xae397d8aa96c1b77, 0xabec975e0a0d081a), // 5^-39
    (0xd9c7dced53c72255, 0x96e7bd358c904a21), // 5^-38
    (0x881cea14545c7575, 0x7e50d64177da2e54), // 5^-37
    (0xaa242499697392d2, 0xdde50bd1d5d0b9e9), // 5^-36
    (0xd4ad2dbfc3d07787, 0x955e4ec64b44e864), // 5^-35
    (0x84ec3c97da624ab4, 0xbd5af13bef0b113e), // 5^-34
    (0xa6274bbdd0fadd61, 0xecb1ad8aeacdd58e), // 5^-33
    (0xcfb11ead453994ba, 0x67de18eda5814af2), // 5^-32
    (0x81ceb32c4b43fcf4, 0x80eacf948770ced7), // 5^-31
    (0xa2425ff75e14fc31, 0xa1258379a94d028d), // 5^-30
    (0xcad2f7f5359a3b3e, 0x096ee45813a04330), // 5^-29
    (0xfd87b5f28300ca0d, 0x8bca9d6e188853fc), // 5^-28
    (0x9e74d1b791e07e48, 0x775ea264cf55347e), // 5^-27
    (0xc612062576589dda, 0x95364afe032a819e), // 5^-26
    (0xf79687aed3eec551, 0x3a83ddbd83f52205), // 5^-25
    (0x9abe14cd44753b52, 0xc4926a9672793543), // 5^-24
    (0xc16d9a0095928a27, 0x75b7053c0f178294), // 5^-23
    (0xf1c90080baf72cb1, 0x5324c68b12dd6339), // 5^-22
    (0x971da05074da7bee, 0xd3f6fc16ebca5e04), // 5^-21
    (0xbce5086492111aea, 0x88f4bb1ca6bcf585), // 5^-20
    (0xec1e4a7db69561a5, 0x2b31e9e3d06c32e6), // 5^-19
    (0x9392ee8e921d5d07, 0x3aff322e62439fd0), // 5^-18
    (0xb877aa3236a4b449, 0x09befeb9fad487c3), // 5^-17
    (0xe69594bec44de15b, 0x4c2ebe687989a9b4), // 5^-16
    (0x901d7cf73ab0acd9, 0x0f9d37014bf60a11), // 5^-15
    (0xb424dc35095cd80f, 0x538484c19ef38c95), // 5^-14
    (0xe12e13424bb40e13, 0x2865a5f206b06fba), // 5^-13
    (0x8cbccc096f5088cb, 0xf93f87b7442e45d4), // 5^-12
    (0xafebff0bcb24aafe, 0xf78f69a51539d749), // 5^-11
    (0xdbe6fecebdedd5be, 0xb573440e5a884d1c), // 5^-10
    (0x89705f4136b4a597, 0x31680a88f8953031), // 5^-9
    (0xabcc77118461cefc, 0xfdc20d2b36ba7c3e), // 5^-8
    (0xd6bf94d5e57a42bc, 0x3d32907604691b4d), // 5^-7
    (0x8637bd05af6c69b5, 0xa63f9a49c2c1b110), // 5^-6
    (0xa7c5ac471b478423, 0x0fcf80dc33721d54), // 5^-5
    (0xd1b71758e219652b, 0xd3c36113404ea4a9), // 5^-4
    (0x83126e978d4fdf3b, 0x645a1cac083126ea), // 5^-3
    (0xa3d70a3d70a3d70a, 0x3d70a3d70a3d70a4), // 5^-2
    (0xcccccccccccccccc, 0xcccccccccccccccd), // 5^-1
    (0x8000000000000000, 0x0000000000000000), // 5^0
    (0xa000000000000000, 0x0000000000000000), // 5^1
    (0xc800000000000000, 0x0000000000000000), // 5^2
    (0xfa00000000000000, 0x0000000000000000), // 5^3
    (0x9c40000000000000, 0x0000000000000000), // 5^4
    (0xc350000000000000, 0x0000000000000000), // 5^5
    (0xf424000000000000, 0x0000000000000000), // 5^6
    (0x9896800000000000, 0x0000000000000000), // 5^7
    (0xbebc200000000000, 0x0000000000000000), // 5^8
    (0xee6b280000000000, 0x0000000000000000), // 5^9
    (0x9502f90000000000, 0x0000000000000000), // 5^10
    (0xba43b74000000000, 0x0000000000000000), // 5^11
    (0xe8d4a51000000000, 0x0000000000000000), // 5^12
    (0x9184e72a00000000, 0x0000000000000000), // 5^13
    (0xb5e620f480000000, 0x0000000000000000), // 5^14
    (0xe35fa931a0000000, 0x0000000000000000), // 5^15
    (0x8e1bc9bf04000000, 0x0000000000000000), // 5^16
    (0xb1a2bc2ec5000000, 0x0000000000000000), // 5^17
    (0xde0b6b3a76400000, 0x0000000000000000), // 5^18
    (0x8ac7230489e80000, 0x0000000000000000), // 5^19
    (0xad78ebc5ac620000, 0x0000000000000000), // 5^20
    (0xd8d726b7177a8000, 0x0000000000000000), // 5^21
    (0x878678326eac9000, 0x0000000000000000), // 5^22
    (0xa968163f0a57b400, 0x0000000000000000), // 5^23
    (0xd3c21bcecceda100, 0x0000000000000000), // 5^24
    (0x84595161401484a0, 0x0000000000000000), // 5^25
    (0xa56fa5b99019a5c8, 0x0000000000000000), // 5^26
    (0xcecb8f27f4200f3a, 0x0000000000000000), // 5^27
    (0x813f3978f8940984, 0x4000000000000000), // 5^28
    (0xa18f07d736b90be5, 0x5000000000000000), // 5^29
    (0xc9f2c9cd04674ede, 0xa400000000000000), // 5^30
    (0xfc6f7c4045812296, 0x4d00000000000000), // 5^31
    (0x9dc5ada82b70b59d, 0xf020000000000000), // 5^32
    (0xc5371912364ce305, 0x6c28000000000000), // 5^33
    (0xf684df56c3e01bc6, 0xc732000000000000), // 5^34
    (0x9a130b963a6c115c, 0x3c7f400000000000), // 5^35
    (0xc097ce7bc90715b3, 0x4b9f100000000000), // 5^36
    (0xf0bdc21abb48db20, 0x1e86d40000000000), // 5^37
    (0x96769950b50d88f4, 0x1314448000000000), // 5^38
    (0xbc143fa4e250eb31, 0x17d955a000000000), // 5^39
    (0xeb194f8e1ae525fd, 0x5dcfab0800000000), // 5^40
    (0x92efd1b8d0cf37be, 0x5aa1cae500000000), // 5^41
    (0xb7abc627050305ad, 0xf14a3d9e40000000), // 5^42
    (0xe596b7b0c643c719, 0x6d9ccd05d0000000), // 5^43
    (0x8f7e32ce7bea5c6f, 0xe4820023a2000000), // 5^44
    (0xb35dbf821ae4f38b, 0xdda2802c8a800000), // 5^45
    (0xe0352f62a19e306e, 0xd50b2037ad200000), // 5^46
    (0x8c213d9da502de45, 0x4526f422cc340000), // 5^47
    (0xaf298d050e4395d6, 0x9670b12b7f410000), // 5^48
    (0xdaf3f04651d47b4c, 0x3c0cdd765f114000), // 5^49
    (0x88d8762bf324cd0f, 0xa5880a69fb6ac800), // 5^50
    (0xab0e93b6efee0053, 0x8eea0d047a457a00), // 5^51
    (0xd5d238a4abe98068, 0x72a4904598d6d880), // 5^52
    (0x85a36366eb71f041, 0x47a6da2b7f864750), // 5^53
    (0xa70c3c40a64e6c51, 0x999090b65f67d924), // 5^54
    (0xd0cf4b50cfe20765, 0xfff4b4e3f741cf6d), // 5^55
    (0x82818f1281ed449f, 0xbff8f10e7a8921a4), // 5^56
    (0xa321f2d7226895c7, 0xaff72d52192b6a0d), // 5^57
    (0xcbea6f8ceb02bb39, 0x9bf4f8a69f764490), // 5^58
    (0xfee50b7025c36a08, 0x02f236d04753d5b4), // 5^59
    (0x9f4f2726179a2245, 0x01d762422c946590), // 5^60
    (0xc722f0ef9d80aad6, 0x424d3ad2b7b97ef5), // 5^61
    (0xf8ebad2b84e0d58b, 0xd2e0898765a7deb2), // 5^62
    (0x9b934c3b330c8577, 0x63cc55f49f88eb2f), // 5^63
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A small xorshift generator: the same numbers every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn check(text: &str, answered: &mut usize) {
        let want = text.parse::<f64>().unwrap();
        if let Some((n, end)) = scan_number(text.as_bytes(), 0) {
            *answered += 1;
            assert_eq!(end, text.len(), "{text}");
            let Num::Float(got) = n else { panic!("{text}: {n:?}") };
            assert_eq!(got.to_bits(), want.to_bits(), "{text}: {got:e} vs {want:e}");
        }
    }

    #[test]
    fn eisel_lemire_is_the_correctly_rounded_parse_at_every_table_power() {
        // Every power of the table, with random mantissas of 1 to 19 digits, against Rust's
        // parser (correctly rounded, an independent implementation).
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut answered = 0;
        for q in MIN_Q..=MAX_Q {
            for _ in 0..2_000 {
                let digits = 1 + rng.below(19) as u32;
                let w = rng.next() % 10u64.pow(digits).max(1);
                let text = format!("{w}e{q}");
                let want = text.parse::<f64>().unwrap();
                if let Some(got) = eisel_lemire(w, q) {
                    answered += 1;
                    assert_eq!(got.to_bits(), want.to_bits(), "{text}");
                }
            }
        }
        // It declines only rarely.
        assert!(answered > 250_000, "{answered}");
        // Halfway cases and their neighbours: 2^53 + 1 (a tie, to even: 2^53), 2^53 + 3 (a
        // tie, up), 2^54 + 2, and the same scaled by powers of ten where they stay exact.
        for w in [
            (1u64 << 53) + 1,
            (1 << 53) + 3,
            (1 << 54) + 2,
            (1 << 54) + 6,
            (1 << 63) + 1024,
            (1 << 63) + 1025,
            (1 << 63) + 3072,
            u64::MAX,
            9_007_199_254_740_993,
            10_000_000_000_000_000_000,
        ] {
            for q in -25..=25 {
                let text = format!("{w}e{q}");
                let want = text.parse::<f64>().unwrap();
                if let Some(got) = eisel_lemire(w, q) {
                    assert_eq!(got.to_bits(), want.to_bits(), "{text}");
                }
            }
        }
        assert_eq!(eisel_lemire(0, 0), None);
        assert_eq!(eisel_lemire(1, MIN_Q - 1), None);
        assert_eq!(eisel_lemire(1, MAX_Q + 1), None);
    }

    #[test]
    fn scanned_decimals_are_the_correctly_rounded_parse() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut answered = 0;
        let mut total = 0;
        for _ in 0..300_000 {
            let int: String =
                (0..rng.below(12)).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
            let frac: String =
                (0..rng.below(20)).map(|_| char::from(b'0' + rng.below(10) as u8)).collect();
            if int.is_empty() && frac.is_empty() {
                continue;
            }
            let sign = ["", "-", "+"][rng.below(3) as usize];
            let exp = match rng.below(5) {
                0 => format!("e{}", rng.below(80) as i64 - 40),
                1 => format!("E+{}", rng.below(30)),
                2 => format!("e-0{}", rng.below(10)),
                _ => String::new(),
            };
            let text = format!("{sign}{int}.{frac}{exp}");
            total += 1;
            check(&text, &mut answered);
        }
        // FBX writers' spellings: 15 to 17 significant digits, exponents of two digits.
        for _ in 0..200_000 {
            let digits = 15 + rng.below(3);
            let m = rng.next() % 10u64.pow(digits as u32);
            let s = format!("{m:0width$}", width = digits as usize);
            let text = match rng.below(3) {
                0 => format!("{}.{}", &s[..1], &s[1..]),
                1 => format!("0.{s}"),
                _ => format!("{}.{}e-{:02}", &s[..1], &s[1..], rng.below(40)),
            };
            total += 1;
            check(&text, &mut answered);
        }
        assert!(answered * 4 > total * 3, "{answered} of {total}");
        let mut none = 0;
        for text in [
            "0.1",
            "-0.0",
            "+0.0",
            "0e300",
            "1.5e-05",
            "7.",
            ".5",
            "-.5e3",
            "9007199254740993.0",
            "0.30000000000000004",
            "2.2250738585072014e-308",
            "1.7976931348623157e308",
            "4.9406564584124654e-324",
            "123456789012345678.9",
            "1e23",
            "8.98846567431158e307",
            "0.9999999999999999444888487687421729788184165954589843750",
        ] {
            let before = answered;
            check(text, &mut answered);
            none += usize::from(before == answered);
        }
        assert!(none < 6, "{none}");
    }

    #[test]
    fn eight_digits_at_a_time_are_the_digits_one_by_one() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for _ in 0..20_000 {
            let len = rng.below(20) as usize;
            let mut text: Vec<u8> = (0..len).map(|_| b'0' + rng.below(10) as u8).collect();
            // A stop byte somewhere, or none; bytes next to the digits ('/' and ':').
            let stop = [b'/', b':', b'.', b' ', b'e'][rng.below(5) as usize];
            if len > 0 && rng.below(2) == 0 {
                let at = rng.below(len as u64) as usize;
                text[at] = stop;
            }
            text.extend_from_slice(b"123456789");
            let mut m = 7;
            let end = digits(&text, 0, &mut m);
            let run = text.iter().take_while(|b| b.is_ascii_digit()).count();
            assert_eq!(end, run, "{:?}", String::from_utf8_lossy(&text));
            let want = text[..run]
                .iter()
                .fold(7u64, |m, &b| m.wrapping_mul(10).wrapping_add(u64::from(b - b'0')));
            assert_eq!(m, want, "{:?}", String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn integers_and_what_the_fast_path_leaves_to_the_general_one() {
        let n = |t: &str| scan_number(t.as_bytes(), 0);
        assert_eq!(n("0"), Some((Num::Int(0), 1)));
        assert_eq!(n("-0"), Some((Num::Int(0), 2)));
        assert_eq!(n("+17,"), Some((Num::Int(17), 3)));
        assert_eq!(n("-123456789012345678 "), Some((Num::Int(-123_456_789_012_345_678), 19)));
        assert_eq!(n("1.5}"), Some((Num::Float(1.5), 3)));
        assert_eq!(n("2:"), Some((Num::Int(2), 1)));
        assert_eq!(n("1.5x"), Some((Num::Float(1.5), 3)));
        // Not read, or not to the token's end (the caller then reads it the general way).
        for t in [
            "",
            "-",
            "+",
            ".",
            "-.",
            "1e",
            "1e+",
            "1e-",
            "1.#INF",
            "-1.#IND",
            "1.2.3",
            "--1",
            "3ds",
            "1e5e5",
            "1.5x",
            "1e1000",
            "1234567890123456789",
            "12345678901234567890.0",
            "0.00000000000000000001",
            "-nan(ind)",
            "inf",
        ] {
            assert!(n(t).is_none_or(|(_, end)| end < t.len()), "{t}");
        }
    }
}
