//! `KernelFunction`: one registered kernel, callable boxed and unboxed, and
//! its boxed half, [`BoxedKernel`].
//!
//! PyTorch's kernels have up to three entry points: a *boxed* one (a
//! [`BoxedKernel`]) that takes its arguments on a [`Stack`], an *unboxed*
//! one (a plain function pointer of the operator's C++ signature) and a
//! *SymInt* one (the same, for a kernel whose signature holds `SymInt`s,
//! which then has no plain one). Every kernel made here has a boxed entry:
//! a kernel written as a Rust function or closure gets a generated boxed
//! wrapper that pops its arguments, calls it and pushes its returns. A
//! kernel written boxed has no unboxed entry; a typed call reaching it
//! boxes the arguments, runs it and unboxes the results (PyTorch's
//! `BoxedKernelWrapper`). A typed call whose arguments hold SymInts takes
//! the SymInt entry, else the plain one with its SymInts unpacked
//! ([`KernelArg::unpack`]), else the boxed one; any other typed call takes
//! the plain entry, else the boxed one.
//!
//! # Unboxed entry points
//!
//! A functor `F` of Rust signature `(A0, .., An) -> Result<R>` is stored as an
//! `Arc` plus a monomorphised trampoline `fn(*const (), DispatchKeySet, A0, ..,
//! An) -> Result<R>`, erased to `fn()`. The trampoline's signature is recorded
//! as the `TypeId` of the `'static` twins of its argument types
//! ([`KernelArg::Static`]) and of `R`. A typed call checks that id before
//! turning the pointer back into a function of its own argument types. Lifetimes
//! do not exist at run time, and `F` is required to accept every lifetime
//! (`for<'a> Fn(A0::Item<'a>, ..)`), so calling the trampoline with the
//! caller's borrows is what the generic code would have done.

use std::any::{Any, TypeId};
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use c10_core::{DispatchKeySet, Error, Result};

use crate::kernel_arg::{KernelArg, KernelReturn};
use crate::schema::FunctionSchema;
use crate::stack::Stack;

/// What a boxed kernel may ask of the operator it runs for (PyTorch passes
/// the `OperatorHandle` itself). The dispatcher's `OperatorHandle`
/// implements it; a kernel that needs more downcasts [`as_any`](Self::as_any)
/// to it. The boxing layer knows nothing else of operators.
pub trait BoxedOperator: Send + Sync {
    /// `ns::name[.overload]`.
    fn operator_name(&self) -> String;
    /// The operator's schema, if it has a def.
    fn schema(&self) -> Option<Arc<FunctionSchema>>;
    /// The def's tags (`pt2_compliant_tag`, `core`, ...).
    fn tags(&self) -> Vec<String>;
    /// The implementing value, for a downcast to the dispatcher's handle.
    fn as_any(&self) -> &dyn Any;
    /// Calls the operator again, starting below the keys a kernel removed.
    fn redispatch_boxed(&self, keys: DispatchKeySet, stack: &mut Stack) -> Result<()>;
    /// The operator's registration state (`dumpState`), for error messages.
    fn dump_state(&self) -> String;
}

/// Which special kernel, if any, a boxed kernel is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum BoxedKind {
    Normal,
    Fallthrough,
    AmbiguousAutogradOther,
    NamedNotSupported,
}

/// The Rust signature of an unboxed kernel (PyTorch's `CppSignature`).
#[derive(Copy, Clone)]
pub struct CppSignature {
    type_id: TypeId,
    name: &'static str,
}

impl CppSignature {
    /// The signature of a kernel taking `Args` and returning `R`.
    pub fn of<Args: ArgList, R: KernelReturn>() -> CppSignature {
        CppSignature {
            type_id: TypeId::of::<(Args::Static, R)>(),
            name: std::any::type_name::<fn(Args) -> Result<R>>(),
        }
    }

    /// A readable name of the signature.
    pub fn name(&self) -> &'static str {
        self.name
    }
}

impl PartialEq for CppSignature {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}

impl Eq for CppSignature {}

impl fmt::Debug for CppSignature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[derive(Clone)]
struct UnboxedKernel {
    /// Owns the functor the entry point runs (see [`KernelEntries`]).
    functor: Arc<dyn Any + Send + Sync>,
    signature: CppSignature,
    inferred: Arc<InferredSignature>,
}

/// What the schema inference makes of a Rust signature; computed once per
/// signature and shared.
struct InferredSignature {
    schema: String,
    args: Vec<String>,
    returns: Vec<String>,
}

