package reports

import (
	"github.com/leaselab/leaselab/model/bounds"
	"github.com/leaselab/leaselab/model/verdict"

	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaselab/leaselab/model"
)

// A process-backend run's report names the client the predictions
// assumed and links each agent's log, relative to the report.
func TestReportLinksAgentLogs(t *testing.T) {
	out := t.TempDir()
	logs := filepath.Join(out, "agent-logs", "g")
	res := passing()
	res.Agent = &verdict.RunAgent{Command: []string{"/usr/bin/python3", "agent.py"},
		Logs:   []string{filepath.Join(logs, "instance-0.1.log"), filepath.Join(logs, "instance-0.2.log")},
		Client: &bounds.DeclaredClient{Client: model.ClientParams{Library: "redis-py 4.3.4", ReadTimeout: 1500 * ms(1), MaxRetries: -1}}}
	res.Params.Client = res.Agent.Client.Client
	files, err := WriteRun(context.Background(), filepath.Join(out, "run"), res, Options{})
	if err != nil {
		t.Fatal(err)
	}
	html, _ := os.ReadFile(files.HTML)
	md, _ := os.ReadFile(files.Markdown)
	for _, want := range []string{`<a href="../agent-logs/g/instance-0.1.log">instance-0.1.log</a>`, `<a href="../agent-logs/g/instance-0.2.log">`,
		"redis-py 4.3.4 (read timeout 1.5s, no retries), as the agent&#39;s hello declares it"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	if !strings.Contains(string(md), "[instance-0.2.log](../agent-logs/g/instance-0.2.log)") {
		t.Errorf("report.md does not link the logs")
	}
}
