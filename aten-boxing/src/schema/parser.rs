//! The schema parser (PyTorch's `torch/csrc/jit/frontend/function_schema_parser.cpp`):
//! operator names, argument and return lists, `*` and `...`, static list
//! sizes, and default values, with PyTorch's checks and error messages.

use c10_core::Error;

use super::alias_info::AliasInfo;
use super::argument::Argument;
use super::default_value::DefaultValue;
use super::device::parse_device;
use super::error_report::{Failure, Span};
use super::function_schema::{FunctionSchema, OperatorName, SchemaOrName};
use super::lexer::{Kind, Lexer, ARROW, DOTS, FALSE, NONE, TRUE};
use super::number::{stod, stoll, ConversionError};
use super::string_literal::parse_string_literal;
use super::type_parser::TypeParser;
use super::types::Type;

/// The longest list a scalar default is repeated into (`int[N] x=1`);
/// larger `N` is refused rather than allocated.
pub(crate) const MAX_REPEATED_DEFAULT: usize = 1 << 16;

/// The `IValue` type PyTorch dispatches on when reading a default: only the
/// outermost kind of the (fake) type matters.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum ValueKind {
    Float,
    Complex,
    Int,
    Bool,
    Other,
}

fn value_kind(t: &Type) -> ValueKind {
    match t {
        Type::Float => ValueKind::Float,
        Type::Complex => ValueKind::Complex,
        Type::Int => ValueKind::Int,
        Type::Bool => ValueKind::Bool,
        _ => ValueKind::Other,
    }
}

