//! `IValue`: the tagged value every boxed kernel consumes and produces.
//!
//! An `IValue` is 16 bytes: a tag and one word of payload, like PyTorch's.
//! Scalars (`Int`, `Double`, `Bool`, `Device`) are stored inline; everything
//! else is a reference-counted pointer, so a clone is at most a reference
//! count increment. As in PyTorch, a `ScalarType`, `Layout` or `MemoryFormat`
//! travels as an `Int` holding its enum value.
//!
//! Every payload is one 64-bit integer or pointer: `Double`, `Bool` and
//! `Device` hold an [`Inline`] word rather than an `f64`, `bool` or `Device`.
//! That makes the enum a scalar pair (tag, word) to the compiler, so it moves
//! through registers and is stored as two words. With mixed payload types
//! it would be copied as one 16-byte block right after being written as a
//! byte and a word, a store-to-load forwarding stall on every push and pop of
//! a stack (measured: push, push, pop, pop of two tensors took 23 ns instead
//! of 8).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use c10_core::{
    Complex64, Device, DeviceType, Error, Generator, Result, SymBool, SymFloat, SymInt, SymNode,
    TensorBase,
};

/// A scalar that fits in one 64-bit word of an [`IValue`].
pub trait InlineScalar: Copy {
    /// The value as a word.
    fn to_word(self) -> u64;
    /// The value back from a word written by [`InlineScalar::to_word`].
    fn from_word(word: u64) -> Self;
}

impl InlineScalar for f64 {
    fn to_word(self) -> u64 {
        self.to_bits()
    }
    fn from_word(word: u64) -> f64 {
        f64::from_bits(word)
    }
}

impl InlineScalar for bool {
    fn to_word(self) -> u64 {
        u64::from(self)
    }
    fn from_word(word: u64) -> bool {
        word != 0
    }
}

impl InlineScalar for Device {
    fn to_word(self) -> u64 {
        u64::from(self.device_type() as i8 as u8) | (u64::from(self.index() as u8) << 8)
    }
    fn from_word(word: u64) -> Device {
        // Words only come from `to_word`, so the type is always known; the
        // CPU fallback keeps this total without a panic path.
        let device_type = DeviceType::from_i8(word as u8 as i8).unwrap_or(DeviceType::CPU);
        Device::new(device_type, (word >> 8) as u8 as i8)
    }
}

/// A `T` stored as one 64-bit word (see the module documentation for why).
/// Build one with `value.into()`, read it with [`Inline::get`].
#[repr(transparent)]
pub struct Inline<T> {
    word: u64,
    _type: PhantomData<T>,
}

impl<T: InlineScalar> Inline<T> {
    /// Stores `value`.
    #[inline(always)]
    pub fn new(value: T) -> Inline<T> {
        Inline {
            word: value.to_word(),
            _type: PhantomData,
        }
    }

    /// The stored value.
    #[inline(always)]
    pub fn get(self) -> T {
        T::from_word(self.word)
    }
}

impl<T: InlineScalar> From<T> for Inline<T> {
    #[inline(always)]
    fn from(value: T) -> Inline<T> {
        Inline::new(value)
    }
}

impl<T> Clone for Inline<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Inline<T> {}

impl<T: InlineScalar + PartialEq> PartialEq for Inline<T> {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl<T: InlineScalar + PartialEq> PartialEq<T> for Inline<T> {
    fn eq(&self, other: &T) -> bool {
        self.get() == *other
    }
}

impl<T: InlineScalar + fmt::Debug> fmt::Debug for Inline<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A user-registered class instance carried in an [`IValue::Object`]
/// (PyTorch's `ivalue::Object` of a `torch::class_`).
pub struct Object {
    class_name: String,
    value: Box<dyn std::any::Any + Send + Sync>,
}

impl Object {
    /// An instance of the class named `class_name`
    /// (`__torch__.torch.classes.ns.Name`).
    pub fn new(class_name: impl Into<String>, value: impl std::any::Any + Send + Sync) -> Object {
        Object {
            class_name: class_name.into(),
            value: Box::new(value),
        }
    }

