//! `Type`: the types a schema can name, PyTorch's `c10::Type` hierarchy as
//! far as schemas reach it, with both of PyTorch's spellings:
//!
//! - [`Display`](std::fmt::Display) is `Type::str()`, the schema spelling
//!   (`int[]`, `Tensor?`, `Dict(str, Tensor)`, `SymInt`);
//! - [`Type::annotation_str`] is the Python spelling (`List[int]`,
//!   `Optional[Tensor]`, `Dict[str, Tensor]`, `int` for `SymInt`), which is
//!   what `str(arg.type)` gives in `torch._C`.
//!
//! An argument's *real* type is what the schema says (`ScalarType`,
//! `SymInt`); its *fake* type ([`Type::to_fake`]) replaces `ScalarType`,
//! `Layout`, `MemoryFormat` and `SymInt` by `int`.

use std::fmt;

use super::word::pack16;

/// A schema type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    /// `Tensor`.
    Tensor,
    /// `int` (also what `ConstQuantizerPtr` and `DeviceIndex` stand for).
    Int,
    /// `SymInt`: an int that may be symbolic.
    SymInt,
    /// `SymBool`: a bool that may be symbolic.
    SymBool,
    /// `float` (a C++ `double`).
    Float,
    /// `complex`.
    Complex,
    /// `bool`.
    Bool,
    /// `str`.
    Str,
    /// `Scalar` (PyTorch's `NumberType`; Python `number`).
    #[doc(alias = "NumberType")]
    Number,
    /// `ScalarType` (a dtype; fake type `int`).
    ScalarType,
    /// `Layout` (fake type `int`).
    Layout,
    /// `MemoryFormat` (fake type `int`).
    MemoryFormat,
    /// `Device`.
    Device,
    /// `Stream`.
    Stream,
    /// `Generator`.
    Generator,
    /// `Storage`.
    Storage,
    /// `QScheme`.
    QScheme,
    /// `Quantizer`.
    Quantizer,
    /// `Capsule`.
    Capsule,
    /// `Any`.
    Any,
    /// `AnyClassType`.
    AnyClassType,
    /// `AnyEnumType`.
    AnyEnumType,
    /// `NoneType` (spelled `None` or `NoneType` in schemas).
    NoneType,
    /// `PyObject`.
    PyObject,
    /// `T[]`.
    List(Box<Type>),
    /// `T?`.
    Optional(Box<Type>),
    /// `(T1, T2, ...)`.
    Tuple(Vec<Type>),
    /// `Dict(K, V)`.
    Dict(Box<Type>, Box<Type>),
    /// `Future(T)`.
    Future(Box<Type>),
    /// `RRef(T)`.
    RRef(Box<Type>),
    /// `Await(T)`.
    Await(Box<Type>),
    /// `Union(T1, T2, ...)`.
    Union(Vec<Type>),
    /// A registered custom class, by qualified name
    /// (`__torch__.torch.classes.ns.Name`).
    Class(String),
    /// A type variable (`t`, `tVal`): a lower-case name that is no other
    /// type.
    Var(String),
}

impl Type {
    /// The base type a schema names with the identifier `name`, if any
    /// (PyTorch's `SchemaTypeParser::parseBaseType` table).
    ///
    /// PyTorch 2.15 no longer knows `Dimname`. `ConstQuantizerPtr` and
    /// `DeviceIndex` are `int`.
    pub fn from_base_name(name: &str) -> Option<Type> {
        if name.len() > 16 {
            return (name == "ConstQuantizerPtr").then_some(Type::Int);
        }
        Type::from_base_key(pack16(name.as_bytes()))
    }

