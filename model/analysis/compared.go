package analysis

import "time"

// Options are AnalyzeWith's settings beyond the timeline and the
// parameters. The zero value is Analyze.
type Options struct {
	// OnCompare, if set, is told every comparison of two moments (or two
	// lengths) by which the analysis decides a fault's failover, with both
	// operands: whether a belief it hit began before it and ended within
	// its reach (the heal + TTL + Wait), and which sole leader after the
	// demotion is the stable one (it led alone for a TTL). Most are the
	// order of two timeline events; the reach and the stability rule are
	// not. sweep.Prove records them: two schedules that make every such
	// comparison the same way measure each fault's failover as the same sum
	// of event times, so it is affine where the events' times are. Nil (the
	// default): nothing is told.
	OnCompare func(a, b time.Duration)
}

// compared makes comparisons and tells Options.OnCompare about each; nil
// tells nobody.
type compared func(a, b time.Duration)

func (c compared) tell(a, b time.Duration) {
	if c != nil {
		c(a, b)
	}
}

// le reports a ≤ b.
func (c compared) le(a, b time.Duration) bool {
	c.tell(a, b)
	return a <= b
}

// lt reports a < b.
func (c compared) lt(a, b time.Duration) bool {
	c.tell(a, b)
	return a < b
}

// min is the lesser of a and b.
func (c compared) min(a, b time.Duration) time.Duration {
	if c.le(a, b) {
		return a
	}
	return b
}

// max is the greater of a and b.
func (c compared) max(a, b time.Duration) time.Duration {
	if c.le(a, b) {
		return b
	}
	return a
}