    /// An instance whose value is already boxed.
    pub fn from_boxed(
        class_name: impl Into<String>,
        value: Box<dyn std::any::Any + Send + Sync>,
    ) -> Object {
        Object {
            class_name: class_name.into(),
            value,
        }
    }

    /// The instance, type-erased.
    pub fn value(&self) -> &(dyn std::any::Any + Send + Sync) {
        &*self.value
    }

    /// The qualified class name.
    pub fn class_name(&self) -> &str {
        &self.class_name
    }

    /// The instance, if it is a `T`.
    pub fn downcast_ref<T: 'static>(&self) -> Option<&T> {
        self.value.downcast_ref()
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{} object>", self.class_name)
    }
}

/// A boxed value (`c10::IValue`).
#[derive(Clone, Debug, Default)]
pub enum IValue {
    /// `None`.
    #[default]
    None,
    /// A tensor (possibly undefined).
    Tensor(TensorBase),
    /// A `float`.
    Double(Inline<f64>),
    /// A `complex`.
    ComplexDouble(Arc<Complex64>),
    /// An `int` (also `ScalarType`, `Layout`, `MemoryFormat`).
    Int(i64),
    /// A symbolic `SymInt` (a concrete one is an `Int`, as in PyTorch).
    SymInt(SymNode),
    /// A symbolic `SymFloat` (a concrete one is a `Double`).
    SymFloat(SymNode),
    /// A symbolic `SymBool` (a concrete one is a `Bool`).
    SymBool(SymNode),
    /// A `bool`.
    Bool(Inline<bool>),
    /// A `str`.
    String(Arc<String>),
    /// A tuple.
    Tuple(Arc<Vec<IValue>>),
    /// An `int[]`.
    IntList(Arc<Vec<i64>>),
    /// A `float[]`.
    DoubleList(Arc<Vec<f64>>),
    /// A `bool[]`.
    BoolList(Arc<Vec<bool>>),
    /// A `Tensor[]`.
    TensorList(Arc<Vec<TensorBase>>),
    /// A `Tensor?[]`.
    OptionalTensorList(Arc<Vec<Option<TensorBase>>>),
    /// Any other list.
    GenericList(Arc<Vec<IValue>>),
    /// A `Dict(K, V)`, in insertion order.
    Dict(Arc<Vec<(IValue, IValue)>>),
    /// A `Device`.
    Device(Inline<Device>),
    /// A `Generator`.
    Generator(Generator),
    /// A custom class instance.
    Object(Arc<Object>),
}

const _: () = assert!(std::mem::size_of::<IValue>() == 16);

impl IValue {
    /// A `float`.
    #[inline]
    pub fn double(value: f64) -> IValue {
        IValue::Double(value.into())
    }

    /// A `bool`.
    #[inline]
    pub fn bool(value: bool) -> IValue {
        IValue::Bool(value.into())
    }

    /// A `Device`.
    #[inline]
    pub fn device(value: Device) -> IValue {
        IValue::Device(value.into())
    }
}

