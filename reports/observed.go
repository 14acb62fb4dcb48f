package reports

import (
	"github.com/leaselab/leaselab/model/analysis"
	"github.com/leaselab/leaselab/model/verdict"

	"fmt"
	"strconv"
)

// observedSection describes how a fleet was observed (chaos observe): the
// lanes and their resolution, and what each instance's record and clocks
// looked like.
func observedSection(o *analysis.Observed) section {
	how := table{Caption: "How the fleet was observed", Head: []string{"Figure", "Value"}}
	how.Rows = append(how.Rows,
		texts("Group", o.Group),
		texts("Source", o.Source),
		texts("Lease key", o.Key),
		texts("Transitions stream", o.Stream),
		texts("Redis lane", laneText(o)),
		texts("Observer round trip to Redis", dur(o.RTT)),
		texts("Time 0 (Redis clock)", o.Start.UTC().Format("2006-01-02 15:04:05.000 UTC")),
	)
	in := table{
		Caption: "Instances (clock offset: Redis minus the instance's wall clock)",
		Head:    []string{"Instance", "Entries", "Late", "Dropped", "Holes", "Clock offset", "Longest delay to publish"},
		Empty:   "No instance published a transition.",
	}
	for _, i := range o.Instances {
		in.Rows = append(in.Rows, texts(member(i.Member), strconv.Itoa(i.Entries), strconv.Itoa(i.Late),
			strconv.Itoa(i.Dropped), strconv.Itoa(i.Holes), Uncertain(i.ClockOffset, i.ClockOffsetUncertainty), dur(i.MaxDelay)))
	}
	return section{ID: "observed", Title: "Observation", Tables: []table{how, in}, Items: o.Notes,
		Intro: []string{"Every time is an estimate on Redis's clock. Each write of a transition ties its instance's monotonic clock to Redis's (the Redis TIME inside the write, late by at most the write's round trip); a transition is placed where all its instance's writes agree, ± half the span they leave. " +
			"Instance wall clocks are not used to place events; their offsets (from the quickest write) are shown so a lying clock can be seen. " +
			"Every window's length is given with the sum of the uncertainties of its two ends."}}
}

// observedParams is the parameters section of an observed fleet: only what
// its instances published (the client's timeouts, for one, they do not).
func observedParams(res *verdict.Result) section {
	p := res.Params
	t := table{Head: []string{"Parameter", "Value", "Meaning"}}
	t.Rows = append(t.Rows,
		texts("TTL", dur(p.TTL), "how long the lease lives without renewal (published by the instances)"),
		texts("Wait", dur(p.Wait), "how often a follower tries to acquire (published by the instances)"),
		texts("Safe mode", yesNo(p.Safe), "lease guard and fencing tokens (published by the instances)"),
		texts("Instances", strconv.Itoa(res.Scenario.Instances), "instances that published a transition during the watch or before it"),
	)
	return section{ID: "params", Title: "Parameters", Tables: []table{t},
		Intro: []string{"What the instances published with each transition; an observer knows nothing else of their configuration (client timeouts, jitter)."}}
}

// laneText says how the lease key was followed and how finely.
func laneText(o *analysis.Observed) string {
	if o.Lane == "poll" {
		return fmt.Sprintf("poll (GET and PTTL every %s): a change is seen within one interval", dur(o.Resolution))
	}
	return fmt.Sprintf("%s: a change is seen about a round trip (%s) after it happens; expiries at the instant PTTL predicted", o.Lane, dur(o.Resolution))
}
