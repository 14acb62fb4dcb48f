package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/stallmeter"
	"github.com/leaselab/leaselab/runner"
)

// StallMin is the least lateness the agent's probe reports as a Stall:
// below it, a wake-up's lateness is the scheduler's ordinary noise (the
// harness's own probe uses the same).
const StallMin = 2 * time.Millisecond

// Options configure an Agent. Zero values mean the defaults named on each
// field. The handlers given decide the capabilities the hello declares.
type Options struct {
	// Out receives the hello and the events. Default os.Stdout.
	Out io.Writer
	// In carries the harness's commands. Default os.Stdin.
	In io.Reader
	// Name names the agent's program in the hello (optional).
	Name string
	// OnStop, if set, declares CapStop: it is called (on its own
	// goroutine) on a stop command, and should do what the service does on
	// SIGTERM: step down, release, call Stopped, exit.
	OnStop func()
	// OnClock, if set, declares CapClock: it is called on a clock command
	// with the new rate (0: unchanged) or a jump (0: none), and bends the
	// clock the service's elector or runner runs on. An error is the
	// command's refusal.
	OnClock func(rate float64, jump time.Duration) error
	// OnDispatch, if set, declares CapRunner: it dispatches one task (due
	// delay from now; 0: at once) and returns its id. ctx ends when the
	// harness is gone.
	OnDispatch func(ctx context.Context, task string, delay time.Duration) (string, error)
	// Safe declares CapSafe: the service runs the elector's safe mode when
	// the harness asks for it (LEASELAB_SAFE=1; election.Opts.Safe).
	Safe bool
	// Cluster declares CapCluster: the service's client follows a Redis
	// Cluster given as LEASELAB_REDIS_NODES (ClusterNodes,
	// NewClusterClient).
	Cluster bool
	// Logger receives what the agent cannot tell the harness (a malformed
	// command, a failed write). Default: none.
	Logger *slog.Logger
	// NoStallProbe turns off the agent's wake-up probe. By default, from
	// Hello until the harness is gone, a goroutine sleeps to a deadline
	// every 10 ms and reports each wake-up at least 2 ms late as a Stall
	// event: how long the process was kept from running (a loaded
	// machine, GC), which the harness counts so that load makes a verdict
	// unknown rather than a false fail.
	NoStallProbe bool
	// Client declares the service's Redis client in the hello, which the
	// harness's predictions follow (GoRedisClient makes one for a go-redis
	// client). Default: RunElector declares the elector's go-redis client
	// itself; Hello alone declares none, and the harness then assumes
	// go-redis with the scenario's client options.
	Client *Client
}

// Agent makes a service speak the agent protocol: it writes the hello and
// the events to Out, and serves the harness's commands from In. Its methods
// are safe for concurrent use.
type Agent struct {
	o    Options
	ctx  context.Context
	gone context.CancelFunc

	mu      sync.Mutex
	started bool
	pending [][]byte // events before the hello
	werr    error

	stopping atomic.Bool
	reason   atomic.Pointer[string] // the last demotion's reason from Transition
	tees     sync.WaitGroup         // Elector's goroutines
}

