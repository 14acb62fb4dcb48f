package scenarios

import (
	"errors"
	"fmt"
	"strings"
)

// Problem is one thing wrong with a scenario file.
type Problem struct {
	// Line is the 1-based line the problem is on.
	Line int `json:"line"`
	// Field is the path of the value, e.g. "faults[0].kind"; empty when the
	// problem is about the file or the top-level mapping.
	Field string `json:"field,omitempty"`
	// Msg says what is wrong, and where useful what would be right.
	Msg string `json:"msg"`
}

// Error is everything wrong with one scenario file. Parse returns it (as an
// error) so that callers can show each problem on its own line, and tools can
// read them one by one.
type Error struct {
	// File is the name the file was parsed under.
	File     string    `json:"file"`
	Problems []Problem `json:"problems"`
}

// Error renders one problem per line: "file:line: field: message".
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = e.line(p)
	}
	return strings.Join(lines, "\n")
}

func (e *Error) line(p Problem) string {
	if p.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, p.Line, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, p.Line, p.Field, p.Msg)
}

// Suggest returns the known word closest to w, or "" when none is close
// enough to be a plausible typo: the did-you-mean of a scenario file's
// keys, a built-in's name and the CLI's flags.
func Suggest(w string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		d := editDistance(strings.ToLower(w), k)
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	// Two edits catch most slips ("durration", "tll"); longer words may be
	// further off ("jitter_ms" for "jitter") and still be what was meant.
	if bestD >= 0 && (bestD <= 2 || bestD <= len(w)/3) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b, with an
// adjacent transposition counted as one edit (a common typo).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// unknownWord renders "unknown <what> "w"; did you mean "x"?" or, with no
// close match, the list of what is known.
func unknownWord(what, w string, known []string) string {
	if s := Suggest(w, known); s != "" {
		return fmt.Sprintf("unknown %s %q; did you mean %q?", what, w, s)
	}
	return fmt.Sprintf("unknown %s %q; want one of %s", what, w, strings.Join(known, ", "))
}

// MaxShownLines is how many lines of problems Capped keeps: a large file of
// unknown keys must not print megabytes.
const MaxShownLines = 20

// maxLineBytes is how much of one problem's line Capped keeps.
const maxLineBytes = 300

// Capped is errs as a terminal shows them: one per line (a file's problems
// one per line; a SuiteErrors counts as its errors), each line cut to 300
// bytes, at most MaxShownLines lines in all, saying how many more there
// were; more than one error is headed "N invalid scenarios:".
func Capped(errs ...error) error {
	var all []string
	n := 0
	for _, e := range errs {
		if se, ok := e.(SuiteErrors); ok {
			for _, x := range se {
				all = append(all, x.Error())
			}
			n += len(se)
			continue
		}
		all = append(all, e.Error())
		n++
	}
	msg := capLines(strings.Join(all, "\n"), MaxShownLines)
	if n > 1 {
		msg = fmt.Sprintf("%d invalid scenarios:\n%s", n, msg)
	}
	return errors.New(msg)
}

// capLines keeps the first n lines of s, each cut to maxLineBytes (on a
// rune boundary), and says how many more there were.
func capLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	more := len(lines) - n
	if more > 0 {
		lines = lines[:n]
	}
	for i, l := range lines {
		if len(l) > maxLineBytes {
			lines[i] = strings.ToValidUTF8(l[:maxLineBytes], "") + "…"
		}
	}
	if more > 0 {
		lines = append(lines, fmt.Sprintf("… and %d more lines ('chaos validate FILE' shows the first %d of one file)", more, n))
	}
	return strings.Join(lines, "\n")
}
