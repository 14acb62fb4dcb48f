package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leaselab/leaselab/internal/printable"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/scenarios"
)

// JUnit writes the results as one JUnit testsuite with one testcase per run,
// named after its scenario, for CI systems that read JUnit XML. A run fails
// when it did not pass: each broken expectation is named in the failure
// message (model.Check.String()); an incomplete run and harness errors are
// failures too, because their figures cannot be trusted.
func JUnit(w io.Writer, results []*verdict.Result) error {
	cases := make([]junitInput, len(results))
	for i, r := range results {
		cases[i] = junitInput{res: r}
	}
	return writeJUnit(w, cases)
}

// JUnitRuns writes the JUnit XML of a suite's runs, as WriteSuite's
// junit.xml: runs that could not start are errors, refused and not-started
// scenarios skipped testcases.
func JUnitRuns(w io.Writer, runs []SuiteRun) error {
	in := make([]junitInput, len(runs))
	for i, r := range runs {
		in[i] = junitInput{name: r.Name, res: r.Result, err: r.Err, dir: r.Dir, refused: r.Refused, notStarted: r.NotStarted}
	}
	return writeJUnit(w, in)
}

// WriteJUnitRuns writes JUnitRuns to the file at path (chaos run and
// suite --junit).
func WriteJUnitRuns(path string, runs []SuiteRun) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing JUnit: %w", err)
	}
	if err := JUnitRuns(fh, runs); err != nil {
		fh.Close()
		return fmt.Errorf("writing JUnit: %w", err)
	}
	return fh.Close()
}

// junitInput is one testcase to write: a result, or why there is none.
type junitInput struct {
	name string
	res  *verdict.Result
	err  error
	dir  string
	cmd  string // reproducing command; default scenarios.CommandOf
	// refused is why the backend refused the scenario (nothing ran): a
	// skipped testcase, with the reason.
	refused string
	// notStarted: an interrupted suite never started it (a skipped
	// testcase).
	notStarted bool
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitProblem `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText is element text kept as CDATA, so that multi-line output stays
// readable in the file instead of becoming a line of "&#xA;" escapes.
type junitText struct {
	Text string `xml:",cdata"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

// junitSuiteName is the suite's name in CI listings.
const junitSuiteName = "leaselab chaos"

func seconds3(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func writeJUnit(w io.Writer, in []junitInput) error {
	suite := junitSuite{Name: junitSuiteName}
	var total time.Duration
	var first time.Time
	for _, x := range in {
		tc := junitCaseOf(x).printable()
		suite.Tests++
		if tc.Failure != nil {
			suite.Failures++
		}
		if tc.Error != nil {
			suite.Errors++
		}
		if tc.Skipped != nil {
			suite.Skipped++
		}
		if x.res != nil {
			total += x.res.Elapsed
			if s := x.res.Started; !s.IsZero() && (first.IsZero() || s.Before(first)) {
				first = s
			}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	suite.Time = seconds3(total)
	if !first.IsZero() {
		suite.Timestamp = first.UTC().Format("2006-01-02T15:04:05")
	}
	doc := junitSuites{
		Name: junitSuiteName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite},
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("reports: writing JUnit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// printable is the testcase with its texts made printable
// (printable.Text): a run's errors may carry an agent's stderr, and one
// control character (an ANSI colour) makes the file invalid XML, which CI
// systems then drop.
func (tc junitCase) printable() junitCase {
	tc.Name = printable.Text(tc.Name)
	for _, p := range []**junitProblem{&tc.Failure, &tc.Error, &tc.Skipped} {
		if *p != nil {
			q := **p
			q.Message, q.Type, q.Text = printable.Text(q.Message), printable.Text(q.Type), printable.Text(q.Text)
			*p = &q
		}
	}
	if tc.SystemOut != nil {
		tc.SystemOut = &junitText{Text: printable.Text(tc.SystemOut.Text)}
	}
	return tc
}

func junitCaseOf(x junitInput) junitCase {
	res := x.res
	name := x.name
	if res != nil && res.Scenario.Name != "" {
		name = res.Scenario.Name
	}
	tc := junitCase{Name: nonEmpty(name, "unnamed scenario"), Classname: "leaselab.chaos"}
	if x.refused != "" {
		// Refused by design (the virtual backend does not model runner
		// mode): not run, said so, neither a pass nor a harness error.
		tc.Time = "0.000"
		tc.Skipped = &junitProblem{Message: "refused: " + x.refused, Type: "refused", Text: x.refused}
		return tc
	}
	if x.notStarted && res == nil {
		tc.Time = "0.000"
		msg := "not started: the suite was interrupted before this scenario started"
		tc.Skipped = &junitProblem{Message: msg, Type: "not-started", Text: msg}
		return tc
	}
	if res == nil {
		// The run never started: nothing was measured, so this is an
		// error of the harness, not a failure of the system under test.
		msg := "the run could not start"
		if x.err != nil {
			msg += ": " + x.err.Error()
		}
		tc.Time = "0.000"
		tc.Error = &junitProblem{Message: msg, Type: "setup", Text: msg}
		return tc
	}
	tc.Time = seconds3(res.Elapsed)

	var reasons, body []string
	kind := ""
	if !res.Complete {
		r := "run incomplete"
		if res.Incomplete != "" {
			r += ": " + res.Incomplete
		}
		reasons, kind = append(reasons, r), "incomplete"
	}
	if x.err != nil && (res.Complete || res.Incomplete != x.err.Error()) {
		reasons, kind = append(reasons, "run error: "+x.err.Error()), nonEmpty(kind, "harness")
	}
	for _, e := range res.Errors {
		reasons, kind = append(reasons, "harness error: "+e), nonEmpty(kind, "harness")
	}
	for _, r := range res.Reasons {
		k := "expectation"
		if res.Verdict == model.Unknown {
			k = "unknown"
		}
		reasons, kind = append(reasons, r), nonEmpty(kind, k)
	}
	if res.Verdict != model.Pass && len(reasons) == 0 {
		reasons, kind = append(reasons, "the run did not pass"), "expectation"
	}
	if len(reasons) > 0 {
		body = append(body, reasons...)
	}

	var out []string
	out = append(out, fmt.Sprintf("backend %s, seed %d, time scale %s, run %s", backendName(res.Backend), res.Seed, strconv.FormatFloat(nonZero(res.TimeScale), 'g', -1, 64), nonEmpty(res.RunID, "—")))
	if res.Agent != nil {
		out = append(out, "agent: "+agentFact(res.Agent))
	}
	out = append(out, "reproduce: "+nonEmpty(x.cmd, scenarios.CommandOf(res)))
	for _, ch := range res.Checks {
		out = append(out, "expectation: "+ch.String())
	}
	for _, cl := range res.Analysis.Claims {
		if cl.Verdict == analysis.NotHeld {
			out = append(out, "finding: "+finding(cl))
		}
	}
	if x.dir != "" {
		out = append(out, "report: "+path.Join(filepath.ToSlash(x.dir), FileHTML))
	}
	tc.SystemOut = &junitText{Text: strings.Join(out, "\n")}

	if len(reasons) > 0 {
		tc.Failure = &junitProblem{
			Message: strings.Join(reasons, "; "),
			Type:    kind,
			Text:    strings.Join(body, "\n"),
		}
	}
	return tc
}