impl InferredSignature {
    fn of<Args: ArgList, R: KernelReturn>() -> Arc<InferredSignature> {
        use std::collections::HashMap;
        use std::sync::Mutex;
        static CACHE: Mutex<Option<HashMap<TypeId, Arc<InferredSignature>>>> = Mutex::new(None);
        let key = TypeId::of::<(Args::Static, R)>();
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let map = cache.get_or_insert_with(HashMap::new);
        Arc::clone(map.entry(key).or_insert_with(|| {
            Arc::new(InferredSignature {
                schema: infer_schema::<Args, R>(),
                args: Args::schema_types(),
                returns: R::schema_types(),
            })
        }))
    }
}

/// A boxed entry point erased to a plain function of the data it runs on.
type BoxedTrampoline =
    unsafe fn(*const (), &dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()>;

/// Runs the boxed kernel `F` stored at `data`.
///
/// # Safety
///
/// `data` must point to a live `F`.
unsafe fn boxed_trampoline<F>(
    data: *const (),
    op: &dyn BoxedOperator,
    keys: DispatchKeySet,
    stack: &mut Stack,
) -> Result<()>
where
    F: Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()>,
{
    // SAFETY: the caller guarantees `data` points to a live `F`.
    let f = unsafe { &*(data as *const F) };
    f(op, keys, stack)
}

/// Runs the generated boxed wrapper of the Rust kernel `F` stored at `data`.
///
/// # Safety
///
/// `data` must point to a live `F`.
unsafe fn functor_boxed_trampoline<M, F: KernelFunctor<M>>(
    data: *const (),
    _op: &dyn BoxedOperator,
    keys: DispatchKeySet,
    stack: &mut Stack,
) -> Result<()> {
    // SAFETY: the caller guarantees `data` points to a live `F`.
    let f = unsafe { &*(data as *const F) };
    f.call_boxed(keys, stack)
}

/// The boxed half of a kernel (`c10::BoxedKernel`): a functor and the
/// function that runs it on a [`Stack`]. Every [`KernelFunction`] has one;
/// a kernel written boxed is nothing else.
#[derive(Clone)]
pub struct BoxedKernel {
    /// Owns what `func` runs on.
    functor: Arc<dyn Any + Send + Sync>,
    func: BoxedTrampoline,
    kind: BoxedKind,
}

impl BoxedKernel {
    /// `makeFromFunction` / `makeFromFunctor`: a kernel that works on the
    /// stack.
    #[doc(alias = "makeFromFunction", alias = "makeFromFunctor")]
    pub fn make_from_function(
        f: impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static,
    ) -> BoxedKernel {
        BoxedKernel::special(BoxedKind::Normal, f)
    }

    /// `makeFallthrough`: the kernel that tells the dispatcher to skip its
    /// key. Running it is an internal error.
    #[doc(alias = "makeFallthrough")]
    pub fn make_fallthrough() -> BoxedKernel {
        BoxedKernel::special(BoxedKind::Fallthrough, |_, _, _| {
            Err(Error::internal("fallthrough_kernel was executed but it should have been short-circuited by the dispatcher. This could occur if you registered a fallthrough kernel as a override for a specific operator (as opposed to a backend fallback); this is NOT currently supported, and we do not intend to add support for it in the near future.  If you do find yourself in need of this, let us know in the bug tracker."))
        })
    }

    /// `makeAmbiguousAutogradOther`: fills AutogradOther when an operator has
    /// both a CompositeImplicitAutograd kernel and a kernel for a backend that
    /// AutogradOther serves. Running it explains the ambiguity.
    #[doc(alias = "makeAmbiguousAutogradOther")]
    pub fn make_ambiguous_autograd_other() -> BoxedKernel {
        BoxedKernel::special(BoxedKind::AmbiguousAutogradOther, |op, _, _| {
            Err(Error::internal(format!(
                "{} has kernels registered to both CompositeImplicitAutograd and a backend mapped to AutogradOther. This makes the backend kernel unreachable; the dispatcher will always prefer the CompositeImplicitAutograd lowering (see Note [Ambiguity in AutogradOther kernel]). If you want to override CompositeImplicitAutograd, please open an issue to request a dedicated Autograd dispatch key for the backend.\nIf you only want to run inference instead of training, in C++, add `c10::InferenceMode mode;` before model.forward(); in Python, use `torch.inference_mode()` as a context manager (see https://pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html).\nCanonical state\n~~~~~~~~~~~\n{}\n\n",
                op.operator_name(),
                op.dump_state()
            )))
        })
    }

    /// `makeNamedNotSupported`: the Named key's kernel for operators that do
    /// not support named tensors.
    #[doc(alias = "makeNamedNotSupported")]
    pub fn make_named_not_supported() -> BoxedKernel {
        BoxedKernel::special(BoxedKind::NamedNotSupported, |op, _, _| {
            Err(Error::runtime(format!(
                "{} is not yet supported with named tensors. Please drop names via `tensor = tensor.rename(None)`, call the op with an unnamed tensor, and set names on the result of the operation.",
                op.operator_name()
            )))
        })
    }

    fn special<F>(kind: BoxedKind, f: F) -> BoxedKernel
    where
        F: Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static,
    {
        BoxedKernel {
            functor: Arc::new(f),
            func: boxed_trampoline::<F>,
            kind,
        }
    }

    /// The generated boxed wrapper of the Rust kernel `functor`.
    fn of_functor<M, F: KernelFunctor<M>>(functor: Arc<F>) -> BoxedKernel {
        BoxedKernel {
            functor,
            func: functor_boxed_trampoline::<M, F>,
            kind: BoxedKind::Normal,
        }
    }

    /// The entry point as a bare pointer pair, valid while `self` is alive.
    fn entry(&self) -> (BoxedTrampoline, *const ()) {
        (self.func, Arc::as_ptr(&self.functor) as *const ())
    }

    /// `callBoxed`: runs the kernel on `stack` (arguments in, returns out).
    #[doc(alias = "callBoxed")]
    #[inline]
    pub fn call_boxed(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<()> {
        let (func, data) = self.entry();
        // SAFETY: `func` was made for the functor `data` points to, which
        // `self` keeps alive for the call.
        unsafe { func(data, op, keys, stack) }
    }

    /// Whether this is the fallthrough kernel (`isFallthrough`).
    #[doc(alias = "isFallthrough")]
    pub fn is_fallthrough(&self) -> bool {
        self.kind == BoxedKind::Fallthrough
    }

    /// Whether this is the ambiguous-AutogradOther kernel.
    pub fn is_ambiguous_autograd_other(&self) -> bool {
        self.kind == BoxedKind::AmbiguousAutogradOther
    }

    /// Whether both are the same kernel (the same functor).
    pub fn same_as(&self, other: &BoxedKernel) -> bool {
        Arc::ptr_eq(&self.functor, &other.functor)
    }
}

impl fmt::Debug for BoxedKernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BoxedKernel[{:?}]", self.kind)
    }
}

