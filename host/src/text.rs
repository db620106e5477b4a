//! Text a host shows on one line: a message a script may have shaped,
//! made safe for a terminal or a log.

use std::fmt;

/// Collapses `\n` line breaks (and the indentation after them) into single
/// spaces, and escapes every other character that could move a terminal's
/// cursor or start a new line: C0 and C1 controls (carriage return, escape,
/// form feed, NEL...), DEL, the Unicode line and paragraph separators, and
/// the bidirectional overrides.
pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut lines = s
        .split('\n')
        .map(|l| l.trim_end_matches([' ', '\t']))
        .filter(|l| !l.trim_matches([' ', '\t']).is_empty());
    let mut push = |line: &str| {
        for c in line.chars() {
            match c {
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c if c.is_control()
                    || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') =>
                {
                    let _ = fmt::Write::write_fmt(&mut out, format_args!("\\u{{{:x}}}", c as u32));
                }
                c => out.push(c),
            }
        }
    };
    if let Some(first) = lines.next() {
        push(first);
    }
    for line in lines {
        push(" ");
        push(line.trim_start_matches([' ', '\t']));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_what_could_forge_a_terminal_line() {
        let forged = "main.lua:1: x\r\u{1b}[2Kerror[ok]: fine\u{c}\u{85}\u{2028}\u{202e}\u{7f}";
        let line = one_line(forged);
        assert_eq!(
            line,
            "main.lua:1: x\\r\\u{1b}[2Kerror[ok]: fine\\u{c}\\u{85}\\u{2028}\\u{202e}\\u{7f}"
        );
        assert!(!line.chars().any(|c| c.is_control()));
        assert_eq!(one_line("a\n\tb\n\n  c"), "a b c");
    }
}
