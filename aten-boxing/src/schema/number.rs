//! The C library's number conversions as PyTorch's schema lexer and parser
//! use them: how far `strtod` reads (the lexer's `isNumber`), and
//! `std::stod` / `std::stoll` with their two failures. PyTorch lets the C++
//! exception's text (`"stod"`, `"stoll"`) surface as the whole error
//! message; the parser says instead what is wrong with which literal, ending
//! with the function name.

/// Why a `std::sto*` conversion failed (the parser turns it into a message).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConversionError {
    /// `std::invalid_argument`: no conversion could be performed.
    Invalid,
    /// `std::out_of_range`: the value does not fit (`ERANGE`).
    OutOfRange,
}

/// Counts `[0-9]` bytes from `at`.
fn digits(s: &[u8], at: usize) -> usize {
    s[at.min(s.len())..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count()
}

/// Counts hexadecimal digits from `at`.
fn hex_digits(s: &[u8], at: usize) -> usize {
    s[at.min(s.len())..]
        .iter()
        .take_while(|b| b.is_ascii_hexdigit())
        .count()
}

/// Length of an exponent part (`e+12`, `p-3`) starting at `at` with one of
/// the `markers`, or 0 when there is none (a marker without digits is not
/// consumed).
fn exponent(s: &[u8], at: usize, markers: [u8; 2]) -> usize {
    match s.get(at) {
        Some(b) if markers.contains(b) => {
            let mut i = at + 1;
            if matches!(s.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let d = digits(s, i);
            if d == 0 {
                0
            } else {
                i + d - at
            }
        }
        _ => 0,
    }
}

/// The shape of a number `strtod` accepts, without sign.
enum Shape {
    /// Decimal: the whole text is the literal.
    Decimal,
    /// Hexadecimal: mantissa digits (before/after the point) and the binary
    /// exponent text.
    Hex {
        int_end: usize,
        frac_end: usize,
        exp_start: usize,
    },
}

/// How many bytes of `s` (no sign, no leading blanks) `strtod` would read as
/// a finite number literal, and its shape. 0 when none.
fn scan_unsigned(s: &[u8]) -> (usize, Shape) {
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1], b'x' | b'X') {
        let int_digits = hex_digits(s, 2);
        let mut i = 2 + int_digits;
        let mut frac_digits = 0;
        let int_end = i;
        if s.get(i) == Some(&b'.') {
            frac_digits = hex_digits(s, i + 1);
            if int_digits + frac_digits > 0 {
                i += 1 + frac_digits;
            }
        }
        if int_digits + frac_digits > 0 {
            let frac_end = i;
            let e = exponent(s, i, [b'p', b'P']);
            return (
                i + e,
                Shape::Hex {
                    int_end,
                    frac_end,
                    exp_start: i,
                },
            );
        }
        // "0x" without digits: only the "0" is a number.
        return (1, Shape::Decimal);
    }
    let int_digits = digits(s, 0);
    let mut i = int_digits;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        frac_digits = digits(s, i + 1);
        if int_digits + frac_digits > 0 {
            i += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return (0, Shape::Decimal);
    }
    (i + exponent(s, i, [b'e', b'E']), Shape::Decimal)
}

/// How many bytes starting at the beginning of `s` `strtod` reads, for a
/// text that starts neither with a sign nor with a letter (the lexer's
/// `isNumber` has excluded those). A following `j` (imaginary literal) is
/// not included here.
pub(crate) fn strtod_len(s: &[u8]) -> usize {
    scan_unsigned(s).0
}

/// The value of a hexadecimal floating literal (`0x1.8p3`), rounded to
/// nearest for normal results.
fn hex_value(s: &[u8], int_end: usize, frac_end: usize, exp_start: usize, end: usize) -> f64 {
    let int_digits = &s[2..int_end];
    let frac_digits = if frac_end > int_end + 1 {
        &s[int_end + 1..frac_end]
    } else {
        &[][..]
    };
    let all = int_digits.iter().chain(frac_digits.iter());
    let mut mantissa: u64 = 0;
    let mut kept = 0i64;
    let mut dropped = 0i64;
    let mut sticky = false;
    for &d in all.skip_while(|d| **d == b'0') {
        let v = u64::from((d as char).to_digit(16).unwrap_or(0));
        if kept < 15 {
            mantissa = (mantissa << 4) | v;
            kept += 1;
        } else {
            dropped += 1;
            sticky |= v != 0;
        }
    }
    if mantissa == 0 {
        return 0.0;
    }
    let mut exp: i64 = 0;
    if end > exp_start {
        let text = &s[exp_start + 1..end];
        let (negative, digits) = match text.first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        for &d in digits {
            exp = (exp * 10 + i64::from(d - b'0')).min(1 << 20);
        }
        if negative {
            exp = -exp;
        }
    }
    let frac_count = frac_digits.len() as i64;
    // Put the top bit at position 62 so that bit 0 is free for the sticky
    // bit; the u64 -> f64 conversion then rounds correctly.
    let shift = mantissa.leading_zeros().saturating_sub(1);
    let m = (mantissa << shift) | u64::from(sticky);
    let e2 = 4 * (dropped - frac_count) + exp - i64::from(shift);
    scale_by_power_of_two(m as f64, e2)
}

