package reports

import (
	"github.com/leaselab/leaselab/model/bounds"

	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/leaselab/leaselab/model"
)

// WriteStarter lists a starter suite (scenarios.Starter) written to dir
// for the timings p: the worst case predicted for each scenario beside
// what it expects, a warning where a limit is below it, and the commands
// that check and run it.
func WriteStarter(w io.Writer, dir string, suite []model.Scenario, p model.Params) error {
	p = p.WithDefaults()
	fmt.Fprintf(w, "wrote %d scenarios to %s (TTL %v, Wait %v, ReadTimeout %v, MaxRetries %d, %s mode)\n\n",
		len(suite), dir, p.TTL, p.Wait, p.Client.ReadTimeout, p.Client.MaxRetries, map[bool]string{false: "spec", true: "safe"}[p.Safe])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tPREDICTED GAP\tPREDICTED OVERLAP\tEXPECTS")
	var warn []string
	for _, sc := range suite {
		var pr bounds.Prediction
		preds := bounds.PredictScheduled(sc) // a starter scenario has one fault
		ok := len(preds) > 0
		if ok {
			pr = preds[0]
		}
		gap, overlap := "—", "—"
		if ok {
			gap, overlap = pr.MaxGap.String(), pr.MaxOverlap.String()
		}
		expects := ""
		for _, e := range sc.Expect {
			expects += fmt.Sprintf("%s %s  ", e.Metric, e.Max)
			limit, err := time.ParseDuration(e.Max)
			if err != nil || !ok {
				continue // predicted, or an expression of the run's timings
			}
			predicted := map[model.Metric]time.Duration{model.MetricMaxGap: pr.MaxGap, model.MetricMaxOverlap: pr.MaxOverlap, model.MetricStaleLeadership: max(pr.MaxOverlap, pr.MaxStale)}[e.Metric]
			if predicted > limit {
				warn = append(warn, fmt.Sprintf("  %s: predicted %s %v > your %v: it fails when the worst case happens", sc.Name, e.Metric, predicted, limit))
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", sc.Name, gap, overlap, expects)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(warn) > 0 {
		fmt.Fprintln(w, "\nlimits below the predicted worst case ('chaos advise' finds timings that keep them):")
		for _, l := range warn {
			fmt.Fprintln(w, l)
		}
	}
	strict := 0
	for _, sc := range suite {
		if sc.StrictClaims {
			strict++
		}
	}
	if strict > 0 {
		g, o := model.ClaimBounds(p)
		fmt.Fprintf(w, "\n%d of %d scenarios also gate on the spec's claims: split brain ≤ TTL (%v), gap ≤ TTL + Wait (%v), no overlap without a fault;\n"+
			"a claim not held fails, named. State a tolerance instead with --max-overlap / --max-gap.\n", strict, len(suite), o, g)
	}
	fmt.Fprintf(w, "\nnext: chaos validate %s/*.yaml; chaos suite %s --junit junit.xml\n", dir, dir)
	return nil
}
