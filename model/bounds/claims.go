package bounds

import (
	"github.com/leaselab/leaselab/model"
)

// ExceedsClaims reports whether the prediction's worst gap and worst
// overlap for p exceed the spec's claims (ClaimBounds): a failure mode in
// which the spec's own bound does not hold.
func (pr Prediction) ExceedsClaims(p model.Params) (gap, overlap bool) {
	g, o := model.ClaimBounds(p)
	return pr.MaxGap > g, pr.MaxOverlap > o
}
