//! The tokenizer of PyTorch's schema parser (`torch/csrc/jit/frontend/lexer.h`),
//! reduced to what schemas use but keeping its observable behaviour: the
//! same token kinds and names in error messages, keywords that are not
//! identifiers (`in`, `None`, `True`, ...), Python-style strings, numbers as
//! far as `strtod` reads them, newlines and indentation outside brackets,
//! comments, and PyTorch's lazy error timing: a lexer error surfaces only
//! when the parser moves onto the token that could not be lexed, so which
//! error is reported first matches PyTorch.

use std::cell::Cell;
use std::fmt;

use c10_core::Error;

use super::error_report::{self, Failure, Span};
use super::number::strtod_len;
use super::word::{key8, pack8};

/// Keywords and multi-character operators, PyTorch's `TC_FORALL_TOKEN_KINDS`
/// entries that have a spelling.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
#[allow(missing_docs)]
pub(crate) enum Keyword {
    Def,
    Equivalent,
    If,
    Else,
    Elif,
    While,
    Return,
    Is,
    IsNot,
    Ne,
    Eq,
    Le,
    Ge,
    FloorDiv,
    True,
    False,
    None,
    And,
    Or,
    Not,
    LShift,
    RShift,
    PlusEq,
    MinusEq,
    TimesEq,
    DivEq,
    ModEq,
    BitOrEq,
    BitAndEq,
    BitXorEq,
    LShiftEq,
    RShiftEq,
    PowEq,
    Global,
    For,
    In,
    NotIn,
    Pow,
    Arrow,
    TypeComment,
    Raise,
    Assert,
    Dots,
    Break,
    Continue,
    Delete,
    Pass,
    ClassDef,
    Import,
    With,
    As,
    Ellipsis,
    NoneType,
}

/// Every keyword, in declaration order (index = discriminant).
const ALL_KEYWORDS: [Keyword; 53] = [
    Keyword::Def,
    Keyword::Equivalent,
    Keyword::If,
    Keyword::Else,
    Keyword::Elif,
    Keyword::While,
    Keyword::Return,
    Keyword::Is,
    Keyword::IsNot,
    Keyword::Ne,
    Keyword::Eq,
    Keyword::Le,
    Keyword::Ge,
    Keyword::FloorDiv,
    Keyword::True,
    Keyword::False,
    Keyword::None,
    Keyword::And,
    Keyword::Or,
    Keyword::Not,
    Keyword::LShift,
    Keyword::RShift,
    Keyword::PlusEq,
    Keyword::MinusEq,
    Keyword::TimesEq,
    Keyword::DivEq,
    Keyword::ModEq,
    Keyword::BitOrEq,
    Keyword::BitAndEq,
    Keyword::BitXorEq,
    Keyword::LShiftEq,
    Keyword::RShiftEq,
    Keyword::PowEq,
    Keyword::Global,
    Keyword::For,
    Keyword::In,
    Keyword::NotIn,
    Keyword::Pow,
    Keyword::Arrow,
    Keyword::TypeComment,
    Keyword::Raise,
    Keyword::Assert,
    Keyword::Dots,
    Keyword::Break,
    Keyword::Continue,
    Keyword::Delete,
    Keyword::Pass,
    Keyword::ClassDef,
    Keyword::Import,
    Keyword::With,
    Keyword::As,
    Keyword::Ellipsis,
    Keyword::NoneType,
];

