package sweep

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/scenarios"
)

// JSON is the result as result.json holds it.
func (r *ProveResult) JSON() ([]byte, error) { return indentJSON(r) }

// Scenario is the schedule at axis value x (a box's: x and x2) as a
// scenario (the one Prove ran there), with metric's bound as its one
// expectation.
func (r *ProveResult) Scenario(metric string, x time.Duration, x2 ...time.Duration) model.Scenario {
	p := r.prover()
	pt := append([]time.Duration{x}, x2...)
	for len(pt) < len(p.axisNames()) {
		pt = append(pt, 0) // as PointText: an axis not given is 0
	}
	sc := p.scenarioAt(pt...)
	sc.Expect = []model.Expectation{{Metric: model.Metric(metric), Max: "predicted"}}
	sc.StrictClaims = false
	return sc
}

// WitnessScenario is the scenario that reproduces a proof's witness: its
// counterexample (the schedule exceeding the bound the most) when there is
// one, with a nanosecond of slack so that `chaos run FILE` fails as the
// proof did on the virtual backend; else its worst schedule, with the
// bound's default slack.
func (r *ProveResult) WitnessScenario(p Proof) model.Scenario {
	pt := r.Point(p)
	if p.Verdict == VerdictCounterexample {
		pt = r.ExcessPoint(p)
	}
	sc := r.Scenario(p.Metric, pt[0], pt[1:]...)
	sc.Name = r.Space.Base.Name + "-proven-" + shortMetric(p.Metric)
	if len(sc.Name) > 60 {
		sc.Name = "prove-" + shortMetric(p.Metric)
	}
	switch p.Verdict {
	case VerdictCounterexample:
		sc.Expect[0].Slack = time.Nanosecond
		sc.Description = fmt.Sprintf("chaos prove: a counterexample to the %s bound of %s over %s (seed %d): at %s it exceeds %s (%s) by %s.",
			p.Metric, r.Space.Base.Name, r.RangeText(), r.Space.Seed, r.pointText(pt), bounds.BoundText(p.Bound), p.Formula, model.DurationText(p.Excess))
	default:
		worst, bound := model.DurationsApart(p.Worst, p.Bound)
		sc.Description = fmt.Sprintf("chaos prove: the exact worst %s of %s over %s (seed %d) on the virtual backend: %s at %s, bound %s (%s): %s.",
			p.Metric, r.Space.Base.Name, r.RangeText(), r.Space.Seed, worst, r.pointText(pt), bound, p.Formula, p.Verdict)
	}
	return sc
}

// prover is a prover of the result's space and axes (to build its
// schedules).
func (r *ProveResult) prover() *prover {
	p := &prover{s: r.Space, axis: r.Axis}
	if r.Axis2 != "" {
		p.axes = r.axisNames()
	}
	return p
}

// Axes are the result's axes and their ranges: the walk's one, or a box's.
func (r *ProveResult) Axes() []ProveAxis {
	out := []ProveAxis{{r.Axis, r.Lo, r.Hi}}
	if r.Axis2 != "" {
		out = append(out, ProveAxis{r.Axis2, r.Lo2, r.Hi2})
	}
	return append(out, r.More...)
}

func (r *ProveResult) axisNames() []string {
	var out []string
	for _, a := range r.Axes() {
		out = append(out, a.Axis)
	}
	return out
}

// point is the schedule's coordinates on the result's axes.
func (r *ProveResult) point(x, x2 time.Duration, more ...time.Duration) []time.Duration {
	if r.Axis2 == "" {
		return []time.Duration{x}
	}
	out := append([]time.Duration{x, x2}, more...)
	for len(out) < len(r.Axes()) {
		out = append(out, 0)
	}
	return out
}

// PointText is a schedule of the proof by its coordinates: "at=2s", or a
// box's "at=2s for=3s" (more: its third and fourth axes').
func (r *ProveResult) PointText(x, x2 time.Duration, more ...time.Duration) string {
	return r.pointText(r.point(x, x2, more...))
}

