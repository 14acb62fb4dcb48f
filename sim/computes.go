package sim

// Computer is implemented by a backend whose runs compute rather than wait:
// a run takes virtual time and as much of one core as it can get (the
// virtual backend). A caller asks it instead of naming the backend, so a
// further backend needs no change of its callers:
//   - one run per core at once (runs that wait on timers can share one);
//   - no stagger between starts (no environment comes up);
//   - its durations are shown to the millisecond (a suite takes less
//     than a second);
//   - its refusals need no environment, so they can be asked before
//     anything runs.
//
// A backend that does not implement it waits: its runs take wall time.
type Computer interface {
	// Computes reports whether the backend's runs compute rather than
	// wait.
	Computes() bool
}

// Computes reports whether b's runs compute rather than wait (Computer).
func Computes(b Backend) bool {
	c, ok := b.(Computer)
	return ok && c.Computes()
}

// Describer is implemented by a backend that says what it is, for reports
// (verdict.Result.BackendAbout): a few words on what runs and on what clock.
type Describer interface {
	// About describes the backend ("redis-server through Toxiproxy,
	// wall-clock time").
	About() string
}

// About is b's description (Describer), or "" if it gives none.
func About(b Backend) string {
	if d, ok := b.(Describer); ok {
		return d.About()
	}
	return ""
}