/// A kernel's entry points as bare pointers: a function and the data it runs
/// on, for the unboxed and the boxed entry. A dispatch table keeps a copy
/// beside each kernel, so a call reads them with one load from the table
/// instead of following the kernel's `Arc`s. They are valid only while the
/// [`KernelFunction`] they came from is alive, which is why calling through
/// them is `unsafe`.
#[derive(Copy, Clone, Default)]
pub struct KernelEntries {
    /// The erased trampoline (its real type is the kernel's `CppSignature`)
    /// and the functor.
    unboxed: Option<(fn(), *const ())>,
    /// The same for a kernel whose signature holds SymInts.
    sym_unboxed: Option<(fn(), *const ())>,
    boxed: Option<(BoxedTrampoline, *const ())>,
}

// SAFETY: the pointers lead to functors that are `Send + Sync` and are only
// read; the entries carry no ownership.
unsafe impl Send for KernelEntries {}
// SAFETY: as for `Send`.
unsafe impl Sync for KernelEntries {}

impl KernelEntries {
    /// `callBoxed` through the entries.
    ///
    /// # Safety
    ///
    /// The [`KernelFunction`] these entries came from must be alive.
    #[doc(alias = "callBoxed")]
    #[inline(always)]
    pub unsafe fn call_boxed(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<()> {
        match self.boxed {
            // SAFETY: `data` is the functor `f` was made for, kept alive by
            // the kernel (the caller's guarantee).
            Some((f, data)) => unsafe { f(data, op, keys, stack) },
            None => Err(Error::internal(format!(
                "Tried to call KernelFunction::callBoxed() on an uninitialized KernelFunction for {}.",
                op.operator_name()
            ))),
        }
    }

    /// A typed call through the entries, without the signature check, in
    /// PyTorch's order: arguments holding SymInts go to the SymInt entry,
    /// else to the plain entry with their SymInts unpacked; others to the
    /// plain entry; the boxed entry when there is none of those.
    ///
    /// # Safety
    ///
    /// The [`KernelFunction`] these entries came from must be alive; if it
    /// has a plain unboxed entry, its [`cpp_signature`](KernelFunction::cpp_signature)
    /// must equal `CppSignature::of::<Args::Concrete, R>()` (which is
    /// `of::<Args, R>()` for arguments without SymInts); if `Args` holds
    /// SymInts and it has a SymInt entry, its
    /// [`sym_cpp_signature`](KernelFunction::sym_cpp_signature) must equal
    /// `CppSignature::of::<Args, R>()`.
    #[inline(always)]
    pub unsafe fn call_unchecked<Args: ArgList, R: KernelReturn>(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        args: Args,
    ) -> Result<R> {
        if Args::HAS_SYMINT {
            if let Some((entry, functor)) = self.sym_unboxed {
                // SAFETY: the caller guarantees the signatures match and
                // the functor is alive.
                return unsafe { args.call_unboxed(entry, functor, keys) };
            }
            if let Some((entry, functor)) = self.unboxed {
                // SAFETY: as above, for the concrete twins' signature.
                return unsafe { args.call_unboxed_concrete(entry, functor, keys) };
            }
        } else if let Some((entry, functor)) = self.unboxed {
            // SAFETY: the caller guarantees the signatures match and the
            // functor is alive.
            return unsafe { args.call_unboxed(entry, functor, keys) };
        }
        // SAFETY: the caller guarantees the kernel is alive.
        unsafe { self.call_through_boxed(op, keys, args) }
    }

    /// `BoxedKernelWrapper`: box, call the boxed entry, unbox.
    ///
    /// # Safety
    ///
    /// As for [`call_boxed`](Self::call_boxed).
    unsafe fn call_through_boxed<Args: ArgList, R: KernelReturn>(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        args: Args,
    ) -> Result<R> {
        let mut stack = Stack::with_capacity(Args::LEN.max(R::NUM_RETURNS));
        args.push_all(&mut stack);
        // SAFETY: the caller's guarantee.
        unsafe { self.call_boxed(op, keys, &mut stack) }?;
        if stack.len() != R::NUM_RETURNS {
            return Err(Error::internal(format!(
                "Boxed kernel for {} left {} values on the stack but the signature returns {}",
                op.operator_name(),
                stack.len(),
                R::NUM_RETURNS
            )));
        }
        R::pop_from(&mut stack)
    }
}

/// One kernel with its boxed and (optionally) unboxed entry points.
/// The default value is the invalid kernel, which a dispatch table uses to
/// mean "missing".
#[derive(Clone, Default)]
pub struct KernelFunction {
    /// The boxed half (`boxed_kernel_func_`).
    boxed: Option<BoxedKernel>,
    unboxed: Option<UnboxedKernel>,
    /// The unboxed entry of a kernel whose signature holds SymInts
    /// (`sym_unboxed_kernel_func_`); such a kernel has no plain one.
    sym_unboxed: Option<UnboxedKernel>,
    /// The entry points, pointing into `boxed`, `unboxed` and
    /// `sym_unboxed`.
    entries: KernelEntries,
}

impl KernelFunction {
    /// `makeFromBoxedFunction`: a kernel that works on the stack.
    #[doc(alias = "makeFromBoxedFunction")]
    pub fn make_from_boxed_function(
        f: impl Fn(&dyn BoxedOperator, DispatchKeySet, &mut Stack) -> Result<()> + Send + Sync + 'static,
    ) -> KernelFunction {
        Self::make_from_boxed_kernel(BoxedKernel::make_from_function(f))
    }