// New returns an agent that has said nothing yet: call Hello once the
// service knows its instance id and lease key.
func New(o Options) *Agent {
	if o.Out == nil {
		o.Out = os.Stdout
	}
	if o.In == nil {
		o.In = os.Stdin
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Agent{o: o, ctx: ctx, gone: cancel}
}

// Capabilities are what the hello declares: one per handler set.
func (a *Agent) Capabilities() []Capability {
	caps := []Capability{}
	if a.o.OnStop != nil {
		caps = append(caps, CapStop)
	}
	if a.o.OnClock != nil {
		caps = append(caps, CapClock)
	}
	if a.o.OnDispatch != nil {
		caps = append(caps, CapRunner)
	}
	if a.o.Safe {
		caps = append(caps, CapSafe)
	}
	if a.o.Cluster {
		caps = append(caps, CapCluster)
	}
	return caps
}

// Hello writes the hello (instance id, lease key), then the events sent
// before it, and starts serving commands. Call it once.
func (a *Agent) Hello(id, key string) error {
	h := Hello{Type: "hello", Protocol: Version, ID: id, Key: key, Capabilities: a.Capabilities(), Agent: a.o.Name, Client: a.o.Client, T: time.Now().UnixNano()}
	if h.Client != nil {
		if err := h.Client.check(); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
	}
	line, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("agent: encoding the hello: %w", err)
	}
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("agent: Hello called twice")
	}
	// The probe runs before the hello leaves, so that the harness may
	// count on it from the hello on (its first reports wait in pending).
	var unprobe func()
	if !a.o.NoStallProbe {
		unprobe = stallmeter.Subscribe(StallMin, func(late time.Duration) {
			a.Emit(Event{Type: Stall, LatenessNS: int64(late)})
		})
	}
	a.started = true
	a.writeLocked(line)
	for _, p := range a.pending {
		a.writeLocked(p)
	}
	a.pending = nil
	err = a.werr
	a.mu.Unlock()
	go a.serve(unprobe)
	return err
}

// Gone is closed when the harness is gone (the agent's stdin ended): the
// service should exit at once.
func (a *Agent) Gone() <-chan struct{} { return a.ctx.Done() }

// Stopping marks the start of a graceful stop: demotions from now on are
// reported with ReasonStop.
func (a *Agent) Stopping() { a.stopping.Store(true) }

// Err returns the first error writing to Out.
func (a *Agent) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.werr
}

