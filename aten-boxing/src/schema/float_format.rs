//! Printing doubles the way PyTorch does in schemas and the way Python
//! does in `repr`:
//!
//! - [`write_ivalue_double`]: `operator<<(ostream&, IValue)` for a double:
//!   integral values as `1.`, `-3.`, `10000000000.`; everything else with
//!   `std::setprecision(17)` (`%.17g`: `1.0000000000000001e-05`,
//!   `0.33333333333333331`, `inf`);
//! - [`python_repr`]: Python's shortest round-trip `repr` (`1e-05`,
//!   `0.3333333333333333`, `1.0`).

/// `int64_t(d)` as x86-64 computes it: truncation, or `INT64_MIN` when out
/// of range.
fn cpp_truncate_to_i64(d: f64) -> i64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if d.is_nan() || !(-TWO_63..TWO_63).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// Decimal digits and exponent of `d` (finite, non-zero) rounded to
/// `precision` significant digits, or the shortest round-trip digits when
/// `precision` is `None`: `(digits, exponent)` with `d = 0.d1d2... * 10^(exponent+1)`.
fn digits_and_exponent(d: f64, precision: Option<usize>) -> (String, i32) {
    let text = match precision {
        Some(p) => format!("{:.*e}", p.saturating_sub(1), d.abs()),
        None => format!("{:e}", d.abs()),
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// `%.{precision}g` as C's printf writes it.
pub(crate) fn write_general(d: f64, precision: usize, out: &mut String) {
    if d.is_nan() {
        out.push_str(if d.is_sign_negative() { "-nan" } else { "nan" });
        return;
    }
    if d.is_infinite() {
        out.push_str(if d < 0.0 { "-inf" } else { "inf" });
        return;
    }
    if d.is_sign_negative() {
        out.push('-');
    }
    if d == 0.0 {
        out.push('0');
        return;
    }
    let (digits, exp) = digits_and_exponent(d, Some(precision));
    let p = precision as i32;
    if exp < -4 || exp >= p {
        let (head, tail) = digits.split_at(1);
        out.push_str(head);
        let tail = tail.trim_end_matches('0');
        if !tail.is_empty() {
            out.push('.');
            out.push_str(tail);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.unsigned_abs()));
    } else if exp >= 0 {
        let split = (exp as usize + 1).min(digits.len());
        let (int, frac) = digits.split_at(split);
        out.push_str(int);
        let frac = frac.trim_end_matches('0');
        if !frac.is_empty() {
            out.push('.');
            out.push_str(frac);
        }
    } else {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// A double as `operator<<(std::ostream&, const IValue&)` prints it.
pub(crate) fn write_ivalue_double(d: f64, out: &mut String) {
    if d.is_normal() || d == 0.0 {
        let i = cpp_truncate_to_i64(d);
        if i as f64 == d {
            out.push_str(&i.to_string());
            out.push('.');
            return;
        }
    }
    write_general(d, 17, out);
}

/// Python's `repr(float)`.
pub(crate) fn python_repr(d: f64) -> String {
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() {
        return if d < 0.0 { "-inf" } else { "inf" }.into();
    }
    let sign = if d.is_sign_negative() { "-" } else { "" };
    if d == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, exp) = digits_and_exponent(d, None);
    let decpt = exp + 1;
    if -4 < decpt && decpt <= 16 {
        let n = digits.len() as i32;
        if decpt <= 0 {
            format!("{sign}0.{}{digits}", "0".repeat((-decpt) as usize))
        } else if decpt >= n {
            format!("{sign}{digits}{}.0", "0".repeat((decpt - n) as usize))
        } else {
            let (int, frac) = digits.split_at(decpt as usize);
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (head, tail) = digits.split_at(1);
        let dot = if tail.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{head}{dot}{tail}e{esign}{:02}", exp.unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ivalue(d: f64) -> String {
        let mut s = String::new();
        write_ivalue_double(d, &mut s);
        s
    }

    #[test]
    fn ivalue_doubles() {
        assert_eq!(ivalue(1.0), "1.");
        assert_eq!(ivalue(-3.0), "-3.");
        assert_eq!(ivalue(-0.0), "0.");
        assert_eq!(ivalue(1e10), "10000000000.");
        assert_eq!(ivalue(1e20), "1e+20");
        assert_eq!(ivalue(1e-05), "1.0000000000000001e-05");
        assert_eq!(ivalue(-1e-05), "-1.0000000000000001e-05");
        assert_eq!(ivalue(1.0 / 3.0), "0.33333333333333331");
        assert_eq!(ivalue(0.5), "0.5");
        assert_eq!(ivalue(2.5), "2.5");
        assert_eq!(ivalue(0.16), "0.16");
        assert_eq!(ivalue(1e-06), "9.9999999999999995e-07");
        assert_eq!(ivalue(2f64.powi(63)), "9.2233720368547758e+18");
        assert_eq!(ivalue(-(2f64.powi(63))), "-9223372036854775808.");
        assert_eq!(ivalue(f64::INFINITY), "inf");
        assert_eq!(ivalue(123456.789), "123456.789");
    }

    #[test]
    fn python_reprs() {
        assert_eq!(python_repr(1e-05), "1e-05");
        assert_eq!(python_repr(1.0), "1.0");
        assert_eq!(python_repr(0.0001), "0.0001");
        assert_eq!(python_repr(1e16), "1e+16");
        assert_eq!(python_repr(1234567890123456.0), "1234567890123456.0");
        assert_eq!(python_repr(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(python_repr(-2.5), "-2.5");
        assert_eq!(python_repr(1.5e300), "1.5e+300");
    }
}