impl Keyword {
    /// The token's name in error messages (`kindToString`).
    pub(crate) fn name(self) -> &'static str {
        use Keyword::*;
        match self {
            Def => "def",
            Equivalent => "equivalent",
            If => "if",
            Else => "else",
            Elif => "elif",
            While => "while",
            Return => "return",
            Is => "is",
            IsNot => "is not",
            Ne => "ne",
            Eq => "eq",
            Le => "le",
            Ge => "ge",
            FloorDiv => "floordiv",
            True => "True",
            False => "False",
            None => "None",
            And => "and",
            Or => "or",
            Not => "not",
            LShift => "<<",
            RShift => ">>",
            PlusEq => "+=",
            MinusEq => "-=",
            TimesEq => "*=",
            DivEq => "/=",
            ModEq => "%=",
            BitOrEq => "|=",
            BitAndEq => "&=",
            BitXorEq => "^=",
            LShiftEq => "<<=",
            RShiftEq => ">>=",
            PowEq => "**=",
            Global => "global",
            For => "for",
            In => "in",
            NotIn => "not in",
            Pow => "pow operator",
            Arrow => "arrow",
            TypeComment => "type comment",
            Raise => "raise",
            Assert => "assert",
            Dots => "dots",
            Break => "break",
            Continue => "continue",
            Delete => "del",
            Pass => "pass",
            ClassDef => "class",
            Import => "import",
            With => "with",
            As => "as",
            Ellipsis => "Ellipsis",
            NoneType => "NoneType",
        }
    }

    /// The keyword whose [`pack8`] key is `key`, if any.
    fn from_key(key: u64) -> Option<Keyword> {
        use Keyword::*;
        const K_DEF: u64 = pack8(b"def");
        const K_IF: u64 = pack8(b"if");
        const K_ELSE: u64 = pack8(b"else");
        const K_ELIF: u64 = pack8(b"elif");
        const K_WHILE: u64 = pack8(b"while");
        const K_RETURN: u64 = pack8(b"return");
        const K_IS: u64 = pack8(b"is");
        const K_TRUE: u64 = pack8(b"True");
        const K_FALSE: u64 = pack8(b"False");
        const K_NONE: u64 = pack8(b"None");
        const K_AND: u64 = pack8(b"and");
        const K_OR: u64 = pack8(b"or");
        const K_NOT: u64 = pack8(b"not");
        const K_GLOBAL: u64 = pack8(b"global");
        const K_FOR: u64 = pack8(b"for");
        const K_IN: u64 = pack8(b"in");
        const K_RAISE: u64 = pack8(b"raise");
        const K_ASSERT: u64 = pack8(b"assert");
        const K_BREAK: u64 = pack8(b"break");
        const K_CONTINUE: u64 = pack8(b"continue");
        const K_DELETE: u64 = pack8(b"del");
        const K_PASS: u64 = pack8(b"pass");
        const K_CLASSDEF: u64 = pack8(b"class");
        const K_IMPORT: u64 = pack8(b"import");
        const K_WITH: u64 = pack8(b"with");
        const K_AS: u64 = pack8(b"as");
        const K_ELLIPSIS: u64 = pack8(b"Ellipsis");
        const K_NONETYPE: u64 = pack8(b"NoneType");
        Some(match key {
            K_DEF => Def,
            K_IF => If,
            K_ELSE => Else,
            K_ELIF => Elif,
            K_WHILE => While,
            K_RETURN => Return,
            K_IS => Is,
            K_TRUE => True,
            K_FALSE => False,
            K_NONE => None,
            K_AND => And,
            K_OR => Or,
            K_NOT => Not,
            K_GLOBAL => Global,
            K_FOR => For,
            K_IN => In,
            K_RAISE => Raise,
            K_ASSERT => Assert,
            K_BREAK => Break,
            K_CONTINUE => Continue,
            K_DELETE => Delete,
            K_PASS => Pass,
            K_CLASSDEF => ClassDef,
            K_IMPORT => Import,
            K_WITH => With,
            K_AS => As,
            K_ELLIPSIS => Ellipsis,
            K_NONETYPE => NoneType,
            _ => return Option::None,
        })
    }
}

/// What a token is: a byte for single-character tokens (and for the
/// offending byte of an invalid one, in its error message), otherwise one of
/// the named kinds below or a keyword. One integer, so comparing kinds is
/// one comparison.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) struct Kind(u16);

impl Kind {
    /// End of input.
    pub(crate) const EOF: Kind = Kind(256);
    /// Leading blanks of a line (only while lexing indentation).
    pub(crate) const WHITESPACE: Kind = Kind(257);
    /// Blanks before the end of input (only while lexing indentation).
    pub(crate) const WHITESPACE_EOF: Kind = Kind(258);
    /// A number literal.
    pub(crate) const NUMBER: Kind = Kind(259);
    /// A line break outside brackets.
    pub(crate) const NEWLINE: Kind = Kind(260);
    /// Deeper indentation.
    pub(crate) const INDENT: Kind = Kind(261);
    /// Shallower indentation.
    pub(crate) const DEDENT: Kind = Kind(262);
    /// An identifier.
    pub(crate) const IDENT: Kind = Kind(263);
    /// A quoted string.
    pub(crate) const STRING_LITERAL: Kind = Kind(264);

