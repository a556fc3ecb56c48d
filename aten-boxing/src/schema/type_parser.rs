//! Types and alias annotations in schema text (PyTorch's
//! `SchemaTypeParser`): `Tensor(a!)[]?`, `Dict(str, t)`, `(Tensor, int)`,
//! `Future(t)`, `__torch__.torch.classes.ns.Name`, type variables.

use super::alias_info::AliasInfo;
use super::error_report::{Failure, Span};
use super::lexer::{Kind, Lexer, ARROW, NONE, NONE_TYPE};
use super::types::Type;
use super::word::{key16, pack16};

/// How deeply types may nest (`int[][]...`, `Future(Future(...))`); deeper
/// input is refused instead of exhausting the stack.
pub(crate) const MAX_TYPE_DEPTH: usize = 100;

/// Parses types off a [`Lexer`].
pub(crate) struct TypeParser<'a> {
    pub(crate) lexer: Lexer<'a>,
    /// Counter for the fresh sets of the `Tensor!` shorthand (`$0`, `$1`).
    next_id: usize,
    /// Current nesting depth of the type being parsed.
    depth: usize,
}

impl<'a> TypeParser<'a> {
    /// A type parser reading from `lexer`.
    pub(crate) fn new(lexer: Lexer<'a>) -> TypeParser<'a> {
        TypeParser {
            lexer,
            next_id: 0,
            depth: 0,
        }
    }

    /// Enters one more level of type nesting.
    #[inline]
    pub(crate) fn descend(&mut self, span: Span) -> Result<(), Failure> {
        self.depth += 1;
        if self.depth > MAX_TYPE_DEPTH {
            return Err(self.lexer.error_at(
                span,
                &format!("type nesting exceeds the supported depth of {MAX_TYPE_DEPTH}"),
            ));
        }
        Ok(())
    }

    /// A base type (`int`, `Tensor`-less names, type variables).
    fn parse_base_type(&mut self) -> Result<Type, Failure> {
        let tok = self.lexer.cur();
        if !self.lexer.next_if(NONE)? && !self.lexer.next_if(NONE_TYPE)? {
            self.lexer.expect(Kind::IDENT)?;
        }
        let first = self.lexer.text(tok);
        let dotted;
        let text = if self.lexer.cur().kind == Kind::char(b'.') {
            // Dotted names (opaque types) are read whole.
            let mut name = first.to_string();
            while self.lexer.cur().kind == Kind::char(b'.')
                && self.lexer.lookahead()?.kind == Kind::IDENT
            {
                self.lexer.next()?;
                let part = self.lexer.expect(Kind::IDENT)?;
                name.push('.');
                name.push_str(self.lexer.text(part));
            }
            dotted = name;
            dotted.as_str()
        } else {
            first
        };
        let base = if text.len() <= 16 && text.len() == first.len() {
            Type::from_base_key(key16(&self.lexer.source()[tok.span.start()..], text.len()))
        } else {
            Type::from_base_name(text)
        };
        if let Some(t) = base {
            return Ok(t);
        }
        if text.as_bytes().first().is_some_and(u8::is_ascii_lowercase) {
            return Ok(Type::Var(text.to_string()));
        }
        let message = match text {
            "double" => "Use `float` instead of `double` in an operator's schema string. `float` in schema corresponds to the double type in C++",
            "int64_t" => "Use `SymInt` or `int` instead of `int64_t` in an operator's schema string. `SymInt` corresponds to c10::SymInt in C++ while `int` in schema corresponds to the int64_t type in C++.",
            _ => "unknown type specifier. Common valid schema types include Tensor, SymInt, int, float, bool, Scalar; for a full list, please see https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/README.md#func ",
        };
        Err(self.lexer.error_at(tok.span, message))
    }

    /// An alias annotation after a type, if there is one: `(a)`, `(a!)`,
    /// `(a|b -> c)`, `(*)`, or `!` (a fresh set, written).
    #[inline]
    pub(crate) fn parse_alias_annotation(&mut self) -> Result<Option<Box<AliasInfo>>, Failure> {
        let kind = self.lexer.cur().kind;
        if kind != Kind::char(b'(') && kind != Kind::char(b'!') {
            return Ok(None);
        }
        self.parse_present_alias_annotation()
    }

    /// One `|`-separated alias set (`a|b`, `*`): each name goes to `add`;
    /// once the set is a wildcard (`is_wildcard`), no further name is read,
    /// as in PyTorch's parser.
    fn parse_alias_set(
        &mut self,
        info: &mut AliasInfo,
        add: fn(&mut AliasInfo, &str),
        is_wildcard: fn(&AliasInfo) -> bool,
    ) -> Result<(), Failure> {
        loop {
            if self.lexer.next_if(Kind::char(b'*'))? {
                add(info, AliasInfo::WILDCARD);
            } else if !is_wildcard(info) {
                let name = self.lexer.expect(Kind::IDENT)?;
                add(info, self.lexer.text(name));
            }
            if !self.lexer.next_if(Kind::char(b'|'))? {
                return Ok(());
            }
        }
    }

    /// [`parse_alias_annotation`](Self::parse_alias_annotation) when the
    /// current token is `(` or `!`.
    fn parse_present_alias_annotation(&mut self) -> Result<Option<Box<AliasInfo>>, Failure> {
        if self.lexer.next_if(Kind::char(b'('))? {
            let mut info = AliasInfo::new();
            self.parse_alias_set(
                &mut info,
                AliasInfo::add_before_set,
                AliasInfo::is_wildcard_before,
            )?;
            if self.lexer.next_if(Kind::char(b'!'))? {
                info.set_is_write(true);
            }
            if self.lexer.next_if(ARROW)? {
                self.parse_alias_set(
                    &mut info,
                    AliasInfo::add_after_set,
                    AliasInfo::is_wildcard_after,
                )?;
            } else {
                info.after_equals_before();
            }
            self.lexer.expect(Kind::char(b')'))?;
            Ok(Some(Box::new(info)))
        } else if self.lexer.next_if(Kind::char(b'!'))? {
            let mut info = AliasInfo::new();
            // PyTorch adds no after set here, so this prints as `($0! -> )`.
            info.add_before_set(&format!("${}", self.next_id));
            self.next_id += 1;
            info.set_is_write(true);
            Ok(Some(Box::new(info)))
        } else {
            Ok(None)
        }
    }

    /// A type whose alias annotation is dropped (inside tuples, dicts,
    /// futures and unions); returns the fake type, as PyTorch's `parseType`.
    fn parse_inner_type(&mut self) -> Result<Type, Failure> {
        let (real, _) = self.parse_real_type()?;
        Ok(match real.to_fake() {
            Some(fake) => fake,
            None => real,
        })
    }

    /// `( type )` after a `Future`, `Await` or `RRef` keyword.
    fn parse_wrapped(&mut self) -> Result<Type, Failure> {
        self.lexer.next()?;
        self.lexer.expect(Kind::char(b'('))?;
        let inner = self.parse_inner_type()?;
        self.lexer.expect(Kind::char(b')'))?;
        Ok(inner)
    }

    /// A type with its alias annotation: PyTorch's `parseFakeAndRealType`,
    /// returning the real type (the fake one follows from it).
    pub(crate) fn parse_real_type(&mut self) -> Result<(Type, Option<Box<AliasInfo>>), Failure> {
        let saved_depth = self.depth;
        let result = self.parse_real_type_at_depth();
        self.depth = saved_depth;
        result
    }

    fn parse_real_type_at_depth(&mut self) -> Result<(Type, Option<Box<AliasInfo>>), Failure> {
        let cur = self.lexer.cur();
        self.descend(cur.span)?;
        const FUTURE: u128 = pack16(b"Future");
        const AWAIT: u128 = pack16(b"Await");
        const RREF: u128 = pack16(b"RRef");
        const TENSOR: u128 = pack16(b"Tensor");
        const DICT: u128 = pack16(b"Dict");
        const UNION: u128 = pack16(b"Union");
        const TORCH: u128 = pack16(b"__torch__");
        let word = self.lexer.text(cur);
        let key = if cur.kind == Kind::IDENT && word.len() <= 16 {
            key16(&self.lexer.source()[cur.span.start()..], word.len())
        } else {
            0
        };
        let mut alias_info = None;
        let mut value = if cur.kind == Kind::char(b'(') {
            let mut types = Vec::new();
            self.lexer.expect(Kind::char(b'('))?;
            if self.lexer.cur().kind != Kind::char(b')') {
                loop {
                    types.push(self.parse_inner_type()?);
                    if !self.lexer.next_if(Kind::char(b','))? {
                        break;
                    }
                }
            }
            self.lexer.expect(Kind::char(b')'))?;
            Type::Tuple(types)
        } else if key == FUTURE {
            Type::Future(Box::new(self.parse_wrapped()?))
        } else if key == AWAIT {
            Type::Await(Box::new(self.parse_wrapped()?))
        } else if key == RREF {
            Type::RRef(Box::new(self.parse_wrapped()?))
        } else if key == TENSOR {
            self.lexer.next()?;
            alias_info = self.parse_alias_annotation()?;
            Type::Tensor
        } else if key == DICT {
            self.lexer.next()?;
            self.lexer.expect(Kind::char(b'('))?;
            let key = self.parse_inner_type()?;
            self.lexer.expect(Kind::char(b','))?;
            let value = self.parse_inner_type()?;
            self.lexer.expect(Kind::char(b')'))?;
            alias_info = self.parse_alias_annotation()?;
            Type::Dict(Box::new(key), Box::new(value))
        } else if key == UNION {
            self.lexer.next()?;
            self.lexer.expect(Kind::char(b'('))?;
            let mut types = vec![self.parse_inner_type()?];
            while self.lexer.cur().kind != Kind::char(b')') {
                self.lexer.expect(Kind::char(b','))?;
                types.push(self.parse_inner_type()?);
            }
            self.lexer.expect(Kind::char(b')'))?;
            alias_info = self.parse_alias_annotation()?;
            Type::union(types)
        } else if key == TORCH {
            self.parse_custom_class()?
        } else {
            let t = self.parse_base_type()?;
            alias_info = self.parse_alias_annotation()?;
            t
        };
        loop {
            let cur = self.lexer.cur();
            if cur.kind == Kind::char(b'[') && self.lexer.lookahead()?.kind == Kind::char(b']') {
                self.descend(cur.span)?;
                self.lexer.next()?;
                self.lexer.next()?;
                value = Type::list(value);
                let container = self.parse_alias_annotation()?;
                alias_info = AliasInfo::list_container(alias_info.take(), container);
            } else if self.lexer.next_if(Kind::char(b'?'))? {
                self.descend(cur.span)?;
                value = Type::optional(value);
            } else {
                break;
            }
        }
        Ok((value, alias_info))
    }

    /// `__torch__.torch.classes.ns.Name`. There is no class registry at
    /// this layer: every well-formed name is accepted.
    fn parse_custom_class(&mut self) -> Result<Type, Failure> {
        self.lexer.next()?;
        self.lexer.expect(Kind::char(b'.'))?;
        for expected_name in ["torch", "classes"] {
            let tok = self.lexer.expect(Kind::IDENT)?;
            let text = self.lexer.text(tok);
            if text != expected_name {
                return Err(self.lexer.error_at(
                    tok.span,
                    &format!("Expected classes namespace but got {text}"),
                ));
            }
            self.lexer.expect(Kind::char(b'.'))?;
        }
        let ns = self.lexer.expect(Kind::IDENT)?;
        self.lexer.expect(Kind::char(b'.'))?;
        let class = self.lexer.expect(Kind::IDENT)?;
        Ok(Type::Class(format!(
            "__torch__.torch.classes.{}.{}",
            self.lexer.text(ns),
            self.lexer.text(class)
        )))
    }
}