/// What a number literal was being read as, for the message of a failed
/// conversion.
#[derive(Copy, Clone)]
enum Literal<'a> {
    /// An `int` default (`std::stoll`).
    Int(&'a str),
    /// A static list size, `int[N]` (`std::stoll`).
    ListSize(&'a str),
    /// A `float` default (`std::stod`).
    Float(&'a str),
    /// A `complex` default: the whole literal and the imaginary part read
    /// from it (everything but its last character, `std::stod`).
    Complex { text: &'a str, imag: &'a str },
}

/// The message of a failed `std::sto*` conversion. PyTorch lets the C++
/// exception's `what()`, the bare function name (`stod`, `stoll`), surface
/// as the whole message; this says what was wrong with which literal and
/// keeps the function name at the end, in parentheses.
fn conversion_error(literal: Literal<'_>, e: ConversionError) -> Error {
    use ConversionError::{Invalid, OutOfRange};
    let message = match (literal, e) {
        (Literal::Int(t), OutOfRange) => {
            format!("integer literal '{t}' is out of range for int64 (stoll)")
        }
        (Literal::Int(t), Invalid) => format!("invalid integer literal '{t}' (stoll)"),
        (Literal::ListSize(t), OutOfRange) => {
            format!("list size '{t}' is out of range for int64 (stoll)")
        }
        (Literal::ListSize(t), Invalid) => format!("invalid list size '{t}' (stoll)"),
        (Literal::Float(t), OutOfRange) => {
            format!("floating-point literal '{t}' is out of range for double (stod)")
        }
        (Literal::Float(t), Invalid) => format!("invalid floating-point literal '{t}' (stod)"),
        (Literal::Complex { text, imag }, OutOfRange) => format!(
            "complex literal '{text}': its imaginary part '{imag}' is out of range for double (stod)"
        ),
        (Literal::Complex { text, imag }, Invalid) => format!(
            "invalid complex literal '{text}' (a complex default is an imaginary literal such as 2.5j): its imaginary part '{imag}' is not a floating-point number (stod)"
        ),
    };
    Error::runtime(message)
}

/// PyTorch's text for an `IValue::to*()` on a value of another tag.
fn ivalue_assert(expected: &str) -> Error {
    Error::internal(format!(
        "0 INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/core/ivalue.h\", please report a bug to PyTorch. expected {expected}"
    ))
}

struct SchemaParser<'a> {
    types: TypeParser<'a>,
}

impl<'a> SchemaParser<'a> {
    fn lexer(&mut self) -> &mut Lexer<'a> {
        &mut self.types.lexer
    }

    /// `ns::name.overload`.
    fn parse_name(&mut self) -> Result<OperatorName, Failure> {
        let first = self.lexer().expect(Kind::IDENT)?;
        let mut second = None;
        if self.lexer().next_if(Kind::char(b':'))? {
            self.lexer().expect(Kind::char(b':'))?;
            second = Some(self.lexer().expect(Kind::IDENT)?);
        }
        let mut overload_name = "";
        if self.lexer().next_if(Kind::char(b'.'))? {
            let tok = self.lexer().expect(Kind::IDENT)?;
            overload_name = self.lexer().text(tok);
        }
        // `default` is the attribute of the overload packet that names the
        // overload "", and dunder names are Python attributes.
        if overload_name == "default" || overload_name.starts_with("__") {
            return Err(Box::new(Error::runtime(format!(
                "{overload_name} is not a legal overload name for aten operators"
            ))));
        }
        let first = self.lexer().text(first);
        Ok(match second {
            Some(op) => {
                let op = self.lexer().text(op);
                OperatorName::from_parts(&[first, "::", op], overload_name)
            }
            None => OperatorName::from_parts(&[first], overload_name),
        })
    }

    /// One declaration: a name, or a name with arguments and returns.
    fn parse_declaration(&mut self) -> Result<SchemaOrName, Failure> {
        let name = self.parse_name()?;
        if self.lexer().cur().kind != Kind::char(b'(') {
            return Ok(SchemaOrName::Name(name));
        }
        let mut arguments = Vec::with_capacity(8);
        let mut returns = Vec::new();
        let mut kwarg_only = false;
        let mut is_vararg = false;
        let mut is_varret = false;
        self.lexer().expect(Kind::char(b'('))?;
        if self.lexer().cur().kind != Kind::char(b')') {
            loop {
                if is_vararg {
                    let span = self.lexer().cur().span;
                    return Err(self
                        .lexer()
                        .error_at(span, "... must be the last element of the argument list"));
                }
                if self.lexer().next_if(Kind::char(b'*'))? {
                    kwarg_only = true;
                } else if self.lexer().next_if(DOTS)? {
                    is_vararg = true;
                } else {
                    arguments.push(self.parse_argument(false, kwarg_only)?);
                }
                if !self.lexer().next_if(Kind::char(b','))? {
                    break;
                }
            }
        }
        self.lexer().expect(Kind::char(b')'))?;
        if is_vararg && arguments.iter().any(|a| a.default_value().is_some()) {
            let span = self.lexer().cur().span;
            return Err(self.lexer().error_at(
                span,
                "schemas with vararg (...) can't have default value args",
            ));
        }
        self.lexer().expect(ARROW)?;
        if self.lexer().next_if(DOTS)? {
            is_varret = true;
        } else if self.lexer().cur().kind == Kind::char(b'(') {
            self.lexer().expect(Kind::char(b'('))?;
            if self.lexer().cur().kind != Kind::char(b')') {
                loop {
                    if is_varret {
                        let span = self.lexer().cur().span;
                        return Err(self
                            .lexer()
                            .error_at(span, "... must be the last element of the return list"));
                    }
                    if self.lexer().next_if(DOTS)? {
                        is_varret = true;
                    } else {
                        returns.push(self.parse_argument(true, false)?);
                    }
                    if !self.lexer().next_if(Kind::char(b','))? {
                        break;
                    }
                }
            }
            self.lexer().expect(Kind::char(b')'))?;
        } else {
            returns.push(self.parse_argument(true, false)?);
        }
        FunctionSchema::new(name, arguments, returns, is_vararg, is_varret)
            .map(SchemaOrName::Schema)
            .map_err(Box::new)
    }

    /// One argument or return: type, optional `[N]` (with alias and `?`),
    /// name, default.
    fn parse_argument(&mut self, is_return: bool, kwarg_only: bool) -> Result<Argument, Failure> {
        let (mut real, mut alias_info) = self.types.parse_real_type()?;
        let mut n = None;
        if self.lexer().next_if(Kind::char(b'['))? {
            // A sized list is legal only here, at the argument level.
            real = Type::list(real);
            let tok = self.lexer().expect(Kind::NUMBER)?;
            let text = self.lexer().text(tok);
            let size = stoll(text).map_err(|e| conversion_error(Literal::ListSize(text), e))?;
            // PyTorch keeps N as an int32_t.
            n = Some(size as i32);
            self.lexer().expect(Kind::char(b']'))?;
            let container = self.types.parse_alias_annotation()?;
            alias_info = AliasInfo::list_container(alias_info.take(), container);
            if self.lexer().next_if(Kind::char(b'?'))? {
                real = Type::optional(real);
            }
        }
        let mut name = "";
        let mut default_value = None;
        if is_return {
            let cur = self.lexer().cur();
            if cur.kind == Kind::IDENT {
                self.lexer().next()?;
                name = self.lexer().text(cur);
            }
        } else {
            let tok = self.lexer().expect(Kind::IDENT)?;
            name = self.lexer().text(tok);
            if self.lexer().next_if(Kind::char(b'='))? {
                let fake = real.to_fake();
                let fake = fake.as_ref().unwrap_or(&real);
                default_value = Some(self.parse_default_value(fake, n)?);
            }
        }
        Ok(Argument::with_boxed_alias(
            name,
            real,
            n,
            default_value,
            !is_return && kwarg_only,
            alias_info,
        ))
    }

    /// A string literal's value, or PyTorch's `ErrorReport` for a bad
    /// escape.
    fn string_literal(&mut self, span: Span) -> Result<Vec<u8>, Failure> {
        let bytes = &self.lexer().source()[span.start()..span.end()];
        parse_string_literal(bytes).map_err(|message| self.lexer().error_at(span, message))
    }

    /// `True`, `False`, `None`, a string, a dtype-ish name or a number.
    fn parse_single_constant(&mut self, kind: ValueKind) -> Result<DefaultValue, Failure> {
        let cur = self.lexer().cur();
        match cur.kind {
            TRUE => {
                self.lexer().next()?;
                Ok(DefaultValue::Bool(true))
            }
            FALSE => {
                self.lexer().next()?;
                Ok(DefaultValue::Bool(false))
            }
            NONE => {
                self.lexer().next()?;
                Ok(DefaultValue::None)
            }
            Kind::STRING_LITERAL => {
                self.lexer().next()?;
                Ok(DefaultValue::Str(self.string_literal(cur.span)?))
            }
            Kind::IDENT => {
                self.lexer().next()?;
                // Enum values PyTorch accepts by name: ScalarType::Float (6),
                // ComplexFloat (9), Long (4), Layout::Strided (0),
                // Reduction::Mean (1), MemoryFormat::Contiguous (0).
                let value = match self.lexer().text(cur) {
                    "float" => 6,
                    "complex" => 9,
                    "long" => 4,
                    "strided" => 0,
                    "Mean" => 1,
                    "contiguous_format" => 0,
                    _ => {
                        let span = self.lexer().cur().span;
                        return Err(self.lexer().error_at(span, "invalid numeric default value"));
                    }
                };
                Ok(DefaultValue::Int(value))
            }
            _ => {
                let mut n = String::new();
                if self.lexer().next_if(Kind::char(b'-'))? {
                    n.push('-');
                }
                let tok = self.lexer().expect(Kind::NUMBER)?;
                n.push_str(self.lexer().text(tok));
                if kind == ValueKind::Complex || n.contains('j') {
                    // The last character is dropped as the `j`, whatever it is.
                    let digits = &n[..n.len() - 1];
                    let imag = stod(digits).map_err(|e| {
                        conversion_error(
                            Literal::Complex {
                                text: &n,
                                imag: digits,
                            },
                            e,
                        )
                    })?;
                    Ok(DefaultValue::Complex(0.0, imag))
                } else if kind == ValueKind::Float || n.contains('.') || n.contains('e') {
                    Ok(DefaultValue::Double(
                        stod(&n).map_err(|e| conversion_error(Literal::Float(&n), e))?,
                    ))
                } else {
                    Ok(DefaultValue::Int(
                        stoll(&n).map_err(|e| conversion_error(Literal::Int(&n), e))?,
                    ))
                }
            }
        }
    }

    /// Turns parsed elements into a typed list (PyTorch's `convertToList`).
    fn convert_to_list(
        &mut self,
        kind: ValueKind,
        span: Span,
        values: Vec<DefaultValue>,
    ) -> Result<DefaultValue, Failure> {
        match kind {
            ValueKind::Complex => values
                .into_iter()
                .map(|v| match v {
                    DefaultValue::Complex(re, im) => Ok((re, im)),
                    other => Err(Error::internal(format!(
                        "isComplexDouble() INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/aten/src/ATen/core/ivalue.h\", please report a bug to PyTorch. Expected ComplexDouble but got {}",
                        other.tag_kind()
                    ))),
                })
                .collect::<Result<_, Error>>()
                .map(DefaultValue::ComplexList)
                .map_err(Box::new),
            ValueKind::Float => values
                .into_iter()
                .map(|v| match v {
                    DefaultValue::Double(d) => Ok(d),
                    _ => Err(ivalue_assert("double")),
                })
                .collect::<Result<_, Error>>()
                .map(DefaultValue::DoubleList)
                .map_err(Box::new),
            ValueKind::Int => values
                .into_iter()
                .map(|v| match v {
                    DefaultValue::Int(i) => Ok(i),
                    _ => Err(ivalue_assert("int")),
                })
                .collect::<Result<_, Error>>()
                .map(DefaultValue::IntList)
                .map_err(Box::new),
            ValueKind::Bool => values
                .into_iter()
                .map(|v| match v {
                    DefaultValue::Bool(b) => Ok(b),
                    _ => Err(ivalue_assert("bool")),
                })
                .collect::<Result<_, Error>>()
                .map(DefaultValue::BoolList)
                .map_err(Box::new),
            ValueKind::Other => Err(self
                .lexer()
                .error_at(span, "lists are only supported for float, int and complex types")),
        }
    }

    /// `[a, b, ...]`.
    fn parse_constant_list(&mut self, kind: ValueKind) -> Result<DefaultValue, Failure> {
        let open = self.lexer().expect(Kind::char(b'['))?;
        let mut values = Vec::new();
        if self.lexer().cur().kind != Kind::char(b']') {
            loop {
                values.push(self.parse_single_constant(kind)?);
                if !self.lexer().next_if(Kind::char(b','))? {
                    break;
                }
            }
        }
        self.lexer().expect(Kind::char(b']'))?;
        self.convert_to_list(kind, open.span, values)
    }

    /// The default after `=`, read according to the argument's fake type.
    fn parse_default_value(
        &mut self,
        fake: &Type,
        n: Option<i32>,
    ) -> Result<DefaultValue, Failure> {
        let span = self.lexer().cur().span;
        match fake {
            Type::Tensor | Type::Generator | Type::Quantizer => {
                self.lexer().expect(NONE)?;
                Ok(DefaultValue::None)
            }
            Type::Str
            | Type::Optional(_)
            | Type::Number
            | Type::Int
            | Type::Bool
            | Type::Float
            | Type::Complex => self.parse_single_constant(value_kind(fake)),
            Type::Device => {
                let tok = self.lexer().expect(Kind::STRING_LITERAL)?;
                let bytes = self.string_literal(tok.span)?;
                let text = String::from_utf8_lossy(&bytes);
                Ok(DefaultValue::Device(parse_device(&text)?))
            }
            Type::List(element) => {
                let kind = value_kind(element);
                if self.lexer().cur().kind == Kind::IDENT {
                    // PyTorch's parseTensorDefault: only `None`, which is not
                    // an identifier, so this always fails.
                    self.lexer().expect(NONE)?;
                    Ok(DefaultValue::None)
                } else if let (Some(n), false) = (n, self.lexer().cur().kind == Kind::char(b'[')) {
                    let value = self.parse_single_constant(kind)?;
                    let count = usize::try_from(n).map_err(|_| {
                        Error::runtime("cannot create std::vector larger than max_size()")
                    })?;
                    if count > MAX_REPEATED_DEFAULT {
                        return Err(Box::new(Error::runtime(format!(
                            "a default repeated into a list of {count} elements exceeds the supported maximum of {MAX_REPEATED_DEFAULT}"
                        ))));
                    }
                    self.convert_to_list(kind, span, vec![value; count])
                } else {
                    self.parse_constant_list(kind)
                }
            }
            _ => Err(self
                .lexer()
                .error_at(span, "unexpected type, file a bug report")),
        }
    }
}

