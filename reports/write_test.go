package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

func TestWriteRunWritesEveryFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs", "partition-leader") // created by WriteRun
	res := fixture()
	files, err := WriteRun(context.Background(), dir, res, Options{Command: "chaos run partition-leader --seed 42 --redis 127.0.0.1:6379"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		FileHTML: files.HTML, FileMarkdown: files.Markdown, FileJSON: files.JSON, FileEvents: files.Events,
		FileSVG: files.SVG, FilePNG: files.PNG, FileJUnit: files.JUnit,
	}
	if len(files.All()) != len(want) {
		t.Errorf("Files.All lists %d files; want %d", len(files.All()), len(want))
	}
	for name, path := range want {
		if path != filepath.Join(dir, name) {
			t.Errorf("%s written to %s", name, path)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() == 0 {
			t.Errorf("%s is empty", name)
		}
	}

	// The PNG is a PNG; the SVG is an SVG document.
	b, _ := os.ReadFile(files.PNG)
	if _, err := png.Decode(bytes.NewReader(b)); err != nil {
		t.Errorf("timeline.png: %v", err)
	}
	b, _ = os.ReadFile(files.SVG)
	var svg struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(b, &svg); err != nil || svg.XMLName.Local != "svg" {
		t.Errorf("timeline.svg: root %q, %v", svg.XMLName.Local, err)
	}
	if !bytes.Contains(b, []byte("@font-face")) {
		t.Error("timeline.svg does not embed its font: it would render differently without Liberation installed")
	}

	// events.jsonl is the timeline.
	f, err := os.Open(files.Events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := model.ReadJSONLines(f)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(events, res.Timeline) {
		t.Error("events.jsonl does not read back as the timeline")
	}

	// The given command is the one to reproduce with, in every format.
	for _, p := range []string{files.HTML, files.Markdown, files.JUnit} {
		b, _ := os.ReadFile(p)
		if !bytes.Contains(b, []byte("--redis 127.0.0.1:6379")) {
			t.Errorf("%s does not show the reproducing command", filepath.Base(p))
		}
	}
	b, _ = os.ReadFile(files.Markdown)
	if !bytes.Contains(b, []byte("](timeline.png)")) {
		t.Error("report.md does not link timeline.png")
	}
}

func TestReadResultRoundTrips(t *testing.T) {
	dir := t.TempDir()
	res := fixture()
	files, err := WriteRun(context.Background(), dir, res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadResult(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, res) {
		a, _ := os.ReadFile(files.JSON)
		t.Fatalf("result.json does not read back as the result:\n%s", a)
	}
	// Re-rendering from the file gives the same report.
	var first, second bytes.Buffer
	if err := Markdown(&first, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&second, back, Options{}); err != nil {
		t.Fatal(err)
	}
	if first.String() != second.String() {
		t.Error("the report rendered from result.json differs")
	}

	if _, err := ReadResult(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("ReadResult of a missing file: no error")
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{not json"), 0o644)
	if _, err := ReadResult(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("ReadResult of bad JSON: %v; want an error naming the file", err)
	}
}

func TestWriteRunNilResult(t *testing.T) {
	if _, err := WriteRun(context.Background(), t.TempDir(), nil, Options{}); err == nil {
		t.Error("no error for a nil result")
	}
}

func TestWriteSuite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	runs := suiteRuns()
	if err := WriteSuite(dir, runs); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc := parseXHTML(t, page)
	rows := doc.all("tbody")[0].all("tr")
	if len(rows) != len(runs) {
		t.Fatalf("%d rows; want one per scenario (%d)", len(rows), len(runs))
	}
	for i, want := range []struct{ name, verdict, link string }{
		{"leader-crash", "PASS", "leader-crash/report.html"},
		{"partition-leader", "FAIL · 1 finding", "partition-leader/report.html"},
		{"latency-leader", "INCOMPLETE · 1 finding", "latency-leader/report.html"},
		{"redis-restart", "ERROR", ""},
	} {
		cells := rows[i].all("td")
		if got := cells[0].text.String(); got != want.name {
			t.Errorf("row %d: scenario %q; want %q", i, got, want.name)
		}
		if got := cells[1].text.String(); got != want.verdict {
			t.Errorf("row %d: verdict %q; want %q", i, got, want.verdict)
		}
		links := rows[i].all("a")
		switch {
		case want.link == "" && len(links) > 0:
			t.Errorf("row %d links to %q; the run has no report", i, links[0].attrs["href"])
		case want.link != "" && (len(links) == 0 || links[0].attrs["href"] != want.link):
			t.Errorf("row %d: no link to %s", i, want.link)
		}
	}
	text := doc.text.String()
	for _, want := range []string{"6.2s", "5.749s", "13.75s", "redis-server not found in PATH", "4 scenarios: 1 passed, 1 failed, 0 unknown, 1 incomplete, 1 could not start.", "Backend: real."} {
		if !strings.Contains(text, want) {
			t.Errorf("index.html does not say %q", want)
		}
	}

	// JUnit: one testcase per scenario; failures and errors counted apart.
	b, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var j junitSuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Tests != 4 || j.Failures != 2 || j.Errors != 1 || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 4 {
		t.Fatalf("junit: tests %d failures %d errors %d; want 4, 2, 1", j.Tests, j.Failures, j.Errors)
	}
	cases := j.Suites[0].Cases
	if cases[0].Failure != nil || cases[0].Error != nil {
		t.Error("a passing run is reported as failed")
	}
	if f := cases[1].Failure; f == nil || !strings.Contains(f.Message, fixture().Checks[2].String()) {
		t.Errorf("failure %+v does not name the broken expectation", f)
	}
	if f := cases[2].Failure; f == nil || !strings.Contains(f.Message, "run incomplete: context canceled") || !strings.Contains(f.Message, "harness error") {
		t.Errorf("incomplete run: failure %+v", f)
	}
	// The run's error is its Incomplete reason: said once, not twice.
	if f := cases[2].Failure; f != nil && strings.Count(f.Message, "context canceled") != 1 {
		t.Errorf("incomplete run: %q repeats the reason", f.Message)
	}
	if e := cases[3].Error; e == nil || !strings.Contains(e.Message, "redis-server not found") {
		t.Errorf("a run that could not start: error %+v", e)
	}
}

// TestJUnitDidNotPassWithoutReason: a result that did not pass always
// fails, even when nothing in it says why.
func TestJUnitDidNotPassWithoutReason(t *testing.T) {
	res := passing()
	res.Verdict = model.Fail
	var b bytes.Buffer
	if err := JUnit(&b, []*verdict.Result{res}); err != nil {
		t.Fatal(err)
	}
	var j junitSuites
	if err := xml.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.Failures != 1 {
		t.Errorf("failures %d; want 1", j.Failures)
	}
}

// An unknown run is neither a pass nor hidden: the suite counts it apart,
// the row says UNKNOWN with the reason, JUnit reports it as a failure.
func TestWriteSuiteUnknown(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "suite")
	res := skipped()
	if res.Verdict != model.Unknown {
		t.Fatalf("fixture verdict %s, want unknown", res.Verdict)
	}
	if err := WriteSuite(dir, []SuiteRun{{Result: passing(), Dir: "leader-crash"}, {Result: res, Dir: "follower-pause"}}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc := parseXHTML(t, page)
	row := doc.all("tbody")[0].all("tr")[1]
	if got := row.all("td")[1].text.String(); got != "UNKNOWN" {
		t.Errorf("verdict cell %q, want UNKNOWN", got)
	}
	for _, want := range []string{"2 scenarios: 1 passed, 0 failed, 1 unknown", "fault 1 (pause) was skipped"} {
		if !strings.Contains(doc.text.String(), want) {
			t.Errorf("index.html does not say %q", want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, FileJUnit))
	if err != nil {
		t.Fatal(err)
	}
	var j junitSuites
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if f := j.Suites[0].Cases[1].Failure; f == nil || f.Type != "unknown" || !strings.Contains(f.Message, "skipped") {
		t.Errorf("JUnit: unknown run reported as %+v; want a failure of type unknown with the reason", f)
	}
	// The run's own report says it too.
	run := t.TempDir()
	if _, err := WriteRun(context.Background(), run, res, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{FileHTML, FileMarkdown} {
		b, err := os.ReadFile(filepath.Join(run, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "UNKNOWN") || !strings.Contains(string(b), "was skipped") {
			t.Errorf("%s does not show the UNKNOWN verdict and its reason", name)
		}
	}
}

// The latest link points at the newest run's directory, replacing the one
// before.
func TestLinkLatest(t *testing.T) {
	base := t.TempDir()
	for _, run := range []string{"run-1", "run-2"} {
		dir := filepath.Join(base, run)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		LinkLatest(dir, "latest")
		if got, err := os.Readlink(filepath.Join(base, "latest")); err != nil || got != run {
			t.Errorf("latest -> %q (%v), want %s", got, err, run)
		}
	}
}

// countdown is a context that ends (Canceled) at its n-th Err call: an
// interrupt at each point at which WriteRun looks.
type countdown struct {
	context.Context
	n *int
}

func (c countdown) Err() error {
	if *c.n <= 0 {
		return context.Canceled
	}
	*c.n--
	return nil
}

// TestWriteRunInterrupted: an interrupt at any point of WriteRun leaves no
// file of the report, whole or partial, and says it was interrupted; a
// WriteRun that was not interrupted leaves every file.
func TestWriteRunInterrupted(t *testing.T) {
	res := fixture()
	for k := 0; ; k += 3 {
		dir := t.TempDir()
		n := k
		_, err := WriteRun(countdown{context.Background(), &n}, dir, res, Options{})
		left, _ := os.ReadDir(dir)
		if err == nil {
			if len(left) != 7 || k == 0 {
				t.Fatalf("not interrupted after %d looks: %d files, want 7", k, len(left))
			}
			return
		}
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
			t.Fatalf("interrupted after %d looks: %v, want an interrupt", k, err)
		}
		for _, e := range left {
			t.Errorf("interrupted after %d looks: %s left behind", k, e.Name())
		}
	}
}

// TestWriteRunCapsWindowTables: a result with 1,000 overlaps lists the
// first 100 in report.md and report.html and says how many more there
// are; result.json keeps every one.
func TestWriteRunCapsWindowTables(t *testing.T) {
	res := fixture()
	for i := range 1000 {
		at := time.Duration(i) * time.Second
		res.Analysis.Overlaps = append(res.Analysis.Overlaps, analysis.Overlap{Window: model.Window{Start: at, End: at + time.Millisecond}})
	}
	files, err := WriteRun(context.Background(), t.TempDir(), res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("… and %d more (all in result.json).", 1000+len(fixture().Analysis.Overlaps)-rowCap)
	for _, f := range []string{files.Markdown, files.HTML} {
		b, _ := os.ReadFile(f)
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not say %q", filepath.Base(f), want)
		}
	}
	back, err := ReadResult(files.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Analysis.Overlaps) != len(res.Analysis.Overlaps) {
		t.Errorf("result.json has %d overlaps, want %d", len(back.Analysis.Overlaps), len(res.Analysis.Overlaps))
	}
}

// TestResultJSONStreamed: a result whose timeline and analysis hold
// thousands of items is written as MarshalIndent writes it, byte for byte,
// its long lists streamed (found and cut in a copy, not in the result).
func TestResultJSONStreamed(t *testing.T) {
	res := fixture()
	for i := range 3000 {
		at := time.Duration(i) * time.Second
		res.Timeline = append(res.Timeline, model.Event{At: at, Kind: model.LeaderGained, Instance: i % 3, ID: fmt.Sprint(i)})
		res.Analysis.Beliefs = append(res.Analysis.Beliefs, analysis.Belief{Member: model.Member{Instance: i % 3, ID: fmt.Sprint(i)}, Window: model.Window{Start: at, End: at + time.Second}})
		res.Analysis.LeaderCount = append(res.Analysis.LeaderCount, analysis.CountStep{Window: model.Window{Start: at, End: at + time.Second}, Leaders: 1})
		res.Analysis.Overlaps = append(res.Analysis.Overlaps, analysis.Overlap{Window: model.Window{Start: at, End: at + time.Millisecond}, Leaders: []model.Member{{Instance: 1, ID: "<a&b>"}}})
	}
	copyRes := *res
	var big []bigSlice
	findBig(reflect.ValueOf(&copyRes).Elem(), 1, &big)
	if len(big) < 4 {
		t.Fatalf("%d long lists found to stream, want 4 (timeline, beliefs, leader_count, overlaps)", len(big))
	}
	want, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	streamed, err := streamResultJSON(&got, res)
	if err != nil {
		t.Fatal(err)
	}
	if streamed != len(big) {
		t.Errorf("%d lists streamed, want %d", streamed, len(big))
	}
	if !bytes.Equal(got.Bytes(), append(want, '\n')) {
		t.Errorf("the streamed result.json differs from MarshalIndent's (%d and %d bytes)", got.Len(), len(want)+1)
	}
	if len(res.Timeline) <= streamAbove || len(res.Analysis.Beliefs) <= streamAbove {
		t.Error("writing the result cut its lists")
	}
}

// TestWriteRunInterruptedOverAnEarlierReport: WriteRun into a directory
// that holds a report already (observe --from's default: the recording's
// own directory), interrupted at any point, leaves the earlier report
// whole, byte for byte: never the earlier report.html beside no
// result.json, nor a mix of the two. Before, each file was renamed into
// place as it was done, and the interrupt removed those.
func TestWriteRunInterruptedOverAnEarlierReport(t *testing.T) {
	earlier, res := fixture(), fixture()
	earlier.RunID = "earlier"
	names := []string{FileJSON, FileEvents, FileSVG, FilePNG, FileMarkdown, FileHTML, FileJUnit}
	for k := 3; ; k += 3 {
		dir := t.TempDir()
		if _, err := WriteRun(context.Background(), dir, earlier, Options{}); err != nil {
			t.Fatal(err)
		}
		before := map[string][]byte{}
		for _, f := range names {
			before[f], _ = os.ReadFile(filepath.Join(dir, f))
		}
		n := k
		_, err := WriteRun(countdown{context.Background(), &n}, dir, res, Options{})
		if err == nil {
			return
		}
		left, _ := os.ReadDir(dir)
		if len(left) != len(names) {
			t.Errorf("interrupted after %d looks: %d files left, want the earlier report's %d", k, len(left), len(names))
		}
		for _, f := range names {
			if b, _ := os.ReadFile(filepath.Join(dir, f)); !bytes.Equal(b, before[f]) {
				t.Fatalf("interrupted after %d looks: %s is not the earlier report's", k, f)
			}
		}
	}
}