    /// The single-character token `c`.
    pub(crate) const fn char(c: u8) -> Kind {
        Kind(c as u16)
    }

    /// The keyword or multi-character operator `k`.
    pub(crate) const fn keyword(k: Keyword) -> Kind {
        Kind(512 + k as u16)
    }

    /// The character of a single-character kind.
    pub(crate) fn as_char(self) -> Option<u8> {
        u8::try_from(self.0).ok()
    }

    /// The kind's name in error messages (`kindToString`); bytes, because a
    /// single-character kind may be any byte.
    pub(crate) fn name(self) -> Vec<u8> {
        if let Some(c) = self.as_char() {
            return vec![c];
        }
        let name = match self {
            Kind::EOF => "eof",
            Kind::WHITESPACE => "whitespace",
            Kind::WHITESPACE_EOF => "whitespace_eof",
            Kind::NUMBER => "number",
            Kind::NEWLINE => "newline",
            Kind::INDENT => "indent",
            Kind::DEDENT => "dedent",
            Kind::IDENT => "ident",
            Kind::STRING_LITERAL => "string_literal",
            Kind(k) => usize::from(k)
                .checked_sub(512)
                .and_then(|i| ALL_KEYWORDS.get(i))
                .map_or("?", |k| k.name()),
        };
        name.as_bytes().to_vec()
    }
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.name()))
    }
}

/// `->`.
pub(crate) const ARROW: Kind = Kind::keyword(Keyword::Arrow);
/// `...`.
pub(crate) const DOTS: Kind = Kind::keyword(Keyword::Dots);
/// `None`.
pub(crate) const NONE: Kind = Kind::keyword(Keyword::None);
/// `NoneType`.
pub(crate) const NONE_TYPE: Kind = Kind::keyword(Keyword::NoneType);
/// `True`.
pub(crate) const TRUE: Kind = Kind::keyword(Keyword::True);
/// `False`.
pub(crate) const FALSE: Kind = Kind::keyword(Keyword::False);

/// A token: its kind and where it is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// What it is.
    pub(crate) kind: Kind,
    /// Where it is.
    pub(crate) span: Span,
}

/// Byte classes for the lexer's hot loops.
const BLANK: u8 = 1;
/// A letter or `_`: may start an identifier.
const IDENT_START: u8 = 2;
/// `0`-`9`.
const DIGIT: u8 = 4;

/// The class of every byte: C's `isspace` without the newline, `isalpha`
/// (in the C locale, ASCII only) plus `_`, `isdigit`.
static CLASSES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        table[i] = if matches!(c, b' ' | b'\t' | b'\x0b' | b'\x0c' | b'\r') {
            BLANK
        } else if c.is_ascii_alphabetic() || c == b'_' {
            IDENT_START
        } else if c.is_ascii_digit() {
            DIGIT
        } else {
            0
        };
        i += 1;
    }
    table
};

fn class(c: u8) -> u8 {
    CLASSES[c as usize]
}

thread_local! {
    /// A token buffer kept between parses on this thread, so that parsing a
    /// schema does not allocate one each time.
    static SPARE_TOKENS: Cell<Vec<Token>> = const { Cell::new(Vec::new()) };
}

/// The largest buffer kept for reuse, in tokens.
const MAX_SPARE_TOKENS: usize = 1 << 14;

/// An empty token buffer for a text of `len` bytes: this thread's spare one
/// if it has it, else a new one sized for about one token per three bytes
/// (capped, so a huge text grows it only as it is lexed).
fn spare_tokens(len: usize) -> Vec<Token> {
    let mut tokens = SPARE_TOKENS.with(Cell::take);
    tokens.clear();
    tokens.reserve((len / 3 + 4).min(4096));
    tokens
}

/// The token stream over one schema text.
///
/// All tokens are lexed up front, but a lexer error is delivered only when
/// the parser moves onto the token that PyTorch's lazy lexer would have
/// failed to produce, so errors come in PyTorch's order.
pub(crate) struct Lexer<'a> {
    src: &'a [u8],
    text: &'a str,
    /// Where the next raw token starts.
    pos: usize,
    /// Bracket depth; wraps like PyTorch's `size_t` when closing more than
    /// was opened.
    nesting: usize,
    /// The bottom of PyTorch's indentation stack (the first line's).
    first_indent: usize,
    /// The rest of the stack, above `first_indent`.
    indents: Vec<usize>,
    /// Every token up to the end of input or the first lexer error; the
    /// last one is `Eof` when there was no error.
    tokens: Vec<Token>,
    /// The lexer error after `tokens`, if any.
    error: Option<Failure>,
    /// Index of the current token.
    index: usize,
}

