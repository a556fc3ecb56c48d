//! `precomputed:`: values a structured kernel's meta function computes and
//! hands to its impl function in place of (or besides) kernel arguments
//! (torchgen's `Precompute`).
//!
//! Each line but the last is `ARG -> TYPE NAME, TYPE NAME ...`: kernel
//! argument `ARG` is replaced by the listed values. The last line may
//! instead be a plain `TYPE NAME, ...` list of values added without
//! replacing anything.
//!
//! ```
//! use aten_codegen::Precompute;
//!
//! let p = Precompute::parse(&["dim -> int dim, bool keep", "int extra"]).unwrap();
//! assert_eq!(p.replace[0].0, "dim");
//! assert_eq!(p.replace[0].1[1].ty, "bool");
//! assert_eq!(p.add[0].name, "extra");
//! ```

use crate::operator_name::is_identifier;

/// One precomputed value: a C++-style type name and an argument name.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PrecomputedArgument {
    /// The type as written (`int`, `DimVector`, `MemoryFormat`).
    pub ty: String,
    /// The name (`dim`).
    pub name: String,
}

/// The precomputed values of a structured kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Precompute {
    /// Kernel argument name, and the values that replace it, in order.
    pub replace: Vec<(String, Vec<PrecomputedArgument>)>,
    /// Values added without replacing an argument.
    pub add: Vec<PrecomputedArgument>,
}

/// Parses `TYPE NAME`.
fn parse_argument(text: &str) -> Result<PrecomputedArgument, String> {
    let text = text.trim();
    let (ty, name) = text
        .rsplit_once(' ')
        .ok_or_else(|| format!("bad precomputed argument '{text}' (expected 'TYPE NAME')"))?;
    let ty = ty.trim();
    if ty.is_empty() || !is_identifier(name) {
        return Err(format!(
            "bad precomputed argument '{text}' (expected 'TYPE NAME')"
        ));
    }
    // The generated template parameters are the upper-cased names, so a name
    // that is its own upper case would be ambiguous.
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        return Err(format!(
            "precomputed argument name '{name}' must contain a lower-case letter"
        ));
    }
    Ok(PrecomputedArgument {
        ty: ty.to_string(),
        name: name.to_string(),
    })
}

/// Parses a comma-separated list of `TYPE NAME`.
fn parse_list(text: &str) -> Result<Vec<PrecomputedArgument>, String> {
    text.split(',').map(parse_argument).collect()
}

impl Precompute {
    /// Parses the lines of a `precomputed:` list.
    ///
    /// # Errors
    ///
    /// An empty list, a line other than the last without ` -> `, or a
    /// malformed `TYPE NAME`.
    pub fn parse(lines: &[&str]) -> Result<Precompute, String> {
        let Some((last, rest)) = lines.split_last() else {
            return Err("'precomputed' is empty".to_string());
        };
        let (replace_lines, add) = if last.contains(" -> ") {
            (lines, Vec::new())
        } else {
            (rest, parse_list(last)?)
        };
        let mut replace = Vec::with_capacity(replace_lines.len());
        for line in replace_lines {
            let (arg, with) = line.split_once(" -> ").ok_or_else(|| {
                format!(
                    "precomputed line '{line}': values without replacement are allowed only in the last line"
                )
            })?;
            let arg = arg.trim();
            if !is_identifier(arg) {
                return Err(format!(
                    "precomputed line '{line}': '{arg}' is not an argument name"
                ));
            }
            replace.push((arg.to_string(), parse_list(with)?));
        }
        Ok(Precompute { replace, add })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytorch_forms() {
        let p = Precompute::parse(&[
            "dim -> int dim, int valid, bool all_contiguous, MemoryFormat memory_format",
        ])
        .unwrap();
        assert_eq!(p.replace[0].1.len(), 4);
        assert!(p.add.is_empty());
        let p = Precompute::parse(&["indices -> DimVector sizes, DimVector strides"]).unwrap();
        assert_eq!(p.replace[0].1[0].ty, "DimVector");
    }

    #[test]
    fn refused() {
        assert!(Precompute::parse(&[]).is_err());
        assert!(Precompute::parse(&["int a", "dim -> int dim"]).is_err());
        assert!(Precompute::parse(&["dim -> dim"]).is_err());
        assert!(Precompute::parse(&["dim -> int N"]).is_err());
    }
}
