//! Conversions between Rust kernel argument/return types and `IValue`s: the
//! traits behind boxing (a typed call packing its arguments onto a stack) and
//! unboxing (a boxed call handing stack values to a typed kernel).
//!
//! - [`IValueConvert`]: an owned Rust value with an `IValue` form and a schema
//!   type (`i64` is `int`, `Vec<TensorBase>` is `Tensor[]`).
//! - [`KernelArg`]: a type a kernel may take, owned or borrowed (`&Tensor`,
//!   `&[i64]`, `&str`, `Option<&Tensor>`). It names the owned *holder* that a
//!   boxed call extracts from the stack and the borrow the kernel receives,
//!   and a `'static` twin used to compare signatures.
//! - [`KernelReturn`]: what a kernel returns: `()`, one value, or a tuple.
//!
//! Traits are implemented on the innermost types so that a downstream crate
//! can add its own tensor type ([`TensorLike`]) and get `&T`, `Option<&T>`,
//! `&[T]`, `Vec<T>` and `Vec<Option<T>>` for free.

// The explicit lifetimes spell out how each `Item<'a>` relates to `Self`.
#![allow(clippy::needless_lifetimes)]

use std::sync::Arc;

use c10_core::sym::as_int_array;
use c10_core::{
    Complex64, Device, DispatchKeySet, Error, Generator, Layout, MemoryFormat, Result, Scalar,
    ScalarType, SymBool, SymFloat, SymInt, TensorBase,
};

use crate::ivalue::IValue;
use crate::stack::{Stack, StackExt};

/// A tensor handle type: `TensorBase` here, `Tensor` in `aten-core`.
pub trait TensorLike: Clone + Send + Sync + 'static {
    /// Wraps a base handle.
    fn from_base(t: TensorBase) -> Self;
    /// The base handle.
    fn as_base(&self) -> &TensorBase;
    /// The base handle, by value (no reference-count traffic).
    fn into_base(self) -> TensorBase;
}

impl TensorLike for TensorBase {
    fn from_base(t: TensorBase) -> Self {
        t
    }
    fn as_base(&self) -> &TensorBase {
        self
    }
    fn into_base(self) -> TensorBase {
        self
    }
}

fn mismatch(expected: &str, v: &IValue) -> Error {
    Error::runtime(format!(
        "Expected a value of type '{expected}' but instead found type '{}'.",
        v.type_name()
    ))
}

/// An owned value with an `IValue` form.
pub trait IValueConvert: Sized + Send + 'static {
    /// Boxes the value.
    fn into_ivalue(self) -> IValue;
    /// Unboxes a value, or explains the type mismatch.
    fn from_ivalue(v: IValue) -> Result<Self>;
    /// The schema type (`int`, `Tensor?`, `float[]`).
    fn schema_type() -> String;
}

macro_rules! convert_inline {
    ($t:ty, $schema:expr, $variant:ident, |$v:ident| $to:expr, |$x:ident| $from:expr) => {
        impl IValueConvert for $t {
            fn into_ivalue(self) -> IValue {
                let $v = self;
                IValue::$variant($to)
            }
            fn from_ivalue(v: IValue) -> Result<Self> {
                match v {
                    IValue::$variant($x) => $from,
                    other => Err(mismatch($schema, &other)),
                }
            }
            fn schema_type() -> String {
                $schema.into()
            }
        }
    };
}

convert_inline!(bool, "bool", Bool, |v| v.into(), |x| Ok(x.get()));
convert_inline!(f64, "float", Double, |v| v.into(), |x| Ok(x.get()));
convert_inline!(Device, "Device", Device, |v| v.into(), |x| Ok(x.get()));
convert_inline!(Generator, "Generator", Generator, |v| v, |x| Ok(x));
convert_inline!(
    Complex64,
    "complex",
    ComplexDouble,
    |v| Arc::new(v),
    |x| Ok(*x)
);
convert_inline!(String, "str", String, |v| Arc::new(v), |x| Ok(
    Arc::try_unwrap(x).unwrap_or_else(|shared| shared.as_ref().clone())
));
convert_inline!(ScalarType, "ScalarType", Int, |v| v as i64, |x| {
    ScalarType::from_i64(x)
});
convert_inline!(Layout, "Layout", Int, |v| v as i64, |x| Layout::from_i64(x));
convert_inline!(MemoryFormat, "MemoryFormat", Int, |v| v as i64, |x| {
    MemoryFormat::from_i64(x)
});