// Emit writes an event, stamped with the machine's wall clock (T).
func (a *Agent) Emit(e Event) {
	e.T = time.Now().UnixNano()
	line, err := json.Marshal(e)
	if err != nil {
		a.o.Logger.Error("agent: encoding an event", "type", e.Type, "err", err)
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.started {
		a.pending = append(a.pending, line)
		return
	}
	a.writeLocked(line)
}

func (a *Agent) writeLocked(line []byte) {
	if a.werr != nil {
		return
	}
	// One write per line, so lines never interleave and each leaves at once.
	if _, err := a.o.Out.Write(append(line, '\n')); err != nil {
		a.werr = err
		a.o.Logger.Error("agent: writing to the harness", "err", err)
	}
}

// Promoted reports a promotion.
func (a *Agent) Promoted(term uint64, token int64) {
	a.Emit(Event{Type: Promoted, Term: term, Token: token})
}

// Demoted reports a demotion. An empty reason is the one the elector gave
// Transition for its last demotion, else ReasonStop during a graceful stop
// (see Stopping), else ReasonUnknown.
func (a *Agent) Demoted(reason string) {
	if reason == "" {
		if r := a.reason.Swap(nil); r != nil {
			reason = *r
		} else if a.stopping.Load() {
			reason = ReasonStop
		} else {
			reason = ReasonUnknown
		}
	}
	a.Emit(Event{Type: Demoted, Reason: reason})
}

// Transition notes the reason of an elector's demotion, for the Demoted
// that reports it: set election.Opts.OnTransition to it (or call it from
// the hook the service has). It only stores the reason: it never blocks the
// election loop.
func (a *Agent) Transition(t election.Transition) {
	if t.Kind == election.Demoted && t.Reason != "" {
		r := string(t.Reason)
		a.reason.Store(&r)
	}
}

// Error reports an election error.
func (a *Agent) Error(err error) { a.Emit(Event{Type: Error, Err: errText(err)}) }

// Stopped reports that a graceful stop is done; the service exits next. It
// waits until the electors given to Elector are done and their last
// demotion is reported, so stopped is the last line.
func (a *Agent) Stopped() {
	a.tees.Wait()
	a.Emit(Event{Type: Stopped})
}

// RunnerEvent reports a runner's event: pass it as runner.Options.OnEvent.
// Kinds the protocol has no event for are not reported.
func (a *Agent) RunnerEvent(e runner.Event) {
	ev := Event{Term: e.Term, Token: e.Token, Task: e.TaskID}
	switch e.Kind {
	case runner.EventLeadership:
		if e.Leader {
			a.Promoted(e.Term, e.Token)
		} else {
			a.Demoted("")
		}
		return
	case runner.EventChore:
		ev.Type, ev.Chore, ev.N, ev.TookNS = Chore, string(e.Chore), e.N, int64(e.Duration)
	case runner.EventChoreFenced:
		ev.Type, ev.Chore, ev.Err = ChoreFenced, string(e.Chore), errText(e.Err)
	case runner.EventDelayedDue:
		ev.Type, ev.LatenessNS = DelayedDue, int64(e.Lateness)
	case runner.EventTaskDispatched:
		ev.Type = TaskDispatched
	case runner.EventTaskStarted:
		ev.Type = TaskStarted
	case runner.EventTaskAcknowledging:
		ev.Type = TaskAcknowledging
	case runner.EventTaskCompleted:
		ev.Type = TaskCompleted
	case runner.EventTaskFailed:
		ev.Type, ev.Err = TaskFailed, errText(e.Err)
	case runner.EventTaskReclaimed:
		ev.Type = TaskReclaimed
	case runner.EventError:
		ev = Event{Type: RunnerError, Err: errText(e.Err)}
		if errors.Is(e.Err, runner.ErrElection) {
			ev.Type = Error
		}
	default:
		return
	}
	a.Emit(ev)
}

// Elector reports an elector's signals and passes them on: the service
// reads the returned channels where it read the elector's. A promotion is
// reported before the service receives it and a demotion after, so the
// harness never sees less leadership than the service acted on. It stops
// when the elector is done.
func (a *Agent) Elector(e *election.Elector, promote, demote <-chan time.Time, errs <-chan error) (<-chan time.Time, <-chan time.Time, <-chan error) {
	p, d, x := make(chan time.Time), make(chan time.Time), make(chan error)
	a.tees.Add(1)
	go func() {
		defer a.tees.Done()
		for {
			select {
			case t := <-promote:
				l := e.Leadership()
				a.Promoted(l.Term, l.Token)
				select {
				case p <- t:
				case <-e.Done():
					return
				}
			case t := <-demote:
				select {
				case d <- t:
				case <-e.Done():
				}
				a.Demoted("")
			case err := <-errs:
				a.Error(err)
				select {
				case x <- err:
				case <-e.Done():
					return
				}
			case <-e.Done():
				return
			}
		}
	}()
	return p, d, x
}

// serve reads commands until In ends, then ends the probe (unprobe, nil
// without one).
func (a *Agent) serve(unprobe func()) {
	defer a.gone()
	if unprobe != nil {
		defer unprobe()
	}
	sc := bufio.NewScanner(a.o.In)
	sc.Buffer(make([]byte, 4096), MaxLine)
	for line := 1; sc.Scan(); line++ {
		c, err := ParseCommand(sc.Bytes())
		if err != nil {
			a.o.Logger.Error("agent: malformed command", "line", line, "err", err)
			if c.Seq != 0 {
				a.Emit(Event{Type: Reply, Seq: c.Seq, Err: err.Error()})
			}
			continue
		}
		a.command(c)
	}
}

func (a *Agent) command(c Command) {
	refuse := func(need Capability) {
		a.Emit(Event{Type: Reply, Seq: c.Seq, Err: fmt.Sprintf("%s: this agent does not declare %q", c.Cmd, need)})
	}
	switch c.Cmd {
	case CmdStop:
		if a.o.OnStop == nil {
			refuse(CapStop)
			return
		}
		a.Stopping()
		go a.o.OnStop()
	case CmdClock:
		if a.o.OnClock == nil {
			refuse(CapClock)
			return
		}
		a.Emit(Event{Type: Reply, Seq: c.Seq, Err: errText(a.o.OnClock(c.Rate, time.Duration(c.JumpNS)))})
	case CmdDispatch:
		if a.o.OnDispatch == nil {
			refuse(CapRunner)
			return
		}
		go func() {
			id, err := a.o.OnDispatch(a.ctx, c.Task, time.Duration(c.DelayNS))
			a.Emit(Event{Type: Reply, Seq: c.Seq, Task: id, Err: errText(err)})
		}()
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