    /// `makeFromBoxedKernel`: a kernel with only a boxed entry.
    #[doc(alias = "makeFromBoxedKernel")]
    pub fn make_from_boxed_kernel(boxed: BoxedKernel) -> KernelFunction {
        let entry = boxed.entry();
        KernelFunction {
            boxed: Some(boxed),
            unboxed: None,
            sym_unboxed: None,
            entries: KernelEntries {
                unboxed: None,
                sym_unboxed: None,
                boxed: Some(entry),
            },
        }
    }

    /// `makeFromUnboxedFunction`: a kernel written as a Rust `fn` item,
    /// optionally taking the `DispatchKeySet` first. Its boxed wrapper is made
    /// automatically.
    #[doc(alias = "makeFromUnboxedFunction")]
    pub fn make_from_unboxed_function<M, F: KernelFunctor<M>>(f: F) -> KernelFunction {
        Self::make_from_unboxed_closure(f)
    }

    /// `makeFromUnboxedLambda`: a kernel written as a closure, which may
    /// capture state. A signature holding SymInts makes its unboxed entry
    /// the SymInt one.
    #[doc(alias = "makeFromUnboxedLambda", alias = "makeFromUnboxedFunctor")]
    pub fn make_from_unboxed_closure<M, F: KernelFunctor<M>>(f: F) -> KernelFunction {
        let functor = Arc::new(f);
        let data = Arc::as_ptr(&functor) as *const ();
        let boxed = BoxedKernel::of_functor::<M, F>(Arc::clone(&functor));
        let boxed_entry = boxed.entry();
        let kernel = Some(UnboxedKernel {
            functor,
            signature: CppSignature::of::<F::Args, F::Ret>(),
            inferred: InferredSignature::of::<F::Args, F::Ret>(),
        });
        let entry = Some((F::unboxed_entry(), data));
        let symint = <F::Args as ArgList>::HAS_SYMINT;
        KernelFunction {
            boxed: Some(boxed),
            unboxed: if symint { None } else { kernel.clone() },
            sym_unboxed: if symint { kernel } else { None },
            entries: KernelEntries {
                unboxed: if symint { None } else { entry },
                sym_unboxed: if symint { entry } else { None },
                boxed: Some(boxed_entry),
            },
        }
    }

