package sweep_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/sweep"
)

// A command line's axis reads as a sweep file's: each value in its
// canonical text, a range with both ends, rounded as a file's range is.
func TestParseAxis(t *testing.T) {
	for _, c := range []struct {
		in, param string
		want      []string
	}{
		{"ttl=2s..8s/4", "ttl", []string{"2s", "4s", "6s", "8s"}},
		{"ttl=1s,2.5s", "ttl", []string{"1s", "2.5s"}},
		{"read_timeout=100ms..200ms/3", "read_timeout", []string{"100ms", "150ms", "200ms"}},
		{"wait=1s..2s/4", "wait", []string{"1s", "1.333s", "1.667s", "2s"}},
		{"max_retries=0,1,3", "max_retries", []string{"0", "1", "3"}},
		{"max_retries=0..3/4", "max_retries", []string{"0", "1", "2", "3"}},
		{"clock_rate=0.5,2", "clock_rate", []string{"0.5", "2"}},
		{"safe=false,true", "safe", []string{"false", "true"}},
	} {
		a, err := sweep.ParseAxis(c.in)
		if err != nil || a.Param != c.param || !slices.Equal(a.Values, c.want) {
			t.Errorf("ParseAxis(%q) = %+v, %v; want %s %q", c.in, a, err, c.param, c.want)
		}
	}
	for _, in := range []string{"ttl", "ttl=", "ttl=banana", "ttl=-1s", "ttl=8s..2s/4", "ttl=1s..2s/1", "ttl=1s..2s", "safe=false..true/2", "max_retries=x", "clock_rate=0"} {
		a, err := sweep.ParseAxis(in)
		if err == nil {
			t.Errorf("ParseAxis(%q) = %+v; want an error", in, a)
			continue
		}
		if p, _, _ := strings.Cut(in, "="); strings.Contains(in, "=") && in != "ttl=" && !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("ParseAxis(%q): %v; want it to name %s", in, err, p)
		}
	}
}