/// Parses exactly one declaration (a trailing newline is allowed):
/// PyTorch's `parseSchemaOrName`.
pub(crate) fn parse_schema_or_name(text: &str) -> Result<SchemaOrName, Error> {
    parse(text).map_err(|e| *e)
}

fn parse(text: &str) -> Result<SchemaOrName, Failure> {
    let lexer = Lexer::new(text)?;
    let mut parser = SchemaParser {
        types: TypeParser::new(lexer),
    };
    let result = parser.parse_declaration()?;
    parser.lexer().next_if(Kind::NEWLINE)?;
    parser.lexer().expect(Kind::EOF)?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse_schema_or_name(text) {
            Ok(_) => panic!("{text} parsed"),
            Err(e) => e.message().to_string(),
        }
    }

    fn first_line(text: &str) -> String {
        err(text).split('\n').next().unwrap_or_default().to_string()
    }

    fn canonical(text: &str) -> String {
        match parse_schema_or_name(text) {
            Ok(SchemaOrName::Schema(s)) => s.to_string(),
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn std_conversion_messages_say_what_is_wrong() {
        assert_eq!(
            err("f(complex x=0) -> ()"),
            "invalid complex literal '0' (a complex default is an imaginary literal such as 2.5j): its imaginary part '' is not a floating-point number (stod)"
        );
        assert_eq!(
            err("f(complex x=1e999j) -> ()"),
            "complex literal '1e999j': its imaginary part '1e999' is out of range for double (stod)"
        );
        assert_eq!(
            err("f(int x=99999999999999999999) -> ()"),
            "integer literal '99999999999999999999' is out of range for int64 (stoll)"
        );
        assert_eq!(
            err("f(int x=-99999999999999999999) -> ()"),
            "integer literal '-99999999999999999999' is out of range for int64 (stoll)"
        );
        assert_eq!(
            err("f(int[99999999999999999999] x) -> ()"),
            "list size '99999999999999999999' is out of range for int64 (stoll)"
        );
        assert_eq!(
            err("f(float x=1e999) -> ()"),
            "floating-point literal '1e999' is out of range for double (stod)"
        );
        assert_eq!(
            err("f(float x=-1e-400) -> ()"),
            "floating-point literal '-1e-400' is out of range for double (stod)"
        );
        // The limits themselves still parse.
        assert_eq!(
            canonical("f(int x=-9223372036854775808, float y=1e308) -> ()"),
            "f(int x=-9223372036854775808, float y=1e+308) -> ()"
        );
    }

    #[test]
    fn error_report_messages_start_with_a_newline() {
        for (text, message) in [
            (
                "f(int a=1, ...) -> ()",
                "schemas with vararg (...) can't have default value args",
            ),
            (
                "f(..., int a) -> ()",
                "... must be the last element of the argument list",
            ),
            (
                "f() -> (..., int)",
                "... must be the last element of the return list",
            ),
            ("f(float x=nan) -> ()", "invalid numeric default value"),
            (
                "f(str[] x=[\"a\"]) -> ()",
                "lists are only supported for float, int and complex types",
            ),
            ("f(Any x=1) -> ()", "unexpected type, file a bug report"),
            ("f(str x=\"\\x41\") -> ()", "unsupported hex specifier"),
        ] {
            assert!(
                err(text).starts_with(&format!("\n{message}:\n")),
                "{text}: {:?}",
                err(text)
            );
        }
    }

    #[test]
    fn lexer_messages() {
        assert_eq!(
            first_line("f(int x) -> Tensor)"),
            "expected eof but found ')' here:"
        );
        assert_eq!(
            first_line("f(int x)"),
            "expected arrow but found 'eof' here:"
        );
        assert_eq!(
            first_line("f(Tensor(!) x) -> ()"),
            "expected ident but found '!' here:"
        );
        assert_eq!(
            first_line("f(int x=-inf) -> ()"),
            "expected number but found 'ident' here:"
        );
        assert_eq!(
            first_line("f(Tensor?[] x=None) -> ()"),
            "expected [ but found 'None' here:"
        );
        assert_eq!(
            first_line("f(Device d=cpu) -> ()"),
            "expected string_literal but found 'ident' here:"
        );
        assert_eq!(
            first_line("f(int in) -> ()"),
            "expected ident but found 'in' here:"
        );
    }

    #[test]
    fn errors_come_in_pytorchs_order() {
        // The overload check runs before the bad byte later on is lexed.
        assert_eq!(
            err("f.default(int x) -> ()\u{1}"),
            "default is not a legal overload name for aten operators"
        );
        assert_eq!(
            err("f.__x"),
            "__x is not a legal overload name for aten operators"
        );
        // A bad byte is reported only when the parser reaches it.
        assert_eq!(
            first_line("f(int x) -> ()\u{1}"),
            "expected a valid token but found '\u{1}' here:"
        );
    }

    #[test]
    fn defaults() {
        assert_eq!(canonical("f(int[2] s=1) -> ()"), "f(int[2] s=1) -> ()");
        assert_eq!(canonical("f(int[] s=[2, 2]) -> ()"), "f(int[] s=2) -> ()");
        assert_eq!(
            canonical("f(SymInt[2] s=1) -> ()"),
            "f(SymInt[2] s=[1, 1]) -> ()"
        );
        assert_eq!(
            canonical("f(float[2] s=1) -> ()"),
            "f(float[2] s=[1., 1.]) -> ()"
        );
        assert_eq!(
            canonical("f(ScalarType t=long) -> ()"),
            "f(ScalarType t=4) -> ()"
        );
        assert_eq!(
            canonical("f(MemoryFormat m=contiguous_format) -> ()"),
            "f(MemoryFormat m=0) -> ()"
        );
        assert_eq!(canonical("f(float? x=1) -> ()"), "f(float? x=1) -> ()");
        assert_eq!(
            canonical("f(complex c=1.5j) -> ()"),
            "f(complex c=0.+1.5j) -> ()"
        );
        assert_eq!(
            canonical("f(Device d=\"cuda:1\") -> ()"),
            "f(Device d=cuda:1) -> ()"
        );
        assert_eq!(
            canonical("f(str s='it\\'s') -> ()"),
            "f(str s=\"it\\'s\") -> ()"
        );
        assert_eq!(canonical("f(int x=\"a\") -> ()"), "f(int x=a) -> ()");
        assert_eq!(
            canonical("f(float f=1e10) -> ()"),
            "f(float f=10000000000.) -> ()"
        );
        assert_eq!(canonical("f(int x=0x10) -> ()"), "f(int x=0) -> ()");
    }

    #[test]
    fn layout_and_comments() {
        assert_eq!(canonical("f(int x) -> ()\n"), "f(int x) -> ()");
        assert_eq!(
            canonical("  f(int x,\n  int y) -> ()  # note"),
            "f(int x, int y) -> ()"
        );
        assert_eq!(
            first_line("f(int x) -> ()\n  g"),
            "expected eof but found 'indent' here:"
        );
        assert_eq!(
            canonical("f(Tensor! x) -> ()"),
            "f(Tensor($0! -> ) x) -> ()"
        );
    }
}
