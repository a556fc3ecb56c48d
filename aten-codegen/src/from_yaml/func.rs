//! The `func:` key: the schema text, its namespace, the schema rules of
//! torchgen's `FunctionSchema.__post_init__`, and what the rules of other
//! keys need to know about the schema (its kind, whether it is a factory or
//! random).

use aten_boxing::schema::{Argument, FunctionSchema, Type};

use super::fields::{Checker, Fields};
use crate::arguments::{Arguments, SchemaKind};
use crate::operator_name::BaseOperatorName;
use crate::yaml_loader::Node;

/// An entry's parsed `func:` and what follows from it.
pub(super) struct Func {
    /// The namespace written before `::`, else `aten`.
    pub(super) namespace: String,
    /// The parsed schema.
    pub(super) func: FunctionSchema,
    /// The `func:` text as written.
    pub(super) func_text: String,
    /// The line of the `func:` key.
    pub(super) line: u32,
    /// The name, with its in-place and dunder markers.
    pub(super) base_name: BaseOperatorName,
    /// Functional, in-place, out, ...
    pub(super) kind: SchemaKind,
    /// Takes `TensorOptions` and no tensor: a factory function.
    pub(super) factory: bool,
    /// Must be tagged `nondeterministic_seeded` ([`is_random`]).
    pub(super) random: bool,
}

/// Reads and checks `func:`. `None` (with the problem reported) when it is
/// missing or does not parse: the entry then yields no function.
pub(super) fn parse_func(
    c: &mut Checker<'_>,
    entry: &Node<'_>,
    fields: &Fields<'_, '_>,
) -> Option<Func> {
    let Some(func_field) = fields.get("func") else {
        c.error(entry.line(), "function entry without 'func'");
        return None;
    };
    let func_line = func_field.line;
    let (func_text, _) = c.string(Some(func_field), "func")?;
    let parsed = split_namespace(&func_text).and_then(|(ns, schema_text)| {
        let offset = func_text.len() - schema_text.len();
        let schema = FunctionSchema::parse(schema_text).map_err(|e| {
            format!(
                "could not parse func: {}",
                condense_parser_message(e.message(), offset)
            )
        })?;
        Ok((ns.unwrap_or("aten").to_string(), schema))
    });
    let (namespace, func) = match parsed {
        Ok(p) => p,
        Err(message) => {
            c.error(func_line, message);
            return None;
        }
    };
    let base_name = match BaseOperatorName::parse(func.name()) {
        Ok(b) => b,
        Err(message) => {
            c.error(func_line, message);
            return None;
        }
    };
    if func.is_vararg() || func.is_varret() {
        c.error(func_line, "native functions cannot take or return '...'");
    }
    let args = Arguments::new(&func);
    let out_last = args.check();
    if let Err(message) = &out_last {
        c.error(func_line, message.clone());
    }
    let kind = match args.kind(&base_name) {
        Ok(k) => k,
        Err(message) => {
            c.error(func_line, message);
            SchemaKind::Out
        }
    };
    if out_last.is_ok() {
        check_schema(c, func_line, &func, &base_name, &args, kind);
    }
    let factory = args.tensor_options().is_some() && !args.has_tensor_arg();
    let random = is_random(&func, &args);
    Some(Func {
        namespace,
        func_text,
        line: func_line,
        base_name,
        kind,
        factory,
        random,
        func,
    })
}

/// Splits `ns::` off a `func:` text. Only one level of namespace is allowed.
fn split_namespace(text: &str) -> Result<(Option<&str>, &str), String> {
    let name_end = text.find('(').unwrap_or(text.len());
    let name = &text[..name_end];
    match name.split_once("::") {
        None => Ok((None, text)),
        Some((ns, rest)) if !rest.contains("::") && !ns.trim().is_empty() => {
            Ok((Some(ns.trim()), &text[ns.len() + 2..]))
        }
        Some(_) => Err(format!(
            "'func' name '{}' has more than one level of namespace",
            name.trim()
        )),
    }
}

