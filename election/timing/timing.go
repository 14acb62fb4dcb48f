// Package timing holds the rules a lease's timings must satisfy, written
// once: the elector checks its options with them (election.Opts.Validate)
// and the harness checks every scenario, as it will run, with the same rules
// (model.Scenario.Validate). It has no dependencies beyond the standard
// library, so the pure model can import it without the elector's Redis
// client.
package timing

import (
	"fmt"
	"time"
)

// MinTTL is the shortest lease: Redis's PX takes whole milliseconds, and the
// renewal comes at TTL/2.
const MinTTL = 2 * time.Millisecond

// Lease is the timings of one elector, as election.Opts names them. Zero
// values are taken as given: callers fill their defaults first.
type Lease struct {
	TTL         time.Duration
	Wait        time.Duration
	JitterMS    int
	OpTimeout   time.Duration
	StopTimeout time.Duration
	// Safe turns on the lease guard, which needs room for Margin before the
	// lease runs out.
	Safe bool
	// SafeMargin is the guard's margin; 0 means DefaultMargin(TTL).
	SafeMargin time.Duration
}

// Problem is one rule a Lease breaks. Field names the option as
// election.Opts spells it ("TTL", "JitterMS"); Value is its value as
// written in a message ("1ms", "7 ms"); Rule says what it must be.
type Problem struct {
	Field string
	Value string
	Rule  string
}

func (p Problem) String() string { return p.Field + " is " + p.Value + "; it " + p.Rule }

// DefaultMargin is the lease guard's default margin for a TTL: 1% of it
// plus 2 ms, the clock drift and timer lateness Redlock allows for.
func DefaultMargin(ttl time.Duration) time.Duration {
	return ttl/100 + 2*time.Millisecond
}

// Margin is the guard's margin, defaulted.
func (l Lease) Margin() time.Duration {
	if l.SafeMargin > 0 {
		return l.SafeMargin
	}
	return DefaultMargin(l.TTL)
}

// Problems lists every rule the timings break, in the order of the fields.
func (l Lease) Problems() []Problem {
	var out []Problem
	bad := func(field, value, rule string, a ...any) {
		out = append(out, Problem{Field: field, Value: value, Rule: fmt.Sprintf(rule, a...)})
	}
	if l.TTL < MinTTL {
		bad("TTL", l.TTL.String(), "must be at least %v (the lease uses PX milliseconds)", MinTTL)
	}
	if l.Wait <= 0 {
		bad("Wait", l.Wait.String(), "must be positive")
	}
	switch {
	case l.JitterMS < 0:
		bad("JitterMS", fmt.Sprint(l.JitterMS), "must not be negative")
	case l.TTL >= MinTTL && int64(l.JitterMS) >= CeilMS(l.TTL/2):
		// Renewal comes TTL/2 + jitter after the last one; jitter of TTL/2
		// or more could renew after the lease expired. Compared in whole
		// milliseconds, so a huge JitterMS cannot overflow a Duration.
		bad("JitterMS", fmt.Sprintf("%d ms", l.JitterMS), "must be less than TTL/2 (%v)", l.TTL/2)
	case l.Safe && l.TTL >= MinTTL && int64(l.JitterMS) >= CeilMS(l.TTL/2-l.Margin()):
		// The renewal (TTL/2 + jitter after the send) must come before the
		// guard (TTL − margin after it).
		bad("JitterMS", fmt.Sprintf("%d ms", l.JitterMS), "plus the safe margin %v must be less than TTL/2 (%v) in safe mode", l.Margin(), l.TTL/2)
	}
	if l.OpTimeout < 0 {
		bad("OpTimeout", l.OpTimeout.String(), "must not be negative")
	}
	if l.StopTimeout < 0 {
		bad("StopTimeout", l.StopTimeout.String(), "must not be negative")
	}
	if l.SafeMargin < 0 {
		bad("SafeMargin", l.SafeMargin.String(), "must not be negative")
	}
	if frac := l.TTL % time.Millisecond; l.Safe && l.TTL >= MinTTL && frac > 0 && l.Margin() <= frac {
		// PX takes whole milliseconds: Redis keeps the key TTL − frac, and
		// the guard, TTL − margin after the send, must end before that.
		bad("TTL", l.TTL.String(), "is cut to %v by PX (whole milliseconds), which the lease guard at TTL − SafeMargin (%v) outlives: give whole milliseconds or a SafeMargin above %v",
			l.TTL-frac, l.TTL-l.Margin(), frac)
	}
	return out
}

// CeilMS is d in whole milliseconds, rounded up.
func CeilMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}
