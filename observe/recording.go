package observe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/leaselab/leaselab/publish"
)

// Header describes a watch: what was followed, how, and the observer's tie
// to Redis's clock.
type Header struct {
	Group  string `json:"group,omitempty"`
	Key    string `json:"key"`
	Stream string `json:"stream"`
	Source string `json:"source"`
	// Lane is LaneNotify or LanePoll; Resolution how late a change of
	// holder may be seen on it.
	Lane       string        `json:"lane"`
	Resolution time.Duration `json:"resolution"`
	// LaneNote says why the notification lane was not used, if it was not,
	// or that the watch turned notifications on (EnableNotifications).
	LaneNote string `json:"lane_note,omitempty"`
	// Start is the Redis time the watch began: the timeline's 0.
	Start time.Time `json:"start"`
	// RTT is the round trip of the observer's best TIME call.
	RTT time.Duration `json:"rtt"`
	// Failover says how the watch follows a failover (Sentinel, ROLE),
	// or why it cannot.
	Failover string `json:"failover,omitempty"`
}

// Lanes of the Redis truth.
const (
	LaneNotify = "keyspace-notifications"
	LanePoll   = "poll"
)

// HolderChange is one change of what the lease key holds, on Redis's clock.
type HolderChange struct {
	At          time.Time     `json:"at"`
	Holder      string        `json:"holder"` // "" = no key
	Uncertainty time.Duration `json:"uncertainty"`
	// Note is what revealed it: a notification's event (set, expire,
	// expired, del) or "poll".
	Note string `json:"note,omitempty"`
}

// Switch is the watch's move to a new primary after a failover.
type Switch struct {
	// At is the Redis time (the new node's clock) of the first read of the
	// lease key on the new node.
	At   time.Time `json:"at"`
	From string    `json:"from"`
	To   string    `json:"to"`
	// Why is what made the watch look for the primary: the old node's
	// error, its new role, or the Sentinel's announcement.
	Why string `json:"why"`
	// LastSeen is the Redis time of the last read of the key on the old
	// node while it served: nothing was seen of the key between it and
	// At, so a change of holder in that span is placed in its middle.
	LastSeen time.Time `json:"last_seen"`
	// ClockStep is the new node's clock minus the old's, as the observer's
	// monotonic clock bridges them, ± ClockStepUncertainty. Times after the
	// switch are on the new node's clock.
	ClockStep            time.Duration `json:"clock_step"`
	ClockStepUncertainty time.Duration `json:"clock_step_uncertainty"`
	// Lane is the lane on the new node (notifications may be refused
	// there).
	Lane string `json:"lane"`
}

// Recording is everything a watch saw.
type Recording struct {
	Header  Header
	Entries []publish.Entry
	Holders []HolderChange
	// Switches are the watch's moves to a new primary, in order.
	Switches []Switch
	// Dropped counts the stream entries the watch could not read, by why
	// (publish.ParseEntry's error without the entry's ID: another format
	// version, a field missing or malformed). A transition among them is
	// missing from the report, so Build's verdict is not a pass.
	Dropped map[string]int
	// End is the Redis time the watch ended (zero while it runs).
	End time.Time
	// Ended says how: "complete" (its --for passed, or it was stopped), or
	// why not.
	Ended string
}

// line is one JSON line of a recording: exactly one field is set.
type line struct {
	Watch  *Header        `json:"watch,omitempty"`
	Entry  *publish.Entry `json:"entry,omitempty"`
	Holder *HolderChange  `json:"holder,omitempty"`
	Switch *Switch        `json:"switch,omitempty"`
	Drop   *dropLine      `json:"dropped,omitempty"`
	End    *endLine       `json:"end,omitempty"`
}

// dropLine is one stream entry the watch could not read (StreamID set), or
// Count of them for one reason (a whole recording written at once).
type dropLine struct {
	StreamID string `json:"stream_id,omitempty"`
	Reason   string `json:"reason"`
	Count    int    `json:"count,omitempty"`
}

// maxDropReasons bounds the distinct reasons a recording keeps in memory
// (a reason may quote a value); the rest are counted under otherReasons.
const maxDropReasons = 100

const otherReasons = "other reasons"

// drop counts one entry dropped for reason.
func (r *Recording) drop(reason string, n int) {
	if r.Dropped == nil {
		r.Dropped = map[string]int{}
	}
	if _, ok := r.Dropped[reason]; !ok && len(r.Dropped) >= maxDropReasons {
		reason = otherReasons
	}
	r.Dropped[reason] += n
}

