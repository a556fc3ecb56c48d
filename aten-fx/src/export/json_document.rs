//! A JSON document parsed into one flat vector of nodes (a *tape*): each
//! container is followed by its children, strings and numbers are spans of
//! the text. An archive's `model.json` becomes a few allocations instead of
//! one per object, string and array, which made parsing and freeing the
//! generic `serde_json::Value` tree most of a program's load.
//!
//! The grammar is RFC 8259's; as `serde_json` does, the parser refuses
//! nesting deeper than 128, numbers out of `f64`'s range and lone
//! surrogates, keeps duplicate keys (a lookup finds the last), and reports
//! errors with their line and column.

use std::fmt;

/// How deep arrays and objects may nest (`serde_json`'s limit).
const MAX_DEPTH: usize = 128;

/// A parsed document: the text, its nodes, and the decoded text of the
/// strings that had escapes.
pub(crate) struct Document {
    text: Box<str>,
    nodes: Vec<Node>,
    unescaped: String,
}

/// One node of the tape. A container's children follow it: an array's
/// elements, an object's key (a `Str` node) and value in turn; `next` is
/// the index just past its last descendant.
#[derive(Clone, Copy, Debug)]
enum Node {
    Null,
    Bool(bool),
    /// A span of the text, checked against the number grammar.
    Number {
        start: u32,
        end: u32,
    },
    /// A span of the text (no escapes) or of `unescaped`.
    Str {
        start: u32,
        end: u32,
        escaped: bool,
    },
    Array {
        len: u32,
        next: u32,
    },
    Object {
        len: u32,
        next: u32,
    },
}

/// Why a document is not JSON, and where.
#[derive(Debug)]
pub(crate) struct SyntaxError {
    message: &'static str,
    line: usize,
    column: usize,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

impl Document {
    /// Parses `text` as one JSON value.
    pub(crate) fn parse(text: &str) -> Result<Document, SyntaxError> {
        let mut p = Parser {
            b: text.as_bytes(),
            pos: 0,
            nodes: Vec::with_capacity(text.len() / 8),
            unescaped: String::new(),
            depth: 0,
        };
        if u32::try_from(text.len()).is_err() {
            return Err(p.error("document larger than 4 GiB"));
        }
        p.value()?;
        p.skip_ws();
        if p.pos != p.b.len() {
            return Err(p.error("trailing characters"));
        }
        let Parser {
            nodes, unescaped, ..
        } = p;
        Ok(Document {
            text: text.into(),
            nodes,
            unescaped,
        })
    }

    /// The top-level value.
    pub(crate) fn root(&self) -> Json<'_> {
        Json { doc: self, at: 0 }
    }

    fn node(&self, at: usize) -> Node {
        self.nodes[at]
    }

    /// The index just past node `at` and its descendants.
    fn next(&self, at: usize) -> usize {
        match self.nodes[at] {
            Node::Array { next, .. } | Node::Object { next, .. } => next as usize,
            _ => at + 1,
        }
    }

    fn span(&self, start: u32, end: u32, escaped: bool) -> &str {
        let source = if escaped {
            &self.unescaped
        } else {
            &*self.text
        };
        &source[start as usize..end as usize]
    }
}

/// A value of a [`Document`].
#[derive(Clone, Copy)]
pub(crate) struct Json<'a> {
    doc: &'a Document,
    at: usize,
}

impl<'a> Json<'a> {
    /// Whether the value is `null`.
    pub(crate) fn is_null(self) -> bool {
        matches!(self.doc.node(self.at), Node::Null)
    }

    /// The value if it is `true` or `false`.
    pub(crate) fn as_bool(self) -> Option<bool> {
        match self.doc.node(self.at) {
            Node::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The value if it is a string.
    pub(crate) fn as_str(self) -> Option<&'a str> {
        match self.doc.node(self.at) {
            Node::Str {
                start,
                end,
                escaped,
            } => Some(self.doc.span(start, end, escaped)),
            _ => None,
        }
    }

    /// The value if it is a number written as an integer that fits `i64`.
    pub(crate) fn as_i64(self) -> Option<i64> {
        let text = self.number_text()?;
        if text.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) {
            return None;
        }
        text.parse().ok()
    }

    /// The value if it is a number, rounded to the nearest `f64`.
    pub(crate) fn as_f64(self) -> Option<f64> {
        self.number_text()?.parse().ok()
    }

