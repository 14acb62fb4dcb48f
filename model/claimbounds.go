package model

import "time"

// ClaimBounds are the spec's claimed bounds for p: the worst-case gap
// TTL + Wait (ClaimGap) and the split-brain window TTL (ClaimSplitBrain).
// A run's claims are checked against them (with ClaimSlack), a
// prediction's worst case compared with them (Prediction.ExceedsClaims).
func ClaimBounds(p Params) (gap, overlap time.Duration) {
	return p.TTL + p.Wait, p.TTL
}

// ExceedsClaims reports whether the prediction's worst gap and worst
// overlap for p exceed the spec's claims (ClaimBounds): a failure mode in
// which the spec's own bound does not hold.
func (pr Prediction) ExceedsClaims(p Params) (gap, overlap bool) {
	g, o := ClaimBounds(p)
	return pr.MaxGap > g, pr.MaxOverlap > o
}
