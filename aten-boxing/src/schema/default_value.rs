//! `DefaultValue`: an argument's default (the `IValue` PyTorch's parser
//! builds for `int dim=-1`, `float eps=1e-05`, `int[2] stride=1`,
//! `str mode="mean"`, `ScalarType dtype=long`), with PyTorch's printing
//! (`operator<<(ostream&, IValue)`) and Python's `repr`.

use std::fmt;

use super::float_format::{python_repr as float_repr, write_ivalue_double};
use super::string_literal;

/// A default value.
///
/// Names PyTorch accepts as numeric defaults are stored as the numbers they
/// stand for, as PyTorch stores them: `long` is `Int(4)`, `float` is
/// `Int(6)`, `complex` is `Int(9)`, `strided`, `contiguous_format` are
/// `Int(0)`, `Mean` is `Int(1)`.
#[derive(Clone, Debug, PartialEq)]
pub enum DefaultValue {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A double.
    Double(f64),
    /// A complex number (`re`, `im`).
    Complex(f64, f64),
    /// A string's bytes (escapes resolved; not necessarily UTF-8).
    Str(Vec<u8>),
    /// A device, in its printed form (`cpu`, `cuda:1`).
    Device(String),
    /// `[1, 2]` for an `int[]` argument.
    IntList(Vec<i64>),
    /// `[1., 2.5]` for a `float[]` argument.
    DoubleList(Vec<f64>),
    /// `[True, False]` for a `bool[]` argument.
    BoolList(Vec<bool>),
    /// A list for a `complex[]` argument.
    ComplexList(Vec<(f64, f64)>),
}

impl DefaultValue {
    /// The string, if this is a UTF-8 string default.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            DefaultValue::Str(bytes) => std::str::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    /// The name of the `IValue` tag this value would have (`Int`,
    /// `Double`, `GenericList`, ...), for error messages.
    pub(crate) fn tag_kind(&self) -> &'static str {
        match self {
            DefaultValue::None => "None",
            DefaultValue::Bool(_) => "Bool",
            DefaultValue::Int(_) => "Int",
            DefaultValue::Double(_) => "Double",
            DefaultValue::Complex(..) => "ComplexDouble",
            DefaultValue::Str(_) => "String",
            DefaultValue::Device(_) => "Device",
            _ => "GenericList",
        }
    }

    /// Writes the value as `operator<<(ostream&, IValue)` does (strings
    /// unquoted).
    pub(crate) fn write_ivalue(&self, out: &mut String) {
        fn list<T>(out: &mut String, items: &[T], mut each: impl FnMut(&T, &mut String)) {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                each(item, out);
            }
            out.push(']');
        }
        match self {
            DefaultValue::None => out.push_str("None"),
            DefaultValue::Bool(b) => out.push_str(if *b { "True" } else { "False" }),
            DefaultValue::Int(i) => out.push_str(&i.to_string()),
            DefaultValue::Double(d) => write_ivalue_double(*d, out),
            DefaultValue::Complex(re, im) => write_complex(*re, *im, out),
            DefaultValue::Str(bytes) => out.push_str(&String::from_utf8_lossy(bytes)),
            DefaultValue::Device(d) => out.push_str(d),
            DefaultValue::IntList(v) => list(out, v, |i, out| out.push_str(&i.to_string())),
            DefaultValue::DoubleList(v) => list(out, v, |d, out| write_ivalue_double(*d, out)),
            DefaultValue::BoolList(v) => list(out, v, |b, out| {
                out.push_str(if *b { "True" } else { "False" })
            }),
            DefaultValue::ComplexList(v) => {
                list(out, v, |(re, im), out| write_complex(*re, *im, out))
            }
        }
    }

    /// Writes the value as it appears after `=` in a printed schema: strings
    /// of `str` arguments quoted (`quote_strings`), an `int[]` list whose
    /// elements are all equal and that has more than one element as that
    /// element (`int[2] stride=1`), everything else as
    /// [`write_ivalue`](Self::write_ivalue).
    pub(crate) fn write_schema_default(
        &self,
        quote_strings: bool,
        collapse_int_list: bool,
        out: &mut String,
    ) {
        match self {
            DefaultValue::Str(bytes) if quote_strings => {
                string_literal::print_quoted_string(bytes, out)
            }
            DefaultValue::IntList(v)
                if collapse_int_list && v.len() > 1 && v.iter().all(|x| *x == v[0]) =>
            {
                out.push_str(&v[0].to_string())
            }
            other => other.write_ivalue(out),
        }
    }

    /// Python's `repr` of the value as `torch._C` would return it
    /// (`None`, `True`, `-1`, `1e-05`, `'mean'`, `[0, 0]`).
    pub fn python_repr(&self) -> String {
        fn list<T>(items: &[T], each: impl Fn(&T) -> String) -> String {
            let parts: Vec<String> = items.iter().map(each).collect();
            format!("[{}]", parts.join(", "))
        }
        let bool_repr = |b: &bool| if *b { "True" } else { "False" }.to_string();
        match self {
            DefaultValue::None => "None".into(),
            DefaultValue::Bool(b) => bool_repr(b),
            DefaultValue::Int(i) => i.to_string(),
            DefaultValue::Double(d) => float_repr(*d),
            DefaultValue::Complex(re, im) => complex_repr(*re, *im),
            DefaultValue::Str(bytes) => string_literal::python_repr(bytes),
            DefaultValue::Device(d) => match d.split_once(':') {
                Some((ty, index)) => format!("device(type='{ty}', index={index})"),
                None => format!("device(type='{d}')"),
            },
            DefaultValue::IntList(v) => list(v, |i| i.to_string()),
            DefaultValue::DoubleList(v) => list(v, |d| float_repr(*d)),
            DefaultValue::BoolList(v) => list(v, bool_repr),
            DefaultValue::ComplexList(v) => list(v, |(re, im)| complex_repr(*re, *im)),
        }
    }
}