impl IValueConvert for i64 {
    fn into_ivalue(self) -> IValue {
        IValue::Int(self)
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::Int(i) => Ok(i),
            IValue::SymInt(_) => v.to_int(),
            other => Err(mismatch("int", &other)),
        }
    }
    fn schema_type() -> String {
        "int".into()
    }
}

impl IValueConvert for Scalar {
    fn into_ivalue(self) -> IValue {
        match self {
            Scalar::Bool(b) => IValue::bool(b),
            Scalar::Int(i) => IValue::Int(i),
            Scalar::Double(d) => IValue::double(d),
            Scalar::ComplexDouble(c) => IValue::ComplexDouble(Arc::new(c)),
        }
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::Bool(b) => Ok(Scalar::Bool(b.get())),
            IValue::Int(i) => Ok(Scalar::Int(i)),
            IValue::SymInt(_) => v.to_int().map(Scalar::Int),
            IValue::Double(d) => Ok(Scalar::Double(d.get())),
            IValue::ComplexDouble(c) => Ok(Scalar::ComplexDouble(*c)),
            other => Err(mismatch("number", &other)),
        }
    }
    fn schema_type() -> String {
        "Scalar".into()
    }
}

impl IValueConvert for IValue {
    fn into_ivalue(self) -> IValue {
        self
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        Ok(v)
    }
    fn schema_type() -> String {
        "Any".into()
    }
}

impl<T: TensorLike> IValueConvert for T {
    fn into_ivalue(self) -> IValue {
        IValue::Tensor(self.into_base())
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::Tensor(t) => Ok(T::from_base(t)),
            // An optional tensor argument may arrive as None: the undefined tensor.
            IValue::None => Ok(T::from_base(TensorBase::undefined())),
            other => Err(mismatch("Tensor", &other)),
        }
    }
    fn schema_type() -> String {
        "Tensor".into()
    }
}

impl<T: IValueConvert> IValueConvert for Option<T> {
    fn into_ivalue(self) -> IValue {
        self.map_or(IValue::None, T::into_ivalue)
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::None => Ok(None),
            other => T::from_ivalue(other).map(Some),
        }
    }
    fn schema_type() -> String {
        format!("{}?", T::schema_type())
    }
}

macro_rules! convert_list {
    ($elem:ty, $schema:expr, $variant:ident, $convert:expr) => {
        impl IValueConvert for Vec<$elem> {
            fn into_ivalue(self) -> IValue {
                IValue::$variant(Arc::new(self))
            }
            fn from_ivalue(v: IValue) -> Result<Self> {
                match v {
                    IValue::$variant(xs) => {
                        Ok(Arc::try_unwrap(xs).unwrap_or_else(|shared| shared.as_ref().clone()))
                    }
                    IValue::GenericList(items) => items.iter().cloned().map($convert).collect(),
                    other => Err(mismatch($schema, &other)),
                }
            }
            fn schema_type() -> String {
                $schema.into()
            }
        }
    };
}

convert_list!(i64, "int[]", IntList, i64::from_ivalue);
convert_list!(f64, "float[]", DoubleList, f64::from_ivalue);
convert_list!(bool, "bool[]", BoolList, bool::from_ivalue);

impl<T: TensorLike> IValueConvert for Vec<T> {
    fn into_ivalue(self) -> IValue {
        IValue::TensorList(Arc::new(self.into_iter().map(T::into_base).collect()))
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::TensorList(xs) => Ok(xs.iter().cloned().map(T::from_base).collect()),
            IValue::GenericList(items) => items.iter().cloned().map(T::from_ivalue).collect(),
            other => Err(mismatch("List[Tensor]", &other)),
        }
    }
    fn schema_type() -> String {
        "Tensor[]".into()
    }
}