func (r *ProveResult) pointText(x []time.Duration) string { return r.prover().pointText(x...) }

// RangeText is the range proven: "at=2s..9s", or a box's "at=2s..9s ×
// for=1s..14s".
func (r *ProveResult) RangeText() string {
	var parts []string
	for _, a := range r.Axes() {
		parts = append(parts, fmt.Sprintf("%s=%v..%v", a.Axis, a.Lo, a.Hi))
	}
	return strings.Join(parts, " × ")
}

// WitnessFile names a metric's witness scenario file.
func WitnessFile(metric string) string { return "witness-" + shortMetric(metric) + ".yaml" }

// WriteProve writes into dir result.json, per metric measured its witness
// scenario file, and the report: prove.md and index.html; a walk's also
// curves.csv and per metric curve-METRIC.svg and .png, its plot along the
// axis; a box's per metric map-METRIC.svg and .png, its map over the box.
func WriteProve(dir string, r *ProveResult) (Files, error) {
	if err := ClearProve(dir); err != nil {
		return nil, err
	}
	fs, err := newFileSet(dir, r.JSON)
	if err != nil {
		return nil, err
	}
	for _, p := range r.Proofs {
		if p.Verdict == VerdictNone {
			continue
		}
		y, err := scenarios.Marshal(r.WitnessScenario(p))
		if err != nil {
			return fs.names, fmt.Errorf("the witness of %s: %w", p.Metric, err)
		}
		if err := fs.put(WitnessFile(p.Metric), y); err != nil {
			return fs.names, err
		}
	}
	var md strings.Builder
	if err := ProveMarkdown(&md, r, dir); err != nil {
		return fs.names, err
	}
	if err := fs.put("prove.md", []byte(md.String())); err != nil {
		return fs.names, err
	}
	if len(r.Curves) > 0 {
		var cb strings.Builder
		if err := CurvesCSV(&cb, r); err != nil {
			return fs.names, err
		}
		if err := fs.put("curves.csv", []byte(cb.String())); err != nil {
			return fs.names, err
		}
	}
	plots, err := r.reportPlots()
	if err != nil {
		return fs.names, err
	}
	for _, f := range plots {
		if err := fs.put(f.name+".svg", f.svg); err != nil {
			return fs.names, err
		}
		if err := fs.put(f.name+".png", f.png); err != nil {
			return fs.names, err
		}
	}
	var hb strings.Builder
	if err := writeProveHTML(&hb, r, dir, plots); err != nil {
		return fs.names, err
	}
	err = fs.put("index.html", []byte(hb.String()))
	return fs.names, err
}

// ClearProve removes from dir the files a proof or a summary over seeds
// wrote there before: a proof written after another (a walk, then a box;
// one seed, then several) must leave none of them to be read as its own.
func ClearProve(dir string) error {
	// The names are matched, not the path: a directory named "run[1]" is
	// not a pattern.
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s for an earlier proof's files: %w", dir, err)
	}
	pats := []string{"result.json", "prove.md", "index.html", "seeds.md", "witness-*.yaml", "curve-*.svg", "curve-*.png", "map-*.svg", "map-*.png", "curves.csv"}
	for _, e := range entries {
		if !e.Type().IsRegular() || !slices.ContainsFunc(pats, func(p string) bool { ok, _ := filepath.Match(p, e.Name()); return ok }) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("removing an earlier proof's %s: %w", e.Name(), err)
		}
	}
	return nil
}

