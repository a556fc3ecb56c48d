//! Operator schemas: PyTorch's `FunctionSchema` model, its parser
//! (`torch/csrc/jit/frontend/function_schema_parser.cpp` and
//! `schema_type_parser.cpp`) and its canonical printer
//! (`operator<<(ostream&, const FunctionSchema&)`), following PyTorch 2.15.
//!
//! ```
//! use aten_boxing::schema::FunctionSchema;
//!
//! let s = FunctionSchema::parse(
//!     "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1]) ->Tensor",
//! )
//! .unwrap();
//! assert_eq!(
//!     s.to_string(),
//!     "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1]) -> Tensor"
//! );
//! assert_eq!(s.arguments()[3].n(), Some(2));
//! let err = FunctionSchema::parse("aten::f(int x) - Tensor").unwrap_err();
//! assert!(err.message().starts_with("expected arrow but found '-' here:"));
//! ```
//!
//! Modules, one job each:
//! - `lexer` — tokens, as PyTorch's lexer makes them;
//! - `type_parser` / `parser` — types and alias annotations / declarations
//!   and defaults;
//! - `types` ([`Type`]), `alias_info` ([`AliasInfo`]), `argument`
//!   ([`Argument`]), `function_schema` ([`FunctionSchema`]),
//!   `default_value` ([`DefaultValue`]) — the model and its printing;
//! - `number`, `float_format`, `string_literal`, `device`, `error_report` —
//!   the C library and `c10` behaviours the parser and printer rely on;
//! - `name`, `word` — short names stored inline and short identifiers as
//!   integers, for a parser that barely allocates.
//!
//! Where PyTorch 2.15 differs from older PyTorch sources, the 2.15 oracle
//! data decides: `Dimname` is no longer a type, and alias sets print in
//! descending order (`Tensor(a|b)` prints as `Tensor(b|a)`).

mod alias_info;
mod argument;
mod default_value;
mod device;
mod error_report;
mod float_format;
mod function_schema;
mod lexer;
mod name;
mod number;
mod parser;
mod string_literal;
mod type_parser;
mod types;
mod word;

pub use alias_info::{AliasInfo, AliasSet};
pub use argument::Argument;
pub use default_value::DefaultValue;
pub use function_schema::{FunctionSchema, OperatorName, SchemaOrName};
pub use types::Type;

/// Parses a schema or a bare operator name (`aten::add.Tensor`): PyTorch's
/// `torch::jit::parseSchemaOrName`.
///
/// ```
/// use aten_boxing::schema::{parse_schema_or_name, SchemaOrName};
///
/// assert!(matches!(parse_schema_or_name("aten::add.Tensor"), Ok(SchemaOrName::Name(_))));
/// assert!(matches!(parse_schema_or_name("aten::f() -> ()"), Ok(SchemaOrName::Schema(_))));
/// ```
pub fn parse_schema_or_name(text: &str) -> c10_core::Result<SchemaOrName> {
    parser::parse_schema_or_name(text)
}