    /// [`from_base_name`](Self::from_base_name) for a name of at most 16
    /// bytes given by its [`pack16`] key.
    pub(crate) fn from_base_key(key: u128) -> Option<Type> {
        const GENERATOR: u128 = pack16(b"Generator");
        const SCALARTYPE: u128 = pack16(b"ScalarType");
        const LAYOUT: u128 = pack16(b"Layout");
        const MEMORYFORMAT: u128 = pack16(b"MemoryFormat");
        const STORAGE: u128 = pack16(b"Storage");
        const QSCHEME: u128 = pack16(b"QScheme");
        const QUANTIZER: u128 = pack16(b"Quantizer");
        const DEVICEINDEX: u128 = pack16(b"DeviceIndex");
        const INT: u128 = pack16(b"int");
        const DEVICE: u128 = pack16(b"Device");
        const STREAM: u128 = pack16(b"Stream");
        const SCALAR: u128 = pack16(b"Scalar");
        const STR: u128 = pack16(b"str");
        const FLOAT: u128 = pack16(b"float");
        const COMPLEX: u128 = pack16(b"complex");
        const SYMINT: u128 = pack16(b"SymInt");
        const BOOL: u128 = pack16(b"bool");
        const SYMBOOL: u128 = pack16(b"SymBool");
        const NONE: u128 = pack16(b"None");
        const NONETYPE: u128 = pack16(b"NoneType");
        const CAPSULE: u128 = pack16(b"Capsule");
        const ANY: u128 = pack16(b"Any");
        const ANYCLASSTYPE: u128 = pack16(b"AnyClassType");
        const ANYENUMTYPE: u128 = pack16(b"AnyEnumType");
        const PYOBJECT: u128 = pack16(b"PyObject");
        Some(match key {
            GENERATOR => Type::Generator,
            SCALARTYPE => Type::ScalarType,
            LAYOUT => Type::Layout,
            MEMORYFORMAT => Type::MemoryFormat,
            STORAGE => Type::Storage,
            QSCHEME => Type::QScheme,
            QUANTIZER => Type::Quantizer,
            DEVICEINDEX => Type::Int,
            INT => Type::Int,
            DEVICE => Type::Device,
            STREAM => Type::Stream,
            SCALAR => Type::Number,
            STR => Type::Str,
            FLOAT => Type::Float,
            COMPLEX => Type::Complex,
            SYMINT => Type::SymInt,
            BOOL => Type::Bool,
            SYMBOOL => Type::SymBool,
            NONE => Type::NoneType,
            NONETYPE => Type::NoneType,
            CAPSULE => Type::Capsule,
            ANY => Type::Any,
            ANYCLASSTYPE => Type::AnyClassType,
            ANYENUMTYPE => Type::AnyEnumType,
            PYOBJECT => Type::PyObject,
            _ => return None,
        })
    }

    /// `T?`. Like `c10::OptionalType::create`, an optional of an optional
    /// is the optional itself (`int??` is `int?`).
    pub fn optional(inner: Type) -> Type {
        match inner {
            Type::Optional(_) => inner,
            other => Type::Optional(Box::new(other)),
        }
    }

    /// `T[]`.
    pub fn list(element: Type) -> Type {
        Type::List(Box::new(element))
    }

    /// `Union(...)`, normalised like `c10::UnionType::create`: nested unions
    /// and optionals are flattened, duplicates dropped, and a union of one
    /// type with `NoneType` is that type's optional.
    pub fn union(types: Vec<Type>) -> Type {
        fn flatten(t: Type, out: &mut Vec<Type>) {
            match t {
                Type::Union(ts) => ts.into_iter().for_each(|t| flatten(t, out)),
                Type::Optional(t) => {
                    flatten(*t, out);
                    flatten(Type::NoneType, out);
                }
                other => {
                    if !out.contains(&other) {
                        out.push(other);
                    }
                }
            }
        }
        let mut flat = Vec::with_capacity(types.len());
        for t in types {
            flatten(t, &mut flat);
        }
        if flat.len() == 2 && flat.contains(&Type::NoneType) {
            let other = flat.into_iter().find(|t| *t != Type::NoneType);
            return Type::optional(other.unwrap_or(Type::NoneType));
        }
        Type::Union(flat)
    }

    /// The fake type, when it differs from `self`: `ScalarType`, `Layout`,
    /// `MemoryFormat` and `SymInt` become `int`, through `[]` and `?`.
    /// (Types nested in tuples, dicts, futures and unions are already fake
    /// when parsed.)
    pub fn to_fake(&self) -> Option<Type> {
        match self {
            Type::ScalarType | Type::Layout | Type::MemoryFormat | Type::SymInt => Some(Type::Int),
            Type::List(t) => t.to_fake().map(Type::list),
            Type::Optional(t) => t.to_fake().map(Type::optional),
            _ => None,
        }
    }

    /// The element type of a list, if this is one.
    pub fn list_element(&self) -> Option<&Type> {
        match self {
            Type::List(t) => Some(t),
            _ => None,
        }
    }

    /// The contained type of an optional, if this is one.
    pub fn optional_element(&self) -> Option<&Type> {
        match self {
            Type::Optional(t) => Some(t),
            _ => None,
        }
    }

    /// The Python spelling (`annotation_str`): `List[int]`,
    /// `Optional[Tensor]`, `number` for `Scalar`, `int` for `SymInt`.
    pub fn annotation_str(&self) -> String {
        let mut out = String::new();
        self.write_annotation(&mut out);
        out
    }