impl IValue {
    /// PyTorch's tag name (`tagKind()`): `Int`, `Double`, `Tensor` ...
    pub fn tag_kind(&self) -> &'static str {
        match self {
            IValue::None => "None",
            IValue::Tensor(_) => "Tensor",
            IValue::Double(_) => "Double",
            IValue::ComplexDouble(_) => "ComplexDouble",
            IValue::Int(_) => "Int",
            IValue::SymInt(_) => "SymInt",
            IValue::SymFloat(_) => "SymFloat",
            IValue::SymBool(_) => "SymBool",
            IValue::Bool(_) => "Bool",
            IValue::String(_) => "String",
            IValue::Tuple(_) => "Tuple",
            IValue::IntList(_)
            | IValue::DoubleList(_)
            | IValue::BoolList(_)
            | IValue::TensorList(_)
            | IValue::OptionalTensorList(_)
            | IValue::GenericList(_) => "GenericList",
            IValue::Dict(_) => "GenericDict",
            IValue::Device(_) => "Device",
            IValue::Generator(_) => "Generator",
            IValue::Object(_) => "Object",
        }
    }

    /// The schema type name of the value, for error messages
    /// (`Expected a value of type 'int' ... found type 'float'`).
    pub fn type_name(&self) -> String {
        match self {
            IValue::None => "NoneType".into(),
            IValue::Tensor(_) => "Tensor".into(),
            IValue::Double(_) => "float".into(),
            IValue::ComplexDouble(_) => "complex".into(),
            IValue::Int(_) => "int".into(),
            IValue::SymInt(_) => "SymInt".into(),
            IValue::SymFloat(_) => "SymFloat".into(),
            IValue::SymBool(_) => "SymBool".into(),
            IValue::Bool(_) => "bool".into(),
            IValue::String(_) => "str".into(),
            IValue::Tuple(items) => format!(
                "Tuple[{}]",
                items
                    .iter()
                    .map(IValue::type_name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            IValue::IntList(_) => "List[int]".into(),
            IValue::DoubleList(_) => "List[float]".into(),
            IValue::BoolList(_) => "List[bool]".into(),
            IValue::TensorList(_) => "List[Tensor]".into(),
            IValue::OptionalTensorList(_) => "List[Optional[Tensor]]".into(),
            IValue::GenericList(items) => match items.first() {
                Some(first) => format!("List[{}]", first.type_name()),
                None => "List[Any]".into(),
            },
            IValue::Dict(_) => "Dict".into(),
            IValue::Device(_) => "Device".into(),
            IValue::Generator(_) => "Generator".into(),
            IValue::Object(o) => o.class_name().into(),
        }
    }

    fn expected(&self, what: &str) -> Error {
        Error::runtime(format!("Expected {what} but got {}", self.tag_kind()))
    }

    /// Whether this is `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, IValue::None)
    }

    /// `toInt()` (a concrete `SymInt` counts).
    #[doc(alias = "toInt")]
    /// A symbolic `SymInt` is guarded on (its value read, and recorded by
    /// its environment), as PyTorch's `toInt()` does.
    pub fn to_int(&self) -> Result<i64> {
        match self {
            IValue::Int(i) => Ok(*i),
            IValue::SymInt(n) => n.guard_int(file!(), line!()),
            _ => Err(self.expected("Int")),
        }
    }

    /// `toSymInt()`: an `Int` or a symbolic `SymInt`.
    #[doc(alias = "toSymInt")]
    pub fn to_sym_int(&self) -> Result<SymInt> {
        match self {
            IValue::Int(i) => Ok(SymInt::new(*i)),
            IValue::SymInt(n) => Ok(SymInt::from_node(n.clone())),
            _ => Err(self.expected("SymInt")),
        }
    }

    /// `toSymFloat()`: a `Double` or a symbolic `SymFloat`.
    #[doc(alias = "toSymFloat")]
    pub fn to_sym_float(&self) -> Result<SymFloat> {
        match self {
            IValue::Double(d) => Ok(SymFloat::new(d.get())),
            IValue::SymFloat(n) => Ok(SymFloat::from_node(n.clone())),
            _ => Err(self.expected("SymFloat")),
        }
    }

    /// `toSymBool()`: a `Bool` or a symbolic `SymBool`.
    #[doc(alias = "toSymBool")]
    pub fn to_sym_bool(&self) -> Result<SymBool> {
        match self {
            IValue::Bool(b) => Ok(SymBool::new(b.get())),
            IValue::SymBool(n) => Ok(SymBool::from_node(n.clone())),
            _ => Err(self.expected("SymBool")),
        }
    }

    /// `toDouble()`.
    #[doc(alias = "toDouble")]
    pub fn to_double(&self) -> Result<f64> {
        match self {
            IValue::Double(d) => Ok(d.get()),
            _ => Err(self.expected("Double")),
        }
    }

    /// `toBool()`.
    #[doc(alias = "toBool")]
    pub fn to_bool(&self) -> Result<bool> {
        match self {
            IValue::Bool(b) => Ok(b.get()),
            _ => Err(self.expected("Bool")),
        }
    }

    /// `toStringRef()`.
    #[doc(alias = "toStringRef")]
    pub fn to_str(&self) -> Result<&str> {
        match self {
            IValue::String(s) => Ok(s),
            _ => Err(self.expected("String")),
        }
    }

    /// `toTensor()`.
    #[doc(alias = "toTensor")]
    pub fn to_tensor(&self) -> Result<&TensorBase> {
        match self {
            IValue::Tensor(t) => Ok(t),
            _ => Err(self.expected("Tensor")),
        }
    }

    /// `toDevice()`.
    #[doc(alias = "toDevice")]
    pub fn to_device(&self) -> Result<Device> {
        match self {
            IValue::Device(d) => Ok(d.get()),
            _ => Err(self.expected("Device")),
        }
    }

    /// The elements of any list variant, boxed one by one (a copy).
    #[doc(alias = "toList")]
    pub fn to_list(&self) -> Result<Vec<IValue>> {
        Ok(match self {
            IValue::IntList(v) => v.iter().map(|x| IValue::Int(*x)).collect(),
            IValue::DoubleList(v) => v.iter().map(|x| IValue::double(*x)).collect(),
            IValue::BoolList(v) => v.iter().map(|x| IValue::bool(*x)).collect(),
            IValue::TensorList(v) => v.iter().cloned().map(IValue::Tensor).collect(),
            IValue::OptionalTensorList(v) => v
                .iter()
                .map(|t| t.clone().map_or(IValue::None, IValue::Tensor))
                .collect(),
            IValue::GenericList(v) => v.as_ref().clone(),
            _ => return Err(self.expected("GenericList")),
        })
    }

    /// Whether this is a Python number (`int`, `SymInt`, `float`, `bool`
    /// or `complex`; the schema type `Scalar` / `number` accepts).
    pub fn is_number(&self) -> bool {
        matches!(
            self,
            IValue::Int(_)
                | IValue::SymInt(_)
                | IValue::SymFloat(_)
                | IValue::SymBool(_)
                | IValue::Double(_)
                | IValue::Bool(_)
                | IValue::ComplexDouble(_)
        )
    }

    /// Whether this is any list.
    pub fn is_list(&self) -> bool {
        matches!(
            self,
            IValue::IntList(_)
                | IValue::DoubleList(_)
                | IValue::BoolList(_)
                | IValue::TensorList(_)
                | IValue::OptionalTensorList(_)
                | IValue::GenericList(_)
        )
    }

    /// `is(other)`: identity for reference types, equality for inline ones.
    pub fn is(&self, other: &IValue) -> bool {
        match (self, other) {
            (IValue::Tensor(a), IValue::Tensor(b)) => a.is_same(b),
            (IValue::String(a), IValue::String(b)) => Arc::ptr_eq(a, b),
            (IValue::Tuple(a), IValue::Tuple(b)) => Arc::ptr_eq(a, b),
            (IValue::GenericList(a), IValue::GenericList(b)) => Arc::ptr_eq(a, b),
            (IValue::IntList(a), IValue::IntList(b)) => Arc::ptr_eq(a, b),
            (IValue::TensorList(a), IValue::TensorList(b)) => Arc::ptr_eq(a, b),
            (IValue::Object(a), IValue::Object(b)) => Arc::ptr_eq(a, b),
            _ => self == other,
        }
    }
}