    /// `makeFallthrough`: the kernel that tells the dispatcher to skip its key.
    /// Running it is an internal error.
    #[doc(alias = "makeFallthrough")]
    pub fn make_fallthrough() -> KernelFunction {
        Self::make_from_boxed_kernel(BoxedKernel::make_fallthrough())
    }

    /// `makeAmbiguousAutogradOther` (see
    /// [`BoxedKernel::make_ambiguous_autograd_other`]).
    #[doc(alias = "makeAmbiguousAutogradOther")]
    pub fn make_ambiguous_autograd_other() -> KernelFunction {
        Self::make_from_boxed_kernel(BoxedKernel::make_ambiguous_autograd_other())
    }

    /// `makeNamedNotSupported` (see [`BoxedKernel::make_named_not_supported`]).
    #[doc(alias = "makeNamedNotSupported")]
    pub fn make_named_not_supported() -> KernelFunction {
        Self::make_from_boxed_kernel(BoxedKernel::make_named_not_supported())
    }

    /// The boxed half, if this is a kernel at all.
    pub fn boxed_kernel(&self) -> Option<&BoxedKernel> {
        self.boxed.as_ref()
    }

    /// The same kernel without its unboxed entry: callable boxed only (and
    /// typed through the boxed path).
    pub fn boxed_only(&self) -> KernelFunction {
        KernelFunction {
            boxed: self.boxed.clone(),
            unboxed: None,
            sym_unboxed: None,
            entries: KernelEntries {
                unboxed: None,
                sym_unboxed: None,
                boxed: self.entries.boxed,
            },
        }
    }

    /// The entry points as bare pointers, valid while `self` is alive.
    #[inline(always)]
    pub fn entries(&self) -> KernelEntries {
        self.entries
    }

    /// Whether this is a kernel at all (`isValid`).
    #[inline]
    pub fn is_valid(&self) -> bool {
        self.boxed.is_some() || self.unboxed.is_some() || self.sym_unboxed.is_some()
    }

    /// Whether this is the fallthrough kernel.
    #[inline]
    pub fn is_fallthrough(&self) -> bool {
        self.boxed.as_ref().is_some_and(BoxedKernel::is_fallthrough)
    }

    /// Whether this is the ambiguous-AutogradOther kernel.
    pub fn is_ambiguous_autograd_other(&self) -> bool {
        self.boxed
            .as_ref()
            .is_some_and(BoxedKernel::is_ambiguous_autograd_other)
    }

    /// Whether there is an unboxed entry point, plain or SymInt.
    pub fn has_unboxed(&self) -> bool {
        self.unboxed.is_some() || self.sym_unboxed.is_some()
    }

    /// Whether the unboxed entry is a SymInt one (`isValidSymUnboxed`).
    #[doc(alias = "isValidSymUnboxed")]
    pub fn is_valid_sym_unboxed(&self) -> bool {
        self.sym_unboxed.is_some()
    }

    /// The Rust signature of the plain unboxed entry, if any.
    pub fn cpp_signature(&self) -> Option<CppSignature> {
        self.unboxed.as_ref().map(|u| u.signature)
    }

    /// The Rust signature of the SymInt unboxed entry, if any.
    pub fn sym_cpp_signature(&self) -> Option<CppSignature> {
        self.sym_unboxed.as_ref().map(|u| u.signature)
    }

    /// The unboxed entry, plain or SymInt.
    fn any_unboxed(&self) -> Option<&UnboxedKernel> {
        self.unboxed.as_ref().or(self.sym_unboxed.as_ref())
    }

    /// The schema inferred from the unboxed signature
    /// (`(Tensor _0, int _1) -> Tensor _0`), if any.
    pub fn inferred_schema(&self) -> Option<&str> {
        self.any_unboxed().map(|u| u.inferred.schema.as_str())
    }

    /// The schema types of the arguments and of the returns of the unboxed
    /// signature, if any (`["Tensor", "int"]`, `["Tensor"]`).
    pub fn inferred_types(&self) -> Option<(&[String], &[String])> {
        self.any_unboxed()
            .map(|u| (u.inferred.args.as_slice(), u.inferred.returns.as_slice()))
    }

    /// `KernelFunction::dumpState()`: `fallthrough `, `boxed `, `unboxed `.
    pub fn dump_state(&self) -> String {
        let mut s = String::new();
        if self.is_fallthrough() {
            s.push_str("fallthrough ");
        }
        if self.boxed.is_some() {
            s.push_str("boxed ");
        }
        if self.unboxed.is_some() {
            s.push_str("unboxed ");
        }
        s
    }