/// Hands the token buffer back for the next parse on this thread.
impl Drop for Lexer<'_> {
    fn drop(&mut self) {
        if self.tokens.capacity() <= MAX_SPARE_TOKENS {
            let tokens = std::mem::take(&mut self.tokens);
            // Fails only while the thread is being torn down.
            let _ = SPARE_TOKENS.try_with(|spare| spare.set(tokens));
        }
    }
}

impl<'a> Lexer<'a> {
    /// Lexes `text`, failing at once where PyTorch's lexer constructor
    /// would (the initial indentation and the first token).
    pub(crate) fn new(text: &'a str) -> Result<Lexer<'a>, Failure> {
        if u32::try_from(text.len()).is_err() {
            return Err(Box::new(Error::runtime("schema text longer than 4 GiB")));
        }
        let mut lexer = Lexer {
            src: text.as_bytes(),
            text,
            pos: 0,
            nesting: 0,
            first_indent: 0,
            indents: Vec::new(),
            tokens: spare_tokens(text.len()),
            error: None,
            index: 0,
        };
        let first_indent = lexer.lex_raw(true)?;
        lexer.first_indent = first_indent.span.end() - first_indent.span.start();
        loop {
            if lexer.lex_fast() {
                continue;
            }
            let mark = lexer.tokens.len();
            if let Err(e) = lexer.lex() {
                // Tokens of the failing step never reach PyTorch's parser.
                lexer.tokens.truncate(mark);
                if mark == 0 {
                    return Err(e);
                }
                lexer.error = Some(e);
                break;
            }
            if lexer.tokens.last().is_some_and(|t| t.kind == Kind::EOF) {
                break;
            }
        }
        Ok(lexer)
    }

    /// The whole text.
    pub(crate) fn source(&self) -> &'a [u8] {
        self.src
    }

