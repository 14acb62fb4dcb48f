package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Capped keeps MaxShownLines lines, cuts long ones on a rune boundary,
// counts what it left off, and heads several errors with their number —
// a SuiteErrors counting as its errors.
func TestCapped(t *testing.T) {
	if got := Capped(errors.New("a.yaml:1: bad")).Error(); got != "a.yaml:1: bad" {
		t.Errorf("one short error changed: %q", got)
	}
	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprintf("big.yaml:%d: unknown key", i+1))
	}
	got := strings.Split(Capped(errors.New(strings.Join(many, "\n"))).Error(), "\n")
	if len(got) != MaxShownLines+1 || got[MaxShownLines] != "… and 5 more lines ('chaos validate FILE' shows the first 20 of one file)" {
		t.Errorf("25 lines capped to %d, last %q", len(got), got[len(got)-1])
	}
	long := strings.Repeat("x", 299) + "é" + strings.Repeat("y", 50) // é straddles byte 300
	if got := Capped(errors.New(long)).Error(); got != strings.Repeat("x", 299)+"…" {
		t.Errorf("a long line cut to %q", got)
	}
	se := SuiteErrors{errors.New("a.yaml:1: bad"), errors.New("b.yaml:2: worse")}
	if got, want := Capped(se).Error(), "2 invalid scenarios:\na.yaml:1: bad\nb.yaml:2: worse"; got != want {
		t.Errorf("suite errors: %q, want %q", got, want)
	}
	if got, want := Capped(errors.New("x"), se).Error(), "3 invalid scenarios:\nx\na.yaml:1: bad\nb.yaml:2: worse"; got != want {
		t.Errorf("mixed: %q, want %q", got, want)
	}
}
