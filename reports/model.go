package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// The report is built once as a format-neutral document (this file) and then
// written as Markdown or HTML. Both formats walk the same document, so they
// cannot disagree about a finding; only the presentation differs.

// Cell classes: how a value should stand out. Markdown renders bad and warn
// in bold; HTML colours them.
const (
	clsOK    = "ok"
	clsBad   = "bad"
	clsWarn  = "warn"
	clsMuted = "muted"
)

// cell is one table cell.
type cell struct {
	Text  string
	Class string
}

func plain(s string) cell         { return cell{Text: s} }
func styled(s, class string) cell { return cell{Text: s, Class: class} }
func row(cells ...cell) []cell    { return cells }
func texts(ss ...string) (r []cell) { // a row of plain cells
	for _, s := range ss {
		r = append(r, plain(s))
	}
	return r
}

// table is a titled grid. Empty is printed instead of an empty grid, so a
// reader sees "none" rather than wondering whether the table was forgotten.
type table struct {
	Caption string
	Head    []string
	Rows    [][]cell
	Empty   string
	Note    string
	// More counts the rows left out past rowCap (result.json has them all).
	More int
}

// rowCap bounds the rows of a table that lists one row per window or
// handover: a watch of a million transitions has hundreds of thousands of
// them, which no reader scrolls through; result.json keeps every one.
const rowCap = 100

// full reports whether t already lists rowCap rows, counting the row the
// caller then leaves out.
func (t *table) full() bool {
	if len(t.Rows) < rowCap {
		return false
	}
	t.More++
	return true
}

// MoreText is the line under a capped table ("" when nothing was left out).
func (t table) MoreText() string {
	if t.More == 0 {
		return ""
	}
	return fmt.Sprintf("… and %d more (all in result.json).", t.More)
}

// section is one titled part of the report.
type section struct {
	ID     string
	Title  string
	Intro  []string
	Tables []table
	// Plot marks the section where the timeline plot goes.
	Plot bool
	// Code is a command shown verbatim.
	Code string
	// Items is a bullet list after the tables.
	Items []string
}

// banner is the verdict and what decided it, shown before anything else.
type banner struct {
	Verdict  string // PASS, FAIL, UNKNOWN or INCOMPLETE
	Class    string // pass, fail, unknown, incomplete
	Headline string
	// Incomplete is why the run did not finish.
	Incomplete string
	// Errors are harness errors: they make the whole result untrustworthy.
	Errors []string
	// Broken are why the run did not pass: the run's own reasons (no
	// leader, a skipped fault) and the checks that failed or are unknown.
	Broken []string
	// Findings are the spec's claims that did not hold, phrased as
	// measurements.
	Findings []string
	// Notes are measurements above the analytic prediction of their
	// failure mode: the model, not the spec, missed something.
	Notes []string
	// Identity are the lease values that leave the key's holder unknown
	// (analysis.Identity): one shared by live instances, one nobody announced.
	Identity []string
}

// document is a whole run report.
type document struct {
	Title    string
	Scenario string
	Banner   banner
	Facts    [][2]string
	// AgentLogs link the agents' stderr logs (process backend), relative
	// to the report: WriteRun sets them, knowing where it writes.
	AgentLogs []fileLink
	Sections  []section
}

// Verdicts of a run as the reports print them.
const (
	verdictPass       = "PASS"
	verdictFail       = "FAIL"
	verdictUnknown    = "UNKNOWN"
	verdictIncomplete = "INCOMPLETE"
)

// verdictOf is the run's verdict. An incomplete run is reported as such even
// if what it measured passed: its figures cover only part of the schedule.
// Unknown means the run never created the situation its expectations are
// about, or a limit lies within the measurement's uncertainty; it is not a
// pass.
func verdictOf(res *verdict.Result) (verdict, class string) {
	switch {
	case !res.Complete:
		return verdictIncomplete, "incomplete"
	case res.Verdict == model.Pass:
		return verdictPass, "pass"
	case res.Verdict == model.Unknown:
		return verdictUnknown, "unknown"
	}
	return verdictFail, "fail"
}

// ctx carries what several sections need.
type ctx struct {
	res   *verdict.Result
	p     model.Params // effective, defaults filled
	end   time.Duration
	scale float64
	slack time.Duration // for predicted-vs-measured comparisons
	cmd   string
	// holders maps a holder id to the first instance index the timeline
	// gave it, built on first use: looking each id up in the timeline
	// was a scan per stale row.
	holders map[string]int
}

func newCtx(res *verdict.Result, o Options) *ctx {
	x := &ctx{res: res, p: res.Params.WithDefaults(), scale: res.TimeScale, cmd: o.Command}
	if x.scale == 0 {
		x.scale = 1
	}
	// The same slack as a "predicted" expectation gets (verdict.Evaluate), so a
	// fault marked "above prediction" here would also fail such a check.
	x.slack = bounds.DefaultSlack
	x.end = max(res.Analysis.End, res.Elapsed)
	if x.cmd == "" {
		x.cmd = scenarios.CommandOf(res)
	}
	return x
}

// build turns a result into the report document.
func build(res *verdict.Result, o Options) *document {
	x := newCtx(res, o)
	d := &document{
		Title:    "Failover report: " + nonEmpty(res.Scenario.Name, "unnamed scenario"),
		Scenario: res.Scenario.Name,
		Banner:   x.banner(),
		Facts:    x.facts(),
	}
	d.Sections = []section{
		x.timelineSection(),
		x.expectationsSection(),
		x.claimsSection(),
		x.faultsSection(),
		x.scheduleSection(),
		x.paramsSection(),
		x.leadershipSection(),
		x.workSection(),
		x.measurementSection(),
	}
	if res.Observed != nil {
		d.Sections = append(d.Sections, observedSection(res.Observed))
	}
	d.Sections = append(d.Sections, []section{
		reproduceSection(res, x.cmd),
		{ID: "how-to-read", Title: "How to read this report", Intro: howToReadFor(res)},
	}...)
	return d
}