    /// The text of a token.
    pub(crate) fn text(&self, token: Token) -> &'a str {
        self.text
            .get(token.span.start()..token.span.end())
            .unwrap_or_default()
    }

    /// The token at `index`, or the error PyTorch's lexer raised trying to
    /// produce it (past the end of input it keeps producing `Eof`).
    fn token_at(&mut self, index: usize) -> Result<Token, Failure> {
        match self.tokens.get(index) {
            Some(&t) => Ok(t),
            None => match self.error.take() {
                Some(e) => Err(e),
                None => Ok(self.end_token()),
            },
        }
    }

    /// The `Eof` token.
    fn end_token(&self) -> Token {
        Token {
            kind: Kind::EOF,
            span: Span::new(self.src.len(), self.src.len()),
        }
    }

    /// The current token.
    pub(crate) fn cur(&self) -> Token {
        match self.tokens.get(self.index) {
            Some(&t) => t,
            None => self.end_token(),
        }
    }

    /// The token after the current one.
    pub(crate) fn lookahead(&mut self) -> Result<Token, Failure> {
        self.token_at(self.index + 1)
    }

    /// Returns the current token and moves to the next one.
    pub(crate) fn next(&mut self) -> Result<Token, Failure> {
        let token = self.cur();
        self.index += 1;
        self.token_at(self.index)?;
        Ok(token)
    }

    /// Moves past the current token if it is of `kind`.
    pub(crate) fn next_if(&mut self, kind: Kind) -> Result<bool, Failure> {
        if self.cur().kind != kind {
            return Ok(false);
        }
        self.next()?;
        Ok(true)
    }

    /// Returns the current token and moves on, or fails with
    /// `expected KIND but found ...` unless it is of `kind`.
    pub(crate) fn expect(&mut self, kind: Kind) -> Result<Token, Failure> {
        if self.cur().kind != kind {
            return Err(self.expected(&kind.name()));
        }
        self.next()
    }

    /// `expected WHAT but found 'KIND' here:` at the current token.
    pub(crate) fn expected(&self, what: &[u8]) -> Failure {
        let cur = self.cur();
        error_report::expected(self.src, cur.span, what, &cur.kind.name())
    }

    /// An `ErrorReport` at `span`.
    pub(crate) fn error_at(&self, span: Span, message: &str) -> Failure {
        error_report::error_report(self.src, span, message)
    }

    /// Lexes the next token if it is a common one (an identifier, keyword,
    /// number, bracket or operator after blanks) and returns `true`; returns
    /// `false`, having done nothing, when it needs the general [`lex`]
    /// (line breaks, comments, strings, invalid bytes, the end of input).
    /// The result is the same as `lex` would give.
    ///
    /// [`lex`]: Self::lex
    fn lex_fast(&mut self) -> bool {
        let src = self.src;
        let mut pos = self.pos;
        while pos < src.len() && class(src[pos]) == BLANK {
            pos += 1;
        }
        let Some(&c) = src.get(pos) else {
            return false;
        };
        let rest = &src[pos..];
        let (kind, n) = match class(c) {
            IDENT_START => ident_or_keyword(rest),
            DIGIT => match number_len(rest) {
                Some(n) => (Kind::NUMBER, n),
                None => return false,
            },
            _ => match c {
                b'#' | b'\\' | b'\n' | b'"' | b'\'' => return false,
                b'.' => match number_len(rest) {
                    Some(n) => (Kind::NUMBER, n),
                    None => match operator(rest) {
                        Some(t) => t,
                        None => return false,
                    },
                },
                _ => match operator(rest) {
                    Some(t) => t,
                    None => return false,
                },
            },
        };
        self.track_nesting(kind);
        self.tokens.push(Token {
            kind,
            span: Span::new(pos, pos + n),
        });
        self.pos = pos + n;
        true
    }

    /// One step of PyTorch's `Lexer::lex`: the next token, with blank-line
    /// tokens turned into `Newline`, `Indent` or `Newline` plus `Dedent`s.
    fn lex(&mut self) -> Result<(), Failure> {
        let mut r = self.lex_raw(false)?;
        if r.kind == Kind::WHITESPACE || r.kind == Kind::WHITESPACE_EOF {
            {
                let depth = if r.kind == Kind::WHITESPACE_EOF {
                    self.first_indent
                } else {
                    r.span.end() - r.span.start()
                };
                let back = self.indents.last().copied().unwrap_or(self.first_indent);
                if depth > back {
                    self.indents.push(depth);
                    r.kind = Kind::INDENT;
                } else if depth == back {
                    r.kind = Kind::NEWLINE;
                } else {
                    self.tokens.push(Token {
                        kind: Kind::NEWLINE,
                        span: r.span,
                    });
                    let mut back = back;
                    while back != depth {
                        self.tokens.push(Token {
                            kind: Kind::DEDENT,
                            span: r.span,
                        });
                        if self.indents.pop().is_none() {
                            return Err(error_report::report_error(
                                self.src,
                                r.span,
                                &format!("invalid indent level {depth}"),
                            ));
                        }
                        back = self.indents.last().copied().unwrap_or(self.first_indent);
                    }
                    return Ok(());
                }
            }
        } else {
            self.track_nesting(r.kind);
        }
        self.tokens.push(r);
        Ok(())
    }

    /// Counts brackets: newlines inside them are not tokens.
    fn track_nesting(&mut self, kind: Kind) {
        match kind.as_char() {
            Some(b'(' | b'[' | b'{') => self.nesting = self.nesting.wrapping_add(1),
            Some(b')' | b']' | b'}') => self.nesting = self.nesting.wrapping_sub(1),
            _ => {}
        }
    }

    /// Reads the next raw token (PyTorch's `SharedParserData::match`).
    fn lex_raw(&mut self, whitespace_token: bool) -> Result<Token, Failure> {
        let src = self.src;
        let len = src.len();
        let continuation = self.nesting > 0;
        let mut whitespace_token = whitespace_token;
        let mut pos = self.pos;
        let mut start;
        loop {
            start = pos;
            while pos < len && class(src[pos]) == BLANK {
                pos += 1;
            }
            if pos < len {
                if src[pos] == b'#' && !src[pos..].starts_with(b"# type:") {
                    while pos < len && src[pos] != b'\n' {
                        pos += 1;
                    }
                    continue;
                }
                if src[pos] == b'\\' && pos + 1 < len && src[pos + 1] == b'\n' && !whitespace_token
                {
                    pos += 2;
                    whitespace_token = false;
                    continue;
                }
                if src[pos] == b'\n' {
                    pos += 1;
                    whitespace_token = !continuation;
                    continue;
                }
            }
            break;
        }
        let token = |kind, start, end| Token {
            kind,
            span: Span::new(start, end),
        };
        if whitespace_token {
            let kind = if pos == len {
                Kind::WHITESPACE_EOF
            } else {
                Kind::WHITESPACE
            };
            self.pos = pos;
            return Ok(token(kind, start, pos));
        }
        if pos == len {
            self.pos = pos;
            return Ok(token(Kind::EOF, pos, pos));
        }
        start = pos;
        let rest = &src[pos..];
        let first = rest[0];
        let first_class = class(first);
        let matched = if first_class == IDENT_START {
            Some(ident_or_keyword(rest))
        } else if first_class == DIGIT || first == b'.' {
            match number_len(rest) {
                Some(n) => Some((Kind::NUMBER, n)),
                None => operator(rest),
            }
        } else if first == b'"' || first == b'\'' {
            string_len(rest).map(|n| (Kind::STRING_LITERAL, n))
        } else {
            operator(rest)
        };
        match matched {
            Some((kind, n)) => {
                self.pos = start + n;
                Ok(token(kind, start, start + n))
            }
            None => {
                // PyTorch names the byte where this raw token began (before
                // blanks) but highlights the offending one.
                let kind = Kind::char(src.get(self.pos).copied().unwrap_or(first));
                Err(error_report::expected(
                    src,
                    Span::new(start, start + 1),
                    b"a valid token",
                    &kind.name(),
                ))
            }
        }
    }
}

