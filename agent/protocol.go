package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/leaselab/leaselab/election"
)

// Version is the protocol version this package speaks. A hello naming
// another version is refused: the harness and the agent must agree.
const Version = 1

// Capability is something an agent declares it can do beyond the events
// every agent emits (promoted, demoted, error).
type Capability string

// Capabilities of protocol version 1.
const (
	// CapStop: the agent obeys the stop command as it obeys SIGTERM (steps
	// down, releases the lease, says stopped, exits).
	CapStop Capability = "stop"
	// CapClock: the agent runs its timers on a clock the harness may bend
	// with the clock command (rate, jump).
	CapClock Capability = "clock"
	// CapRunner: the agent is a task runner: it emits chore and task events
	// and obeys the dispatch command.
	CapRunner Capability = "runner"
	// CapSafe: the agent runs the elector's safe mode (lease guard and
	// fencing tokens) when LEASELAB_SAFE=1. A safe-mode scenario is refused
	// for an agent that does not declare it.
	CapSafe Capability = "safe"
	// CapCluster: the agent reaches a Redis Cluster through the nodes and
	// proxies of LEASELAB_REDIS_NODES (ClusterNodes, NewClusterClient). A
	// redis: cluster scenario is refused for an agent that does not
	// declare it.
	CapCluster Capability = "cluster"
)

// Capabilities lists the capabilities of this protocol version.
var Capabilities = []Capability{CapStop, CapClock, CapRunner, CapSafe, CapCluster}

// Hello is the first line an agent writes. Every field but Agent and
// Client is required.
type Hello struct {
	Type string `json:"type"` // "hello"
	// Protocol is the protocol version the agent speaks (Version).
	Protocol int `json:"protocol"`
	// ID is the agent's instance id: the value it writes into the lease
	// key. It must be new for every process (a restarted agent is a new
	// incarnation with a new id).
	ID string `json:"id"`
	// Key is the Redis key of the lease the agent competes for.
	Key string `json:"key"`
	// Capabilities are what the agent can do beyond the basic events.
	Capabilities []Capability `json:"capabilities"`
	// Agent names the agent's program, for logs and reports (optional).
	Agent string `json:"agent,omitempty"`
	// Client declares the agent's Redis client (optional; see Client):
	// the harness's predicted bounds follow it.
	Client *Client `json:"client,omitempty"`
	// T is the agent's wall clock when it wrote the line, as Event.T.
	T int64 `json:"t,omitempty"`
}

// Has reports whether the hello declares c.
func (h Hello) Has(c Capability) bool { return slices.Contains(h.Capabilities, c) }

// EventType names what an Event reports.
type EventType string

// Event types of protocol version 1, and the fields each one carries
// besides Type and T.
const (
	// Promoted: the agent now acts as leader. Term, Token (safe mode).
	Promoted EventType = "promoted"
	// Demoted: the agent no longer acts as leader. Reason (required).
	Demoted EventType = "demoted"
	// Error: an election error (an acquire or renewal that failed). Err.
	Error EventType = "error"
	// RunnerError: a runner error other than the election's. Err.
	RunnerError EventType = "runner-error"
	// Chore: a leader-only chore ran and its writes landed. Chore, N,
	// TookNS (from its first Redis call to its last reply), Term, Token.
	Chore EventType = "chore"
	// ChoreFenced: a safe-mode chore's script refused to write. Chore,
	// Err, Term, Token.
	ChoreFenced EventType = "chore-fenced"
	// TaskDispatched, TaskStarted, TaskAcknowledging, TaskCompleted,
	// TaskFailed (Err), TaskReclaimed: Task is the task's id.
	// TaskAcknowledging (optional) says the acknowledgement of a finished
	// task is being sent: when the agent is killed before it reports
	// TaskCompleted, a task gone from Redis at the end was acknowledged,
	// not lost.
	TaskDispatched    EventType = "task-dispatched"
	TaskStarted       EventType = "task-started"
	TaskAcknowledging EventType = "task-acknowledging"
	TaskCompleted     EventType = "task-completed"
	TaskFailed        EventType = "task-failed"
	TaskReclaimed     EventType = "task-reclaimed"
	// DelayedDue: a delayed task reached the stream. Task, LatenessNS
	// (after its due time, by the Redis clock).
	DelayedDue EventType = "delayed-due"
	// Stopped: a graceful stop is done (the lease released if it was
	// held); the agent exits next.
	Stopped EventType = "stopped"
	// Reply: the answer to a command. Seq (the command's), Err (refused or
	// failed; empty: done), Task (dispatch: the new task's id).
	Reply EventType = "reply"
	// Stall (optional): the agent's process was kept from running: a
	// timer, or a wake-up probe sleeping to a deadline, came LatenessNS
	// late (at least 2 ms) at T. On a loaded machine that lateness, not
	// the election, can lengthen a window; the harness counts it as its
	// own (a check over its limit by no more than the stalls inside is
	// unknown, not a fail). A stall inside a pause the harness caused
	// (SIGSTOP) is the fault's, and not counted. Agent reports them from
	// a probe of its own.
	Stall EventType = "stall"
)