// reproduceSection says how to get the report again.
func reproduceSection(res *verdict.Result, cmd string) section {
	intro := "Every random choice of the run (fault targets, jitter, latency jitter) comes from the seed, so this command replays the same fault schedule:"
	if res.Observed != nil {
		intro = "A live fleet does not replay; its recording (" + analysis.ObservedRecording + ", beside this report) rebuilds this report:"
	}
	return section{ID: "reproduce", Title: "How to reproduce", Intro: []string{intro}, Code: cmd}
}

// howToReadFor is the reader's guide for res: an observed fleet's times
// are estimates on Redis's clock, not the harness's.
func howToReadFor(res *verdict.Result) []string {
	if res.Observed == nil {
		return howToRead
	}
	guide := strings.Replace(howToRead[0], "Times are offsets from the start of the run on the harness's monotonic clock",
		"Times are offsets from the start of the watch on Redis's clock, each an estimate with its uncertainty (see Observation)", 1)
	return []string{guide}
}

// howToRead is the reader's guide printed at the end of every run report.
var howToRead = []string{
	"The verdict comes from the scenario's own expectations: PASS means the run completed without harness errors and every expectation held. " +
		"The spec's timing claims are checked in every run on top of that; a claim not held is listed as a Finding, a measured disagreement with the spec, whatever the verdict. " +
		"\"Leader\" means believed leadership, what an instance acts on; the Redis lane is who really held the key, and stale or phantom windows are where the two disagree, " +
		"to within the notification lateness shown under Measurement. " +
		"Predictions are the analytic worst case of each failure mode with its formula; a measurement above its prediction means the model or the parameters miss something. " +
		"Times are offsets from the start of the run on the harness's monotonic clock, and a duration marked ≥ was still running when the run ended.",
}

