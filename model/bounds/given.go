package bounds

import (
	"time"

	"github.com/leaselab/leaselab/model"
)

// ExampleFaultSize is the size a mode whose size nobody gave is shown with
// (PredictGiven): a 200 ms latency, an 8 s pause or suspend, a leader clock
// at half speed.
var ExampleFaultSize = model.FaultSize{Latency: 200 * time.Millisecond, Pause: 8 * time.Second, ClockRate: 0.5}

// GivenPrediction is a mode's prediction for a size that may not give it.
type GivenPrediction struct {
	Prediction
	// Example: s did not give the mode's size (FaultSize.Gives), so this
	// is its prediction at ExampleFaultSize, to show how its bound is
	// made; its figures are of no fault anyone sized, and no bound.
	Example bool
}

// PredictGiven is Predict of p and s, every mode in its order, with each
// mode whose size s does not give predicted at ExampleFaultSize instead
// and marked Example. chaos bounds prints it: "not given" in the table,
// the example's formulas below.
func PredictGiven(p model.Params, s model.FaultSize) []GivenPrediction {
	examples := map[string]Prediction{}
	for _, pr := range Predict(p, ExampleFaultSize) {
		examples[pr.Mode] = pr
	}
	preds := Predict(p, s)
	out := make([]GivenPrediction, len(preds))
	for i, pr := range preds {
		if !s.Gives(pr.Mode) {
			out[i] = GivenPrediction{Prediction: examples[pr.Mode], Example: true}
			continue
		}
		out[i] = GivenPrediction{Prediction: pr}
	}
	return out
}
