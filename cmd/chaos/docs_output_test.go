package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/reports"
	"github.com/leaselab/leaselab/scenarios"
)

// elapsedRE matches what a page's output cannot repeat: the wall time a
// command took ("40000 runs in 4.373s", "329 runs, in 334ms").
var elapsedRE = regexp.MustCompile(`\bin \d+(\.\d+)?(ns|µs|ms|s|m[\d.]*s)\b`)

// TestDocsOutputsMatch: every output a page shows under "$ chaos …" is
// what the command prints today, figure for figure, in order (a line of
// "..." abridges; wall times are the machine's). The virtual backend is
// deterministic, so a figure that drifted from the code (a bound, a
// worst case, a count of segments) fails here rather than misleading a
// reader.
func TestDocsOutputsMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the documented commands")
	}
	type block struct {
		where string
		args  []string
		want  []string
	}
	var blocks []block
	for _, page := range docFiles(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		for _, m := range fenceRE.FindAllStringSubmatchIndex(md, -1) {
			body := md[m[4]:m[5]]
			first, rest, _ := strings.Cut(body, "\n")
			cmd, ok := strings.CutPrefix(first, "$ chaos ")
			if !ok {
				continue
			}
			where := strings.TrimPrefix(page, "../../") + ":" + strconv.Itoa(strings.Count(md[:m[4]], "\n")+1)
			blocks = append(blocks, block{where, strings.Fields(cmd), strings.Split(strings.TrimRight(rest, "\n"), "\n")})
		}
	}
	if len(blocks) < 3 {
		t.Fatalf("only %d outputs shown under $ chaos: the pages lost them, or this test its way of finding them", len(blocks))
	}
	dir := t.TempDir()
	t.Chdir(dir)
	// pause-runner.yaml, as docs/sweep.md says: the pause built-in in runner mode.
	e, _ := scenarios.Lookup("pause")
	sc := e.Scenario
	sc.Name, sc.Mode = "pause-runner", model.ModeRunner
	y, err := scenarios.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("pause-runner.yaml", y, 0o644); err != nil {
		t.Fatal(err)
	}
	for i, b := range blocks {
		args := b.args
		if k := slices.Index(args, "--out"); k >= 0 && k+1 < len(args) {
			args = append(append([]string{}, args[:k+1]...), append([]string{filepath.Join(dir, "out", strconv.Itoa(i))}, args[k+2:]...)...)
		}
		_, out, errOut := chaos(t, args...)
		got := strings.Split(elapsedRE.ReplaceAllString(out, "in T"), "\n")
		k := 0
		for _, want := range b.want {
			if strings.TrimSpace(want) == "..." {
				continue
			}
			w := elapsedRE.ReplaceAllString(want, "in T")
			for k < len(got) && got[k] != w {
				k++
			}
			if k == len(got) {
				t.Errorf("%s: chaos %s no longer prints, in this order:\n%s\nit prints:\n%s%s", b.where, strings.Join(b.args, " "), want, out, errOut)
				break
			}
			k++
		}
	}
}

// TestDocsPictureIsTodays: the README's timeline is what today's renderer
// draws for the run its caption names (chaos run partition-blackhole
// --backend virtual --seed 1), byte for byte, and the caption's figures
// are that run's. A renderer change that leaves the picture behind fails
// here: regenerate it with that command and copy its timeline.png.
func TestDocsPictureIsTodays(t *testing.T) {
	out := t.TempDir()
	if code, _, errOut := chaos(t, "run", "partition-blackhole", "--backend", "virtual", "--seed", "1", "--out", out, "--quiet"); code != exitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	latest := filepath.Join(out, "partition-blackhole", "latest")
	got, err := os.ReadFile(filepath.Join(latest, "timeline.png"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../docs/partition-blackhole-timeline.png")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/partition-blackhole-timeline.png is not what the renderer draws today: copy %s", filepath.Join(latest, "timeline.png"))
	}
	res, err := reports.ReadResult(filepath.Join(latest, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	s := res.Analysis.Summary
	for _, want := range []string{
		"stale leadership (it believed, Redis disagreed: " + strings.TrimSuffix(model.DurationText(s.MaxStale), "s") + " s",
		"the " + strings.TrimSuffix(model.DurationText(s.MaxOverlap), "s") + " s with two leaders",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the README's caption lacks %q: the picture's run measured stale %v, overlap %v", want, s.MaxStale, s.MaxOverlap)
		}
	}
}