func nonEmpty(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func (x *ctx) banner() banner {
	res := x.res
	b := banner{Incomplete: res.Incomplete, Errors: res.Errors}
	b.Verdict, b.Class = verdictOf(res)
	held := 0
	for _, ch := range res.Checks {
		if ch.Verdict == model.Pass {
			held++
		}
	}
	for _, r := range res.Reasons {
		b.Broken = append(b.Broken, r)
	}
	claimsHeld, claimsNot, claimsUnknown := 0, 0, 0
	for _, cl := range res.Analysis.Claims {
		switch cl.Verdict {
		case analysis.Held:
			claimsHeld++
		case analysis.ClaimUnknown:
			claimsUnknown++
		case analysis.NotHeld:
			claimsNot++
			b.Findings = append(b.Findings, finding(cl))
		}
	}
	for _, f := range res.Analysis.Faults {
		b.Notes = append(b.Notes, x.aboveModel(f)...)
	}
	b.Identity = res.Analysis.Identity.Findings()
	parts := []string{fmt.Sprintf("%d of %d expectations held", held, len(res.Checks))}
	switch {
	case claimsNot > 0:
		parts = append(parts, fmt.Sprintf("%d of the spec's claims NOT held", claimsNot))
	case claimsUnknown > 0:
		parts = append(parts, fmt.Sprintf("%d of the spec's claims held, %d unknown (a bound within the measurement's uncertainty)", claimsHeld, claimsUnknown))
	case claimsHeld > 0:
		parts = append(parts, fmt.Sprintf("%d of the spec's claims held, the rest not exercised", claimsHeld))
	default:
		parts = append(parts, "the spec's claims were not exercised")
	}
	if n := len(res.Errors); n > 0 {
		parts = append(parts, fmt.Sprintf("%d harness errors: the figures below cannot be trusted", n))
	}
	if !res.Complete {
		parts = append(parts, "the run did not finish, so the figures cover only part of the schedule")
	}
	b.Headline = strings.Join(parts, "; ") + "."
	return b
}

// finding phrases a claim that did not hold as what was measured against
// what the spec says.
func finding(cl analysis.Claim) string {
	slack := ""
	if cl.Slack > 0 {
		slack = fmt.Sprintf(", beyond the %s allowed for measurement error", dur(cl.Slack))
	}
	switch cl.Name {
	case analysis.ClaimGap:
		return fmt.Sprintf("the spec says the worst-case leadership gap is TTL + Wait (%s); measured a gap of %s%s (%s).",
			dur(cl.Bound), dur(cl.Measured), slack, cl.Detail)
	case analysis.ClaimSplitBrain:
		return fmt.Sprintf("the spec says split brain is bounded by the TTL (%s); measured an overlap of %s%s (%s).",
			dur(cl.Bound), dur(cl.Measured), slack, cl.Detail)
	case analysis.ClaimNoFaultlessSplit:
		return fmt.Sprintf("the spec's lease allows two leaders only around a fault; measured an overlap of %s away from any fault (%s).",
			dur(cl.Measured), cl.Detail)
	}
	return fmt.Sprintf("the spec claims %q (bound %s); measured %s%s (%s).", cl.Statement, dur(cl.Bound), dur(cl.Measured), slack, cl.Detail)
}

func (x *ctx) facts() [][2]string {
	res := x.res
	v := res.Versions
	f := [][2]string{
		{"Scenario", nonEmpty(res.Scenario.Name, "—")},
	}
	if res.Scenario.Description != "" {
		f = append(f, [2]string{"Description", res.Scenario.Description})
	}
	f = append(f,
		[2]string{"Backend", backendFact(res)},
	)
	if a := res.Agent; a != nil {
		// The agent tested: what a process-backend run's verdict is about.
		f = append(f, [2]string{"Agent", agentFact(a)}, [2]string{"Client", clientFact(res)})
	}
	f = append(f,
		[2]string{"Seed", strconv.FormatInt(res.Seed, 10)},
		[2]string{"Time scale", strconv.FormatFloat(x.scale, 'g', -1, 64) + scaleNote(x.scale)},
		[2]string{"Run id", nonEmpty(res.RunID, "—")},
		[2]string{"Started", startedAt(res.Started)},
		[2]string{"Elapsed", dur(res.Elapsed) + " (after " + dur(res.Setup) + " of setup)"},
		[2]string{"Versions", fmt.Sprintf("Go %s · Redis %s · Toxiproxy %s · leaselab %s",
			nonEmpty(v.Go, "?"), nonEmpty(v.Redis, "?"), nonEmpty(v.Toxiproxy, "?"), nonEmpty(v.Leaselab, "?"))},
	)
	return f
}

// agentFact names the agent a run tested: its command line and, if its
// hello named it, that name.
func agentFact(a *verdict.RunAgent) string {
	s := strings.Join(a.Command, " ")
	if a.Hello != "" {
		s += " (its hello: " + a.Hello + ")"
	}
	if a.Override {
		s += ", given by --agent"
	}
	return s
}

// clientFact says which Redis client the predictions assumed for an
// agent's run: the one its hello declared, or go-redis with the
// scenario's options when it declared none.
func clientFact(res *verdict.Result) string {
	c := res.Params.WithDefaults().Client.Describe()
	if res.Agent.Client != nil {
		return c + ", as the agent's hello declares it: the predictions follow it"
	}
	return c + ": the agent's hello declares no client, so the predictions assume go-redis with the scenario's options (docs/agents.md, Declaring the client)"
}

// Backends a report names itself: the real one, the CLI's default and the
// one a result written before results named their backend was made by;
// and "observe", a live fleet watched from outside (package observe).
const (
	BackendReal    = "real"
	BackendObserve = "observe"
)

// backendName is the backend that made the run; a result written before
// results named their backend was made by the real one, the only one then.
func backendName(b string) string { return nonEmpty(b, BackendReal) }

// backendFact says which backend made the run and, in the backend's own
// words (verdict.Result.BackendAbout), what that means for its figures.
func backendFact(res *verdict.Result) string {
	if res.BackendAbout == "" {
		return backendName(res.Backend)
	}
	return backendName(res.Backend) + " (" + res.BackendAbout + ")"
}

func scaleNote(k float64) string {
	if k == 1 {
		return ""
	}
	return fmt.Sprintf(" (every duration of the scenario multiplied by %s; the figures below are at that scale)", strconv.FormatFloat(k, 'g', -1, 64))
}

func startedAt(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func (x *ctx) timelineSection() section {
	return section{
		ID: "timeline", Title: "Timeline", Plot: true,
		Intro: []string{
			"One lane per instance shows when it believed it led (a restarted instance keeps its lane; later incarnations are drawn lighter). " +
				"The Redis lane shows whose id the lease key held, coloured like that instance. " +
				"The bottom strip counts believed leaders: red is a gap (no leader), purple an overlap (two or more). " +
				"Shaded bands are faults; the dashed and dotted lines mark each injection + TTL and + TTL + Wait, the spec's expiry and worst-case takeover.",
		},
	}
}

func (x *ctx) expectationsSection() section {
	t := table{
		Head:  []string{"Metric", "Limit", "Bound", "Measured", "Verdict", "How the bound was derived"},
		Empty: "The scenario sets no expectations.",
	}
	for _, ch := range x.res.Checks {
		bound := ch.Want()
		detail := ch.Detail
		if ch.Line > 0 {
			detail = strings.TrimPrefix(detail+fmt.Sprintf("; scenario line %d", ch.Line), "; ")
		}
		t.Rows = append(t.Rows, row(plain(string(ch.Metric)), plain(ch.Limit), plain(bound), styled(ch.Value(), checkClass(ch.Verdict)), checkCell(ch.Verdict), plain(detail)))
	}
	return section{ID: "expectations", Title: "Expectations", Tables: []table{t},
		Intro: []string{"The limits the scenario sets. Any one that fails fails the run; one that is unknown " +
			"(the run never created the situation it is about, its bound does not exist, or the limit lies within the measurement's uncertainty) makes the run unknown, never a pass."}}
}

func checkClass(v model.Verdict) string {
	switch v {
	case model.Pass:
		return ""
	case model.Unknown:
		return clsWarn
	}
	return clsBad
}

func checkCell(v model.Verdict) cell {
	switch v {
	case model.Pass:
		return styled("pass", clsOK)
	case model.Unknown:
		return styled("unknown", clsWarn)
	}
	return styled("FAIL", clsBad)
}

func heldClass(ok bool) string {
	if ok {
		return ""
	}
	return clsBad
}

func (x *ctx) claimsSection() section {
	t := table{
		Head:  []string{"Claim", "Statement", "Bound", "Measured", "Verdict", "Detail"},
		Empty: "No claims were evaluated.",
	}
	for _, cl := range x.res.Analysis.Claims {
		measured := dur(cl.Measured)
		var v cell
		switch cl.Verdict {
		case analysis.Held:
			v = styled("held", clsOK)
		case analysis.NotHeld:
			v = styled("NOT held", clsBad)
		case analysis.ClaimUnknown:
			v = styled("unknown", clsMuted)
		default:
			v, measured = styled(string(cl.Verdict), clsMuted), "—"
		}
		bound := dur(cl.Bound)
		if cl.Slack > 0 {
			bound += " (+" + dur(cl.Slack) + " slack)"
		}
		t.Rows = append(t.Rows, row(plain(cl.Name), plain(cl.Statement), plain(bound), styled(measured, heldClass(cl.Verdict != analysis.NotHeld)), v, plain(cl.Detail)))
	}
	return section{ID: "claims", Title: "The spec's claims", Tables: []table{t},
		Intro: []string{"Checked in every run, whatever the scenario expects. \"Not exercised\" means the run never created the situation the claim is about; \"unknown\", that its bound lies within the measurement's uncertainty."}}
}

// prediction is the run's prediction for a failure mode. A report derives
// no bound of its own: a result without one (written before results kept
// their predictions) shows none, rather than one computed now without the
// fault sizes the run applied.
func (x *ctx) prediction(mode string) (bounds.Prediction, bool) {
	for _, p := range x.res.Predictions {
		if p.Mode == mode {
			return p, true
		}
	}
	return bounds.Prediction{}, false
}

// faultWindows returns the windows the analysis found within the fault's
// reach, with the longest unexcused gap and the longest overlap.
func (x *ctx) faultWindows(f model.FaultOutcome) (gap, overlap time.Duration, gaps []analysis.Gap, overlaps []analysis.Overlap) {
	for _, i := range f.Gaps {
		gaps = append(gaps, x.res.Analysis.Gaps[i])
	}
	for _, i := range f.Overlaps {
		overlaps = append(overlaps, x.res.Analysis.Overlaps[i])
	}
	return f.MaxGap, f.MaxOverlap, gaps, overlaps
}

// aboveModel lists the measurements of one fault above its prediction.
func (x *ctx) aboveModel(f model.FaultOutcome) []string {
	pr, ok := x.prediction(f.Mode)
	if !ok {
		return nil
	}
	gap, overlap, _, _ := x.faultWindows(f)
	var out []string
	if !bounds.Within(gap, pr.MaxGap, x.slack) {
		out = append(out, fmt.Sprintf("fault #%d (%s): measured a gap of %s around it; the %s model predicts at most %s (%s).",
			f.ID, f.Kind, dur(gap), f.Mode, dur(pr.MaxGap), pr.GapFormula))
	}
	if !bounds.Within(overlap, pr.MaxOverlap, x.slack) {
		out = append(out, fmt.Sprintf("fault #%d (%s): measured an overlap of %s around it; the %s model predicts at most %s (%s).",
			f.ID, f.Kind, dur(overlap), f.Mode, dur(pr.MaxOverlap), pr.OverlapFormula))
	}
	return out
}

func (x *ctx) faultsSection() section {
	s := section{ID: "predicted", Title: "Predicted vs measured, per fault"}
	faults := x.res.Analysis.Faults
	if len(faults) == 0 {
		s.Intro = []string{"No fault was applied in this run."}
		return s
	}
	s.Intro = []string{fmt.Sprintf(
		"For each fault, the analytic worst case of its failure mode (with its formula) beside what was measured. "+
			"A fault's windows are the gaps and overlaps that touched it between injection and heal + TTL + Wait. "+
			"Measurements are compared with %s of slack; excused gaps (no instance could lead) are listed but not compared.", dur(x.slack))}
	for _, f := range faults {
		s.Tables = append(s.Tables, x.faultTables(f)...)
	}
	return s
}

func (x *ctx) faultTables(f model.FaultOutcome) []table {
	title := fmt.Sprintf("Fault #%d: %s on %s, applied %s, healed %s", f.ID, f.Kind, targets(f.Target), at(f.Applied), healed(f.FaultSpan))
	pr, ok := x.prediction(f.Mode)
	gap, overlap, gaps, overlaps := x.faultWindows(f)
	t := table{Caption: title, Head: []string{"", "Predicted worst case", "Formula", "Measured", "Vs prediction"}}
	vs := func(measured, bound time.Duration) cell {
		if !ok {
			return styled("no prediction", clsMuted)
		}
		if bounds.Within(measured, bound, x.slack) {
			return styled("within", clsOK)
		}
		return styled("ABOVE prediction", clsBad)
	}
	predicted := func(d time.Duration, formula string) (string, string) {
		if !ok {
			return "—", ""
		}
		return dur(d), formula
	}
	pg, fg := predicted(pr.MaxGap, pr.GapFormula)
	po, fo := predicted(pr.MaxOverlap, pr.OverlapFormula)
	measured := func(d time.Duration, n int) string {
		if n == 0 {
			return "none"
		}
		return dur(d)
	}
	unexcused := 0
	for _, g := range gaps {
		if g.Excuse == "" {
			unexcused++
		}
	}
	t.Rows = append(t.Rows,
		row(plain("Longest gap"), plain(pg), plain(fg), styled(measured(gap, unexcused), heldClass(!ok || bounds.Within(gap, pr.MaxGap, x.slack))), vs(gap, pr.MaxGap)),
		row(plain("Longest overlap"), plain(po), plain(fo), styled(measured(overlap, len(overlaps)), heldClass(!ok || bounds.Within(overlap, pr.MaxOverlap, x.slack))), vs(overlap, pr.MaxOverlap)),
	)
	if ok && pr.Call > 0 {
		t.Rows = append(t.Rows, row(plain("Failing Redis call (C)"), plain(dur(pr.Call)), plain(pr.CallFormula), styled("not measured", clsMuted), plain("")))
	}
	newLeader := ""
	if f.NewLeader != nil {
		newLeader = ", new leader " + member(*f.NewLeader)
	}
	t.Rows = append(t.Rows,
		row(plain("Demotion (injection → hit leader stops believing)"), plain("—"), plain(""), plain(durp(f.Demotion)), plain("")),
		row(plain("Failover (injection → next stable leader)"), plain("—"), plain(""), plain(durp(f.Failover)+newLeader), plain("")),
		row(plain("Recovery (heal → stable leader)"), plain("—"), plain(""), plain(durp(f.Recovery)), plain("")),
	)
	var notes []string
	mode := f.Mode
	if mode == "" {
		mode = "none (no failure mode predicts this fault's effect)"
	}
	notes = append(notes, "Failure mode: "+mode+".")
	lead := "none"
	if len(f.LeadersAtInjection) > 0 {
		lead = members(f.LeadersAtInjection)
	}
	notes = append(notes, fmt.Sprintf("Leaders at injection: %s; leader hit: %s.", lead, yesNo(f.LeaderHit)))
	if f.Detail != "" {
		notes = append(notes, "Applied as: "+f.Detail+".")
	}
	if f.Note != "" {
		notes = append(notes, "Measurement: "+f.Note+".")
	}
	if ok && pr.Note != "" {
		notes = append(notes, "Model: "+pr.Note)
	}
	t.Note = strings.Join(notes, " ")

	w := table{
		Caption: fmt.Sprintf("Windows within fault #%d's reach (%s → %s)", f.ID, at(f.Applied), at(f.Reach)),
		Head:    []string{"Window", "Start", "End", "Duration", "Who / why"},
		Empty:   "No gap or overlap touched this fault.",
	}
	type win struct {
		start time.Duration
		r     []cell
	}
	var ws []win
	for _, o := range overlaps {
		ws = append(ws, win{o.Start, row(styled("overlap", clsWarn), plain(at(o.Start)), plain(windowEnd(o.Window)), plain(windowDur(o.Window)), plain(members(o.Leaders)))})
	}
	for _, g := range gaps {
		why := "no believed leader"
		if g.Excuse != "" {
			why = "excused: " + g.Excuse
		}
		ws = append(ws, win{g.Start, row(styled("gap", clsWarn), plain(at(g.Start)), plain(windowEnd(g.Window)), plain(windowDur(g.Window)), plain(why))})
	}
	sort.SliceStable(ws, func(i, j int) bool { return ws[i].start < ws[j].start })
	for _, v := range ws {
		w.Rows = append(w.Rows, v.r)
	}
	return []table{t, w}
}

func healed(f model.FaultSpan) string {
	if f.Open {
		return "never (open at the end)"
	}
	if f.Healed == f.Applied {
		return "at once (instant)"
	}
	return at(f.Healed)
}

func (x *ctx) scheduleSection() section {
	res := x.res
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * x.scale) }
	spans := map[int]model.FaultSpan{}
	for _, f := range res.Analysis.Faults {
		spans[f.ID] = f.FaultSpan
	}
	// A fault whose role matched nobody at its moment (no leader to hit)
	// was skipped on purpose; one with neither span nor skip failed to apply
	// (the harness errors say why).
	skipped := map[int]string{}
	for _, e := range res.Timeline {
		if e.Kind == model.FaultSkipped {
			skipped[e.FaultID] = "skipped at " + at(e.At)
			if e.Detail != "" {
				skipped[e.FaultID] += ": " + e.Detail
			}
		}
	}
	t := table{
		Head:  []string{"#", "At", "For", "Kind", "Target", "Parameters", "Applied", "Healed", "Hit"},
		Empty: "The schedule has no faults.",
	}
	for i, f := range res.Scenario.Faults {
		length := dur(scale(f.For))
		switch {
		case f.Instant():
			length = "instant"
		case f.For == 0:
			length = "to end of fault phase"
		}
		applied, heal, hit := "not applied", "—", "—"
		cls := clsBad
		if why, ok := skipped[i]; ok {
			applied, cls = why, clsWarn
		}
		if s, ok := spans[i]; ok {
			applied, heal, hit, cls = at(s.Applied), healed(s), targets(s.Target), ""
		}
		t.Rows = append(t.Rows, row(plain(strconv.Itoa(i)), plain(at(scale(f.At))), plain(length), plain(string(f.Kind)),
			plain(targetSpec(f.Target)), plain(faultParams(f, x.scale)), styled(applied, cls), plain(heal), plain(hit)))
	}
	intro := "The faults as scheduled (at the run's time scale) and as applied."
	return section{ID: "schedule", Title: "Fault schedule", Intro: []string{intro}, Tables: []table{t}}
}

