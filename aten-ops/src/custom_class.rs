//! Custom classes (TorchBind, PyTorch's `torch::class_`): a Rust type
//! registered as `__torch__.torch.classes.<ns>.<Name>` with a constructor
//! and methods. Instances travel in [`IValue::Object`]; schemas naming the
//! class type-check against it; operators taking instances dispatch through
//! the normal path and are `TorchBindOpOverload`s in `torch.ops`.
//!
//! The registry is process-wide, as PyTorch's is. Methods receive the
//! instance by shared reference: a class with state mutates it through its
//! own synchronisation (atomics, a `Mutex`), which keeps instances shareable
//! between threads.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use aten_boxing::ivalue::Object;
use aten_boxing::schema::{FunctionSchema, Type};
use aten_boxing::IValue;
use c10_core::{Error, Result};

type Init = Arc<dyn Fn(&[IValue]) -> Result<Box<dyn Any + Send + Sync>> + Send + Sync>;
type Method = Arc<dyn Fn(&dyn Any, &[IValue]) -> Result<IValue> + Send + Sync>;

/// A registered class (`ClassType` of a `torch::class_`).
pub struct ClassType {
    qualified_name: String,
    init: Option<Init>,
    methods: HashMap<String, Method>,
}

impl ClassType {
    /// `__torch__.torch.classes.<ns>.<Name>`.
    pub fn qualified_name(&self) -> &str {
        &self.qualified_name
    }

    /// The method names, sorted.
    pub fn method_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.methods.keys().cloned().collect();
        names.sort();
        names
    }

    /// `torch.classes.<ns>.<Name>(args...)`: runs the constructor.
    pub fn instantiate(&self, args: &[IValue]) -> Result<IValue> {
        let Some(init) = &self.init else {
            return Err(Error::runtime(format!(
                "Method '__init__' is not defined for {}.",
                self.qualified_name
            )));
        };
        let value = init(args)?;
        Ok(IValue::Object(Arc::new(Object::from_boxed(
            self.qualified_name.clone(),
            value,
        ))))
    }

    /// Calls method `name` on `object` (an instance of this class).
    pub fn call_method(&self, object: &IValue, name: &str, args: &[IValue]) -> Result<IValue> {
        let IValue::Object(obj) = object else {
            return Err(Error::type_error(format!(
                "expected an instance of {} but got {}",
                self.qualified_name,
                object.type_name()
            )));
        };
        if obj.class_name() != self.qualified_name {
            return Err(Error::type_error(format!(
                "expected an instance of {} but got an instance of {}",
                self.qualified_name,
                obj.class_name()
            )));
        }
        let Some(method) = self.methods.get(name) else {
            return Err(Error::runtime(format!("Method '{name}' is not defined.")));
        };
        method(obj.value(), args)
    }
}

impl std::fmt::Debug for ClassType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClassType({})", self.qualified_name)
    }
}

/// The process-wide class registry (`customClasses()`).
pub struct ClassRegistry {
    classes: RwLock<HashMap<String, Arc<ClassType>>>,
}

/// The registry.
pub fn classes() -> &'static ClassRegistry {
    static REGISTRY: OnceLock<ClassRegistry> = OnceLock::new();
    REGISTRY.get_or_init(|| ClassRegistry {
        classes: RwLock::new(HashMap::new()),
    })
}

impl ClassRegistry {
    /// The class `ns.Name` (`torch.classes.ns.Name`).
    pub fn get(&self, ns: &str, name: &str) -> Result<Arc<ClassType>> {
        self.by_qualified_name(&qualified_name(ns, name))
            .ok_or_else(|| {
                Error::runtime(format!(
                    "Unknown custom class type {ns}.{name}. Please ensure it is registered."
                ))
            })
    }

    /// The class of that qualified name, if registered.
    pub fn by_qualified_name(&self, qualified: &str) -> Option<Arc<ClassType>> {
        self.classes
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(qualified)
            .cloned()
    }