/// The schema parser's message on one line. PyTorch's messages end with
/// the source and a `~~~ <--- HERE` marker under the fault; that becomes
/// `at column N of func: 'TOKEN'` (columns 1-based, counted in the `func:`
/// text, whose first `offset` bytes were not given to the parser).
fn condense_parser_message(message: &str, offset: usize) -> String {
    let lines: Vec<&str> = message.lines().collect();
    let marker = lines.iter().position(|l| l.contains("<--- HERE"));
    let (text, at) = match marker {
        Some(k) if k >= 1 => {
            let source = lines[k - 1];
            let caret = lines[k];
            let at = caret.find('~').map(|col| {
                let len = caret[col..].chars().take_while(|&c| c == '~').count();
                let token = source.get(col..col + len).unwrap_or("");
                format!(" at column {} of func: '{token}'", offset + col + 1)
            });
            (lines[..k - 1].join(" "), at)
        }
        _ => (lines.join(" "), None),
    };
    let text = text.trim();
    let text = text
        .strip_suffix(" here:")
        .or_else(|| text.strip_suffix(':'))
        .unwrap_or(text)
        .trim_end();
    format!("{text}{}", at.unwrap_or_default())
}

/// torchgen's test for functions that must be tagged
/// `nondeterministic_seeded`: `rand` in the name, `dropout` in the name or
/// an argument name (backward functions and `_cudnn_init_dropout_state`
/// excepted), or a `Generator` argument. The `_philox_*` functions are
/// excepted too: they are deterministic functions of their `key` tensor,
/// and PyTorch 2.15 leaves `_philox_randint_` untagged.
fn is_random(func: &FunctionSchema, args: &Arguments<'_>) -> bool {
    let full = func.operator_name().to_string();
    if full.starts_with("_philox_") {
        return false;
    }
    let dropout = full.contains("dropout")
        || func
            .arguments()
            .iter()
            .any(|a| a.name().contains("dropout"));
    full.contains("rand")
        || (dropout && !full.contains("backward") && func.name() != "_cudnn_init_dropout_state")
        || args.has_generator_arg()
}

/// The schema rules of torchgen's `FunctionSchema.__post_init__`.
fn check_schema(
    c: &mut Checker<'_>,
    line: u32,
    func: &FunctionSchema,
    base_name: &BaseOperatorName,
    args: &Arguments<'_>,
    kind: SchemaKind,
) {
    let mut rules = SchemaRules {
        c,
        line,
        func,
        args,
    };
    rules.out_arguments_are_returned();
    rules.mutable_returns_are_aliased();
    rules.out_arguments_match_returns();
    if base_name.is_inplace() {
        rules.inplace_returns_self();
    }
    rules.functional_markers(kind);
}

/// One schema under the rules of `__post_init__`: the schema, its
/// arguments, and where a broken rule is reported.
struct SchemaRules<'r, 'c, 'a> {
    c: &'r mut Checker<'c>,
    line: u32,
    func: &'r FunctionSchema,
    args: &'r Arguments<'a>,
}