impl<T: TensorLike> IValueConvert for Vec<Option<T>> {
    fn into_ivalue(self) -> IValue {
        IValue::OptionalTensorList(Arc::new(
            self.into_iter().map(|t| t.map(T::into_base)).collect(),
        ))
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::OptionalTensorList(xs) => {
                Ok(xs.iter().map(|t| t.clone().map(T::from_base)).collect())
            }
            IValue::TensorList(xs) => {
                Ok(xs.iter().cloned().map(|t| Some(T::from_base(t))).collect())
            }
            IValue::GenericList(items) => items
                .iter()
                .cloned()
                .map(Option::<T>::from_ivalue)
                .collect(),
            other => Err(mismatch("List[Optional[Tensor]]", &other)),
        }
    }
    fn schema_type() -> String {
        "Tensor?[]".into()
    }
}

impl<const N: usize> IValueConvert for [i64; N] {
    fn into_ivalue(self) -> IValue {
        IValue::IntList(Arc::new(self.to_vec()))
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        let list = Vec::<i64>::from_ivalue(v)?;
        let len = list.len();
        list.try_into()
            .map_err(|_| Error::runtime(format!("Expected a list of {N} ints but got {len}")))
    }
    fn schema_type() -> String {
        format!("int[{N}]")
    }
}

/// The [`KernelArg`] items of a type that holds no SymInts: it is its own
/// concrete type (an owned one lent by a clone, a borrow by a copy).
macro_rules! no_symint {
    (owned) => {
        type Concrete = Self;
        type Unpacked = Self;
        fn unpack(self) -> Result<Self> {
            Ok(self)
        }
        fn concrete<'a>(unpacked: &'a Self) -> Self {
            unpacked.clone()
        }
    };
    (borrowed) => {
        type Concrete = Self;
        type Unpacked = Self;
        fn unpack(self) -> Result<Self> {
            Ok(self)
        }
        fn concrete<'a>(unpacked: &'a Self) -> Self::Item<'a> {
            *unpacked
        }
    };
}

/// A type a kernel can take as an argument.
///
/// # Safety
///
/// `Static` must be `Self` with every lifetime replaced by `'static`, and
/// `Item<'a>` must be `Self` with its lifetime replaced by `'a`: typed calls
/// compare signatures through `TypeId::of::<Static>()` and then call the
/// kernel's entry point as a function of `Self`, which is only sound when
/// equal `Static` types imply layout- and ABI-identical `Self` types. The
/// same holds of `Concrete`, which holds no SymInts (`HAS_SYMINT` false,
/// its own `Concrete`).
pub unsafe trait KernelArg: Sized {
    /// The same type at lifetime `'a` (owned types: themselves).
    type Item<'a>;
    /// What a boxed call extracts from the stack and lends to the kernel.
    type Holder: Send + 'static;
    /// A `'static` twin, to compare signatures by `TypeId`.
    type Static: 'static;
    /// The schema type of the argument.
    fn schema_type() -> String;
    /// Extracts the holder from a boxed value.
    fn holder_from_ivalue(v: IValue) -> Result<Self::Holder>;
    /// Lends the argument out of its holder.
    fn borrow<'a>(holder: &'a Self::Holder) -> Self::Item<'a>;
    /// Boxes the argument (for a typed call that reaches a boxed kernel).
    fn to_ivalue(&self) -> IValue;
    /// Whether the type holds SymInts (`c10::SymInt`, `SymIntArrayRef`): a
    /// kernel taking one is a SymInt kernel (its entry is `sym_unboxed`).
    const HAS_SYMINT: bool = false;
    /// The type a kernel of plain integers takes in this one's place
    /// (`SymInt` becomes `i64`, `&[SymInt]` `&[i64]`); the type itself
    /// when it holds no SymInts.
    type Concrete: KernelArg;
    /// What unpacking keeps for the concrete argument to borrow.
    type Unpacked;
    /// `unpackSymInt`: a symbolic `SymInt` is guarded on, a `SymInt[]`
    /// with a symbolic element is an error; other types pass unchanged.
    fn unpack(self) -> Result<Self::Unpacked>;
    /// The concrete argument, lent out of what [`unpack`](Self::unpack)
    /// kept.
    fn concrete<'a>(unpacked: &'a Self::Unpacked) -> <Self::Concrete as KernelArg>::Item<'a>;
    /// The dispatch keys the argument carries (tensors only; the default is
    /// the empty set, which the optimiser removes from typed calls).
    #[inline(always)]
    fn dispatch_key_set(&self) -> DispatchKeySet {
        DispatchKeySet::EMPTY
    }
}