    /// Whether both kernels are the same registration
    /// (`_equalsBoxedAndUnboxed`).
    pub fn equals_boxed_and_unboxed(&self, other: &KernelFunction) -> bool {
        let boxed_eq = match (&self.boxed, &other.boxed) {
            (Some(a), Some(b)) => a.same_as(b),
            (None, None) => true,
            _ => false,
        };
        let unboxed_eq = match (self.any_unboxed(), other.any_unboxed()) {
            (Some(a), Some(b)) => Arc::ptr_eq(&a.functor, &b.functor),
            (None, None) => true,
            _ => false,
        };
        boxed_eq && unboxed_eq
    }

    /// `callBoxed`: runs the kernel on `stack` (arguments in, returns out).
    #[doc(alias = "callBoxed")]
    #[inline(always)]
    pub fn call_boxed(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        stack: &mut Stack,
    ) -> Result<()> {
        // SAFETY: the entries come from `self`, alive for the call.
        unsafe { self.entries.call_boxed(op, keys, stack) }
    }

    /// `call<Return, Args...>`: a typed call, in PyTorch's order
    /// ([`KernelEntries::call_unchecked`]): arguments holding SymInts go to
    /// the SymInt entry, else to the plain one with their SymInts unpacked;
    /// others to the plain entry; otherwise the arguments are boxed, the
    /// boxed entry runs and the returns are unboxed. A signature mismatch
    /// with the entry taken is an error, never undefined behaviour.
    #[inline]
    pub fn call<Args: ArgList, R: KernelReturn>(
        &self,
        op: &dyn BoxedOperator,
        keys: DispatchKeySet,
        args: Args,
    ) -> Result<R> {
        let taken = match (&self.sym_unboxed, &self.unboxed) {
            (Some(u), _) if Args::HAS_SYMINT => Some((u, CppSignature::of::<Args, R>())),
            (_, Some(u)) => Some((u, CppSignature::of::<Args::Concrete, R>())),
            _ => None,
        };
        if let Some((u, expected)) = taken {
            if u.signature != expected {
                return Err(wrong_signature(op, u.signature, expected));
            }
        }
        // SAFETY: the entries come from `self`, alive for the call; the
        // unboxed entry's signature was checked just above.
        unsafe { self.entries.call_unchecked(op, keys, args) }
    }
}

fn wrong_signature(op: &dyn BoxedOperator, correct: CppSignature, called: CppSignature) -> Error {
    Error::runtime(format!(
        "\nTried to access or call an operator with a wrong signature.\n  operator: {}\n  correct signature:  {}\n  accessed/called as: {}\nThis likely happened in a call to OperatorHandle::typed<Return (Args...)>(). Please make sure that the function signature matches the signature in the operator registration call.",
        op.operator_name(),
        correct.name(),
        called.name()
    ))
}

impl From<BoxedKernel> for KernelFunction {
    fn from(boxed: BoxedKernel) -> KernelFunction {
        KernelFunction::make_from_boxed_kernel(boxed)
    }
}

impl fmt::Debug for KernelFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelFunction[{}]", self.dump_state().trim_end())
    }
}

/// PyTorch's inferred schema text for a kernel of this signature:
/// `(Tensor _0, int _1) -> Tensor _0`.
pub fn infer_schema<Args: ArgList, R: KernelReturn>() -> String {
    let args: Vec<String> = Args::schema_types()
        .into_iter()
        .enumerate()
        .map(|(i, t)| format!("{t} _{i}"))
        .collect();
    let rets: Vec<String> = R::schema_types()
        .into_iter()
        .enumerate()
        .map(|(i, t)| format!("{t} _{i}"))
        .collect();
    let rets = if rets.len() == 1 {
        rets[0].clone()
    } else {
        format!("({})", rets.join(", "))
    };
    format!("({}) -> {}", args.join(", "), rets)
}

