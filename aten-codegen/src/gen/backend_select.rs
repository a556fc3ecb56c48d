//! BackendSelect kernels for factory operators: operators with tensor
//! options (`dtype`, `layout`, `device`, `pin_memory`) and no tensor
//! arguments have no tensor to dispatch on, so their BackendSelect kernel
//! picks the backend from the `device` argument and redispatches there.

use std::fmt::Write;

use aten_boxing::schema::{FunctionSchema, Type};

use super::names::{function_name, ident, with_suffix};
use super::rust_types::{argument_type, returns_type};

/// Whether `schema` is a factory operator: a `Device?` argument named
/// `device` and no tensor arguments.
pub fn is_factory(schema: &FunctionSchema) -> bool {
    let has_device = schema.arguments().iter().any(|a| {
        a.name() == "device" && matches!(a.real_type(), Type::Optional(t) if **t == Type::Device)
    });
    let has_tensor = schema.arguments().iter().any(|a| {
        let ty = a.real_type();
        *ty == Type::Tensor
            || matches!(ty, Type::Optional(t) if **t == Type::Tensor)
            || matches!(ty, Type::List(t) if **t == Type::Tensor)
    });
    has_device && !has_tensor
}

/// The BackendSelect kernel of a factory operator, and its registration name.
pub fn render(schema: &FunctionSchema) -> Result<(String, String), String> {
    let base = schema.name().rsplit("::").next().unwrap_or(schema.name());
    let name = function_name(base, schema.overload_name());
    let kernel = with_suffix(&name, "backend_select");
    let op_fn = with_suffix(&name, "op");
    let ret = returns_type(schema.returns())?;
    let mut params = String::new();
    let mut args = String::new();
    for a in schema.arguments() {
        let _ = write!(params, ", {}: {}", ident(a.name()), argument_type(a)?);
        let _ = write!(args, "{},", ident(a.name()));
    }
    let code = format!(
        "/// BackendSelect kernel of `{schema}`.\n\
         pub fn {kernel}(_keys: DispatchKeySet{params}) -> Result<{ret}> {{\n\
             let backend = device.unwrap_or(Device::CPU).device_type().backend_component();\n\
             let keys = DispatchKeySet::from_key(backend.dense_key());\n\
             ops::{op_fn}()?.redispatch(keys, ({args}))\n\
         }}\n"
    );
    let op = schema.operator_name();
    let short = op.name().rsplit("::").next().unwrap_or(op.name());
    let registered = if op.overload_name().is_empty() {
        short.to_string()
    } else {
        format!("{short}.{}", op.overload_name())
    };
    Ok((code, registered))
}