// targetSpec prints a fault's target as scheduled: instance indexes the
// way the rest of the report names instances, or the role resolved at
// injection.
func targetSpec(t model.Target) string {
	if len(t.Indexes) > 0 {
		return targets(t.Indexes)
	}
	switch t.Role {
	case "", model.RoleLeader:
		return "the leader"
	case model.RoleFollower:
		return "a follower"
	case model.RoleRandom:
		return "a random instance"
	case model.RoleAll:
		return "all instances"
	}
	return t.Role
}

// faultParams prints the kind-specific parameters of a fault, scaled.
func faultParams(f model.Fault, k float64) string {
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * k) }
	p := f.ParamsText(func(d time.Duration) string { return dur(scale(d)) })
	if len(p) == 0 {
		return "—"
	}
	return strings.Join(p, ", ")
}

func (x *ctx) paramsSection() section {
	res := x.res
	if res.Observed != nil {
		return observedParams(res)
	}
	eff, raw := x.p, res.Scenario.Params.WithDefaults()
	scaled := x.scale != 1
	head := []string{"Parameter", "Value", "Meaning"}
	if scaled {
		head = []string{"Parameter", "Value (scaled)", "As written", "Meaning"}
	}
	t := table{Head: head}
	add := func(name, v, written, meaning string) {
		if scaled {
			t.Rows = append(t.Rows, texts(name, v, written, meaning))
		} else {
			t.Rows = append(t.Rows, texts(name, v, meaning))
		}
	}
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * x.scale) }
	d2 := func(name string, v, w time.Duration, meaning string) { add(name, dur(v), dur(w), meaning) }
	opt := func(d time.Duration, zero string) string {
		switch {
		case d == 0:
			return zero
		case d < 0:
			return "none"
		}
		return dur(d)
	}
	d2("TTL", eff.TTL, raw.TTL, "how long the lease lives without renewal")
	d2("Wait", eff.Wait, raw.Wait, "how often a follower tries to acquire")
	add("Jitter", dur(time.Duration(eff.JitterMS)*time.Millisecond), dur(time.Duration(raw.JitterMS)*time.Millisecond), "at most this much added to each renewal interval (TTL/2)")
	add("OpTimeout", opt(eff.OpTimeout, "none"), opt(raw.OpTimeout, "none"), "deadline of one elector call to Redis")
	add("Client ReadTimeout", opt(eff.Client.ReadTimeout, "default"), opt(raw.Client.ReadTimeout, "default"), "go-redis: wait for a reply")
	add("Client WriteTimeout", opt(eff.Client.WriteTimeout, "default"), opt(raw.Client.WriteTimeout, "default"), "go-redis: wait to send")
	add("Client DialTimeout", opt(eff.Client.DialTimeout, "default"), opt(raw.Client.DialTimeout, "default"), "go-redis: wait to connect")
	retries := func(n int) string {
		if n < 0 {
			return "none"
		}
		return strconv.Itoa(n)
	}
	add("Client MaxRetries", retries(eff.Client.MaxRetries), retries(raw.Client.MaxRetries), "go-redis: retries of a failed command")
	add("Client ContextTimeoutEnabled", yesNo(eff.Client.ContextTimeoutEnabled), yesNo(raw.Client.ContextTimeoutEnabled), "go-redis: honour context deadlines (lets OpTimeout cap a call)")
	pool := func(n int) string {
		if n == 0 {
			return "default (10 per CPU)"
		}
		return strconv.Itoa(n)
	}
	add("Client PoolSize", pool(eff.Client.PoolSize), pool(raw.Client.PoolSize), "go-redis: connections per client")
	d2("Chore interval", eff.ChoreInterval, raw.ChoreInterval, "how often the leader's chores tick (runner mode)")
	sc := res.Scenario
	add("Instances", strconv.Itoa(sc.Instances), strconv.Itoa(sc.Instances), "instances competing for the lease")
	add("Mode", string(sc.Mode), string(sc.Mode), "elector: bare electors; runner: full task runners")
	d2("Fault phase", scale(sc.Duration), sc.Duration, "faults are applied within it, all healed at its end")
	d2("Recovery", scale(sc.Recovery), sc.Recovery, "how long the run goes on after the heal")
	w := sc.Workload
	rate := func(r float64) string {
		if r == 0 {
			return "none"
		}
		return trimFloat(r, 3) + "/s"
	}
	if sc.Mode == model.ModeRunner || w.DispatchRate > 0 || w.DelayedRate > 0 {
		add("Workload dispatch rate", rate(w.DispatchRate/x.scale), rate(w.DispatchRate), "tasks dispatched per second")
		add("Workload delayed rate", rate(w.DelayedRate/x.scale), rate(w.DelayedRate), "delayed tasks scheduled per second")
		d2("Workload delay", scale(w.Delay), w.Delay, "how far ahead delayed tasks are due")
		d2("Workload task duration", scale(w.TaskDuration), w.TaskDuration, "how long each task's handler runs")
	} else {
		add("Workload", "none", "none", "bare electors carry no tasks")
	}
	return section{ID: "parameters", Title: "Parameters", Tables: []table{t},
		Intro: []string{"The effective timings of the run, defaults filled in."}}
}

