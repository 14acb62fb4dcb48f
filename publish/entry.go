package publish

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leaselab/leaselab/election"
)

// FormatVersion is the version of the entry format, field "v".
const FormatVersion = "1"

// StreamKey returns the stream the transitions of group are published to:
// taskrunner:{taskrunner:leader:<base32(sha1(group))>}:transitions, in the
// lease's hash slot.
func StreamKey(group string) string { return "taskrunner:" + election.HashTag(group) + ":transitions" }

// Entry is one published transition, as written to the stream and as an
// observer reads it back.
type Entry struct {
	// StreamID is the stream entry's ID (set when read back).
	StreamID string                  `json:"stream_id,omitempty"`
	Kind     election.TransitionKind `json:"kind"`
	// Instance is the elector's ID, the value it writes into the lease.
	Instance string `json:"instance"`
	// Group is the lease's name (election.Opts.Key).
	Group  string                `json:"group"`
	Term   uint64                `json:"term,omitempty"`
	Token  int64                 `json:"token,omitempty"`
	Reason election.DemoteReason `json:"reason,omitempty"`
	Err    string                `json:"err,omitempty"`
	// Wall is the instance's wall clock at the transition (it may lie);
	// Mono its monotonic offset then, since the publisher started.
	Wall time.Time     `json:"wall"`
	Mono time.Duration `json:"mono"`
	// PubWall and PubMono are the same two clocks just before the write
	// that stored this entry was sent.
	PubWall time.Time     `json:"pub_wall"`
	PubMono time.Duration `json:"pub_mono"`
	// RTT is the round trip of the publisher's previous successful write (0
	// for its first): an estimate of this write's own.
	RTT time.Duration `json:"rtt,omitempty"`
	// Late: an earlier write failed while this entry waited, so it was
	// written after Redis became reachable again.
	Late bool `json:"late,omitempty"`
	// Publisher identifies the publisher (random, per process); Seq numbers
	// its transitions from 1, and Dropped counts those it dropped (buffer
	// full) before this one. A write that timed out may still have landed:
	// an observer drops repeats of (Publisher, Seq).
	Publisher string `json:"publisher"`
	Seq       uint64 `json:"seq"`
	Dropped   uint64 `json:"dropped,omitempty"`
	// Redis is Redis's TIME inside the script that wrote the entry.
	Redis time.Time `json:"redis"`
	// TTL, Wait and Safe are the elector's options, for the observer's
	// analysis (its bounds and claims).
	TTL  time.Duration `json:"ttl"`
	Wait time.Duration `json:"wait"`
	Safe bool          `json:"safe,omitempty"`
}

// maxErr bounds the error text stored per entry.
const maxErr = 256

// fields returns the entry's stream fields, without the Redis time (the
// script adds it), as XADD arguments.
func (e Entry) fields() []any {
	errText := e.Err
	if len(errText) > maxErr {
		errText = errText[:maxErr]
	}
	late := "0"
	if e.Late {
		late = "1"
	}
	safe := "0"
	if e.Safe {
		safe = "1"
	}
	return []any{
		"v", FormatVersion, "kind", string(e.Kind), "id", e.Instance, "group", e.Group,
		"term", e.Term, "token", e.Token, "reason", string(e.Reason), "err", errText,
		"wall", e.Wall.UnixNano(), "mono", int64(e.Mono),
		"pwall", e.PubWall.UnixNano(), "pmono", int64(e.PubMono),
		"rtt", int64(e.RTT), "late", late, "pub", e.Publisher, "seq", e.Seq, "dropped", e.Dropped,
		"ttl", int64(e.TTL), "wait", int64(e.Wait), "safe", safe,
	}
}

// ParseEntry decodes a stream entry written by a Publisher. It names the
// entry and the field of any problem.
func ParseEntry(id string, values map[string]any) (Entry, error) {
	str := func(k string) string {
		s, _ := values[k].(string)
		return s
	}
	if v := str("v"); v != FormatVersion {
		return Entry{}, fmt.Errorf("entry %s: format version %q, want %q", id, v, FormatVersion)
	}
	e := Entry{StreamID: id, Kind: election.TransitionKind(str("kind")), Instance: str("id"), Group: str("group"),
		Reason: election.DemoteReason(str("reason")), Err: str("err"), Publisher: str("pub"), Late: str("late") == "1", Safe: str("safe") == "1"}
	switch e.Kind {
	case election.Promoted, election.Demoted, election.Errored:
	default:
		return Entry{}, fmt.Errorf("entry %s: field kind: unknown transition %q", id, e.Kind)
	}
	if e.Instance == "" {
		return Entry{}, fmt.Errorf("entry %s: field id is empty", id)
	}
	var err error
	num := func(k string) int64 {
		if err != nil {
			return 0
		}
		n, perr := strconv.ParseInt(str(k), 10, 64)
		if perr != nil {
			err = fmt.Errorf("entry %s: field %s: %w", id, k, perr)
		}
		return n
	}
	e.Term, e.Token = uint64(num("term")), num("token")
	e.Wall, e.Mono = time.Unix(0, num("wall")), time.Duration(num("mono"))
	e.PubWall, e.PubMono = time.Unix(0, num("pwall")), time.Duration(num("pmono"))
	e.RTT, e.Seq, e.Dropped = time.Duration(num("rtt")), uint64(num("seq")), uint64(num("dropped"))
	e.TTL, e.Wait = time.Duration(num("ttl")), time.Duration(num("wait"))
	sec, usec := num("rs"), num("ru")
	if err != nil {
		return Entry{}, err
	}
	e.Redis = time.Unix(sec, usec*1000)
	return e, nil
}