    /// Calls method `name` on `object`, whatever its class.
    pub fn call_method(&self, object: &IValue, name: &str, args: &[IValue]) -> Result<IValue> {
        let IValue::Object(obj) = object else {
            return Err(Error::type_error(format!(
                "'{}' object has no attribute or method '{name}'.",
                object.type_name()
            )));
        };
        let class = self.by_qualified_name(obj.class_name()).ok_or_else(|| {
            Error::runtime(format!(
                "Unknown custom class type {}. Please ensure it is registered.",
                obj.class_name()
            ))
        })?;
        class.call_method(object, name, args)
    }

    fn register(&self, class: ClassType) -> Result<Arc<ClassType>> {
        let mut classes = self.classes.write().unwrap_or_else(|p| p.into_inner());
        if classes.contains_key(&class.qualified_name) {
            return Err(Error::runtime(format!(
                "Custom class with name {} is already registered. Ensure that registration with torch::class_ is only called once.",
                class.qualified_name
            )));
        }
        let class = Arc::new(class);
        classes.insert(class.qualified_name.clone(), Arc::clone(&class));
        Ok(class)
    }
}

fn qualified_name(ns: &str, name: &str) -> String {
    format!("__torch__.torch.classes.{ns}.{name}")
}

/// Builds a class for the Rust type `T` (`torch::class_<T>(ns, name)`);
/// [`register`](Self::register) adds it to the registry.
pub struct CustomClassBuilder<T> {
    class: ClassType,
    _type: std::marker::PhantomData<fn() -> T>,
}

/// `torch::class_<T>(ns, name)`.
pub fn class_<T: Any + Send + Sync>(ns: &str, name: &str) -> CustomClassBuilder<T> {
    CustomClassBuilder {
        class: ClassType {
            qualified_name: qualified_name(ns, name),
            init: None,
            methods: HashMap::new(),
        },
        _type: std::marker::PhantomData,
    }
}

impl<T: Any + Send + Sync> CustomClassBuilder<T> {
    /// `def(torch::init<...>())`: the constructor, from the call's
    /// arguments.
    pub fn def_init(
        mut self,
        init: impl Fn(&[IValue]) -> Result<T> + Send + Sync + 'static,
    ) -> Self {
        self.class.init = Some(Arc::new(move |args| {
            Ok(Box::new(init(args)?) as Box<dyn Any + Send + Sync>)
        }));
        self
    }

    /// `def(name, method)`: a method taking the instance and the arguments.
    pub fn def(
        mut self,
        name: &str,
        method: impl Fn(&T, &[IValue]) -> Result<IValue> + Send + Sync + 'static,
    ) -> Self {
        let qualified = self.class.qualified_name.clone();
        self.class.methods.insert(
            name.to_string(),
            Arc::new(move |this, args| match this.downcast_ref::<T>() {
                Some(this) => method(this, args),
                None => Err(Error::internal(format!(
                    "an instance of {qualified} does not hold the class's Rust type"
                ))),
            }),
        );
        self
    }

    /// Registers the class; PyTorch's error when the name is taken.
    pub fn register(self) -> Result<Arc<ClassType>> {
        classes().register(self.class)
    }
}

/// The instance inside `value`, if it is an object holding a `T`.
pub fn downcast_object<T: Any>(value: &IValue) -> Option<&T> {
    match value {
        IValue::Object(o) => o.downcast_ref::<T>(),
        _ => None,
    }
}

/// Checks that every custom class `schema` names is registered (what
/// PyTorch's schema parser checks), with PyTorch's message.
pub fn check_schema_classes(schema: &FunctionSchema) -> Result<()> {
    fn check(ty: &Type) -> Result<()> {
        match ty {
            Type::Class(name) => {
                if classes().by_qualified_name(name).is_none() {
                    let short = name
                        .strip_prefix("__torch__.torch.classes.")
                        .unwrap_or(name);
                    return Err(Error::runtime(format!(
                        "Unknown custom class type {short}. Please ensure it is registered."
                    )));
                }
                Ok(())
            }
            Type::List(t)
            | Type::Optional(t)
            | Type::Future(t)
            | Type::RRef(t)
            | Type::Await(t) => check(t),
            Type::Tuple(ts) | Type::Union(ts) => ts.iter().try_for_each(check),
            Type::Dict(k, v) => check(k).and_then(|()| check(v)),
            _ => Ok(()),
        }
    }
    schema
        .arguments()
        .iter()
        .chain(schema.returns())
        .try_for_each(|a| check(a.ty()))
}
