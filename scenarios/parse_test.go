package scenarios

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
)

// readmeExample returns the YAML block under "## Full example" in
// README.md, so the documentation's example is tested, not just shown.
func readmeExample(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "## Full example")
	if !ok {
		t.Fatal(`README.md has no "## Full example"`)
	}
	_, rest, ok = strings.Cut(rest, "```yaml\n")
	if !ok {
		t.Fatal("README.md: no yaml block after Full example")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("README.md: unterminated yaml block")
	}
	return []byte(block)
}

func mustParse(t testing.TB, name, src string) model.Scenario {
	t.Helper()
	sc, err := Parse(name, []byte(src))
	if err != nil {
		t.Fatalf("Parse(%s):\n%v", name, err)
	}
	return sc
}

// TestFullExample checks every field of the README's example lands where it
// should.
func TestFullExample(t *testing.T) {
	sc, err := Parse("example.yaml", readmeExample(t))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Scenario{
		Name:        "leader-crash-under-load",
		Description: "What this run probes, in plain words: which claim of the spec, which hazard.",
		Seed:        7,
		Instances:   3,
		Mode:        model.ModeRunner,
		Duration:    30 * time.Second,
		Recovery:    13 * time.Second,
		TimeScale:   1,
		Params: model.Params{
			TTL: 5 * time.Second, Wait: 6 * time.Second, JitterMS: 5, OpTimeout: 2 * time.Second,
			Client: model.ClientParams{
				ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second, DialTimeout: 5 * time.Second,
				MaxRetries: 3, ContextTimeoutEnabled: true, PoolSize: 10,
			},
			ChoreInterval: time.Second,
		},
		Workload: model.Workload{DispatchRate: 20, DelayedRate: 2, Delay: time.Second, TaskDuration: 10 * time.Millisecond},
		Faults: []model.Fault{
			{At: 6250 * time.Millisecond, For: 12 * time.Second, Kind: model.FaultCrash, Target: model.Target{Role: "leader"}, Restart: true},
			{At: 20 * time.Second, For: 2 * time.Second, Kind: model.FaultPartition, Target: model.Target{Indexes: []int{1, 2}}, Mode: "reset"},
			{At: 23 * time.Second, For: 3 * time.Second, Kind: model.FaultLatency, Target: model.Target{Role: "follower"},
				Latency: 200 * time.Millisecond, Jitter: 50 * time.Millisecond, Direction: "replies"},
			{At: 24 * time.Second, For: 2 * time.Second, Kind: model.FaultClock, Target: model.Target{Indexes: []int{0}}, Rate: 0.5, Jump: -time.Second},
			{At: 27 * time.Second, Kind: model.FaultScriptFlush},
		},
		Expect: []model.Expectation{
			{Metric: "max_gap", Max: "ttl + wait + 250ms"},
			{Metric: "max_overlap", Max: "predicted"},
			{Metric: "failover", Max: "predicted", Slack: 500 * time.Millisecond},
			{Metric: "lost_tasks", Max: "0"},
			{Metric: "duplicate_chores", Max: "0"},
		},
	}
	for i := range sc.Expect {
		if sc.Expect[i].Line == 0 {
			t.Errorf("expect[%d] has no line", i)
		}
	}
	if got := withoutLines(sc); !reflect.DeepEqual(got, want) {
		t.Errorf("parsed:\n%+v\nwant:\n%+v", got, want)
	}
}

// withoutLines drops Expectation.Line, the one field a round trip moves.
func withoutLines(sc model.Scenario) model.Scenario {
	sc.Expect = append([]model.Expectation(nil), sc.Expect...)
	for i := range sc.Expect {
		sc.Expect[i].Line = 0
	}
	return sc
}

