package analysis

import (
	"time"

	"github.com/leaselab/leaselab/model"
)

// Observed describes a Result built from outside a live fleet (chaos
// observe) rather than by the harness: the instances published their
// transitions to Redis and an observer followed them and the lease key.
// Every time in such a timeline is an estimate on Redis's clock, with its
// Uncertainty (Event, Window).
type Observed struct {
	// Group names the lease; Key is its Redis key, Stream the transitions'.
	Group  string `json:"group"`
	Key    string `json:"key"`
	Stream string `json:"stream"`
	// Source is where the observations came from: a Redis address, or a
	// file of exported observations.
	Source string `json:"source"`
	// Lane is how the lease key was followed: "keyspace-notifications" or
	// "poll"; Resolution how late a change of holder may be seen (the poll
	// interval; for notifications, the observer's round trip).
	Lane       string        `json:"lane"`
	Resolution time.Duration `json:"resolution"`
	// Start is the Redis time of the timeline's 0.
	Start time.Time `json:"start"`
	// RTT is the observer's own round trip to Redis (its clock sync's).
	RTT       time.Duration      `json:"rtt"`
	Instances []ObservedInstance `json:"instances,omitempty"`
	// Notes say what limits the observation (entries missing, beliefs
	// begun before the watch, an instance silent at the end).
	Notes []string `json:"notes,omitempty"`
	// Command rebuilds this result from its recording (observe --from
	// the file, with the limits it was judged by): a live fleet does not
	// replay, so it is the observation's reproduce command. "" in a
	// result written before it was kept.
	Command string `json:"command,omitempty"`
}

// ObservedRecording is the file chaos observe records a watch into,
// beside its report, and rebuilds the report from (observe --from).
const ObservedRecording = "observed.jsonl"

// ObservedInstance is what an observer learned about one instance's record
// and its clocks.
type ObservedInstance struct {
	model.Member
	// Entries published, Late ones among them (written after Redis became
	// reachable again), Dropped by its publisher's full buffer, and Holes:
	// sequence numbers never seen (dropped, or trimmed from the stream).
	Entries int `json:"entries"`
	Late    int `json:"late,omitempty"`
	Dropped int `json:"dropped,omitempty"`
	Holes   int `json:"holes,omitempty"`
	// ClockOffset is Redis's clock minus the instance's wall clock, from its
	// entries (Redis TIME at each write minus the instance's wall clock just
	// before it), within ± ClockOffsetUncertainty: the spread of those
	// samples plus the writes' round trips. A wall clock that drifted or
	// jumped during the watch shows as a large uncertainty.
	ClockOffset            time.Duration `json:"clock_offset"`
	ClockOffsetUncertainty time.Duration `json:"clock_offset_uncertainty"`
	// MaxDelay is the longest time from a transition to its write (by the
	// instance's monotonic clock): how late its news could arrive.
	MaxDelay time.Duration `json:"max_delay,omitempty"`
}