// nearFaults names the faults whose reach a window touched.
func (x *ctx) nearFaults(w model.Window) string {
	var ids []string
	for _, f := range x.res.Analysis.Faults {
		if f.Touches(w) {
			ids = append(ids, fmt.Sprintf("#%d %s", f.ID, f.Kind))
		}
	}
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

func (x *ctx) holderName(id string) string {
	if id == "" {
		return "no key"
	}
	for _, s := range x.res.Analysis.Identity.Shared {
		if s.Value == id {
			return fmt.Sprintf("%s (shared by %s: cannot tell which)", shortID(id), targets(s.Instances))
		}
	}
	for _, u := range x.res.Analysis.Identity.Unannounced {
		if u.Value == id {
			return shortID(id) + " (announced by no agent)"
		}
	}
	if x.holders == nil {
		x.holders = map[string]int{}
		for _, e := range x.res.Timeline {
			if _, ok := x.holders[e.ID]; !ok && e.ID != "" && e.Instance >= 0 {
				x.holders[e.ID] = e.Instance
			}
		}
	}
	if i, ok := x.holders[id]; ok {
		return member(model.Member{Instance: i, ID: id})
	}
	return member(model.Member{Instance: -1, ID: id})
}

// holdersDuring is what the key held through a window: first when it
// began, then each change before it ended ("no key; i1 (ab12cd) from
// 7.530s"), so a stale row shows who held the lease, not only the expiry
// that opened it.
func (x *ctx) holdersDuring(first string, w model.Window) string {
	parts := []string{x.holderName(first)}
	cur := first
	for _, e := range x.res.Timeline {
		if e.Kind != model.RedisHolder || e.At <= w.Start || e.At >= w.End || e.Holder == cur {
			continue
		}
		cur = e.Holder
		parts = append(parts, x.holderName(cur)+" from "+at(e.At))
	}
	return strings.Join(parts, "; ")
}

func (x *ctx) leadershipSection() section {
	a := x.res.Analysis
	ov := table{
		Caption: "Overlap windows (two or more believed leaders)",
		Head:    []string{"#", "Start", "End", "Duration", "Leaders", "Near fault"},
		Empty:   "No overlap: at no moment did two instances believe they led.",
	}
	for i, o := range a.Overlaps {
		if ov.full() {
			continue
		}
		ov.Rows = append(ov.Rows, row(plain(strconv.Itoa(i)), plain(at(o.Start)), plain(windowEnd(o.Window)), styled(windowDur(o.Window), clsWarn), plain(members(o.Leaders)), plain(x.nearFaults(o.Window))))
	}
	gp := table{
		Caption: "Gaps (no believed leader, after the first election)",
		Head:    []string{"#", "Start", "End", "Duration", "After fault", "Excuse"},
		Empty:   "No gap: once elected, some instance always believed it led.",
	}
	for i, g := range a.Gaps {
		if gp.full() {
			continue
		}
		after := "none"
		if g.After != nil {
			after = fmt.Sprintf("#%d %s at %s", g.After.ID, g.After.Kind, at(g.After.Applied))
		}
		gp.Rows = append(gp.Rows, row(plain(strconv.Itoa(i)), plain(at(g.Start)), plain(windowEnd(g.Window)), styled(windowDur(g.Window), clsWarn), plain(after), plain(nonEmpty(g.Excuse, "—"))))
	}
	observed := a.Redis.Observed
	st := table{
		Caption: "Stale leadership (believed it led while Redis held another value)",
		Head:    []string{"Instance", "Start", "End", "Duration", "Redis held"},
		Empty:   "No stale leadership.",
	}
	ph := table{
		Caption: "Phantom leases (Redis held an id whose instance did not believe it led)",
		Head:    []string{"Key held by", "Start", "End", "Duration"},
		Empty:   "No phantom lease.",
	}
	if !observed {
		st.Empty = "Not measured: the run recorded no Redis holder event."
		ph.Empty = st.Empty
	}
	for _, s := range a.Redis.Stale {
		if st.full() {
			continue
		}
		st.Rows = append(st.Rows, row(plain(member(s.Member)), plain(at(s.Start)), plain(windowEnd(s.Window)), styled(windowDur(s.Window), clsWarn), plain(x.holdersDuring(s.Holder, s.Window))))
	}
	for _, p := range a.Redis.Phantom {
		if ph.full() {
			continue
		}
		ph.Rows = append(ph.Rows, row(plain(member(p.Member)), plain(at(p.Start)), plain(windowEnd(p.Window)), plain(windowDur(p.Window))))
	}
	if u := a.Redis.Unknown; len(u) > 0 {
		var d time.Duration
		for _, w := range u {
			d += w.Duration
		}
		st.Note = fmt.Sprintf("%d stretches of leadership (%s in all) are neither here nor judged: the key held a value that cannot be told to be the believer's own or another's (see Instance identity).", len(u), dur(d))
	}
	if n := a.Redis.BelowResolution; n > 0 {
		ph.Note = fmt.Sprintf("%d stale or phantom windows shorter than %s were dropped as measurement error (the two lanes are observed by different means).", n, dur(analysis.TruthResolution))
	}
	fo := table{
		Caption: "Failovers (per fault)",
		Head:    []string{"Fault", "Applied", "Leaders at injection", "Demotion", "Failover", "New leader", "Recovery after heal", "Note"},
		Empty:   "No fault, so no failover.",
	}
	for _, f := range a.Faults {
		if fo.full() {
			continue
		}
		lead, nl := "none", "—"
		if len(f.LeadersAtInjection) > 0 {
			lead = members(f.LeadersAtInjection)
		}
		if f.NewLeader != nil {
			nl = member(*f.NewLeader)
		}
		fo.Rows = append(fo.Rows, row(plain(fmt.Sprintf("#%d %s", f.ID, f.Kind)), plain(at(f.Applied)), plain(lead), plain(durp(f.Demotion)), plain(durLate(f.Failover, f.FailoverShorter, f.FailoverUncertainty)), plain(nl), plain(durLate(f.Recovery, f.RecoveryShorter, f.RecoveryUncertainty)), plain(nonEmpty(f.Note, "—"))))
	}
	ho := table{
		Caption: "Handovers (leadership passing to another incarnation)",
		Head:    []string{"At", "From", "To"},
		Empty:   "No handover: leadership never changed hands.",
	}
	for _, h := range a.Handovers {
		if ho.full() {
			continue
		}
		ho.Rows = append(ho.Rows, texts(at(h.At), member(h.From), member(h.To)))
	}
	return section{ID: "leadership", Title: "Leadership", Tables: []table{ov, gp, st, ph, fo, ho},
		Intro: []string{fmt.Sprintf("Stability window: a leader counts as stable once it has led alone for %s (one TTL).", dur(a.StabilityWindow))}}
}

// listCap bounds the task ids listed: a report lists examples, result.json
// has them all.
const listCap = 20

func capped(ids []string) string {
	if len(ids) <= listCap {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:listCap], ", ") + fmt.Sprintf(", … (%d more in result.json)", len(ids)-listCap)
}