impl From<SymInt> for IValue {
    /// A concrete `SymInt` is an `Int`; a symbolic one keeps its node.
    fn from(v: SymInt) -> IValue {
        match (v.maybe_as_int(), v.as_node()) {
            (Some(i), _) => IValue::Int(i),
            (None, Some(n)) => IValue::SymInt(n.clone()),
            (None, None) => IValue::None,
        }
    }
}

impl From<SymFloat> for IValue {
    /// A concrete `SymFloat` is a `Double`; a symbolic one keeps its node.
    fn from(v: SymFloat) -> IValue {
        match (v.maybe_as_float(), v.as_node()) {
            (Some(d), _) => IValue::double(d),
            (None, Some(n)) => IValue::SymFloat(n.clone()),
            (None, None) => IValue::None,
        }
    }
}

impl From<SymBool> for IValue {
    /// A concrete `SymBool` is a `Bool`; a symbolic one keeps its node.
    fn from(v: SymBool) -> IValue {
        match (v.maybe_as_bool(), v.as_node()) {
            (Some(b), _) => IValue::bool(b),
            (None, Some(n)) => IValue::SymBool(n.clone()),
            (None, None) => IValue::None,
        }
    }
}

/// Value equality (`IValue::operator==`); tensors compare by identity.
impl PartialEq for IValue {
    fn eq(&self, other: &IValue) -> bool {
        use IValue as V;
        match (self, other) {
            (V::None, V::None) => true,
            (V::Tensor(a), V::Tensor(b)) => a.is_same(b),
            (V::Double(a), V::Double(b)) => a == b,
            (V::ComplexDouble(a), V::ComplexDouble(b)) => a == b,
            (V::Int(a), V::Int(b)) => a == b,
            // Symbolic values are equal when they are the same node (no
            // guard is made).
            (V::SymInt(a), V::SymInt(b))
            | (V::SymFloat(a), V::SymFloat(b))
            | (V::SymBool(a), V::SymBool(b)) => a.ptr_eq(b),
            (V::Bool(a), V::Bool(b)) => a == b,
            (V::String(a), V::String(b)) => a == b,
            (V::Tuple(a), V::Tuple(b)) => a == b,
            (V::Dict(a), V::Dict(b)) => a == b,
            (V::Device(a), V::Device(b)) => a == b,
            (V::Generator(a), V::Generator(b)) => a.is_same(b),
            (V::Object(a), V::Object(b)) => Arc::ptr_eq(a, b),
            (a, b) if a.is_list() && b.is_list() => match (a.to_list(), b.to_list()) {
                (Ok(x), Ok(y)) => x == y,
                _ => false,
            },
            _ => false,
        }
    }
}

