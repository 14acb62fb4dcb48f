package process_test

import (
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/process"
)

// TestElectorOnlyAfterAFailedProbe: an elector-only agent runs a
// runner-mode scenario's elector part when the capability probe reads its
// hello; when the probe got none (a loaded machine: 30 Python agents at
// load 46 took over 15 s), the run starts in runner mode and ends at the
// agents' hellos. It must say why the elector part was not taken, not
// only that the agent lacks runner (which reads as a refusal the
// backend should have made).
func TestElectorOnlyAfterAFailedProbe(t *testing.T) {
	sc := short()
	sc.Mode = model.ModeRunner
	// No hello for the probe (its lease is leaselab-probe), one without
	// runner for the run.
	agent := []string{"sh", "-c", `if [ "$LEASELAB_GROUP" = leaselab-probe ]; then exit 3; fi; ` + shHello + `; exec sleep 30`}
	res, err := runWithin(t, 30*time.Second, sc.WithDefaults(), process.Backend{Agent: agent})
	text := ""
	if err != nil {
		text = err.Error()
	}
	if res != nil {
		text += strings.Join(res.Errors, "; ") + res.Incomplete
	}
	if !strings.Contains(text, `does not declare the "runner" capability`) {
		t.Fatalf("result %v, error %v: want the run to end at the hellos lacking runner", res != nil, err)
	}
	if !strings.Contains(text, "the capability probe got no hello") {
		t.Errorf("%s\nwant why the elector part was not taken: the probe got no hello", text)
	}
	assertNoAgents(t)
}