    fn number_text(self) -> Option<&'a str> {
        match self.doc.node(self.at) {
            Node::Number { start, end } => Some(self.doc.span(start, end, false)),
            _ => None,
        }
    }

    /// The elements, if the value is an array.
    pub(crate) fn as_array(self) -> Option<impl ExactSizeIterator<Item = Json<'a>> + 'a> {
        match self.doc.node(self.at) {
            Node::Array { len, .. } => Some(Children {
                doc: self.doc,
                at: self.at + 1,
                left: len as usize,
                stride: 1,
            }),
            _ => None,
        }
    }

    /// The fields (key, value) in the document's order, if the value is
    /// an object.
    pub(crate) fn as_object(
        self,
    ) -> Option<impl ExactSizeIterator<Item = (&'a str, Json<'a>)> + 'a> {
        match self.doc.node(self.at) {
            Node::Object { len, .. } => {
                let doc = self.doc;
                Some(
                    Children {
                        doc,
                        at: self.at + 1,
                        left: len as usize,
                        stride: 2,
                    }
                    .map(move |key| {
                        let name = key.as_str().unwrap_or_default();
                        (
                            name,
                            Json {
                                doc,
                                at: key.at + 1,
                            },
                        )
                    }),
                )
            }
            _ => None,
        }
    }

    /// The field `name` (the last one so named), if the value is an object
    /// that has it.
    pub(crate) fn get(self, name: &str) -> Option<(&'a str, Json<'a>)> {
        self.as_object()?.filter(|(k, _)| *k == name).last()
    }
}

/// The children of a container: `left` more values from `at`, each
/// preceded by a key when `stride` is 2 (then `at` is the key's index).
struct Children<'a> {
    doc: &'a Document,
    at: usize,
    left: usize,
    stride: usize,
}

impl<'a> Iterator for Children<'a> {
    type Item = Json<'a>;