// DroppedEntries is how many stream entries the watch could not read.
func (r *Recording) DroppedEntries() int {
	n := 0
	for _, c := range r.Dropped {
		n += c
	}
	return n
}

type endLine struct {
	At    time.Time `json:"at"`
	Ended string    `json:"ended"`
}

// Writer writes a recording as JSON lines, as the watch goes.
type Writer struct {
	enc *json.Encoder
	bw  *bufio.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer {
	bw := bufio.NewWriter(w)
	return &Writer{enc: json.NewEncoder(bw), bw: bw}
}

func (w *Writer) write(l line) error {
	if err := w.enc.Encode(l); err != nil {
		return fmt.Errorf("observe: writing the recording: %w", err)
	}
	return nil
}

// Header writes the watch's header (the first line).
func (w *Writer) Header(h Header) error { return w.write(line{Watch: &h}) }

// Entry writes one stream entry.
func (w *Writer) Entry(e publish.Entry) error { return w.write(line{Entry: &e}) }

// Holder writes one change of holder.
func (w *Writer) Holder(h HolderChange) error { return w.write(line{Holder: &h}) }

// Switch writes a move to a new primary.
func (w *Writer) Switch(s Switch) error { return w.write(line{Switch: &s}) }

// Dropped writes a stream entry the watch could not read, and why.
func (w *Writer) Dropped(streamID, reason string) error {
	return w.write(line{Drop: &dropLine{StreamID: streamID, Reason: reason}})
}

// End writes the last line.
func (w *Writer) End(at time.Time, ended string) error {
	return w.write(line{End: &endLine{At: at, Ended: ended}})
}

// Flush writes what is buffered.
func (w *Writer) Flush() error { return w.bw.Flush() }

// WriteRecording writes rec whole.
func WriteRecording(w io.Writer, rec *Recording) error {
	rw := NewWriter(w)
	if err := rw.Header(rec.Header); err != nil {
		return err
	}
	for _, e := range rec.Entries {
		if err := rw.Entry(e); err != nil {
			return err
		}
	}
	for _, h := range rec.Holders {
		if err := rw.Holder(h); err != nil {
			return err
		}
	}
	for _, s := range rec.Switches {
		if err := rw.Switch(s); err != nil {
			return err
		}
	}
	for _, reason := range slices.Sorted(maps.Keys(rec.Dropped)) {
		if err := rw.write(line{Drop: &dropLine{Reason: reason, Count: rec.Dropped[reason]}}); err != nil {
			return err
		}
	}
	if !rec.End.IsZero() {
		if err := rw.End(rec.End, rec.Ended); err != nil {
			return err
		}
	}
	return rw.Flush()
}

// ReadRecording reads a recording written by a Writer. name is used in
// errors ("observed.jsonl:12: ..."). A recording without its end line (the
// observer was killed) is read up to where it stops, and says so in Ended.
// It returns ctx's error when ctx ends first.
func ReadRecording(ctx context.Context, r io.Reader, name string) (*Recording, error) {
	rec := &Recording{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	seenHeader := false
	for n := 1; sc.Scan(); n++ {
		if n%cancelEvery == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, ctx.Err())
		}
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var l line
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		switch {
		case l.Watch != nil:
			if seenHeader {
				return nil, fmt.Errorf("%s:%d: a second watch header (one recording per file)", name, n)
			}
			rec.Header, seenHeader = *l.Watch, true
		case !seenHeader:
			return nil, fmt.Errorf("%s:%d: the first line must be the watch header", name, n)
		case l.Entry != nil:
			rec.Entries = append(rec.Entries, *l.Entry)
		case l.Holder != nil:
			rec.Holders = append(rec.Holders, *l.Holder)
		case l.Switch != nil:
			rec.Switches = append(rec.Switches, *l.Switch)
		case l.Drop != nil:
			rec.drop(l.Drop.Reason, max(l.Drop.Count, 1))
		case l.End != nil:
			rec.End, rec.Ended = l.End.At, l.End.Ended
		default:
			return nil, fmt.Errorf("%s:%d: empty line object (want watch, entry, holder, switch, dropped or end)", name, n)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !seenHeader {
		return nil, errors.New(name + ": no watch header: not a recording of chaos observe")
	}
	if rec.End.IsZero() {
		rec.Ended = "incomplete: the recording has no end line (the observer stopped without closing it)"
	}
	return rec, nil
}