/// A tuple of kernel arguments, as a typed call passes them.
///
/// # Safety
///
/// `Static` must be the tuple of the elements' [`KernelArg::Static`] types, and
/// `call_unboxed` must call `entry` as a function of exactly the tuple's
/// element types (after the functor pointer and the key set).
pub unsafe trait ArgList: Sized {
    /// The tuple of the elements' `'static` twins.
    type Static: 'static;
    /// The tuple of the elements' concrete twins (SymInts as integers).
    type Concrete: ArgList;
    /// Number of arguments.
    const LEN: usize;
    /// Whether an element holds SymInts (`fn_has_symint`).
    const HAS_SYMINT: bool;
    /// Boxes every argument onto the stack, in order.
    fn push_all(&self, stack: &mut Stack);
    /// The schema types of the arguments.
    fn schema_types() -> Vec<String>;
    /// The union of the arguments' dispatch keys.
    fn dispatch_key_set(&self) -> DispatchKeySet;
    /// Calls an erased unboxed entry with these arguments.
    ///
    /// # Safety
    ///
    /// `entry` must be a trampoline made for a functor of signature
    /// `(Self's elements) -> Result<R>` (up to lifetimes) and `functor` a
    /// pointer to that functor.
    unsafe fn call_unboxed<R: KernelReturn>(
        self,
        entry: fn(),
        functor: *const (),
        keys: DispatchKeySet,
    ) -> Result<R>;
    /// Calls an erased unboxed entry of plain integers with these
    /// arguments' SymInts unpacked ([`KernelArg::unpack`]).
    ///
    /// # Safety
    ///
    /// As for [`call_unboxed`](Self::call_unboxed), for a functor of
    /// signature `(Self::Concrete's elements) -> Result<R>`.
    unsafe fn call_unboxed_concrete<R: KernelReturn>(
        self,
        entry: fn(),
        functor: *const (),
        keys: DispatchKeySet,
    ) -> Result<R>;
}

/// A Rust kernel: a function or closure whose argument types are
/// [`KernelArg`]s and which returns `Result<R>` for a [`KernelReturn`] `R`,
/// optionally taking the `DispatchKeySet` first. `Marker` distinguishes the
/// two shapes and is inferred.
pub trait KernelFunctor<Marker>: Send + Sync + 'static {
    /// The argument tuple.
    type Args: ArgList;
    /// The return type.
    type Ret: KernelReturn;
    /// The erased trampoline for this functor.
    fn unboxed_entry() -> fn();
    /// The boxed wrapper's body: pop the arguments, call, push the returns.
    fn call_boxed(&self, keys: DispatchKeySet, stack: &mut Stack) -> Result<()>;
}

/// Marker: a kernel without a `DispatchKeySet` parameter.
pub struct Plain<T>(PhantomData<T>);

/// Marker: a kernel whose first parameter is the `DispatchKeySet`.
pub struct WithKeySet<T>(PhantomData<T>);

macro_rules! arities {
    ($n:expr; $($a:ident $h:ident),*) => {
        arg_list!($n; $($a),*);
        kernel_functor!(Plain []; $n; $($a $h),*);
        kernel_functor!(WithKeySet [DispatchKeySet]; $n; $($a $h),*);
    };
}

