//! Error messages that point into the schema text, in PyTorch's three
//! formats:
//!
//! - lexer errors (`Lexer::expected`, `Lexer::reportError`):
//!   `expected ) but found 'ident' here:` followed by the highlighted source;
//! - `ErrorReport` (type and default-value errors): a newline, the message,
//!   `:` and the highlighted source, so its first line is empty;
//! - plain `TORCH_CHECK` texts, which carry no position.
//!
//! The highlight is a port of `SourceRange::print_with_context` (three lines
//! of context, a `~~~ <--- HERE` marker under the range). PyTorch's messages
//! are C strings, so a message is cut at its first NUL byte.

use c10_core::Error;

/// Lines of context printed around a highlighted range.
const CONTEXT: usize = 3;

/// A byte range `[start, end)` of the schema text (which the lexer keeps
/// below 4 GiB, so 32-bit offsets keep tokens small).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The range `[start, end)`. The lexer refuses texts of 4 GiB or more,
    /// so offsets fit; larger ones would wrap.
    pub(crate) fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// First byte.
    pub(crate) fn start(self) -> usize {
        self.start as usize
    }

    /// One past the last byte.
    pub(crate) fn end(self) -> usize {
        self.end as usize
    }
}

/// An error on its way out of the parser, boxed to keep results small.
pub(crate) type Failure = Box<Error>;

/// Appends the source around `span` with the `~~~ <--- HERE` marker
/// (`SourceRange::highlight`).
pub(crate) fn highlight(src: &[u8], span: Span, out: &mut Vec<u8>) {
    let len = src.len();
    let at = |i: usize| src.get(i).copied().unwrap_or(0);
    let start = span.start();
    if span.end().saturating_sub(start) == len {
        out.extend_from_slice(src);
        return;
    }
    let range_end = len.min(span.end());
    if start > len {
        return;
    }
    let mut begin_line = start;
    while begin_line > 0 && src[begin_line - 1] != b'\n' {
        begin_line -= 1;
    }
    let mut end_line = range_end;
    while end_line < len && src[end_line] != b'\n' {
        end_line += 1;
    }
    let mut begin_context = begin_line;
    let mut lines = 0;
    while begin_context > 0 {
        if src[begin_context - 1] == b'\n' {
            lines += 1;
        }
        if lines >= CONTEXT {
            break;
        }
        begin_context -= 1;
    }
    let mut end_context = end_line;
    lines = 0;
    while end_context < len {
        if src[end_context] == b'\n' {
            lines += 1;
        }
        if lines >= CONTEXT {
            break;
        }
        end_context += 1;
    }
    out.extend_from_slice(&src[begin_context..start]);
    let mut line_start = start;
    let mut line_end = start;
    while line_start < range_end {
        while line_end < len && src[line_end] != b'\n' {
            line_end += 1;
        }
        let actual_line = &src[line_start..(line_end + 1).min(len)];
        out.extend_from_slice(actual_line);
        if actual_line.last() != Some(&b'\n') {
            out.push(b'\n');
        }
        let mut highlight_begin = line_start;
        while highlight_begin > 0 && src[highlight_begin - 1] != b'\n' {
            highlight_begin -= 1;
        }
        let mut highlight_end = line_start;
        while highlight_end < range_end && src[highlight_end] != b'\n' {
            highlight_end += 1;
        }
        let empty_space = (highlight_begin..highlight_end)
            .take_while(|&i| src[i] == b' ' || i < start)
            .count();
        let highlight_space = highlight_end - highlight_begin - empty_space;
        if highlight_space > 0 {
            let more_lines = (line_end..=range_end).any(|i| at(i) != b'\n' && at(i) != b' ');
            out.extend(std::iter::repeat_n(b' ', empty_space));
            out.extend(std::iter::repeat_n(b'~', highlight_space));
            if more_lines && line_end != range_end {
                out.push(b'\n');
            } else {
                out.extend_from_slice(b" <--- HERE\n");
            }
        }
        line_end += 1;
        line_start = line_end;
    }
    if line_end <= len {
        let tail = if end_context >= line_end {
            &src[line_end..end_context]
        } else {
            &src[line_end..]
        };
        out.extend_from_slice(tail);
        if tail.last().is_some_and(|&c| c != b'\n') {
            out.push(b'\n');
        }
    }
}

/// Turns message bytes into an error, cutting at the first NUL as the C
/// string PyTorch's `what()` returns would be.
pub(crate) fn finish(mut message: Vec<u8>) -> Failure {
    if let Some(nul) = message.iter().position(|&b| b == 0) {
        message.truncate(nul);
    }
    Box::new(Error::runtime(
        String::from_utf8_lossy(&message).into_owned(),
    ))
}

/// `torch::jit::ErrorReport(range) << message`: `"\n" + message + ":\n"`
/// followed by the highlighted source.
pub(crate) fn error_report(src: &[u8], span: Span, message: &str) -> Failure {
    let mut out = Vec::with_capacity(message.len() + src.len() + 64);
    out.push(b'\n');
    out.extend_from_slice(message.as_bytes());
    out.extend_from_slice(b":\n");
    highlight(src, span, &mut out);
    finish(out)
}

/// `Lexer::expected(what, token)`: `expected WHAT but found 'KIND' here:`
/// followed by the highlighted source.
pub(crate) fn expected(src: &[u8], span: Span, what: &[u8], found: &[u8]) -> Failure {
    let mut out = Vec::with_capacity(src.len() + 64);
    out.extend_from_slice(b"expected ");
    out.extend_from_slice(what);
    out.extend_from_slice(b" but found '");
    out.extend_from_slice(found);
    out.extend_from_slice(b"' here:\n");
    highlight(src, span, &mut out);
    finish(out)
}

/// `Lexer::reportError(what, token)`: `WHAT:` and the highlighted source.
pub(crate) fn report_error(src: &[u8], span: Span, what: &str) -> Failure {
    let mut out = Vec::with_capacity(src.len() + 64);
    out.extend_from_slice(what.as_bytes());
    out.extend_from_slice(b":\n");
    highlight(src, span, &mut out);
    finish(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(src: &str, start: usize, end: usize) -> String {
        let mut out = Vec::new();
        highlight(src.as_bytes(), Span::new(start, end), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn highlights_a_token() {
        assert_eq!(
            text("foo(int x) - Tensor", 11, 12),
            "foo(int x) - Tensor\n           ~ <--- HERE\n"
        );
    }

    #[test]
    fn end_of_input_prints_the_line_only() {
        assert_eq!(text("foo(int", 7, 7), "foo(int");
    }

    #[test]
    fn whole_input_is_printed_plainly() {
        assert_eq!(text("(", 0, 1), "(");
    }

    #[test]
    fn messages_stop_at_nul() {
        let e = expected(b"f(\0", Span::new(2, 3), b"a valid token", b"\0");
        assert_eq!(e.message(), "expected a valid token but found '");
        let e = error_report(b"f(Dimname x)", Span::new(2, 9), "unknown type");
        assert!(e
            .message()
            .starts_with("\nunknown type:\nf(Dimname x)\n  ~~~~~~~ <--- HERE"));
    }
}
