package reports

import (
	"github.com/leaselab/leaselab/model/bounds"

	"fmt"
	"io"
	"text/tabwriter"

	"github.com/leaselab/leaselab/model"
)

// Bounds is what chaos bounds prints for one parameter set: the predicted
// worst cases per failure mode (WriteTable), then their formulas
// (WriteFormulas), with a schedule search's worst cases beside them when
// one ran.
type Bounds struct {
	// Params are the parameters predicted for, defaults filled.
	Params model.Params
	// Predictions are bounds.PredictGiven's, one per failure mode.
	Predictions []bounds.GivenPrediction
	// SizeHint says, per mode, how to give the fault size of a prediction
	// made with the example size (bounds.Prediction.Example; the CLI:
	// "--pause 2s"): such a mode has no bound until it is given.
	SizeHint map[string]string
	// Explored are a search's worst cases per mode (sweep.ExploreModes);
	// nil: no search ran.
	Explored map[string]Explored
}

// Explored is a schedule search's worst case of one failure mode, each
// figure already written beside its bound.
type Explored struct {
	// Runs is how many schedules the search ran.
	Runs int
	// Gap and Overlap are the worst gap and overlap found, written
	// beside their bounds.
	Gap, Overlap string
}

// WriteTable writes the parameters' line and one row per failure mode:
// its bounds and whether the spec's claims hold within them.
func (b Bounds) WriteTable(w io.Writer) error {
	p := b.Params
	jit := fmt.Sprintf("%dms", p.JitterMS)
	if p.JitterMS < 0 {
		jit = "none"
	}
	fmt.Fprintf(w, "TTL %v, Wait %v, jitter %s, OpTimeout %v; go-redis ReadTimeout %v, MaxRetries %d, ContextTimeoutEnabled %v\n\n",
		p.TTL, p.Wait, jit, p.OpTimeout, p.Client.ReadTimeout, p.Client.MaxRetries, p.Client.ContextTimeoutEnabled)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODE\tMAX GAP\tMAX OVERLAP\tMAX FAILOVER\tSPEC CLAIM (gap ≤ TTL+Wait, overlap ≤ TTL)")
	for _, pr := range b.Predictions {
		if pr.Example {
			fmt.Fprintf(tw, "%s\tnot given (%s)\t—\t—\t—\n", pr.Mode, b.SizeHint[pr.Mode])
			continue
		}
		claim := "holds"
		switch gap, overlap := pr.ExceedsClaims(p); {
		case gap && overlap:
			claim = "BOTH exceeded"
		case gap:
			claim = "gap exceeded"
		case overlap:
			claim = "overlap exceeded"
		}
		failover := "—" // a mode with no failover bound (no leader hit)
		if pr.FailoverFormula != "" {
			failover = bounds.BoundText(pr.MaxFailover)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", pr.Mode, bounds.BoundText(pr.MaxGap), bounds.BoundText(pr.MaxOverlap), failover, claim)
	}
	return tw.Flush()
}

// WriteFormulas writes each mode's formulas, why where the model says,
// and the search's worst case beside them.
func (b Bounds) WriteFormulas(w io.Writer) {
	fmt.Fprintln(w, "\nFormulas:")
	for _, pr := range b.Predictions {
		if pr.Example {
			fmt.Fprintf(w, "\n%s (size not given; shown with %s)\n", pr.Mode, b.SizeHint[pr.Mode])
		} else {
			fmt.Fprintf(w, "\n%s\n", pr.Mode)
		}
		fmt.Fprintf(w, "  gap:     %s\n  overlap: %s\n", pr.GapFormula, pr.OverlapFormula)
		if pr.FailoverFormula != "" {
			fmt.Fprintf(w, "  failover: %s\n", pr.FailoverFormula)
		}
		if pr.CallFormula != "" {
			fmt.Fprintf(w, "  call:    %s\n", pr.CallFormula)
		}
		if pr.Note != "" {
			fmt.Fprintf(w, "  why:     %s\n", pr.Note)
		}
		if !pr.Example {
			fmt.Fprintf(w, "  chores:  %s\n", choresLine(b.Params, pr))
		}
		if x, ok := b.Explored[pr.Mode]; ok {
			fmt.Fprintf(w, "  explored (%d runs, virtual): gap %s; overlap %s\n", x.Runs, x.Gap, x.Overlap)
		}
	}
}

// choresLine is what the mode's overlap bound says of the TaskRunner's
// chores (runner mode): duplicate chores per failover where a bound is
// known (bounds.ChoreBoundFor), unknown otherwise, and the counts no bound
// is known for.
func choresLine(p model.Params, pr bounds.GivenPrediction) string {
	interval := p.ChoreInterval
	if interval <= 0 {
		interval = model.DefaultChoreInterval
	}
	dup := "unknown (the chore ticker runs on the faulty clock)"
	if pr.Mode != model.ModeClockDrift {
		if n, f, ok := bounds.ChoreBoundFor(pr.MaxOverlap, interval, pr.Mode == model.ModePause || pr.Mode == model.ModeSuspend); ok {
			dup = fmt.Sprintf("≤ %d per failover: %s", n, f)
		} else {
			dup = "unknown (" + f + ")"
		}
	}
	return "duplicate chores " + dup + "; stale chores, repeated tasks: unknown (no bound known)"
}
