package verdict

import (
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/bounds"
)

// PredictionOf returns the run's prediction of a failure mode.
func (res *Result) PredictionOf(mode string) (bounds.Prediction, bool) {
	for _, p := range res.Predictions {
		if p.Mode == mode {
			return p, true
		}
	}
	return bounds.Prediction{}, false
}

// CheckOf returns the evaluation's first check of metric.
func (e Evaluation) CheckOf(metric model.Metric) (model.Check, bool) {
	for _, c := range e.Checks {
		if c.Metric == metric {
			return c, true
		}
	}
	return model.Check{}, false
}