// TestRoundTrip checks Parse(Marshal(s)) == s for the full example and
// every built-in, and that Marshal is stable.
func TestRoundTrip(t *testing.T) {
	srcs := map[string][]byte{"example.yaml": readmeExample(t)}
	for _, e := range Builtin() {
		srcs[e.Name+".yaml"] = e.Raw
	}
	for name, src := range srcs {
		sc, err := Parse(name, src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := Marshal(sc)
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		back, err := Parse(name, out)
		if err != nil {
			t.Fatalf("%s: the marshalled file does not parse:\n%v\n%s", name, err, out)
		}
		if !reflect.DeepEqual(withoutLines(back), withoutLines(sc)) {
			t.Errorf("%s: round trip changed the scenario\nbefore: %+v\nafter:  %+v\nfile:\n%s", name, sc, back, out)
		}
		again, _ := Marshal(back)
		if string(again) != string(out) {
			t.Errorf("%s: Marshal is not stable:\n%s\nthen:\n%s", name, out, again)
		}
	}
}

// TestDefaults checks what an almost empty file means.
func TestDefaults(t *testing.T) {
	sc := mustParse(t, "dir/minimal.yml", "duration: 10s\n")
	want := model.Scenario{Name: "minimal", Duration: 10 * time.Second, Params: model.Params{JitterMS: model.DefaultJitterMS}}
	if !reflect.DeepEqual(sc, want) {
		t.Errorf("got %+v, want %+v", sc, want)
	}
	// Giving ttl alone keeps the spec's jitter.
	sc = mustParse(t, "x.yaml", "elector: {ttl: 1s}\n")
	if got := sc.Params.WithDefaults().JitterMS; got != model.DefaultJitterMS {
		t.Errorf("jitter with ttl given = %dms, want %d", got, model.DefaultJitterMS)
	}
}

// TestHumanZeros checks the values whose file spelling differs from the
// simulator's: 0 retries, no jitter, no timeout, a bare 0 limit.
func TestHumanZeros(t *testing.T) {
	sc := mustParse(t, "x.yaml", `
elector: {jitter: 0s}
client: {max_retries: 0, read_timeout: none}
expect: {max_overlap: 0}
`)
	p := sc.Params.WithDefaults()
	if sc.Params.JitterMS != -1 || p.Jitter() != 0 {
		t.Errorf("jitter 0s: JitterMS %d (effective %v), want -1 (0s)", sc.Params.JitterMS, p.Jitter())
	}
	if p.Client.MaxRetries != -1 {
		t.Errorf("max_retries 0: MaxRetries %d, want -1 (none)", p.Client.MaxRetries)
	}
	if p.Client.ReadTimeout != -1 {
		t.Errorf("read_timeout none: %v, want -1", p.Client.ReadTimeout)
	}
	if sc.Expect[0].Max != "0s" {
		t.Errorf("max_overlap 0: Max %q, want 0s", sc.Expect[0].Max)
	}
}

// TestExpectationLines checks that each expectation knows its line.
func TestExpectationLines(t *testing.T) {
	sc := mustParse(t, "x.yaml", "faults:\n  - {at: 5s, kind: crash}\nexpect:\n  max_gap: predicted\n\n  gaps: 1\n")
	if sc.Expect[0].Line != 4 || sc.Expect[1].Line != 6 {
		t.Errorf("lines %d, %d; want 4, 6", sc.Expect[0].Line, sc.Expect[1].Line)
	}
}

// TestErrorType checks that problems are available one by one, sorted by
// line.
func TestErrorType(t *testing.T) {
	_, err := Parse("x.yaml", []byte("expect: {gapz: 1}\ninstances: 0\n"))
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("got %T %v, want *Error", err, err)
	}
	if perr.File != "x.yaml" || len(perr.Problems) != 2 || perr.Problems[0].Line != 1 || perr.Problems[1].Field != "instances" {
		t.Errorf("problems: %+v", perr.Problems)
	}
}

func TestLoad(t *testing.T) {
	sc, err := Load("builtin/leader-crash.yaml")
	if err != nil || sc.Name != "leader-crash" {
		t.Fatalf("Load: %v, %q", err, sc.Name)
	}
	if _, err := Load("testdata/bad/unknown-fault-kind.yaml"); err == nil || !strings.HasPrefix(err.Error(), "testdata/bad/unknown-fault-kind.yaml:7: ") {
		t.Errorf("Load names the file by its path: %v", err)
	}
	if _, err := Load("no/such/file.yaml"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func TestSuggest(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"durration", "duration"}, {"tll", "ttl"}, {"jitter_ms", "jitter"}, {"tiemscale", "time_scale"},
		{"Duration", "duration"}, {"xyz", ""}, {"time-scale", "time_scale"},
	} {
		known := append(append([]string{}, topKeys...), electorKeys...)
		if got := Suggest(tt.in, known); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// BenchmarkParseManyFaults parses a schedule of 20,000 faults on fixed
// instances: the conflict check is a sweep, not a pair loop (which took
// 35 s here). go test -run '^$' -bench ParseManyFaults ./scenarios/
func BenchmarkParseManyFaults(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("instances: 10\nduration: 100000s\nfaults:\n")
	for i := range 20000 {
		fmt.Fprintf(&sb, "  - {at: %dms, for: 1ms, kind: pause, target: %d}\n", i*5, i%10)
	}
	data := []byte(sb.String())
	for b.Loop() {
		if _, err := Parse("many.yaml", data); err != nil {
			b.Fatal(err)
		}
	}
}