/// Prints a double the way PyTorch's IValue printer does: integral values
/// with a trailing `.`, others in the shortest form that reads back.
pub(crate) fn fmt_double(f: &mut fmt::Formatter<'_>, d: f64) -> fmt::Result {
    if d.is_nan() {
        f.write_str("nan")
    } else if d.is_infinite() {
        f.write_str(if d > 0.0 { "inf" } else { "-inf" })
    } else if d == d.trunc() && d.abs() < 1e16 {
        write!(f, "{d}.")
    } else {
        write!(f, "{d}")
    }
}

fn fmt_seq<T>(
    f: &mut fmt::Formatter<'_>,
    open: &str,
    items: &[T],
    close: &str,
    each: impl Fn(&mut fmt::Formatter<'_>, &T) -> fmt::Result,
) -> fmt::Result {
    f.write_str(open)?;
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        each(f, item)?;
    }
    f.write_str(close)
}

fn fmt_tensor(f: &mut fmt::Formatter<'_>, t: &TensorBase) -> fmt::Result {
    match (t.dtype(), t.device()) {
        (Some(dtype), Some(device)) => {
            write!(
                f,
                "Tensor(dtype={dtype}, sizes={:?}, device={device})",
                t.sizes()
            )
        }
        _ => f.write_str("Tensor(undefined)"),
    }
}

