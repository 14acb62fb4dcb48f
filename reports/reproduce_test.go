package reports

import (
	"github.com/leaselab/leaselab/model/verdict"

	"bytes"
	"context"
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every format (HTML, Markdown, JUnit) says the one reproduce line
// (scenarios.CommandOf): a user's file named like a built-in by its path,
// the agent the caller gave quoted for a shell; and names the agent tested.
func TestEveryFormatReproducesTheUsersFileAndAgent(t *testing.T) {
	res := fixture()
	res.Scenario.Name, res.Scenario.Source = "leader-crash", "my suite/leader-crash.yaml"
	res.Backend = "process"
	res.Agent = &verdict.RunAgent{Command: []string{"/usr/bin/python3", "x.py"}, Override: true, Hello: "py-agent 1.2"}
	want := "chaos run 'my suite/leader-crash.yaml' --seed 42 --time-scale 1 --safe off --backend process --agent '/usr/bin/python3 x.py'"
	agent := "/usr/bin/python3 x.py (its hello: py-agent 1.2), given by --agent"
	var h, md, ju bytes.Buffer
	if err := HTML(&h, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&md, res, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := JUnit(&ju, []*verdict.Result{res}); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"html": html.UnescapeString(h.String()), "markdown": md.String(), "junit": html.UnescapeString(ju.String())} {
		if !strings.Contains(text, want) {
			t.Errorf("%s does not say %s", name, want)
		}
		if !strings.Contains(text, agent) {
			t.Errorf("%s does not name the agent: %s", name, agent)
		}
		if strings.Contains(text, "go run ./cmd/chaos") {
			t.Errorf("%s says go run ./cmd/chaos outside leaselab's checkout", name)
		}
	}
	// The files WriteRun writes say it too.
	dir := t.TempDir()
	if _, err := WriteRun(context.Background(), dir, res, Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil || !strings.Contains(string(b), want) {
		t.Errorf("report.md: %v", err)
	}
}