/// Implements [`KernelArg`] for an owned tensor type (a [`TensorLike`]);
/// a downstream tensor type uses it too (`tensor_kernel_arg!(Tensor)`).
#[macro_export]
macro_rules! tensor_kernel_arg {
    ($t:ty) => {
        // SAFETY: an owned type is its own `Static` and `Item`.
        unsafe impl $crate::kernel_arg::KernelArg for $t {
            type Item<'a> = $t;
            type Holder = $t;
            type Static = $t;
            type Concrete = $t;
            type Unpacked = $t;
            fn unpack(self) -> c10_core::Result<$t> {
                Ok(self)
            }
            fn concrete<'a>(unpacked: &'a $t) -> $t {
                unpacked.clone()
            }
            fn schema_type() -> String {
                "Tensor".into()
            }
            fn holder_from_ivalue(v: $crate::IValue) -> c10_core::Result<$t> {
                <$t as $crate::kernel_arg::IValueConvert>::from_ivalue(v)
            }
            fn borrow<'a>(holder: &'a $t) -> $t {
                holder.clone()
            }
            fn to_ivalue(&self) -> $crate::IValue {
                $crate::IValue::Tensor($crate::kernel_arg::TensorLike::as_base(self).clone())
            }
            #[inline(always)]
            fn dispatch_key_set(&self) -> c10_core::DispatchKeySet {
                $crate::kernel_arg::TensorLike::as_base(self).key_set()
            }
        }
    };
}

tensor_kernel_arg!(TensorBase);

fn union_keys<'a, T: TensorLike>(ts: impl Iterator<Item = &'a T>) -> DispatchKeySet {
    ts.fold(DispatchKeySet::EMPTY, |ks, t| ks | t.as_base().key_set())
}

/// Implements [`KernelArg`] for owned [`IValueConvert`] types; a downstream
/// tensor type uses it too (`owned_kernel_arg!(Tensor)`).
#[macro_export]
macro_rules! owned_kernel_arg {
    ($($t:ty),* $(,)?) => {$(
        // SAFETY: an owned type is its own `Static` and `Item`.
        unsafe impl $crate::kernel_arg::KernelArg for $t {
            type Item<'a> = $t;
            type Holder = $t;
            type Static = $t;
            type Concrete = $t;
            type Unpacked = $t;
            fn unpack(self) -> c10_core::Result<$t> {
                Ok(self)
            }
            fn concrete<'a>(unpacked: &'a $t) -> $t {
                unpacked.clone()
            }
            fn schema_type() -> String {
                <$t as $crate::kernel_arg::IValueConvert>::schema_type()
            }
            fn holder_from_ivalue(v: $crate::IValue) -> c10_core::Result<$t> {
                <$t as $crate::kernel_arg::IValueConvert>::from_ivalue(v)
            }
            fn borrow<'a>(holder: &'a $t) -> $t {
                holder.clone()
            }
            fn to_ivalue(&self) -> $crate::IValue {
                <$t as $crate::kernel_arg::IValueConvert>::into_ivalue(self.clone())
            }
        }
    )*};
}