impl SchemaRules<'_, '_, '_> {
    /// Reports a broken rule at the `func:` line.
    fn error(&mut self, message: impl Into<String>) {
        self.c.error(self.line, message);
    }

    /// The ith out argument is the ith return (the same alias).
    fn out_arguments_are_returned(&mut self) {
        let returns = self.func.returns();
        if self
            .args
            .out()
            .iter()
            .zip(returns)
            .any(|(arg, ret)| arg.alias_info() != ret.alias_info())
        {
            self.error(
                "Out arguments must have matching return Tensor; furthermore, the ith-argument needs to correspond to the ith return",
            );
        }
    }

    /// Mutable positional arguments are not returned; returns are all
    /// mutable or all immutable, and mutable ones alias `out` or `self`.
    fn mutable_returns_are_aliased(&mut self) {
        let (func, args) = (self.func, self.args);
        let returns = func.returns();
        let returned = |a: &Argument| returns.iter().any(|r| r.alias_info() == a.alias_info());
        if args
            .post_self_positional()
            .iter()
            .any(|a| a.is_write() && returned(a))
        {
            self.error(format!("If you have a schema with mutable positional args, we expect them to not be returned. schema: {func}"));
        }
        let mutable_returns = returns.iter().filter(|r| r.is_write()).count();
        if mutable_returns > 0 && mutable_returns < returns.len() {
            self.error(format!("NativeFunctions must have either only mutable returns, or only immutable returns. Found: {func}"));
        }
        let out_or_self: Vec<&Argument> = args.out().iter().chain(args.self_arg()).collect();
        if returns
            .iter()
            .filter(|r| r.is_write())
            .any(|r| !out_or_self.iter().any(|a| a.alias_info() == r.alias_info()))
        {
            self.error(
                "All mutable returns must be aliased either to a keyword argument, or to \"self\". Did you forget to mark an out argument as keyword-only?",
            );
        }
    }

    /// As many returns as out tensors (`_scratch_` ones aside), none for
    /// out tensor lists.
    fn out_arguments_match_returns(&mut self) {
        let (out, returns) = (self.args.out(), self.func.returns());
        if out.is_empty() {
            return;
        }
        if out.iter().any(|a| *a.real_type() != Type::Tensor) {
            if !returns.is_empty() {
                self.error(
                    "out= ops that accept tensor lists as out arguments are expected to have no return type (since you can't do method chaining on them)",
                );
            }
        } else {
            let counted = out
                .iter()
                .filter(|a| !a.name().starts_with("_scratch_"))
                .count();
            if counted != returns.len() {
                self.error(
                    "Must return as many arguments as there are out arguments, or no return at all",
                );
            }
        }
    }

    /// An in-place function writes `self` and returns it (a `Tensor`
    /// self) or nothing.
    fn inplace_returns_self(&mut self) {
        let returns = self.func.returns();
        match self.args.self_arg() {
            Some(s) if s.is_write() => {
                if *s.real_type() == Type::Tensor {
                    if !(returns.len() == 1 && returns[0].alias_info() == s.alias_info()) {
                        self.error(
                            "in-place functions with a Tensor self must return self (Tensor(a!))",
                        );
                    }
                } else if !returns.is_empty() {
                    self.error(
                        "in-place functions whose self is not a Tensor must return nothing",
                    );
                }
            }
            _ => self.error(
                "in-place functions (name ending in '_') must take a mutable self argument (Tensor(a!) self)",
            ),
        }
    }

    /// `TensorOptions` arguments and a `functional` overload name belong
    /// to functional operators.
    fn functional_markers(&mut self, kind: SchemaKind) {
        let func = self.func;
        if self.args.tensor_options().is_some() && kind != SchemaKind::Functional {
            self.error(format!("Found an operator that is not functional or out variant, but has tensor options arguments. This is not allowed- tensor options arguments are only allowed for factory functions. schema: {func}"));
        }
        if func.overload_name().contains("functional") && kind != SchemaKind::Functional {
            self.error(format!("Found an operator that is not functional, but its overload contains the string 'functional'. This is a special keyword in the codegen, please use a different overload name. schema: {func}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parser_messages_on_one_line() {
        let e = FunctionSchema::parse("f(Tensor self, int x=) -> Tensor").unwrap_err();
        assert_eq!(
            condense_parser_message(e.message(), 0),
            "expected number but found ')' at column 22 of func: ')'"
        );
        let e = FunctionSchema::parse("f(Tensr self) -> Tensor").unwrap_err();
        let m = condense_parser_message(e.message(), 6);
        assert!(m.starts_with("unknown type specifier."), "{m}");
        assert!(m.ends_with(" at column 9 of func: 'Tensr'"), "{m}");
        assert_eq!(condense_parser_message("plain", 0), "plain");
    }

    #[test]
    fn namespaces() {
        assert_eq!(split_namespace("f() -> ()"), Ok((None, "f() -> ()")));
        assert_eq!(
            split_namespace("quantized::f() -> ()"),
            Ok((Some("quantized"), "f() -> ()"))
        );
        assert!(split_namespace("a::b::f() -> ()").is_err());
    }
}
