package reports

import (
	"github.com/leaselab/leaselab/model/analysis"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A suite opens with its findings: every spec claim not held, per
// scenario, before the table; a pass that broke a claim is "PASS · 1
// finding" in amber, not a plain green PASS; a scenario an interrupt kept
// from starting is listed as NOT STARTED and is a skipped JUnit testcase.
func TestSuiteFindingsFirst(t *testing.T) {
	passWithFinding := passing()
	passWithFinding.Scenario.Name = "partition-blackhole"
	passWithFinding.Analysis.Claims[1].Verdict = analysis.NotHeld
	runs := []SuiteRun{
		{Result: passing(), Dir: "leader-crash"},
		{Result: passWithFinding, Dir: "partition-blackhole"},
		{Name: "pause", NotStarted: true},
	}
	dir := t.TempDir()
	if err := WriteSuite(dir, runs); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc := parseXHTML(t, page)
	text := doc.text.String()
	block := strings.Index(text, "Findings: 1 spec claims not held")
	table := strings.Index(text, "Scenarios")
	if block < 0 || table < 0 || block > table {
		t.Fatalf("index.html does not open with the findings block (at %d, table at %d):\n%s", block, table, text)
	}
	if !strings.Contains(text, "partition-blackhole: split brain ≤ TTL (5s) not held: overlap 5.749s") {
		t.Errorf("the findings block does not name the scenario and the claim:\n%s", text)
	}
	rows := doc.all("tbody")[0].all("tr")
	if got := rows[1].all("td")[1]; got.text.String() != "PASS · 1 finding" || !strings.Contains(got.attrs["class"], "finding") {
		t.Errorf("a pass with a finding shows %q (class %q); want \"PASS · 1 finding\", class finding (amber)", got.text.String(), got.attrs["class"])
	}
	if got := rows[0].all("td")[1].text.String(); got != "PASS" {
		t.Errorf("a clean pass shows %q", got)
	}
	if got := rows[2].all("td")[1].text.String(); got != "NOT STARTED" {
		t.Errorf("a scenario never started shows %q; want NOT STARTED", got)
	}
	// The reason sits beside the verdict, where a page narrower than the
	// table (below ~1200 px) still shows it without scrolling.
	if got := rows[2].all("td")[2].text.String(); !strings.Contains(got, "interrupted") {
		t.Errorf("the column beside the verdict shows %q; want the note saying why", got)
	}
	if th := doc.all("thead")[0].all("th"); len(th) < 3 || th[2].text.String() != "Note" {
		t.Errorf("the table's third column is not the Note")
	}
	if !strings.Contains(text, "1 not started (interrupted)") || !strings.Contains(text, "1 run broke a spec claim") {
		t.Errorf("the headline does not count the not-started scenario and the finding:\n%s", text)
	}

	md, err := os.ReadFile(filepath.Join(dir, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := string(md)
	if f, tb := strings.Index(m, "**Findings**"), strings.Index(m, "| Scenario |"); f < 0 || f > tb {
		t.Errorf("summary.md does not open with the findings block:\n%s", m)
	}
	if !strings.Contains(m, "- [partition-blackhole](partition-blackhole/report.html): split brain ≤ TTL (5s) not held") {
		t.Errorf("summary.md findings:\n%s", m)
	}

	var junit bytes.Buffer
	if err := JUnitRuns(&junit, runs); err != nil {
		t.Fatal(err)
	}
	if j := junit.String(); !strings.Contains(j, `skipped="1"`) || !strings.Contains(j, `type="not-started"`) {
		t.Errorf("JUnit does not list the not-started scenario as skipped:\n%s", j)
	}

	// A suite with no finding says so in one line.
	clean := t.TempDir()
	if err := WriteSuite(clean, runs[:1]); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(clean, "summary.md"))
	if !strings.Contains(string(md), "**Findings:** none") {
		t.Errorf("a clean suite's summary does not say it has no findings:\n%s", md)
	}
}

// report.md's plot: a relative link says so; inline puts the PNG in the
// file; a published URL makes a link that survives being pasted.
func TestMarkdownImage(t *testing.T) {
	for _, tc := range []struct {
		image, want string
		note        bool
	}{
		{"", "![Timeline of the run](timeline.png)", true},
		{MarkdownInline, "![Timeline of the run](data:image/png;base64,iVBORw0KGgo", false},
		{"https://ci.example/artifacts/42/leader-crash/run-1/", "![Timeline of the run](https://ci.example/artifacts/42/leader-crash/run-1/timeline.png)", false},
	} {
		var b bytes.Buffer
		if err := Markdown(&b, fixture(), Options{MarkdownImage: tc.image}); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		if !strings.Contains(md, tc.want) {
			t.Errorf("%q: no %q", tc.image, tc.want)
		}
		if got := strings.Contains(md, "beside this file"); got != tc.note {
			t.Errorf("%q: the note about the relative link: %v; want %v", tc.image, got, tc.note)
		}
		if strings.Contains(md, "| | |") || strings.Contains(md, "| Description |") {
			t.Errorf("%q: an empty header row, or the description in a cell", tc.image)
		}
	}
}