owned_kernel_arg!(
    bool,
    i64,
    f64,
    String,
    Scalar,
    ScalarType,
    Layout,
    MemoryFormat,
    Device,
    Generator,
    Complex64,
    IValue,
    Vec<i64>,
    Vec<f64>,
    Vec<bool>,
    Option<bool>,
    Option<i64>,
    Option<f64>,
    Option<String>,
    Option<Scalar>,
    Option<ScalarType>,
    Option<Layout>,
    Option<MemoryFormat>,
    Option<Device>,
    Option<Generator>,
    Option<Vec<i64>>,
    Option<Vec<f64>>,
);

// SAFETY: an owned type is its own `Static` and `Item`.
unsafe impl<const N: usize> KernelArg for [i64; N] {
    type Item<'a> = [i64; N];
    type Holder = [i64; N];
    type Static = [i64; N];
    no_symint!(owned);
    fn schema_type() -> String {
        <[i64; N] as IValueConvert>::schema_type()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Self> {
        <[i64; N] as IValueConvert>::from_ivalue(v)
    }
    fn borrow<'a>(holder: &'a Self) -> Self {
        *holder
    }
    fn to_ivalue(&self) -> IValue {
        IValue::IntList(Arc::new(self.to_vec()))
    }
}

// SAFETY: an owned type is its own `Static` and `Item`.
unsafe impl<T: TensorLike> KernelArg for Vec<T> {
    type Item<'a> = Vec<T>;
    type Holder = Vec<T>;
    type Static = Vec<T>;
    no_symint!(owned);
    fn schema_type() -> String {
        "Tensor[]".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Self> {
        <Vec<T> as IValueConvert>::from_ivalue(v)
    }
    fn borrow<'a>(holder: &'a Self) -> Self {
        holder.clone()
    }
    fn to_ivalue(&self) -> IValue {
        self.clone().into_ivalue()
    }
    fn dispatch_key_set(&self) -> DispatchKeySet {
        union_keys(self.iter())
    }
}

// SAFETY: an owned type is its own `Static` and `Item`.
unsafe impl<T: TensorLike> KernelArg for Vec<Option<T>> {
    type Item<'a> = Vec<Option<T>>;
    type Holder = Vec<Option<T>>;
    type Static = Vec<Option<T>>;
    no_symint!(owned);
    fn schema_type() -> String {
        "Tensor?[]".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Self> {
        <Vec<Option<T>> as IValueConvert>::from_ivalue(v)
    }
    fn borrow<'a>(holder: &'a Self) -> Self {
        holder.clone()
    }
    fn to_ivalue(&self) -> IValue {
        self.clone().into_ivalue()
    }
    fn dispatch_key_set(&self) -> DispatchKeySet {
        union_keys(self.iter().flatten())
    }
}

// SAFETY: `Static` and `Item<'a>` are `Self` with `'x` replaced.
unsafe impl<'x, T: TensorLike> KernelArg for &'x T {
    type Item<'a> = &'a T;
    type Holder = T;
    type Static = &'static T;
    no_symint!(borrowed);
    fn schema_type() -> String {
        "Tensor".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<T> {
        T::from_ivalue(v)
    }
    fn borrow<'a>(holder: &'a T) -> &'a T {
        holder
    }
    fn to_ivalue(&self) -> IValue {
        IValue::Tensor(self.as_base().clone())
    }
    #[inline(always)]
    fn dispatch_key_set(&self) -> DispatchKeySet {
        self.as_base().key_set()
    }
}