/// `ArgList` for the tuple of `$a`s.
macro_rules! arg_list {
    ($n:expr; $($a:ident),*) => {
        // SAFETY: `Static` is the tuple of the elements' twins, and
        // `call_unboxed` calls `entry` with exactly the tuple's element types.
        unsafe impl<$($a: KernelArg),*> ArgList for ($($a,)*) {
            type Static = ($($a::Static,)*);
            type Concrete = ($($a::Concrete,)*);
            const LEN: usize = $n;
            const HAS_SYMINT: bool = false $(|| $a::HAS_SYMINT)*;
            #[allow(non_snake_case, unused_variables)]
            fn push_all(&self, stack: &mut Stack) {
                let ($($a,)*) = self;
                $(stack.push($a.to_ivalue());)*
            }
            fn schema_types() -> Vec<String> {
                vec![$($a::schema_type()),*]
            }
            #[allow(non_snake_case, unused_variables)]
            #[inline(always)]
            fn dispatch_key_set(&self) -> DispatchKeySet {
                let ($($a,)*) = self;
                DispatchKeySet::EMPTY $(| $a.dispatch_key_set())*
            }
            #[allow(non_snake_case)]
            #[inline(always)]
            unsafe fn call_unboxed<R: KernelReturn>(
                self,
                entry: fn(),
                functor: *const (),
                keys: DispatchKeySet,
            ) -> Result<R> {
                let entry: fn(*const (), DispatchKeySet, $($a),*) -> Result<R> =
                    // SAFETY: the caller guarantees `entry` is a trampoline of
                    // exactly this type (up to lifetimes, which do not exist
                    // at run time; the functor accepts every lifetime).
                    unsafe { std::mem::transmute::<fn(), fn(*const (), DispatchKeySet, $($a),*) -> Result<R>>(entry) };
                let ($($a,)*) = self;
                entry(functor, keys, $($a),*)
            }
            #[allow(non_snake_case, unused_variables)]
            #[inline(always)]
            unsafe fn call_unboxed_concrete<R: KernelReturn>(
                self,
                entry: fn(),
                functor: *const (),
                keys: DispatchKeySet,
            ) -> Result<R> {
                let ($($a,)*) = self;
                $(let $a = $a.unpack()?;)*
                let entry: fn(*const (), DispatchKeySet, $(<$a::Concrete as KernelArg>::Item<'_>),*) -> Result<R> =
                    // SAFETY: the caller guarantees `entry` is a trampoline
                    // of the concrete twins' types (up to lifetimes).
                    unsafe { std::mem::transmute::<fn(), fn(*const (), DispatchKeySet, $(<$a::Concrete as KernelArg>::Item<'_>),*) -> Result<R>>(entry) };
                entry(functor, keys, $(<$a as KernelArg>::concrete(&$a)),*)
            }
        }
    };
}

/// `KernelFunctor` for functions of the `$a`s, taking the dispatch key set
/// first when `$kind` is `WithKeySet` (its type in brackets).
macro_rules! kernel_functor {
    ($kind:ident [$($key_ty:ty)?]; $n:expr; $($a:ident $h:ident),*) => {
        impl<F, R, $($a: KernelArg),*> KernelFunctor<$kind<(R, $($a,)*)>> for F
        where
            F: Fn($($key_ty,)? $($a),*) -> Result<R>
                + for<'a> Fn($($key_ty,)? $($a::Item<'a>),*) -> Result<R>
                + Send
                + Sync
                + 'static,
            R: KernelReturn,
        {
            type Args = ($($a,)*);
            type Ret = R;

            fn unboxed_entry() -> fn() {
                #[allow(non_snake_case, unused_variables, clippy::too_many_arguments)]
                fn trampoline<F, R, $($a),*>(
                    functor: *const (),
                    keys: DispatchKeySet,
                    $($a: $a),*
                ) -> Result<R>
                where
                    F: Fn($($key_ty,)? $($a),*) -> Result<R>,
                {
                    // SAFETY: `functor` is the data pointer of the `Arc<F>`
                    // this trampoline was registered with, alive for the call.
                    let f = unsafe { &*(functor as *const F) };
                    kernel_functor!(@call $kind, f, keys, $($a),*)
                }
                let entry: fn(*const (), DispatchKeySet, $($a),*) -> Result<R> = trampoline::<F, R, $($a),*>;
                // SAFETY: fn pointers of any signature have the same size and
                // representation; `call_unboxed` transmutes back after the
                // signature check.
                unsafe { std::mem::transmute::<fn(*const (), DispatchKeySet, $($a),*) -> Result<R>, fn()>(entry) }
            }

            #[allow(non_snake_case, unused_mut, unused_variables, unused_assignments)]
            #[inline(always)]
            fn call_boxed(&self, keys: DispatchKeySet, stack: &mut Stack) -> Result<()> {
                let base = stack.len().checked_sub($n).ok_or_else(|| {
                    Error::internal(format!("stack underflow: a kernel of {} arguments was called with {} values", $n, stack.len()))
                })?;
                // Take each argument out of its slot (leaving `None`), then
                // cut the stack; moving the values out one by one keeps them
                // in registers (a `Drain` is copied around as a block).
                let mut slot = base;
                $(let $h = $a::holder_from_ivalue(std::mem::take(&mut stack[slot]))?; slot += 1;)*
                debug_assert_eq!(slot, stack.len());
                debug_assert!(stack[base..].iter().all(|v| matches!(v, crate::ivalue::IValue::None)));
                // SAFETY: every slot from `base` on was just taken, leaving
                // `IValue::None`, which owns nothing: forgetting the slots
                // leaks nothing. (`truncate` would call `drop_in_place` on
                // each, out of line.)
                unsafe { stack.set_len(base) };
                let ret = kernel_functor!(@call $kind, (self), keys, $($a::borrow(&$h)),*)?;
                ret.push_onto(stack);
                Ok(())
            }
        }
    };
    (@call Plain, $f:expr, $keys:ident, $($arg:expr),*) => { $f($($arg),*) };
    (@call WithKeySet, $f:expr, $keys:ident, $($arg:expr),*) => { $f($keys, $($arg),*) };
}

arities!(0;);
arities!(1; A0 h0);
arities!(2; A0 h0, A1 h1);
arities!(3; A0 h0, A1 h1, A2 h2);
arities!(4; A0 h0, A1 h1, A2 h2, A3 h3);
arities!(5; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4);
arities!(6; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5);
arities!(7; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5, A6 h6);
arities!(8; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5, A6 h6, A7 h7);
arities!(9; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5, A6 h6, A7 h7, A8 h8);
arities!(10; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5, A6 h6, A7 h7, A8 h8, A9 h9);
arities!(11; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5, A6 h6, A7 h7, A8 h8, A9 h9, A10 h10);
arities!(12; A0 h0, A1 h1, A2 h2, A3 h3, A4 h4, A5 h5, A6 h6, A7 h7, A8 h8, A9 h9, A10 h10, A11 h11);