/// The lexer's `isNumber` (for text starting with a digit or `.`; signs
/// and letters never start a number): a number literal as far as `strtod`
/// reads, plus a trailing `j`.
fn number_len(rest: &[u8]) -> Option<usize> {
    let mut n = strtod_len(rest);
    if n > 0 && rest.get(n) == Some(&b'j') {
        n += 1;
    }
    (n > 0).then_some(n)
}

/// The lexer's `isString`: one or three quotes of either kind, backslash
/// escapes, no newline inside single-quoted strings.
fn string_len(rest: &[u8]) -> Option<usize> {
    let quote = rest[0];
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let run =
        |at: usize, n: usize| at + n <= rest.len() && rest[at..at + n].iter().all(|&c| c == quote);
    let quote_len = if run(0, 3) { 3 } else { 1 };
    let mut end = quote_len;
    while end < rest.len() && !run(end, quote_len) {
        if rest[end] == b'\n' && quote_len != 3 {
            return None;
        }
        if rest[end] == b'\\' {
            end += 1;
        }
        end += 1;
    }
    (end < rest.len()).then_some(end + quote_len)
}

/// The identifier or keyword at the start of `rest` (which starts with a
/// letter or `_`). A keyword wins a tie with the identifier of the same
/// length, so `None` is a keyword and `Nonex` an identifier; `is not` and
/// `not in` are single tokens.
fn ident_or_keyword(rest: &[u8]) -> (Kind, usize) {
    const IS: u64 = pack8(b"is");
    const NOT: u64 = pack8(b"not");
    let mut n = 1;
    while n < rest.len() && class(rest[n]) & (IDENT_START | DIGIT) != 0 {
        n += 1;
    }
    if n > 8 {
        return (Kind::IDENT, n);
    }
    let key = key8(rest, n);
    if key == IS && rest[n..].starts_with(b" not") {
        return (Kind::keyword(Keyword::IsNot), 6);
    }
    if key == NOT && rest[n..].starts_with(b" in") {
        return (Kind::keyword(Keyword::NotIn), 6);
    }
    match Keyword::from_key(key) {
        Some(k) => (Kind::keyword(k), n),
        None => (Kind::IDENT, n),
    }
}