/// PyTorch's `operator<<(ostream, IValue)`.
impl fmt::Display for IValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IValue::None => f.write_str("None"),
            IValue::Tensor(t) => fmt_tensor(f, t),
            IValue::Double(d) => fmt_double(f, d.get()),
            IValue::ComplexDouble(c) => {
                fmt_double(f, c.re)?;
                f.write_str(if c.im < 0.0 { "-" } else { "+" })?;
                fmt_double(f, c.im.abs())?;
                f.write_str("j")
            }
            IValue::Int(i) => write!(f, "{i}"),
            IValue::SymInt(n) | IValue::SymFloat(n) | IValue::SymBool(n) => write!(f, "{n}"),
            IValue::Bool(b) => f.write_str(if b.get() { "True" } else { "False" }),
            IValue::String(s) => write!(f, "{s:?}"),
            IValue::Tuple(items) => {
                if items.len() == 1 {
                    write!(f, "({},)", items[0])
                } else {
                    fmt_seq(f, "(", items, ")", |f, v| write!(f, "{v}"))
                }
            }
            IValue::IntList(v) => fmt_seq(f, "[", v, "]", |f, x| write!(f, "{x}")),
            IValue::DoubleList(v) => fmt_seq(f, "[", v, "]", |f, x| fmt_double(f, *x)),
            IValue::BoolList(v) => fmt_seq(f, "[", v, "]", |f, x| {
                f.write_str(if *x { "True" } else { "False" })
            }),
            IValue::TensorList(v) => fmt_seq(f, "[", v, "]", fmt_tensor),
            IValue::OptionalTensorList(v) => fmt_seq(f, "[", v, "]", |f, t| match t {
                Some(t) => fmt_tensor(f, t),
                None => f.write_str("None"),
            }),
            IValue::GenericList(v) => fmt_seq(f, "[", v, "]", |f, x| write!(f, "{x}")),
            IValue::Dict(items) => fmt_seq(f, "{", items, "}", |f, (k, v)| write!(f, "{k}: {v}")),
            IValue::Device(d) => write!(f, "{}", d.get()),
            IValue::Generator(_) => f.write_str("Generator"),
            IValue::Object(o) => write!(f, "<{} object>", o.class_name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_words_round_trip() {
        for t in DeviceType::ALL {
            for index in [-1i8, 0, 1, 7, i8::MAX] {
                let d = Device::new(t, index);
                assert_eq!(IValue::device(d).to_device().unwrap(), d);
            }
        }
        for x in [0.0, -0.0, 1.5, f64::INFINITY, f64::MIN_POSITIVE, -3e300] {
            assert_eq!(
                IValue::double(x).to_double().unwrap().to_bits(),
                x.to_bits()
            );
        }
        assert!(IValue::double(f64::NAN).to_double().unwrap().is_nan());
        assert!(IValue::bool(true).to_bool().unwrap());
        assert!(!IValue::bool(false).to_bool().unwrap());
        assert_eq!(IValue::double(2.5), IValue::double(2.5));
        assert_ne!(IValue::bool(true), IValue::bool(false));
    }

    #[test]
    fn prints_like_pytorch() {
        assert_eq!(IValue::double(1.0).to_string(), "1.");
        assert_eq!(IValue::double(0.5).to_string(), "0.5");
        assert_eq!(IValue::bool(true).to_string(), "True");
        assert_eq!(
            IValue::Tuple(Arc::new(vec![IValue::Int(1)])).to_string(),
            "(1,)"
        );
        assert_eq!(IValue::IntList(Arc::new(vec![1, 2])).to_string(), "[1, 2]");
        assert_eq!(
            IValue::String(Arc::new("a\"b".into())).to_string(),
            "\"a\\\"b\""
        );
    }

    #[test]
    fn accessors_report_the_tag() {
        assert_eq!(
            IValue::double(1.5).to_int().unwrap_err().message(),
            "Expected Int but got Double"
        );
        assert_eq!(IValue::from(SymInt::new(3)).to_int().unwrap(), 3);
    }
}