// SAFETY: `Static` and `Item<'a>` are `Self` with `'x` replaced.
unsafe impl<'x, T: TensorLike> KernelArg for Option<&'x T> {
    type Item<'a> = Option<&'a T>;
    type Holder = Option<T>;
    type Static = Option<&'static T>;
    no_symint!(borrowed);
    fn schema_type() -> String {
        "Tensor?".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Option<T>> {
        // An undefined tensor passed where an optional is expected is None.
        Ok(Option::<T>::from_ivalue(v)?.filter(|t| t.as_base().defined()))
    }
    fn borrow<'a>(holder: &'a Option<T>) -> Option<&'a T> {
        holder.as_ref()
    }
    fn to_ivalue(&self) -> IValue {
        self.map_or(IValue::None, |t| IValue::Tensor(t.as_base().clone()))
    }
    #[inline(always)]
    fn dispatch_key_set(&self) -> DispatchKeySet {
        self.map_or(DispatchKeySet::EMPTY, |t| t.as_base().key_set())
    }
}

// SAFETY: `Static` and `Item<'a>` are `Self` with `'x` replaced.
unsafe impl<'x, T: TensorLike> KernelArg for &'x [T] {
    type Item<'a> = &'a [T];
    type Holder = Vec<T>;
    type Static = &'static [T];
    no_symint!(borrowed);
    fn schema_type() -> String {
        "Tensor[]".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Vec<T>> {
        Vec::<T>::from_ivalue(v)
    }
    fn borrow<'a>(holder: &'a Vec<T>) -> &'a [T] {
        holder
    }
    fn to_ivalue(&self) -> IValue {
        self.to_vec().into_ivalue()
    }
    fn dispatch_key_set(&self) -> DispatchKeySet {
        union_keys(self.iter())
    }
}

/// [`KernelArg`] for `&[$elem]` and `Option<&[$elem]>`; with `=> $int`,
/// the elements are SymInts, unpacked into `&[$int]` by `$unpack`.
macro_rules! slice_kernel_arg {
    ($elem:ty) => {
        slice_kernel_arg!(@impl $elem, [plain]);
    };
    ($elem:ty => $int:ty, $unpack:path) => {
        slice_kernel_arg!(@impl $elem, [sym $int, $unpack]);
    };
    (@impl $elem:ty, [$($how:tt)*]) => {
        // SAFETY: `Static` and `Item<'a>` are `Self` with `'x` replaced;
        // so is `Concrete`, holding no SymInts.
        unsafe impl<'x> KernelArg for &'x [$elem] {
            type Item<'a> = &'a [$elem];
            type Holder = Vec<$elem>;
            type Static = &'static [$elem];
            slice_kernel_arg!(@symint slice, $($how)*);
            fn schema_type() -> String {
                <Vec<$elem> as IValueConvert>::schema_type()
            }
            fn holder_from_ivalue(v: IValue) -> Result<Vec<$elem>> {
                Vec::<$elem>::from_ivalue(v)
            }
            fn borrow<'a>(holder: &'a Vec<$elem>) -> &'a [$elem] {
                holder
            }
            fn to_ivalue(&self) -> IValue {
                self.to_vec().into_ivalue()
            }
        }

        // SAFETY: as above.
        unsafe impl<'x> KernelArg for Option<&'x [$elem]> {
            type Item<'a> = Option<&'a [$elem]>;
            type Holder = Option<Vec<$elem>>;
            type Static = Option<&'static [$elem]>;
            slice_kernel_arg!(@symint optional, $($how)*);
            fn schema_type() -> String {
                <Option<Vec<$elem>> as IValueConvert>::schema_type()
            }
            fn holder_from_ivalue(v: IValue) -> Result<Option<Vec<$elem>>> {
                Option::<Vec<$elem>>::from_ivalue(v)
            }
            fn borrow<'a>(holder: &'a Option<Vec<$elem>>) -> Option<&'a [$elem]> {
                holder.as_deref()
            }
            fn to_ivalue(&self) -> IValue {
                self.map(<[$elem]>::to_vec).into_ivalue()
            }
        }
    };
    (@symint $kind:ident, plain) => {
        no_symint!(borrowed);
    };
    (@symint slice, sym $int:ty, $unpack:path) => {
        const HAS_SYMINT: bool = true;
        type Concrete = &'x [$int];
        type Unpacked = Vec<$int>;
        fn unpack(self) -> Result<Vec<$int>> {
            $unpack(self)
        }
        fn concrete<'a>(unpacked: &'a Vec<$int>) -> &'a [$int] {
            unpacked
        }
    };
    (@symint optional, sym $int:ty, $unpack:path) => {
        const HAS_SYMINT: bool = true;
        type Concrete = Option<&'x [$int]>;
        type Unpacked = Option<Vec<$int>>;
        fn unpack(self) -> Result<Option<Vec<$int>>> {
            self.map($unpack).transpose()
        }
        fn concrete<'a>(unpacked: &'a Option<Vec<$int>>) -> Option<&'a [$int]> {
            unpacked.as_deref()
        }
    };
}

