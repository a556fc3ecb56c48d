//! String literals: reading them the way PyTorch's `parseStringLiteral`
//! does (quotes stripped, backslash escapes resolved to bytes) and writing
//! them the way `c10::printQuotedString` does (double quotes, C escapes,
//! octal for other unprintable bytes).

/// Why a literal could not be read; the message PyTorch's `ErrorReport`
/// carries.
pub(crate) type LiteralError = &'static str;

/// `\nnn`: the three octal digits after the backslash at `pos`, as a byte
/// (`None` when there are fewer than three, one is not octal, or the value
/// exceeds 255).
fn parse_octal(s: &[u8], pos: usize) -> Option<u8> {
    if pos + 3 >= s.len() {
        return None;
    }
    let mut c: u32 = 0;
    for &d in &s[pos + 1..pos + 4] {
        if !(b'0'..=b'7').contains(&d) {
            return None;
        }
        c = c * 8 + u32::from(d - b'0');
    }
    u8::try_from(c).ok()
}

/// The bytes a string literal token (quotes included) stands for.
pub(crate) fn parse_string_literal(token: &[u8]) -> Result<Vec<u8>, LiteralError> {
    let quote = token.first().copied().unwrap_or(b'"');
    let quote_len = if token.len() >= 3 && token[..3].iter().all(|&c| c == quote) {
        3
    } else {
        1
    };
    let inner = token
        .get(quote_len..token.len().saturating_sub(quote_len))
        .unwrap_or_default();
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        let b = inner[i];
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let next = inner.get(i + 1).copied().unwrap_or(0);
        let (c, consumed) = match next {
            b'\\' | b'\'' | b'"' | b'\n' => (next, 2),
            b'a' => (0x07, 2),
            b'b' => (0x08, 2),
            b'f' => (0x0c, 2),
            b'n' => (b'\n', 2),
            b'v' => (0x0b, 2),
            b't' => (b'\t', 2),
            b'x' => return Err("unsupported hex specifier"),
            b'u' | b'U' => return Err("unsupported unicode specifier"),
            _ => match parse_octal(inner, i) {
                Some(v) => (v, 4),
                None => return Err(" ill formed octal specifier"),
            },
        };
        out.push(c);
        i += consumed;
    }
    Ok(out)
}

/// Appends `bytes` in double quotes with C escapes (`printQuotedString`).
/// Bytes outside printable ASCII become three "octal" digits computed on a
/// signed `char`, exactly as PyTorch's code does.
pub(crate) fn print_quoted_string(bytes: &[u8], out: &mut String) {
    out.push('"');
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\'' => out.push_str("\\'"),
            b'"' => out.push_str("\\\""),
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x0b => out.push_str("\\v"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => {
                let mut s = i32::from(b as i8);
                let d2 = 48 + s % 8;
                s /= 8;
                let d1 = 48 + s % 8;
                s /= 8;
                let d0 = 48 + s;
                out.push('\\');
                for d in [d0, d1, d2] {
                    out.push(char::from(u8::try_from(d).unwrap_or(b'?')));
                }
            }
        }
    }
    out.push('"');
}

/// Python's `repr` of a string (for comparing with `torch._C` output):
/// single quotes unless the text holds a single quote and no double quote.
pub(crate) fn python_repr(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let quote = if text.contains('\'') && !text.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(text.len() + 2);
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_escapes() {
        assert_eq!(parse_string_literal(br#""a\nb""#).unwrap(), b"a\nb");
        assert_eq!(parse_string_literal(br"'\101x'").unwrap(), b"Ax");
        assert_eq!(parse_string_literal(br#""""x""""#).unwrap(), b"x");
        assert_eq!(
            parse_string_literal(br#""\r""#),
            Err(" ill formed octal specifier")
        );
        assert_eq!(
            parse_string_literal(br#""\x41""#),
            Err("unsupported hex specifier")
        );
    }

    #[test]
    fn prints_quoted() {
        let mut s = String::new();
        print_quoted_string(b" \n\t\x0c\x0b\"'\\\x01\xc3", &mut s);
        assert_eq!(s, r#"" \n\t\f\v\"\'\\\001\0)+""#);
    }

    #[test]
    fn python_reprs() {
        assert_eq!(python_repr(b"none"), "'none'");
        assert_eq!(python_repr(b"\"'\\"), r#"'"\'\\'"#);
        assert_eq!(python_repr(b"it's"), "\"it's\"");
        assert_eq!(python_repr(b" \n\t\x0c\x0b"), r"' \n\t\x0c\x0b'");
    }
}
