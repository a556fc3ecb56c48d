//! How schema types become Rust types in the typed API: arguments borrow
//! (`&Tensor`, `&[i64]`, `&str`, `Option<&Tensor>`), returns own (`Tensor`,
//! `(Tensor, Tensor)`, `Vec<Tensor>`). Types the project cannot pass yet
//! (`Dimname`, `Stream`, `Storage`, dicts, ...) make the operator skipped by
//! the API generator, with the reason recorded.

use aten_boxing::schema::{Argument, Type};

/// The Rust type of an argument, borrowed where PyTorch passes by reference.
pub fn argument_type(arg: &Argument) -> Result<String, String> {
    argument_type_of(arg.real_type())
}

fn argument_type_of(ty: &Type) -> Result<String, String> {
    Ok(match ty {
        Type::Tensor => "&Tensor".into(),
        Type::Int | Type::SymInt => "i64".into(),
        Type::Float => "f64".into(),
        Type::Bool | Type::SymBool => "bool".into(),
        Type::Str => "&str".into(),
        Type::Number => "Scalar".into(),
        Type::ScalarType => "ScalarType".into(),
        Type::Layout => "Layout".into(),
        Type::MemoryFormat => "MemoryFormat".into(),
        Type::Device => "Device".into(),
        Type::Generator => "Generator".into(),
        Type::List(elem) => match &**elem {
            Type::Tensor => "&[Tensor]".into(),
            Type::Int | Type::SymInt => "&[i64]".into(),
            Type::Float => "&[f64]".into(),
            Type::Bool => "&[bool]".into(),
            Type::Optional(inner) if **inner == Type::Tensor => "Vec<Option<Tensor>>".into(),
            other => return Err(format!("lists of {other} are not supported")),
        },
        Type::Optional(inner) => match &**inner {
            Type::Tensor => "Option<&Tensor>".into(),
            Type::Str => "Option<&str>".into(),
            Type::List(elem) if matches!(**elem, Type::Int | Type::SymInt) => {
                "Option<&[i64]>".into()
            }
            Type::List(elem) if **elem == Type::Float => "Option<&[f64]>".into(),
            Type::Int | Type::SymInt => "Option<i64>".into(),
            Type::Float => "Option<f64>".into(),
            Type::Bool => "Option<bool>".into(),
            Type::Number => "Option<Scalar>".into(),
            Type::ScalarType => "Option<ScalarType>".into(),
            Type::Layout => "Option<Layout>".into(),
            Type::MemoryFormat => "Option<MemoryFormat>".into(),
            Type::Device => "Option<Device>".into(),
            Type::Generator => "Option<Generator>".into(),
            other => return Err(format!("optional {other} is not supported")),
        },
        other => return Err(format!("{other} arguments are not supported")),
    })
}

/// The owned Rust type of one return.
fn return_type_of(ty: &Type) -> Result<String, String> {
    Ok(match ty {
        Type::Tensor => "Tensor".into(),
        Type::Int | Type::SymInt => "i64".into(),
        Type::Float => "f64".into(),
        Type::Bool | Type::SymBool => "bool".into(),
        Type::Number => "Scalar".into(),
        Type::ScalarType => "ScalarType".into(),
        Type::List(elem) if **elem == Type::Tensor => "Vec<Tensor>".into(),
        Type::List(elem) if matches!(**elem, Type::Int | Type::SymInt) => "Vec<i64>".into(),
        other => return Err(format!("{other} returns are not supported")),
    })
}

/// The Rust return type of a schema's returns: `()`, one type, or a tuple.
pub fn returns_type(returns: &[Argument]) -> Result<String, String> {
    let types = returns
        .iter()
        .map(|r| return_type_of(r.real_type()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match types.len() {
        0 => "()".into(),
        1 => types.into_iter().next().unwrap_or_default(),
        _ => format!("({})", types.join(", ")),
    })
}

/// The `'static` form of an argument type, for the typed handle's signature
/// (`&Tensor` -> `&'static Tensor`).
pub fn static_type(rust_type: &str) -> String {
    rust_type.replace('&', "&'static ")
}

/// The form of an argument type inside an options struct with lifetime `'a`.
pub fn field_type(rust_type: &str) -> String {
    rust_type.replace('&', "&'a ")
}

/// The Rust expression of a schema default for an argument of `rust_type`,
/// or `None` when the default cannot be expressed.
pub fn default_expr(arg: &Argument) -> Option<String> {
    use aten_boxing::schema::DefaultValue as D;
    let d = arg.default_value()?;
    let ty = arg.real_type();
    let optional = matches!(ty, Type::Optional(_));
    let base = match ty {
        Type::Optional(inner) => &**inner,
        other => other,
    };
    let some = |s: String| if optional { format!("Some({s})") } else { s };
    Some(match (base, d) {
        (_, D::None) => "None".into(),
        (Type::Bool, D::Bool(b)) => some(b.to_string()),
        (Type::Int | Type::SymInt, D::Int(i)) => some(format!("{i}")),
        (Type::Float, D::Double(x)) => some(float_literal(*x)),
        (Type::Float, D::Int(i)) => some(format!("{i}.0")),
        (Type::Number, D::Int(i)) => some(format!("Scalar::Int({i})")),
        (Type::Number, D::Double(x)) => some(format!("Scalar::Double({})", float_literal(*x))),
        (Type::Number, D::Bool(b)) => some(format!("Scalar::Bool({b})")),
        (Type::Str, D::Str(_)) => some(format!("{:?}", d.as_str()?)),
        (Type::List(elem), D::IntList(v)) if matches!(**elem, Type::Int | Type::SymInt) => {
            some(format!("&{v:?}[..]"))
        }
        (Type::List(elem), D::DoubleList(v)) if **elem == Type::Float => some(format!(
            "&[{}][..]",
            v.iter()
                .map(|x| float_literal(*x))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        (Type::List(elem), D::BoolList(v)) if **elem == Type::Bool => some(format!("&{v:?}[..]")),
        (Type::ScalarType, D::Int(i)) => some(format!(
            "ScalarType::{:?}",
            c10_core::ScalarType::from_i64(*i).ok()?
        )),
        (Type::Layout, D::Int(i)) => some(format!(
            "Layout::{:?}",
            c10_core::Layout::from_i64(*i).ok()?
        )),
        (Type::MemoryFormat, D::Int(i)) => some(format!(
            "MemoryFormat::{:?}",
            c10_core::MemoryFormat::from_i64(*i).ok()?
        )),
        _ => return None,
    })
}

fn float_literal(x: f64) -> String {
    if x.is_nan() {
        "f64::NAN".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "f64::INFINITY"
        } else {
            "f64::NEG_INFINITY"
        }
        .into()
    } else {
        format!("{x:?}")
    }
}