func (x *ctx) workSection() section {
	a := x.res.Analysis
	s := a.Summary
	dc := table{
		Caption: "Duplicate chores (the same chore on two instances within one chore interval)",
		Head:    []string{"Chore", "First", "Second", "Apart"},
		Empty:   "No duplicate chore.",
	}
	for _, d := range a.DuplicateChores {
		if dc.full() {
			continue
		}
		dc.Rows = append(dc.Rows, texts(d.Chore, member(d.First.Member)+" at "+at(d.First.At), member(d.Second.Member)+" at "+at(d.Second.At), dur(d.Apart)))
	}
	// Stale chores are what safe mode's fencing exists to refuse: a
	// stale leader's writes landing while the key named another holder.
	sc := table{
		Caption: "Stale chores (a chore's writes landed while the lease key held another id or none)",
		Head:    []string{"Instance", "Landed at"},
		Empty:   "No stale chore.",
	}
	for _, c := range a.StaleChores {
		if sc.full() {
			continue
		}
		sc.Rows = append(sc.Rows, texts(member(c.Member), at(c.At)))
	}
	tables := []table{dc, sc}
	if len(a.FencedChores) > 0 {
		fc := table{Caption: "Fenced chores (safe mode: the chore's script refused to write)", Head: []string{"Instance", "Refused at"}}
		for _, c := range a.FencedChores {
			if fc.full() {
				continue
			}
			fc.Rows = append(fc.Rows, texts(member(c.Member), at(c.At)))
		}
		tables = append(tables, fc)
	}
	tk := table{Caption: "Tasks", Head: []string{"Figure", "Value"}}
	lostCls, repCls := "", ""
	if s.TasksLost > 0 {
		lostCls = clsBad
	}
	if s.TasksRepeated > 0 {
		repCls = clsWarn
	}
	tk.Rows = append(tk.Rows,
		row(plain("Dispatched"), plain(strconv.Itoa(s.TasksDispatched))),
		row(plain("Lost (dispatched, never completed, gone from Redis)"), styled(strconv.Itoa(s.TasksLost), lostCls)),
		row(plain("Unfinished (not completed, still in Redis at the end: late, not lost)"), plain(strconv.Itoa(s.TasksUnfinished))),
		row(plain("Repeated (reported completed more than once; metric duplicate_tasks)"), styled(strconv.Itoa(s.TasksRepeated), repCls)),
		row(plain("Delayed-task lateness"), plain(stats(s.DelayedLateness))),
	)
	if len(a.LostTasks) > 0 {
		tk.Rows = append(tk.Rows, row(plain("Lost task ids"), plain(capped(a.LostTasks))))
	}
	if len(a.UnfinishedTasks) > 0 {
		tk.Rows = append(tk.Rows, row(plain("Unfinished task ids"), plain(capped(a.UnfinishedTasks))))
	}
	if len(a.UnreportedTasks) > 0 {
		tk.Rows = append(tk.Rows,
			row(plain("Unreported (ran; its acknowledgement was sent but its outcome never reached the instance; gone from Redis)"), plain(strconv.Itoa(s.TasksUnreported))),
			row(plain("Unreported task ids"), plain(capped(a.UnreportedTasks))))
	}
	if len(a.RepeatedTasks) > 0 {
		ids := make([]string, len(a.RepeatedTasks))
		redelivered := 0
		for i, r := range a.RepeatedTasks {
			if len(r.By) == 0 {
				// A result.json from before the analysis recorded them.
				ids[i] = fmt.Sprintf("%s ×%d, incarnations and reclaims not recorded", r.Task, r.Completions)
				continue
			}
			how := "delivered twice without a reclaim"
			if r.Redelivered() {
				how, redelivered = "after a reclaim", redelivered+1
			}
			ids[i] = fmt.Sprintf("%s ×%d by %s, %s", r.Task, r.Completions, members(r.By), how)
		}
		tk.Rows = append(tk.Rows,
			row(plain("Repeated after a reclaim (at-least-once redelivery: a live instance held the entry unacknowledged for ClaimIdle, "+
				"slower than that from delivery to acknowledgement; a crash alone repeats no reported completion)"), plain(strconv.Itoa(redelivered))),
			row(plain("Repeated task ids"), plain(capped(ids))))
	}
	intro := "What the spec promises only one leader does, and what the runner's tasks went through."
	if x.res.Scenario.Mode != model.ModeRunner {
		intro += " This run used bare electors: no chores or tasks are expected."
	}
	return section{ID: "work", Title: "Chores and tasks", Intro: []string{intro}, Tables: append(tables, tk)}
}