/// `x * 2^e` without intermediate overflow or double rounding for the
/// ranges that matter here.
fn scale_by_power_of_two(mut x: f64, mut e: i64) -> f64 {
    while e > 1000 {
        x *= f64::from_bits(((1023 + 1000) as u64) << 52);
        e -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while e < -1000 {
        x *= f64::from_bits(((1023 - 1000) as u64) << 52);
        e += 1000;
        if x == 0.0 {
            return x;
        }
    }
    x * f64::from_bits(((1023 + e) as u64) << 52)
}

/// The C library's number prefix: leading blanks (`isspace`), then an
/// optional sign. Where the number starts, and whether it is negative.
fn blanks_and_sign(s: &[u8]) -> (usize, bool) {
    let i = s
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'))
        .count();
    match s.get(i) {
        Some(b'-') => (i + 1, true),
        Some(b'+') => (i + 1, false),
        _ => (i, false),
    }
}

/// `std::stod`: the longest number prefix (after an optional sign), or an
/// error when there is none or the value overflows or underflows (`ERANGE`).
pub(crate) fn stod(text: &str) -> Result<f64, ConversionError> {
    let s = text.as_bytes();
    let (i, negative) = blanks_and_sign(s);
    let rest = &s[i..];
    let (len, shape) = scan_unsigned(rest);
    if len == 0 {
        return Err(ConversionError::Invalid);
    }
    let literal = &rest[..len];
    let (value, nonzero_digits) = match shape {
        Shape::Decimal => {
            // The scanned prefix is ASCII and in Rust's float syntax.
            let text = std::str::from_utf8(literal).map_err(|_| ConversionError::Invalid)?;
            let v: f64 = text.parse().map_err(|_| ConversionError::Invalid)?;
            let mantissa_end = literal
                .iter()
                .position(|b| matches!(b, b'e' | b'E'))
                .unwrap_or(len);
            let nonzero = literal[..mantissa_end]
                .iter()
                .any(|b| b.is_ascii_digit() && *b != b'0');
            (v, nonzero)
        }
        Shape::Hex {
            int_end,
            frac_end,
            exp_start,
        } => {
            let v = hex_value(literal, int_end, frac_end, exp_start, len);
            let nonzero = literal[2..frac_end]
                .iter()
                .any(|b| b.is_ascii_hexdigit() && *b != b'0');
            (v, nonzero)
        }
    };
    if value.is_infinite() || (nonzero_digits && (value == 0.0 || value.is_subnormal())) {
        return Err(ConversionError::OutOfRange);
    }
    Ok(if negative { -value } else { value })
}

/// `std::stoll` (base 10): optional blanks and sign, then at least one digit;
/// the digits after that are ignored.
pub(crate) fn stoll(text: &str) -> Result<i64, ConversionError> {
    let s = text.as_bytes();
    let (i, negative) = blanks_and_sign(s);
    let n = digits(s, i);
    if n == 0 {
        return Err(ConversionError::Invalid);
    }
    let mut value: i64 = 0;
    for &d in &s[i..i + n] {
        let d = i64::from(d - b'0');
        value = value
            .checked_mul(10)
            .and_then(|v| {
                if negative {
                    v.checked_sub(d)
                } else {
                    v.checked_add(d)
                }
            })
            .ok_or(ConversionError::OutOfRange)?;
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strtod_prefix_lengths() {
        assert_eq!(strtod_len(b"1e+10,"), 5);
        assert_eq!(strtod_len(b"1e"), 1);
        assert_eq!(strtod_len(b"1.e5x"), 4);
        assert_eq!(strtod_len(b".5"), 2);
        assert_eq!(strtod_len(b"..."), 0);
        assert_eq!(strtod_len(b"0x1p3]"), 5);
        assert_eq!(strtod_len(b"0xg"), 1);
        assert_eq!(strtod_len(b"12abc"), 2);
        assert_eq!(strtod_len(b"5.]"), 2);
    }

    #[test]
    fn stod_and_stoll() {
        assert_eq!(stod("-1e-05"), Ok(-1e-05));
        assert_eq!(stod("0x1.8p1"), Ok(3.0));
        assert_eq!(stod("0xe"), Ok(14.0));
        assert_eq!(stod(""), Err(ConversionError::Invalid));
        assert_eq!(stod("-"), Err(ConversionError::Invalid));
        assert_eq!(stod("1e999"), Err(ConversionError::OutOfRange));
        assert_eq!(stod("1e-400"), Err(ConversionError::OutOfRange));
        assert_eq!(stod("0e-400"), Ok(0.0));
        assert_eq!(stoll("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(stoll("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(
            stoll("9223372036854775808"),
            Err(ConversionError::OutOfRange)
        );
        assert_eq!(stoll("1.5"), Ok(1));
        assert_eq!(stoll("0x10"), Ok(0));
        assert_eq!(stoll(".5"), Err(ConversionError::Invalid));
    }
}
