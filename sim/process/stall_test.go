package process_test

import (
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/process"
)

// An agent's stall line is the harness's stall, of that instance: on a
// loaded machine its late timers lengthen windows as in-process ones do,
// and the verdicts count them. Before, the harness had no word for it and
// refused the line.
func TestAgentStallIsCounted(t *testing.T) {
	b := process.Backend{Agent: shAgent(`if [ "$LEASELAB_INSTANCE" = 1 ]; then sleep 0.5; echo "{\"type\":\"stall\",\"lateness_ns\":300000000}"; fi; exec sleep 30`)}
	res, err := runWithin(t, 20*time.Second, short(), b)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) > 0 {
		t.Fatalf("errors: %v", res.Errors)
	}
	st := res.Analysis.Stalls
	var found bool
	for _, s := range st {
		if s.Instance == 1 && s.Late == 300*time.Millisecond {
			found = true
		}
	}
	if !found {
		t.Fatalf("stalls %+v: want instance 1's of 300ms", st)
	}
}

// The probe of a chaos agent that a pause fault stopped (SIGSTOP) wakes
// late by the pause when it resumes: that stall is the fault's, and it
// must not excuse the windows the pause made (it would make pause's own
// overlap "the machine's"). The agent reports it; the analysis leaves it
// out.
func TestPausedAgentsStallIsTheFaults(t *testing.T) {
	b := process.Backend{Agent: chaosAgent(t)}
	sc := short(model.Fault{At: 600 * time.Millisecond, For: 800 * time.Millisecond, Kind: model.FaultPause, Target: model.Target{Role: "leader"}})
	res, err := runWithin(t, 30*time.Second, sc, b)
	if err != nil {
		t.Fatal(err)
	}
	paused := -1
	var reported bool
	for _, e := range res.Timeline {
		switch {
		case e.Kind == model.InstancePaused:
			paused = e.Instance
		case e.Kind == model.StallKind && e.Instance == paused && e.Lateness >= 600*time.Millisecond:
			reported = true
		}
	}
	if paused < 0 || !reported {
		t.Fatalf("paused instance %d, its probe's stall reported: %v; want the paused agent's probe to report the pause", paused, reported)
	}
	for _, s := range res.Analysis.Stalls {
		if s.Instance == paused && s.Late >= 600*time.Millisecond {
			t.Errorf("stall %+v counted: the pause is the fault's", s)
		}
	}
}