func (x *ctx) measurementSection() section {
	a := x.res.Analysis
	s := a.Summary
	nl := table{Caption: "Measurement error (how late the harness observed and acted)", Head: []string{"Figure", "Value"}}
	nl.Rows = append(nl.Rows,
		texts("Redis lane observed", yesNo(a.Redis.Observed)),
		texts("Keyspace notification lateness", stats(a.Redis.NotificationLateness)),
		texts("Stale/phantom windows below resolution ("+dur(analysis.TruthResolution)+")", strconv.Itoa(a.Redis.BelowResolution)),
	)
	if a.StampLateness.Count > 0 {
		nl.Rows = append(nl.Rows, texts("Agent line stamping lateness (process backend)", stats(a.StampLateness)))
	}
	// A loaded machine's lateness, which the verdicts count (analysis.Stall).
	for _, lane := range []struct {
		what      string
		instances bool
	}{{"Instance timers fired late (≥ " + dur(analysis.MinStall) + ")", true}, {"Harness wake-ups late (≥ " + dur(analysis.MinStall) + ", its probe)", false}} {
		if st := a.StallStats(lane.instances); st.Count > 0 {
			nl.Rows = append(nl.Rows, texts(lane.what, stats(st)))
		}
	}
	overlaps, gaps, dupes, stale := strconv.Itoa(s.Overlaps), strconv.Itoa(s.Gaps), strconv.Itoa(s.DuplicateChores), strconv.Itoa(s.StaleChores)
	maxOverlap, totalOverlap, maxGap := Uncertain(s.MaxOverlap, s.MaxOverlapUncertainty), dur(s.TotalOverlap), Uncertain(s.MaxGap, s.MaxGapUncertainty)
	maxStale, failover := Uncertain(s.MaxStale, s.MaxStaleUncertainty), stats(s.Failover)
	if r := a.LateRange; r != nil {
		// Agents' lines stamped late: each figure anywhere in its range
		// over every timing they leave possible.
		overlaps, gaps, dupes = countBetween(s.Overlaps, r.Overlaps), countBetween(s.Gaps, r.Gaps), countBetween(s.DuplicateChores, r.DuplicateChores)
		stale = countBetween(s.StaleChores, r.StaleChores)
		maxOverlap = Between(s.MaxOverlap, r.MaxOverlap.Least, r.MaxOverlap.Most)
		totalOverlap = Between(s.TotalOverlap, r.TotalOverlap.Least, r.TotalOverlap.Most)
		maxGap = Between(s.MaxGap, r.MaxGap.Least, r.MaxGap.Most)
		maxStale = Between(s.MaxStale, r.MaxStale.Least, r.MaxStale.Most)
		if f := r.Failover; f != nil && s.Failover.Count > 0 {
			failover += ", longest " + Between(s.Failover.Max, f.Least, f.Most)
		}
	}
	sm := table{Caption: "Summary figures", Head: []string{"Figure", "Value"}}
	sm.Rows = append(sm.Rows,
		texts("Leader gains (flaps)", strconv.Itoa(s.LeaderGains)),
		texts("Handovers", strconv.Itoa(s.Handovers)),
		texts("Elector errors", strconv.Itoa(s.ElectorErrors)),
		texts("Runner errors (other than the elector's)", strconv.Itoa(s.RunnerErrors)),
		texts("Overlaps", fmt.Sprintf("%s (longest %s, total %s)", overlaps, maxOverlap, totalOverlap)),
		texts("Gaps", fmt.Sprintf("%s (longest %s)", gaps, maxGap)),
		texts("Failover", failover),
		texts("Faults", strconv.Itoa(s.Faults)),
		texts("Stale windows", fmt.Sprintf("%d (longest %s)", s.StaleWindows, maxStale)),
		texts("Phantom windows", fmt.Sprintf("%d (longest %s)", s.PhantomWindows, dur(s.MaxPhantom))),
		texts("Duplicate chores", dupes),
		texts("Stale chores / fenced chores", fmt.Sprintf("%s / %d", stale, s.FencedChores)),
		texts("Tasks dispatched / lost / repeated", fmt.Sprintf("%d / %d / %d", s.TasksDispatched, s.TasksLost, s.TasksRepeated)),
	)
	cost := table{Caption: "Cost", Head: []string{"Figure", "Value"}}
	cost.Rows = append(cost.Rows, texts("Setup (environment up)", dur(x.res.Setup)))
	cost.Rows = append(cost.Rows,
		texts("CPU (harness, instances, Toxiproxy)", dur(x.res.Cost.CPU)),
		texts("CPU per instance (of one core)", trimFloat(x.res.Cost.CPUPerInstancePercent, 2)+"%"))
	end := a.Ended
	if end == "" {
		end = "no run-ended event"
	}
	return section{ID: "measurement", Title: "Measurement", Tables: []table{nl, sm, cost},
		Intro: []string{fmt.Sprintf("The timeline has %d events and ends at %s (%s).", len(x.res.Timeline), at(a.End), end)}}
}

// ShortFinding is a claim that did not hold in one short line, for the
// suite's findings block and the CLI: "split brain ≤ TTL (5s): overlap
// 5.546s".
func ShortFinding(cl analysis.Claim) string {
	switch cl.Name {
	case analysis.ClaimGap:
		return fmt.Sprintf("gap ≤ TTL + Wait (%s) not held: gap %s", dur(cl.Bound), dur(cl.Measured))
	case analysis.ClaimSplitBrain:
		return fmt.Sprintf("split brain ≤ TTL (%s) not held: overlap %s", dur(cl.Bound), dur(cl.Measured))
	case analysis.ClaimNoFaultlessSplit:
		return fmt.Sprintf("no overlap away from faults not held: overlap %s", dur(cl.Measured))
	}
	return fmt.Sprintf("%s not held: measured %s (bound %s)", nonEmpty(cl.Statement, cl.Name), dur(cl.Measured), dur(cl.Bound))
}