    fn next(&mut self) -> Option<Json<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let item = Json {
            doc: self.doc,
            at: self.at,
        };
        // An object's key is one node; its value follows.
        let value = self.at + self.stride - 1;
        self.at = self.doc.next(value);
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for Children<'_> {}

struct Parser<'t> {
    b: &'t [u8],
    pos: usize,
    nodes: Vec<Node>,
    unescaped: String,
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: &'static str) -> SyntaxError {
        let before = &self.b[..self.pos.min(self.b.len())];
        let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        SyntaxError {
            message,
            line,
            column: self.pos - line_start + 1,
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    /// A position as stored in a node (the text's length fits `u32`).
    fn offset(n: usize) -> u32 {
        n as u32
    }

    fn value(&mut self) -> Result<(), SyntaxError> {
        self.skip_ws();
        match self.b.get(self.pos) {
            Some(b'{') => self.container(true),
            Some(b'[') => self.container(false),
            Some(b'"') => {
                let node = self.string()?;
                self.nodes.push(node);
                Ok(())
            }
            Some(b't') => self.literal("true", Node::Bool(true)),
            Some(b'f') => self.literal("false", Node::Bool(false)),
            Some(b'n') => self.literal("null", Node::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected value")),
            None => Err(self.error("EOF while parsing a value")),
        }
    }

    fn literal(&mut self, word: &'static str, node: Node) -> Result<(), SyntaxError> {
        if self.b[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            self.nodes.push(node);
            Ok(())
        } else {
            Err(self.error("expected value"))
        }
    }

    /// An array (`object` false) or object at `pos`, its opening bracket.
    fn container(&mut self, object: bool) -> Result<(), SyntaxError> {
        if self.depth == MAX_DEPTH {
            return Err(self.error("recursion limit exceeded"));
        }
        self.depth += 1;
        self.pos += 1;
        let at = self.nodes.len();
        self.nodes.push(Node::Null);
        let close = if object { b'}' } else { b']' };
        let mut len = 0u32;
        self.skip_ws();
        if self.b.get(self.pos) == Some(&close) {
            self.pos += 1;
        } else {
            loop {
                if object {
                    self.skip_ws();
                    if self.b.get(self.pos) != Some(&b'"') {
                        return Err(self.error("key must be a string"));
                    }
                    let key = self.string()?;
                    self.nodes.push(key);
                    self.skip_ws();
                    if self.b.get(self.pos) != Some(&b':') {
                        return Err(self.error("expected `:`"));
                    }
                    self.pos += 1;
                }
                self.value()?;
                len = len
                    .checked_add(1)
                    .ok_or_else(|| self.error("too many elements"))?;
                self.skip_ws();
                match self.b.get(self.pos) {
                    Some(b',') => self.pos += 1,
                    Some(&c) if c == close => {
                        self.pos += 1;
                        break;
                    }
                    Some(_) if object => return Err(self.error("expected `,` or `}`")),
                    Some(_) => return Err(self.error("expected `,` or `]`")),
                    None => return Err(self.error("EOF while parsing a container")),
                }
            }
        }
        let next = u32::try_from(self.nodes.len()).map_err(|_| self.error("too many values"))?;
        self.nodes[at] = if object {
            Node::Object { len, next }
        } else {
            Node::Array { len, next }
        };
        self.depth -= 1;
        Ok(())
    }

    /// A string at `pos`, its opening quote.
    fn string(&mut self) -> Result<Node, SyntaxError> {
        self.pos += 1;
        let start = self.pos;
        loop {
            match self.b.get(self.pos) {
                Some(b'"') => {
                    let node = Node::Str {
                        start: Self::offset(start),
                        end: Self::offset(self.pos),
                        escaped: false,
                    };
                    self.pos += 1;
                    return Ok(node);
                }
                Some(b'\\') => return self.escaped_string(start),
                Some(0..=0x1F) => {
                    return Err(self.error("control character while parsing a string"))
                }
                Some(_) => self.pos += 1,
                None => return Err(self.error("EOF while parsing a string")),
            }
        }
    }

    /// The rest of a string that has an escape at `pos`, decoded into
    /// `unescaped`; its text so far starts at `start`.
    fn escaped_string(&mut self, start: usize) -> Result<Node, SyntaxError> {
        let out_start = self.unescaped.len();
        let mut run = start;
        loop {
            match self.b.get(self.pos) {
                Some(b'"') => {
                    self.push_text(run, self.pos);
                    self.pos += 1;
                    let end = u32::try_from(self.unescaped.len())
                        .map_err(|_| self.error("strings larger than 4 GiB"))?;
                    return Ok(Node::Str {
                        start: Self::offset(out_start),
                        end,
                        escaped: true,
                    });
                }
                Some(b'\\') => {
                    self.push_text(run, self.pos);
                    self.pos += 1;
                    let c = match self.b.get(self.pos) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => self.unicode_escape()?,
                        _ => return Err(self.error("invalid escape")),
                    };
                    self.pos += 1;
                    self.unescaped.push(c);
                    run = self.pos;
                }
                Some(0..=0x1F) => {
                    return Err(self.error("control character while parsing a string"))
                }
                Some(_) => self.pos += 1,
                None => return Err(self.error("EOF while parsing a string")),
            }
        }
    }

    /// Appends the text between two positions, both on character
    /// boundaries (an escape or a quote is ASCII).
    fn push_text(&mut self, from: usize, to: usize) {
        // The document is `str`, so a span between ASCII bytes is UTF-8.
        if let Ok(s) = std::str::from_utf8(&self.b[from..to]) {
            self.unescaped.push_str(s);
        }
    }

    /// The character of `\uXXXX` (with `pos` at the `u`), or of a
    /// surrogate pair `\uD8XX\uDCXX`; leaves `pos` at the last hex digit.
    fn unicode_escape(&mut self) -> Result<char, SyntaxError> {
        let first = self.hex4()?;
        if !(0xD800..0xE000).contains(&first) {
            return char::from_u32(first).ok_or_else(|| self.error("invalid unicode escape"));
        }
        if first >= 0xDC00 {
            return Err(self.error("lone trailing surrogate in hex escape"));
        }
        if self.b.get(self.pos + 1..self.pos + 3) != Some(b"\\u") {
            return Err(self.error("lone leading surrogate in hex escape"));
        }
        self.pos += 2;
        let second = self.hex4()?;
        if !(0xDC00..0xE000).contains(&second) {
            return Err(self.error("lone leading surrogate in hex escape"));
        }
        let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
        char::from_u32(code).ok_or_else(|| self.error("invalid unicode escape"))
    }

    /// Four hex digits after `pos`; leaves `pos` at the last one.
    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let mut v = 0;
        for _ in 0..4 {
            self.pos += 1;
            let digit = self
                .b
                .get(self.pos)
                .and_then(|&c| char::from(c).to_digit(16))
                .ok_or_else(|| self.error("invalid escape"))?;
            v = v * 16 + digit;
        }
        Ok(v)
    }

