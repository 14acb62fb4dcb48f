package printable_test

import (
	"testing"

	"github.com/leaselab/leaselab/internal/printable"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, é 日本, tab\tand\nnewline", "plain text, é 日本, tab\tand\nnewline"},
		{"\x1b[31mred\x1b[0m and \x1b[1;4mbold\x1b[m", "red and bold"}, // SGR colours: stripped, text kept
		{"\x1b[2K\x1b[1Aup", "up"},                                       // cursor moves
		{"\x1b]8;;https://x.example\x1b\\link\x1b]8;;\x07", "link"},      // OSC 8 hyperlink, ST and BEL ended
		{"\x1b]0;title\x07after", "after"},                               // window title
		{"\x1b(Bcharset", "charset"},                                     // nF escape
		{"\x1bcreset", "reset"},                                          // two-byte escape (RIS)
		{"lone \x1b", `lone \x1b`},                                       // no sequence: shown
		{"cut \x1b[31", `cut \x1b[31`},                                   // unfinished CSI: shown
		{"cut \x1b]0;title", `cut \x1b]0;title`},                         // unfinished OSC: shown
		{"nul\x00bel\x07bs\x08del\x7f", `nul\x00bel\x07bs\x08del\x7f`},   // other C0 and DEL: escaped
		{"over\rwrite", `over\x0dwrite`},                                 // a lone CR would overwrite the line
		{"crlf\r\nline", "crlf\nline"},                                   // CRLF is a line end
		{"c1 \u009b31m csi, \u0085 nel", `c1 \u009b31m csi, \u0085 nel`}, // C1 controls: escaped
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},                     // not UTF-8: escaped bytes
		{"non-chars \ufffe\uffff", `non-chars \ufffe\uffff`},             // forbidden in XML 1.0
		{`a \x1b already escaped`, `a \x1b already escaped`},             // backslashes are text
	} {
		if got := printable.Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Text's result is its own fixed point: nothing it writes needs escaping.
func TestTextIdempotent(t *testing.T) {
	for _, s := range []string{"\x1b[31mx\x00\x07\r\xff\u009b\uffff", "\x1b", "\x1b]0;t"} {
		once := printable.Text(s)
		if twice := printable.Text(once); twice != once {
			t.Errorf("Text(Text(%q)) = %q, want %q", s, twice, once)
		}
	}
}

func BenchmarkTextClean(b *testing.B) {
	s := "partition-blackhole: FAIL max_gap ≤ 6.251s measured 6.469s (instance 2 demoted: i/o timeout)"
	for b.Loop() {
		printable.Text(s)
	}
}