    fn write_annotation(&self, out: &mut String) {
        let join = |out: &mut String, types: &[Type]| {
            for (i, t) in types.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                t.write_annotation(out);
            }
        };
        let wrap = |out: &mut String, head: &str, t: &Type| {
            out.push_str(head);
            out.push('[');
            t.write_annotation(out);
            out.push(']');
        };
        match self {
            Type::Int | Type::SymInt => out.push_str("int"),
            Type::Bool | Type::SymBool => out.push_str("bool"),
            Type::Number => out.push_str("number"),
            Type::List(t) => wrap(out, "List", t),
            Type::Optional(t) => wrap(out, "Optional", t),
            Type::Future(t) => wrap(out, "Future", t),
            Type::RRef(t) => wrap(out, "RRef", t),
            Type::Await(t) => wrap(out, "Await", t),
            Type::Tuple(ts) => {
                out.push_str("Tuple[");
                if ts.is_empty() {
                    out.push_str("()");
                }
                join(out, ts);
                out.push(']');
            }
            Type::Union(ts) => {
                out.push_str("Union[");
                join(out, ts);
                out.push(']');
            }
            Type::Dict(k, v) => {
                out.push_str("Dict[");
                k.write_annotation(out);
                out.push_str(", ");
                v.write_annotation(out);
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

fn write_joined(f: &mut fmt::Formatter<'_>, types: &[Type]) -> fmt::Result {
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{t}")?;
    }
    Ok(())
}

/// The schema spelling, PyTorch's `Type::str()`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Type::Tensor => "Tensor",
            Type::Int => "int",
            Type::SymInt => "SymInt",
            Type::SymBool => "SymBool",
            Type::Float => "float",
            Type::Complex => "complex",
            Type::Bool => "bool",
            Type::Str => "str",
            Type::Number => "Scalar",
            Type::ScalarType => "ScalarType",
            Type::Layout => "Layout",
            Type::MemoryFormat => "MemoryFormat",
            Type::Device => "Device",
            Type::Stream => "Stream",
            Type::Generator => "Generator",
            Type::Storage => "Storage",
            Type::QScheme => "QScheme",
            Type::Quantizer => "Quantizer",
            Type::Capsule => "Capsule",
            Type::Any => "Any",
            Type::AnyClassType => "AnyClassType",
            Type::AnyEnumType => "AnyEnumType",
            Type::NoneType => "NoneType",
            Type::PyObject => "PyObject",
            Type::Class(name) | Type::Var(name) => name,
            Type::List(t) => return write!(f, "{t}[]"),
            Type::Optional(t) => return write!(f, "{t}?"),
            Type::Future(t) => return write!(f, "Future({t})"),
            Type::RRef(t) => return write!(f, "RRef({t})"),
            Type::Await(t) => return write!(f, "Await({t})"),
            Type::Dict(k, v) => return write!(f, "Dict({k}, {v})"),
            Type::Tuple(ts) => {
                f.write_str("(")?;
                write_joined(f, ts)?;
                return f.write_str(")");
            }
            Type::Union(ts) => {
                f.write_str("Union(")?;
                write_joined(f, ts)?;
                return f.write_str(")");
            }
        };
        f.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        let t = Type::optional(Type::list(Type::optional(Type::Tensor)));
        assert_eq!(t.to_string(), "Tensor?[]?");
        assert_eq!(t.annotation_str(), "Optional[List[Optional[Tensor]]]");
        let d = Type::Dict(Box::new(Type::Str), Box::new(Type::Var("t".into())));
        assert_eq!(d.to_string(), "Dict(str, t)");
        assert_eq!(d.annotation_str(), "Dict[str, t]");
        assert_eq!(Type::Tuple(vec![]).annotation_str(), "Tuple[()]");
        assert_eq!(Type::Number.annotation_str(), "number");
    }

    #[test]
    fn fake_types() {
        let real = Type::optional(Type::list(Type::SymInt));
        assert_eq!(real.to_fake(), Some(Type::optional(Type::list(Type::Int))));
        assert_eq!(real.annotation_str(), "Optional[List[int]]");
        assert_eq!(Type::Tensor.to_fake(), None);
        assert_eq!(
            Type::optional(Type::optional(Type::Int)).to_string(),
            "int?"
        );
    }

    #[test]
    fn unions() {
        assert_eq!(
            Type::union(vec![Type::Int, Type::NoneType]),
            Type::optional(Type::Int)
        );
        assert_eq!(
            Type::union(vec![Type::Int, Type::Str, Type::Int]).to_string(),
            "Union(int, str)"
        );
    }
}