/// A complex value as PyTorch prints it: `re` and `|im|` as doubles, the
/// sign between them, then `j` (`0.+1.5j`).
fn write_complex(re: f64, im: f64, out: &mut String) {
    write_ivalue_double(re, out);
    out.push(if im >= 0.0 { '+' } else { '-' });
    write_ivalue_double(im.abs(), out);
    out.push('j');
}

/// Python's `repr(complex)`: `1.5j`, `(1+2j)`.
fn complex_repr(re: f64, im: f64) -> String {
    let short = |d: f64| {
        let r = float_repr(d);
        r.strip_suffix(".0").map(str::to_string).unwrap_or(r)
    };
    if re == 0.0 && re.is_sign_positive() {
        format!("{}j", short(im))
    } else {
        let sign = if im >= 0.0 || im.is_nan() { "+" } else { "" };
        format!("({}{sign}{}j)", short(re), short(im))
    }
}

/// The value as PyTorch prints it in a schema when the argument's type does
/// not call for quoting or list collapsing.
impl fmt::Display for DefaultValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_ivalue(&mut s);
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema(v: &DefaultValue, quote: bool, collapse: bool) -> String {
        let mut s = String::new();
        v.write_schema_default(quote, collapse, &mut s);
        s
    }

    #[test]
    fn printing() {
        assert_eq!(DefaultValue::Double(1.0).to_string(), "1.");
        assert_eq!(DefaultValue::Complex(0.0, 1.5).to_string(), "0.+1.5j");
        assert_eq!(DefaultValue::Complex(0.0, -2.0).to_string(), "0.-2.j");
        assert_eq!(
            DefaultValue::DoubleList(vec![1.5, 2.0]).to_string(),
            "[1.5, 2.]"
        );
        assert_eq!(
            DefaultValue::BoolList(vec![true, false]).to_string(),
            "[True, False]"
        );
        assert_eq!(DefaultValue::Str(b"cpu".to_vec()).to_string(), "cpu");
        let s = DefaultValue::Str(b"a\nb".to_vec());
        assert_eq!(schema(&s, true, false), r#""a\nb""#);
    }

    #[test]
    fn int_lists_collapse_only_when_asked_and_uniform() {
        let same = DefaultValue::IntList(vec![1, 1]);
        assert_eq!(schema(&same, false, true), "1");
        assert_eq!(schema(&same, false, false), "[1, 1]");
        assert_eq!(schema(&DefaultValue::IntList(vec![1]), false, true), "[1]");
        assert_eq!(schema(&DefaultValue::IntList(vec![]), false, true), "[]");
        assert_eq!(
            schema(&DefaultValue::IntList(vec![0, 1]), false, true),
            "[0, 1]"
        );
    }

    #[test]
    fn python_reprs() {
        assert_eq!(DefaultValue::Double(1e-05).python_repr(), "1e-05");
        assert_eq!(DefaultValue::IntList(vec![0, 0]).python_repr(), "[0, 0]");
        assert_eq!(DefaultValue::Str(b"none".to_vec()).python_repr(), "'none'");
        assert_eq!(DefaultValue::Complex(0.0, 1.0).python_repr(), "1j");
        assert_eq!(DefaultValue::None.python_repr(), "None");
    }
}