slice_kernel_arg!(i64);
slice_kernel_arg!(f64);
slice_kernel_arg!(bool);
slice_kernel_arg!(SymInt => i64, as_int_array);

// SAFETY: `Static` and `Item<'a>` are `Self` with `'x` replaced.
unsafe impl<'x> KernelArg for &'x str {
    type Item<'a> = &'a str;
    type Holder = Arc<String>;
    type Static = &'static str;
    no_symint!(borrowed);
    fn schema_type() -> String {
        "str".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Arc<String>> {
        match v {
            IValue::String(s) => Ok(s),
            other => Err(mismatch("str", &other)),
        }
    }
    fn borrow<'a>(holder: &'a Arc<String>) -> &'a str {
        holder
    }
    fn to_ivalue(&self) -> IValue {
        IValue::String(Arc::new((*self).to_owned()))
    }
}

// SAFETY: `Static` and `Item<'a>` are `Self` with `'x` replaced.
unsafe impl<'x> KernelArg for Option<&'x str> {
    type Item<'a> = Option<&'a str>;
    type Holder = Option<Arc<String>>;
    type Static = Option<&'static str>;
    no_symint!(borrowed);
    fn schema_type() -> String {
        "str?".into()
    }
    fn holder_from_ivalue(v: IValue) -> Result<Option<Arc<String>>> {
        match v {
            IValue::None => Ok(None),
            other => <&str>::holder_from_ivalue(other).map(Some),
        }
    }
    fn borrow<'a>(holder: &'a Option<Arc<String>>) -> Option<&'a str> {
        holder.as_deref().map(String::as_str)
    }
    fn to_ivalue(&self) -> IValue {
        self.map_or(IValue::None, |s| IValue::String(Arc::new(s.to_owned())))
    }
}

macro_rules! convert_symbolic {
    ($t:ty, $schema:expr, $to:ident) => {
        impl IValueConvert for $t {
            fn into_ivalue(self) -> IValue {
                IValue::from(self)
            }
            fn from_ivalue(v: IValue) -> Result<Self> {
                v.$to().map_err(|_| mismatch($schema, &v))
            }
            fn schema_type() -> String {
                $schema.into()
            }
        }
    };
}

convert_symbolic!(SymInt, "SymInt", to_sym_int);
convert_symbolic!(SymFloat, "SymFloat", to_sym_float);
convert_symbolic!(SymBool, "SymBool", to_sym_bool);

impl IValueConvert for Vec<SymInt> {
    /// An `int[]` when every element is concrete, else a list of `int`s
    /// and `SymInt`s.
    fn into_ivalue(self) -> IValue {
        match as_int_array(&self) {
            Ok(ints) => IValue::IntList(Arc::new(ints)),
            Err(_) => IValue::GenericList(Arc::new(self.into_iter().map(IValue::from).collect())),
        }
    }
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::IntList(xs) => Ok(xs.iter().map(|&i| SymInt::new(i)).collect()),
            IValue::GenericList(items) => items.iter().map(sym_int_item).collect(),
            other => Err(mismatch("SymInt[]", &other)),
        }
    }
    fn schema_type() -> String {
        "SymInt[]".into()
    }
}

fn sym_int_item(v: &IValue) -> Result<SymInt> {
    v.to_sym_int().map_err(|_| mismatch("SymInt", v))
}

