// Package printable makes text from outside the harness (an agent's
// stderr, an error carrying it, a file name) safe to put in a report or on
// a terminal: no raw control character survives. An ANSI escape sequence
// (a colour, a cursor move, a window title, a hyperlink) is stripped and
// its text kept; every other control character, a byte that is not UTF-8
// and the two characters XML 1.0 forbids besides controls (U+FFFE, U+FFFF)
// is written as an escape a reader can see (\x07, \xff, \u009b). So a
// junit.xml stays well-formed XML, a Markdown report renders what was
// said, and a terminal shows it without obeying it.
package printable

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Text is s with no raw control character: newlines and tabs stay (a CRLF
// becomes a newline), ANSI escape sequences are removed, anything else
// that is not printable is escaped. Text of its own result changes
// nothing, and text that needs nothing is returned as it is.
func Text(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == 0x1b:
			if n := escapeLen(s[i:]); n > 0 {
				i += n
				continue
			}
			b.WriteString(`\x1b`)
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			// The LF that follows is written next.
		case c == '\n' || c == '\t':
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, w := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && w == 1:
				fmt.Fprintf(&b, `\x%02x`, c)
			case forbidden(r):
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteString(s[i : i+w])
			}
			i += w
			continue
		}
		i++
	}
	return b.String()
}

// clean reports whether s needs nothing done: the common case, checked
// without allocating.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			if !utf8.ValidString(s[i:]) {
				return false
			}
			for _, r := range s[i:] {
				if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || forbidden(r) {
					return false
				}
			}
			return true
		}
		if c < 0x20 && c != '\n' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// forbidden: the C1 controls (a terminal may read U+009B as the start of
// a sequence) and the characters XML 1.0 does not allow at all.
func forbidden(r rune) bool {
	return r >= 0x80 && r <= 0x9f || r == 0xfffe || r == 0xffff
}

// escapeLen is the length of the ANSI escape sequence s starts with (s[0]
// is ESC), or 0 when s does not start with a whole one: then the ESC is
// shown, not the rest swallowed.
func escapeLen(s string) int {
	if len(s) < 2 {
		return 0
	}
	switch c := s[1]; {
	case c == '[': // CSI: parameters, intermediates, a final byte
		j := 2
		for j < len(s) && s[j] >= 0x30 && s[j] <= 0x3f {
			j++
		}
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
			return j + 1
		}
		return 0
	case c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_':
		// OSC, DCS, SOS, PM, APC: a string ended by ST (ESC \) or, for
		// OSC as terminals accept it, by BEL.
		for j := 2; j < len(s); j++ {
			switch s[j] {
			case 0x07:
				return j + 1
			case 0x1b:
				if j+1 < len(s) && s[j+1] == '\\' {
					return j + 2
				}
				return 0
			}
		}
		return 0
	case c >= 0x20 && c <= 0x2f: // nF: intermediates, then a final byte
		j := 2
		for j < len(s) && s[j] >= 0x20 && s[j] <= 0x2f {
			j++
		}
		if j < len(s) && s[j] >= 0x30 && s[j] <= 0x7e {
			return j + 1
		}
		return 0
	case c >= 0x30 && c <= 0x7e: // a two-byte escape
		return 2
	}
	return 0
}
