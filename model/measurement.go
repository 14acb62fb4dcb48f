package model

// Judged is a check's verdict on one timing; under says a fail is under
// its min (else over its max, open or not measured).
type Judged struct {
	V     Verdict
	Under bool
}

// At is what c says of a duration metric measured as m.
func (c Check) At(m Measurement) Judged {
	switch {
	case m.Unknown != "":
		return Judged{V: Unknown}
	case m.Missing != "":
		return Judged{V: Fail}
	case m.Undecided != "" && !(c.HasMax && (m.Value > c.Max || m.Open)):
		return Judged{V: Unknown}
	case c.HasMin && m.Value < c.Min:
		return Judged{Fail, true}
	case c.HasMax && (m.Value > c.Max || m.Open):
		return Judged{V: Fail}
	}
	return Judged{V: Pass}
}

// AtCount is what c says of a count metric measured as n.
func (c Check) AtCount(n int) Judged {
	switch {
	case c.HasMax && n > c.MaxCount:
		return Judged{V: Fail}
	case c.HasMin && n < c.MinCount:
		return Judged{Fail, true}
	}
	return Judged{V: Pass}
}

// String prints a measurement for a check's detail.
func (m Measurement) String() string {
	switch {
	case m.Unknown != "":
		return "unknown (" + m.Unknown + ")"
	case m.Missing != "":
		return "not measured (" + m.Missing + ")"
	case m.Open:
		return "≥ " + m.Value.String() + ", still open"
	}
	return m.Value.String()
}