owned_kernel_arg!(SymFloat, SymBool, Option<SymFloat>, Option<SymBool>);

/// [`KernelArg`] for an owned SymInt type, unpacked by `$unpack` into
/// its concrete twin `$concrete`.
macro_rules! owned_symint_arg {
    ($t:ty, $concrete:ty, |$v:ident| $unpack:expr) => {
        // SAFETY: an owned type is its own `Static` and `Item`, and so is
        // its concrete twin, which holds no SymInts.
        unsafe impl KernelArg for $t {
            type Item<'a> = $t;
            type Holder = $t;
            type Static = $t;
            const HAS_SYMINT: bool = true;
            type Concrete = $concrete;
            type Unpacked = $concrete;
            fn schema_type() -> String {
                <$t as IValueConvert>::schema_type()
            }
            fn holder_from_ivalue(v: IValue) -> Result<$t> {
                <$t as IValueConvert>::from_ivalue(v)
            }
            fn borrow<'a>(holder: &'a $t) -> $t {
                holder.clone()
            }
            fn to_ivalue(&self) -> IValue {
                <$t as IValueConvert>::into_ivalue(self.clone())
            }
            fn unpack(self) -> Result<$concrete> {
                let $v = self;
                $unpack
            }
            fn concrete<'a>(unpacked: &'a $concrete) -> $concrete {
                unpacked.clone()
            }
        }
    };
}

owned_symint_arg!(SymInt, i64, |v| v.guard_int(file!(), line!()));
owned_symint_arg!(Option<SymInt>, Option<i64>, |v| v
    .map(|v| v.guard_int(file!(), line!()))
    .transpose());
owned_symint_arg!(Vec<SymInt>, Vec<i64>, |v| as_int_array(&v));

/// What a kernel returns: `()`, one [`IValueConvert`] value, or a tuple.
pub trait KernelReturn: Sized + Send + 'static {
    /// Number of values pushed.
    const NUM_RETURNS: usize;
    /// Pushes the returns in order.
    fn push_onto(self, stack: &mut Stack);
    /// Pops exactly `NUM_RETURNS` values (the kernel's returns) off the stack.
    fn pop_from(stack: &mut Stack) -> Result<Self>;
    /// The schema types of the returns.
    fn schema_types() -> Vec<String>;
}

impl KernelReturn for () {
    const NUM_RETURNS: usize = 0;
    fn push_onto(self, _: &mut Stack) {}
    fn pop_from(_: &mut Stack) -> Result<Self> {
        Ok(())
    }
    fn schema_types() -> Vec<String> {
        Vec::new()
    }
}

impl<T: IValueConvert> KernelReturn for T {
    const NUM_RETURNS: usize = 1;
    fn push_onto(self, stack: &mut Stack) {
        stack.push(self.into_ivalue());
    }
    fn pop_from(stack: &mut Stack) -> Result<Self> {
        T::from_ivalue(stack.pop_value()?)
    }
    fn schema_types() -> Vec<String> {
        vec![T::schema_type()]
    }
}

macro_rules! tuple_return {
    ($n:expr; $($t:ident),+) => {
        impl<$($t: IValueConvert),+> KernelReturn for ($($t,)+) {
            const NUM_RETURNS: usize = $n;
            #[allow(non_snake_case)]
            fn push_onto(self, stack: &mut Stack) {
                let ($($t,)+) = self;
                $(stack.push($t.into_ivalue());)+
            }
            fn pop_from(stack: &mut Stack) -> Result<Self> {
                let mut values = stack.pop_n($n)?.into_iter();
                Ok(($($t::from_ivalue(values.next().unwrap_or_default())?,)+))
            }
            fn schema_types() -> Vec<String> {
                vec![$($t::schema_type()),+]
            }
        }
    };
}

tuple_return!(1; A);
tuple_return!(2; A, B);
tuple_return!(3; A, B, C);
tuple_return!(4; A, B, C, D);
tuple_return!(5; A, B, C, D, E);
tuple_return!(6; A, B, C, D, E, F);