/// A punctuation token at the start of `rest`: a multi-character operator
/// (longest first), a single-character token, or nothing.
fn operator(rest: &[u8]) -> Option<(Kind, usize)> {
    use Keyword::*;
    let at = |i: usize| rest.get(i).copied().unwrap_or(0);
    let (second, third) = (at(1), at(2));
    let multi = match (rest[0], second, third) {
        (b'<', b'=', b'>') => Some((Equivalent, 3)),
        (b'<', b'<', b'=') => Some((LShiftEq, 3)),
        (b'>', b'>', b'=') => Some((RShiftEq, 3)),
        (b'*', b'*', b'=') => Some((PowEq, 3)),
        (b'.', b'.', b'.') => Some((Dots, 3)),
        (b'-', b'>', _) => Some((Arrow, 2)),
        (b'!', b'=', _) => Some((Ne, 2)),
        (b'=', b'=', _) => Some((Eq, 2)),
        (b'<', b'=', _) => Some((Le, 2)),
        (b'>', b'=', _) => Some((Ge, 2)),
        (b'/', b'/', _) => Some((FloorDiv, 2)),
        (b'<', b'<', _) => Some((LShift, 2)),
        (b'>', b'>', _) => Some((RShift, 2)),
        (b'+', b'=', _) => Some((PlusEq, 2)),
        (b'-', b'=', _) => Some((MinusEq, 2)),
        (b'*', b'=', _) => Some((TimesEq, 2)),
        (b'/', b'=', _) => Some((DivEq, 2)),
        (b'%', b'=', _) => Some((ModEq, 2)),
        (b'|', b'=', _) => Some((BitOrEq, 2)),
        (b'&', b'=', _) => Some((BitAndEq, 2)),
        (b'^', b'=', _) => Some((BitXorEq, 2)),
        (b'*', b'*', _) => Some((Pow, 2)),
        (b'#', _, _) if rest.starts_with(b"# type:") => Some((TypeComment, 7)),
        _ => Option::None,
    };
    if let Some((k, n)) = multi {
        return Some((Kind::keyword(k), n));
    }
    // PyTorch's `valid_single_char_tokens`.
    matches!(
        rest[0],
        b'+' | b'-'
            | b'*'
            | b'/'
            | b'%'
            | b'@'
            | b'('
            | b')'
            | b'['
            | b']'
            | b':'
            | b','
            | b'='
            | b'{'
            | b'}'
            | b'>'
            | b'<'
            | b'.'
            | b'?'
            | b'!'
            | b'&'
            | b'^'
            | b'|'
            | b'~'
    )
    .then_some((Kind::char(rest[0]), 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<Kind> {
        let mut l = Lexer::new(text).unwrap();
        let mut out = Vec::new();
        loop {
            let t = l.next().unwrap();
            out.push(t.kind);
            if t.kind == Kind::EOF {
                return out;
            }
        }
    }

    #[test]
    fn tokens_of_a_schema() {
        let c = Kind::char;
        let (ident, number) = (Kind::IDENT, Kind::NUMBER);
        assert_eq!(
            kinds("aten::f(int[2] x=-1.5e3, *) -> ..."),
            vec![
                ident,
                c(b':'),
                c(b':'),
                ident,
                c(b'('),
                ident,
                c(b'['),
                number,
                c(b']'),
                ident,
                c(b'='),
                c(b'-'),
                number,
                c(b','),
                c(b'*'),
                c(b')'),
                ARROW,
                DOTS,
                Kind::EOF
            ]
        );
    }

    #[test]
    fn keywords_are_not_identifiers() {
        assert_eq!(
            kinds("in None Nonex is not x"),
            vec![
                Kind::keyword(Keyword::In),
                NONE,
                Kind::IDENT,
                Kind::keyword(Keyword::IsNot),
                Kind::IDENT,
                Kind::EOF
            ]
        );
        assert_eq!(Kind::keyword(Keyword::IsNot).name(), b"is not");
        assert_eq!(Kind::keyword(Keyword::NoneType).name(), b"NoneType");
        assert_eq!(Kind::char(b')').name(), b")");
    }

    #[test]
    fn trailing_newline_is_one_newline_token() {
        assert_eq!(kinds("f\n\n"), vec![Kind::IDENT, Kind::NEWLINE, Kind::EOF]);
        assert_eq!(
            kinds("f(\n)"),
            vec![Kind::IDENT, Kind::char(b'('), Kind::char(b')'), Kind::EOF]
        );
    }

    #[test]
    fn strings_and_invalid_bytes() {
        assert_eq!(
            kinds("'a\\'b' \"\""),
            vec![Kind::STRING_LITERAL, Kind::STRING_LITERAL, Kind::EOF]
        );
        let err = Lexer::new("f(x)\0").and_then(|mut l| {
            for _ in 0..5 {
                l.next()?;
            }
            Ok(())
        });
        assert_eq!(
            err.unwrap_err().message(),
            "expected a valid token but found '"
        );
    }
}