// EventTypes lists the event types of this protocol version.
var EventTypes = []EventType{Promoted, Demoted, Error, RunnerError, Chore, ChoreFenced, TaskDispatched, TaskStarted, TaskAcknowledging, TaskCompleted, TaskFailed, TaskReclaimed, DelayedDue, Stopped, Reply, Stall}

// Demotion reasons an agent may give. Reason is free text; these are the
// elector's own (election.DemoteReason), which this package and the
// example agents use.
const (
	// ReasonLost: a renewal found the key gone or holding another id.
	ReasonLost = string(election.ReasonLost)
	// ReasonError: a renewal failed with an error.
	ReasonError = string(election.ReasonError)
	// ReasonGuard: safe mode's lease guard ran out before a renewal answered.
	ReasonGuard = string(election.ReasonGuard)
	// ReasonStop: a graceful stop.
	ReasonStop = string(election.ReasonStop)
	// ReasonUnknown: the agent cannot tell why (the elector's demotion
	// channel carries no reason; Agent.Transition supplies it).
	ReasonUnknown = "unknown"
)

// Event is one line an agent writes after its hello. Fields that do not
// apply to a Type are left out.
type Event struct {
	Type EventType `json:"type"`
	// T is the agent's wall clock when it wrote the event, in Unix
	// nanoseconds, read from the machine's real clock (never a clock a
	// fault bends). Optional: the harness stamps every event itself on
	// receipt and uses T only to measure how late it stamped.
	T int64 `json:"t,omitempty"`

	Term       uint64 `json:"term,omitempty"`
	Token      int64  `json:"token,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Err        string `json:"err,omitempty"`
	Chore      string `json:"chore,omitempty"`
	N          int    `json:"n,omitempty"`
	TookNS     int64  `json:"took_ns,omitempty"`
	Task       string `json:"task,omitempty"`
	LatenessNS int64  `json:"lateness_ns,omitempty"`
	Seq        uint64 `json:"seq,omitempty"`
}

// CommandName names a command.
type CommandName string

// Commands of protocol version 1. Every command carries a Seq; the agent
// answers clock and dispatch with a Reply of the same Seq.
const (
	// CmdStop: stop gracefully, as on SIGTERM (CapStop). No reply: the
	// agent says Stopped and exits.
	CmdStop CommandName = "stop"
	// CmdClock: set the clock's rate (Rate > 0; 1 is true time) or step it
	// by JumpNS (CapClock).
	CmdClock CommandName = "clock"
	// CmdDispatch: dispatch one task named Task, due DelayNS from now
	// (0: at once) (CapRunner). The reply carries the task's id.
	CmdDispatch CommandName = "dispatch"
)

// Command is one line the harness writes to an agent's stdin.
type Command struct {
	Cmd     CommandName `json:"cmd"`
	Seq     uint64      `json:"seq"`
	Rate    float64     `json:"rate,omitempty"`
	JumpNS  int64       `json:"jump_ns,omitempty"`
	Task    string      `json:"task,omitempty"`
	DelayNS int64       `json:"delay_ns,omitempty"`
}

// decodeStrict decodes one JSON object, refusing unknown fields and
// anything after the object.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// ParseHello parses and checks a hello line.
func ParseHello(line []byte) (Hello, error) {
	var h Hello
	if err := decodeStrict(line, &h); err != nil {
		return h, fmt.Errorf("not a hello: %w", err)
	}
	var missing []string
	if h.Type != "hello" {
		return h, fmt.Errorf("the first line must be a hello (type \"hello\"), got type %q", h.Type)
	}
	if h.Protocol == 0 {
		missing = append(missing, "protocol")
	}
	if h.ID == "" {
		missing = append(missing, "id")
	}
	if h.Key == "" {
		missing = append(missing, "key")
	}
	if h.Capabilities == nil {
		missing = append(missing, "capabilities (an empty list if none)")
	}
	if len(missing) > 0 {
		return h, fmt.Errorf("hello lacks %s", strings.Join(missing, ", "))
	}
	if h.Protocol != Version {
		return h, fmt.Errorf("hello asks for protocol %d; this side speaks %d", h.Protocol, Version)
	}
	for _, c := range h.Capabilities {
		if !slices.Contains(Capabilities, c) {
			return h, fmt.Errorf("hello declares unknown capability %q (protocol %d knows %v)", c, Version, Capabilities)
		}
	}
	if h.Client != nil {
		if err := h.Client.check(); err != nil {
			return h, err
		}
	}
	return h, nil
}

// ParseEvent parses and checks an event line.
func ParseEvent(line []byte) (Event, error) {
	var e Event
	if err := decodeStrict(line, &e); err != nil {
		return e, fmt.Errorf("not an event: %w", err)
	}
	if e.Type == "" {
		return e, errors.New("event has no type")
	}
	if !slices.Contains(EventTypes, e.Type) {
		if e.Type == "hello" {
			return e, errors.New("a second hello")
		}
		return e, fmt.Errorf("unknown event type %q (protocol %d knows %v)", e.Type, Version, EventTypes)
	}
	need := func(name string, ok bool) error {
		if !ok {
			return fmt.Errorf("%s event lacks %s", e.Type, name)
		}
		return nil
	}
	switch e.Type {
	case Demoted:
		return e, need("reason", e.Reason != "")
	case Error, RunnerError:
		return e, need("err", e.Err != "")
	case Chore:
		return e, need("chore", e.Chore != "")
	case ChoreFenced:
		if err := need("chore", e.Chore != ""); err != nil {
			return e, err
		}
		return e, need("err", e.Err != "")
	case TaskDispatched, TaskStarted, TaskAcknowledging, TaskCompleted, TaskFailed, TaskReclaimed, DelayedDue:
		return e, need("task", e.Task != "")
	case Reply:
		return e, need("seq", e.Seq != 0)
	case Stall:
		// A stall of an hour says the agent's clock is broken, not the
		// machine: refused, as observe clamps impossible values.
		if e.LatenessNS <= 0 || e.LatenessNS > int64(time.Hour) {
			return e, fmt.Errorf("stall event needs lateness_ns between 1 and %d (an hour), got %d", int64(time.Hour), e.LatenessNS)
		}
	}
	return e, nil
}

// ParseCommand parses and checks a command line.
func ParseCommand(line []byte) (Command, error) {
	var c Command
	if err := decodeStrict(line, &c); err != nil {
		return c, fmt.Errorf("not a command: %w", err)
	}
	if c.Seq == 0 {
		return c, fmt.Errorf("command %q lacks seq", c.Cmd)
	}
	switch c.Cmd {
	case CmdStop:
	case CmdClock:
		if (c.Rate == 0) == (c.JumpNS == 0) {
			return c, errors.New("clock command needs exactly one of rate and jump_ns")
		}
		if c.Rate < 0 {
			return c, fmt.Errorf("clock command: rate %v must be positive", c.Rate)
		}
	case CmdDispatch:
		if c.Task == "" {
			return c, errors.New("dispatch command lacks task")
		}
		if c.DelayNS < 0 {
			return c, fmt.Errorf("dispatch command: delay_ns %d is negative", c.DelayNS)
		}
	default:
		return c, fmt.Errorf("unknown command %q (protocol %d knows stop, clock, dispatch)", c.Cmd, Version)
	}
	return c, nil
}

// MaxLine is the longest line either side accepts.
const MaxLine = 64 << 10

// Decoder reads an agent's stdout: its hello, then its events, with
// errors that name the agent and the line. It checks the order of one
// agent's events too: a demotion must follow a promotion.
type Decoder struct {
	name     string
	sc       *bufio.Scanner
	line     int
	launched time.Time // zero: t is not checked
	now      func() time.Time
	// cut: the last line read ended at EOF without a newline.
	cut     bool
	leading bool // promoted and not demoted since
}

// ErrCutLine is wrapped by a LineError for a last line that ends without a
// newline and does not parse: its writer was killed while writing it (or
// wrote half a line and exited). The harness ignores it after it killed
// the agent itself.
var ErrCutLine = errors.New("the last line, cut off (no newline before the end of the output)")

// MaxStampAhead is how far past the harness's own reading of the wall
// clock an agent's t may be: both read the same machine's clock, the
// agent first, so only a step of that clock between the two reads can put
// t ahead.
const MaxStampAhead = 500 * time.Millisecond

// CheckStamps makes the decoder refuse a line whose t (Hello.T, Event.T) is
// not the machine's wall clock in Unix nanoseconds since launched: one
// before launched, or more than MaxStampAhead after now. Seconds, a
// monotonic clock or a t from before the agent existed would otherwise
// read as decades of stamping lateness.
func (d *Decoder) CheckStamps(launched time.Time) {
	d.launched, d.now = launched, time.Now
}

// checkStamp returns what is wrong with an agent's t, or nil.
func (d *Decoder) checkStamp(t int64) error {
	if t == 0 || d.launched.IsZero() {
		return nil
	}
	now := d.now()
	if t < d.launched.UnixNano() || t > now.Add(MaxStampAhead).UnixNano() {
		return fmt.Errorf("t %d is not this machine's wall clock in Unix nanoseconds between the agent's launch (%d) and now (%d)",
			t, d.launched.UnixNano(), now.UnixNano())
	}
	return nil
}

// NewDecoder reads agent name's output from r. name is how errors refer to
// the agent (e.g. `instance 2 ("python3 agent.py")`).
func NewDecoder(name string, r io.Reader) *Decoder {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), MaxLine)
	d := &Decoder{name: name, sc: sc}
	sc.Split(d.split)
	return d
}

// split is bufio.ScanLines noting whether the last line was cut.
func (d *Decoder) split(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	d.cut = tok != nil && atEOF && adv == len(data) && (len(data) == 0 || data[len(data)-1] != '\n')
	return adv, tok, err
}

// LineError is a line an agent wrote that the protocol refuses.
type LineError struct {
	Agent string // the agent's name as given to NewDecoder
	Line  int    // 1-based line number of its stdout
	Text  string // the line (shortened)
	Err   error  // what is wrong with it
}

func (e *LineError) Error() string {
	return fmt.Sprintf("agent %s, stdout line %d: %v: %s", e.Agent, e.Line, e.Err, e.Text)
}

func (e *LineError) Unwrap() error { return e.Err }

func (d *Decoder) next() ([]byte, error) {
	if !d.sc.Scan() {
		if err := d.sc.Err(); err != nil {
			return nil, &LineError{Agent: d.name, Line: d.line + 1, Err: fmt.Errorf("reading: %w", err)}
		}
		return nil, io.EOF
	}
	d.line++
	return d.sc.Bytes(), nil
}

func (d *Decoder) wrap(line []byte, err error) error {
	if d.cut {
		err = fmt.Errorf("%w: %w", ErrCutLine, err)
	}
	text := string(line)
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return &LineError{Agent: d.name, Line: d.line, Text: fmt.Sprintf("%q", text), Err: err}
}

// Hello reads the first line, which must be a hello. io.EOF (wrapped) if
// the agent wrote nothing before closing its stdout.
func (d *Decoder) Hello() (Hello, error) {
	line, err := d.next()
	if err == io.EOF {
		return Hello{}, fmt.Errorf("agent %s closed its stdout before its hello: %w", d.name, io.EOF)
	} else if err != nil {
		return Hello{}, err
	}
	h, err := ParseHello(line)
	if err == nil {
		err = d.checkStamp(h.T)
	}
	if err != nil {
		return h, d.wrap(line, err)
	}
	return h, nil
}

// Next reads the next event; io.EOF when the agent closed its stdout.
func (d *Decoder) Next() (Event, error) {
	line, err := d.next()
	if err != nil {
		return Event{}, err
	}
	e, err := ParseEvent(line)
	if err == nil {
		err = d.checkStamp(e.T)
	}
	if err == nil {
		err = d.checkOrder(e)
	}
	if err != nil {
		return e, d.wrap(line, err)
	}
	return e, nil
}

// checkOrder returns what is wrong with e coming next, or nil.
func (d *Decoder) checkOrder(e Event) error {
	switch e.Type {
	case Promoted:
		d.leading = true
	case Demoted:
		if !d.leading {
			return errors.New("demoted before promoted (the agent did not say it leads)")
		}
		d.leading = false
	}
	return nil
}

// Refuse returns err as a LineError of the last line Next read: for what
// the caller finds wrong with it that one agent's lines alone cannot show
// (a task no agent dispatched).
func (d *Decoder) Refuse(err error) error { return d.wrap(d.sc.Bytes(), err) }
