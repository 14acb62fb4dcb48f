package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
	"github.com/leaselab/leaselab/sim/virtual"
)

// WriteTable prints the search's per-metric table for a terminal: the
// worst found, the bound predicted, their ratio, whether it held, and the
// formula.
func (r *ExploreResult) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%s: %d runs in %v\n", r.Space.Name, r.Runs, r.Elapsed.Round(time.Millisecond))
	for _, x := range r.Worst {
		if !x.Found {
			fmt.Fprintf(w, "  %-17s not measured (%d runs unknown: %s)\n", x.Metric, x.Unknown, x.Why)
			continue
		}
		verdict := verdictText(x)
		ratio := "—"
		if x.Ratio > 0 {
			ratio = fmt.Sprintf("%.3f", x.Ratio)
		}
		measured, bound := x.Texts()
		fmt.Fprintf(w, "  %-17s worst %-14s predicted %-10s ratio %-6s %s (%s, seed %d)\n      %s\n",
			x.Metric, measured, bound, ratio, verdict, x.Phase, x.Schedule.Seed, x.Formula)
		if x.Unknown > 0 {
			fmt.Fprintf(w, "      %d runs unknown, not counted: %s\n", x.Unknown, unknownReason(x.Why))
		}
	}
	if r.Skipped > 0 {
		fmt.Fprintf(w, "%s\n", r.SkippedText())
	}
	if !r.Complete {
		fmt.Fprintf(w, "INCOMPLETE: %s\n", r.Incomplete)
	}
}

// unknownReason is why a check was unknown, from its detail, which
// derives the bound first and ends with the reason.
func unknownReason(detail string) string {
	if i := strings.LastIndex(detail, "; "); i >= 0 {
		return detail[i+2:]
	}
	return detail
}

// SkippedText says how many schedules the validator refused and why (its
// three most frequent reasons); "" when none was.
func (r *ExploreResult) SkippedText() string {
	if r.Skipped == 0 {
		return ""
	}
	var whys []string
	for _, x := range r.SkipReasons[:min(3, len(r.SkipReasons))] {
		whys = append(whys, fmt.Sprintf("%d× %s", x.Count, x.Why))
	}
	more := ""
	if n := len(r.SkipReasons) - 3; n > 0 {
		more = fmt.Sprintf("; %d other reasons", n)
	}
	return fmt.Sprintf("%d schedules skipped, which the validator refuses (not runs: the budget went to runnable ones): %s%s",
		r.Skipped, strings.Join(whys, "; "), more)
}

// BesideBound is the searched worst case beside its bound, in a few words
// ("1.2s of 5s (ratio 0.240)"; the seed when it broke the bound).
func (w Worst) BesideBound() string {
	measured, bound := w.Texts()
	switch {
	case !w.Found:
		return "not measured"
	case w.Violated:
		return fmt.Sprintf("%s, BOUND VIOLATED (bound %s; seed %d)", measured, bound, w.Schedule.Seed)
	case !w.Count && w.Predicted > 0 && w.Predicted != NoLimit:
		return fmt.Sprintf("%s of %s (ratio %.3f)", measured, bound, w.Ratio)
	}
	return fmt.Sprintf("%s of %s", measured, bound)
}

// WriteExploreRuns writes the search (WriteExplore) and, per metric it
// found a worst schedule of, that schedule's run report (re-run on the
// virtual backend) in <dir>/worst-<metric>/. A report that could not be
// written does not stop the others: it is in the errors returned beside
// err, which says the search itself could not be written or re-run.
func WriteExploreRuns(dir string, r *ExploreResult) (reportErrs []error, err error) {
	if _, err := WriteExplore(dir, r); err != nil {
		return nil, fmt.Errorf("writing the search: %w", err)
	}
	for _, w := range r.Worst {
		if !w.Found {
			continue
		}
		res, err := r.WorstRun(w, virtual.Options{})
		if err != nil {
			return reportErrs, fmt.Errorf("re-running the worst %s: %w", w.Metric, err)
		}
		sub := filepath.Join(dir, strings.TrimSuffix(WorstFile(w.Metric), ".yaml"))
		cmd := scenarios.FileCommand(filepath.Join(dir, WorstFile(w.Metric)), res.Scenario, res.Seed, res.TimeScale, res.Backend)
		if _, err := reports.WriteRun(context.Background(), sub, res, reports.Options{Command: cmd}); err != nil {
			reportErrs = append(reportErrs, fmt.Errorf("the report of the worst %s: %w", w.Metric, err))
		}
	}
	return reportErrs, nil
}

// WriteAdvice writes advice.md, advice.json and the confirming scenarios
// (<name>.yaml, or confirm-<i>.yaml for an unnamed one) into dir.
func WriteAdvice(dir string, adv Advice) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(adv, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{"advice.md": []byte(adv.Markdown()), "advice.json": append(b, '\n')}
	for i, sc := range adv.Scenarios {
		y, err := scenarios.Marshal(sc)
		if err != nil {
			return fmt.Errorf("writing confirming scenario %d: %w", i, err)
		}
		name := sc.Name
		if name == "" {
			name = "confirm-" + strconv.Itoa(i)
		}
		files[name+".yaml"] = y
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