// WriteTable prints the proof: per metric the exact worst, where, the
// bound, the verdict; then the walk's size and time.
func (r *ProveResult) WriteTable(w io.Writer) {
	fixed := "the followers' starts"
	switch {
	case slices.ContainsFunc(r.axisNames(), func(a string) bool { return startAxis(a) >= 0 }):
		fixed = "the rest"
	case len(r.Space.Base.Faults) > len(r.faultsMoved()):
		fixed = "the other faults and the followers' starts"
	}
	rate, mode := r.modelTexts()
	fmt.Fprintf(w, "%s: %s, seed %d, %s as the file has them; virtual model, %s, %s\n",
		r.Space.Name, r.RangeText(), r.Space.Seed, fixed, rate, mode)
	if r.Lattice > 1 {
		fmt.Fprintf(w, "%s\n", r.latticeText())
	}
	for _, p := range r.Proofs {
		if p.Verdict == VerdictNone {
			fmt.Fprintf(w, "  %-17s not measured (%d schedules unknown: %s)\n", p.Metric, p.Unknown, nonEmptyText(p.UnknownWhy, p.Why))
			continue
		}
		if p.Verdict == VerdictIncomplete && p.Formula == "" {
			// No schedule measured it against a bound: no worst to show.
			fmt.Fprintf(w, "  %-17s incomplete: %s\n", p.Metric, p.Why)
			continue
		}
		v := p.Verdict
		switch {
		case p.Verdict == VerdictCounterexample:
			v = fmt.Sprintf("COUNTEREXAMPLE: %s over the bound at %s", model.DurationText(p.Excess), r.pointText(r.ExcessPoint(p)))
		case p.Verdict == VerdictProven:
			v = fmt.Sprintf("proven (%s below the bound)", model.DurationText(-p.Excess))
		}
		worst, bound := model.DurationsApart(p.Worst, p.Bound)
		// The schedule's coordinate stays exact: it is what reproduces.
		fmt.Fprintf(w, "  %-17s worst %-14s at %-17s bound %-10s %s\n      %s\n",
			p.Metric, worst, r.pointText(r.Point(p)), bound, v, p.Formula)
		if r.Axis2 != "" && p.Sup != p.Worst {
			fmt.Fprintf(w, "      the supremum over the cells' real %s: %s\n", r.cellShapes(), model.DurationText(p.Sup))
		}
		if p.Verdict == VerdictIncomplete && p.Why != "" {
			fmt.Fprintf(w, "      incomplete: %s\n", p.Why)
		}
		if p.Unknown > p.NotMeasured {
			// Those measuring nothing are the incomplete verdict's.
			fmt.Fprintf(w, "      %d schedules unknown, not counted: %s\n", p.Unknown-p.NotMeasured, p.UnknownWhy)
		}
	}
	extra := ""
	if r.BoundSplits > 0 {
		extra = fmt.Sprintf(", %d bound changes inside segments (bisected)", r.BoundSplits)
	}
	if r.BoundAffine > 0 {
		extra += fmt.Sprintf(", %d segments whose bound moves with the axis", r.BoundAffine)
	}
	switch {
	case r.Axis2 != "" && r.Complete:
		fmt.Fprintf(w, "%d cells (their schedules add up to the box's %.4g), %d runs, in %v\n", r.Segments, r.boxSize(), r.Runs, r.Elapsed.Round(time.Millisecond))
	case r.Axis2 != "":
		fmt.Fprintf(w, "%d cells of the box's %.4g schedules, %d runs, in %v\n", r.Segments, r.boxSize(), r.Runs, r.Elapsed.Round(time.Millisecond))
	default:
		fmt.Fprintf(w, "%d segments, %d runs%s, in %v\n", r.Segments, r.Runs, extra, r.Elapsed.Round(time.Millisecond))
	}
	if !r.Complete {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", r.Incomplete)
	}
}

// faultsMoved are the indices of the faults an axis moves.
func (r *ProveResult) faultsMoved() []int {
	var ks []int
	for _, a := range r.axisNames() {
		if _, k, ok := faultAxis(a); ok && !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// boxSize is how many schedules (integer points) a box proof covers.
func (r *ProveResult) boxSize() float64 {
	n := big.NewInt(1)
	for _, a := range r.Axes() {
		n.Mul(n, big.NewInt(int64(a.Hi-a.Lo)+1))
	}
	f, _ := new(big.Float).SetInt(n).Float64()
	return f
}

// cellShapes names a box's cells' real shapes: polygons over two axes,
// polytopes over more.
func (r *ProveResult) cellShapes() string {
	if len(r.More) > 0 {
		return "polytopes"
	}
	return "polygons"
}