    fn digits(&mut self) -> usize {
        let from = self.pos;
        while let Some(b'0'..=b'9') = self.b.get(self.pos) {
            self.pos += 1;
        }
        self.pos - from
    }

    /// A number at `pos`: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`.
    fn number(&mut self) -> Result<(), SyntaxError> {
        let start = self.pos;
        if self.b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match self.b.get(self.pos) {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("invalid number")),
        }
        let mut integer = true;
        if self.b.get(self.pos) == Some(&b'.') {
            integer = false;
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            integer = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("invalid number"));
            }
        }
        let text = &self.b[start..self.pos];
        // Integers of any length are numbers (as `f64` when they overflow
        // `i64`); a fraction or exponent must stay within `f64`'s range.
        if !integer {
            let finite = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.parse::<f64>().ok())
                .is_some_and(f64::is_finite);
            if !finite {
                return Err(self.error("number out of range"));
            }
        }
        self.nodes.push(Node::Number {
            start: Self::offset(start),
            end: Self::offset(self.pos),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Document {
        Document::parse(text).unwrap()
    }

    #[test]
    fn walks_nested_values_in_document_order() {
        let doc = parse(r#" {"b": [1, -2.5e1, "x", true, null, {}], "a": {"k": false}, "e": []} "#);
        let fields: Vec<_> = doc.root().as_object().unwrap().collect();
        assert_eq!(
            fields.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            ["b", "a", "e"]
        );
        let items: Vec<_> = fields[0].1.as_array().unwrap().collect();
        assert_eq!(items.len(), 6);
        assert_eq!(items[0].as_i64(), Some(1));
        assert_eq!(items[1].as_i64(), None);
        assert_eq!(items[1].as_f64(), Some(-25.0));
        assert_eq!(items[2].as_str(), Some("x"));
        assert_eq!(items[3].as_bool(), Some(true));
        assert!(items[4].is_null());
        assert_eq!(items[5].as_object().unwrap().len(), 0);
        let (_, a) = doc.root().get("a").unwrap();
        assert_eq!(a.get("k").unwrap().1.as_bool(), Some(false));
        assert_eq!(doc.root().get("e").unwrap().1.as_array().unwrap().len(), 0);
        assert!(doc.root().get("z").is_none());
        assert!(doc.root().as_array().is_none());
    }

    #[test]
    fn agrees_with_serde_json_on_values() {
        let text = r#"{"s": "a\"b\\c\/\n\t\u00e9\ud83d\ude00z", "big": 18446744073709551616,
            "max": 9223372036854775807, "min": -9223372036854775808, "f": 0.1,
            "tiny": 5e-324, "neg0": -0.0, "dup": 1, "dup": 2, "u": "ünï"}"#;
        let ours = parse(text);
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
        let theirs = theirs.as_object().unwrap();
        for (key, value) in theirs {
            let (_, mine) = ours.root().get(key).unwrap();
            assert_eq!(mine.as_str(), value.as_str(), "{key}");
            assert_eq!(mine.as_i64(), value.as_i64(), "{key}");
            assert_eq!(
                mine.as_f64().map(f64::to_bits),
                value.as_f64().map(f64::to_bits),
                "{key}"
            );
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses() {
        for bad in [
            "",
            "{",
            "[1,]",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "{1: 2}",
            "01",
            "1.",
            "1e",
            "-",
            "1e400",
            "tru",
            "\"abc",
            "\"a\u{1}b\"",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "[1] 2",
            "nul",
        ] {
            assert!(Document::parse(bad).is_err(), "{bad:?} parsed");
            assert!(
                serde_json::from_str::<serde_json::Value>(bad).is_err(),
                "{bad:?} is JSON"
            );
        }
    }

    #[test]
    fn limits_nesting_and_reports_positions() {
        let deep = "[".repeat(129) + &"]".repeat(129);
        let e = Document::parse(&deep).err().unwrap();
        assert!(e.to_string().starts_with("recursion limit exceeded"), "{e}");
        assert!(Document::parse(&("[".repeat(128) + &"]".repeat(128))).is_ok());
        let e = Document::parse("{\n  \"a\": x}").err().unwrap();
        assert_eq!(e.to_string(), "expected value at line 2 column 8");
    }
}
