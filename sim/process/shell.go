package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leaselab/leaselab/agent"
	"github.com/leaselab/leaselab/election"
	"github.com/leaselab/leaselab/internal/proc"
	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/realtime"
)

// helloTimeout is how long an agent may take to say its hello.
const helloTimeout = 15 * time.Second

// bufferedHint follows a missing hello: the likeliest cause is an agent
// that wrote it into a buffer (a pipe, unlike a terminal, is
// block-buffered by default) and never flushed it.
const bufferedHint = "is its stdout buffered? Flush each line as it is written (Python: print(..., flush=True), sys.stdout.flush(), or python3 -u; C: fflush(stdout); Java: System.out.flush(); Node's and Go's writes go out at once): docs/agents.md, The protocol. (Or the machine was too loaded to start it in time: a Python agent took 15 s at load 28)"

// shell is one instance as agent processes: a realtime.Shell.
type shell struct {
	b    *Backend
	slot realtime.Slot
	rec  *realtime.Recorder

	mu  sync.Mutex
	cur *incarnation // nil when down
	// starting is the incarnation launched and not yet started (its hello
	// not read): not live, so a fault's role finds no instance here; a
	// crash or stop of its index, and the run's end, kill it.
	starting *incarnation
	// prestarted: Prestart started the first incarnation, the run's first
	// Start has nothing to do.
	prestarted bool
	// stopping are the incarnations sent SIGTERM and not gone yet: the
	// run's end kills them.
	stopping map[*incarnation]struct{}
	lives    int
	down     sync.WaitGroup // incarnations winding down
	// hellos counts the hello readers still running, until each has
	// reported (done): the run waits for them (Wait, Started), so a failed
	// hello is in the run's errors before they are copied.
	hellos sync.WaitGroup
	tasks  *taskBook // the run's
	// clients keeps the clients the run's agents declare, logs the logs
	// it keeps (nil: a probe).
	clients *clientBook
	logs    *logBook
}

// incarnation is one agent process, with every process it starts.
type incarnation struct {
	name     string // how errors name it
	launched time.Time
	// runEnded: the run's end (Kill) killed it while it was starting.
	runEnded bool
	cmd      *exec.Cmd
	tree     *proc.Tree // the agent and every process it started
	stdin    io.WriteCloser
	out      *os.File   // the read end of its stdout
	read     readMeter  // what was read from out
	stderr   *os.File   // the read end of its stderr
	log      *cappedLog // its stderr on disk (LogDir), or nil
	hello    agent.Hello
	helloAt  time.Time // when the harness read the hello: the election began
	leading  atomic.Bool
	paused   bool          // SIGSTOPped by Pause, until Resume (the schedule's goroutine's)
	resumed  chan struct{} // closed by the Resume that ends the pause
	reaped   chan struct{} // closed once the agent itself is reaped (waitErr set)
	exited   chan struct{} // closed once every process of it is gone and its output closed
	waitErr  error         // the agent's exit, once reaped
	tail     tailBuffer    // the end of its stderr, for errors
	seq      atomic.Uint64
	// killed is why the harness killed it (nil: it was not), so that its
	// end is not taken for the agent's doing: not a crash of its own, and
	// a line the kill cut is no protocol error.
	killed atomic.Pointer[string]
	// readDone is closed once its stdout is no longer read (its end read,
	// or given up); stderrDone once its stderr's copy ended.
	readDone   chan struct{}
	readOnce   sync.Once
	stderrDone chan struct{}
	fail       func(error) // reports a harness error (nil: ignored)

	wmu     sync.Mutex // one command line at a time
	rmu     sync.Mutex
	replies map[uint64]chan agent.Event
}

// spawner makes the shells of one run, which share its task book.
func (b *Backend) spawner(run *runBooks) realtime.Spawner {
	return func(slot realtime.Slot) (realtime.Shell, error) {
		if slot.Env.Auth.TLS != nil {
			return nil, errors.New("process: TLS to Redis is not handed to agents (the environment gives them an address, user, password and db)")
		}
		return newShell(b, slot, run), nil
	}
}

// runBooks is what one run's shells keep together.
type runBooks struct {
	tasks   taskBook
	clients clientBook
	logs    logBook
}

// newShell makes a shell of run (nil: a probe, which keeps nothing).
func newShell(b *Backend, slot realtime.Slot, run *runBooks) *shell {
	s := &shell{b: b, slot: slot, rec: slot.Recorder, stopping: map[*incarnation]struct{}{}}
	if run != nil {
		s.tasks, s.clients, s.logs = &run.tasks, &run.clients, &run.logs
	}
	return s
}

// ms formats a duration in milliseconds, as the environment carries them.
func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64)
}

// environ is the environment of one incarnation (docs/agents.md).
func (s *shell) environ(life int) ([]string, error) {
	sc := s.slot.Scenario
	raw, err := json.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("encoding the scenario for the agent: %w", err)
	}
	safe := "0"
	if sc.Params.Safe {
		safe = "1"
	}
	e := append(os.Environ(),
		"LEASELAB_PROTOCOL="+strconv.Itoa(agent.Version),
		"LEASELAB_INSTANCE="+strconv.Itoa(s.slot.Index),
		"LEASELAB_INCARNATION="+strconv.Itoa(life),
		"LEASELAB_REDIS_ADDR="+s.dial(),
		"LEASELAB_REDIS_USERNAME="+s.slot.Env.Auth.Username,
		"LEASELAB_REDIS_PASSWORD="+s.slot.Env.Auth.Password,
		"LEASELAB_REDIS_DB="+strconv.Itoa(s.slot.Env.Auth.DB),
		"LEASELAB_GROUP="+s.slot.Group,
		"LEASELAB_KEY="+election.LeaderKey(s.slot.Group),
		"LEASELAB_TTL_MS="+ms(sc.Params.TTL),
		"LEASELAB_WAIT_MS="+ms(sc.Params.Wait),
		"LEASELAB_JITTER_MS="+strconv.Itoa(max(sc.Params.JitterMS, 0)),
		"LEASELAB_READ_TIMEOUT_MS="+ms(max(sc.Params.Client.ReadTimeout, 0)),
		"LEASELAB_SAFE="+safe,
		"LEASELAB_MODE="+string(sc.Mode),
		"LEASELAB_SCENARIO="+string(raw),
	)
	if s.slot.Nodes != nil {
		// A Redis Cluster: every node and this instance's proxy to it
		// (LEASELAB_REDIS_ADDR is then the first node's proxy).
		e = append(e, agent.ClusterNodesVar+"="+agent.FormatClusterNodes(s.slot.Nodes))
	}
	if s.b.Publish {
		e = append(e, "LEASELAB_PUBLISH=1")
	}
	for k, v := range s.b.Env {
		e = append(e, k+"="+v)
	}
	return e, nil
}

// errEnded is what ended a starting incarnation that a crash or stop of
// its index killed before its hello: nothing to report (the fault ended
// it). One the run's end killed is reported (errNoHelloByEnd).
var errEnded = errors.New("killed by the harness before its hello")

// Prestart starts the first agent process and waits for its hello: its
// election begins at its hello, so its lines are stamped as they come, not
// once every other agent has said hello too (which made a 30-agent run's
// first promotion 0.27-0.41 s late). It returns when the hello was read,
// or as soon as ctx is done (a Ctrl-C during the start-up), the agent
// killed and reaped.
func (s *shell) Prestart(ctx context.Context) (time.Time, error) {
	ready := make(chan error, 1)
	inc, err := s.start(ctx, func(err error) { ready <- err })
	if err != nil {
		return time.Time{}, err
	}
	if err := <-ready; err != nil {
		return time.Time{}, err
	}
	s.mu.Lock()
	s.prestarted = true
	s.mu.Unlock()
	return inc.helloAt, nil
}

// Start starts a new agent process (unless Prestart started this one) and
// returns once it is launched: its hello is read in the background, and it
// is recorded started, and live, from its hello on. A delayed start or a
// restart waited for the hello here, in the run's fault schedule, which
// made every later fault that much late. An agent that fails before or at
// its hello (exits, writes something else, says none within helloTimeout,
// lacks a capability) is killed, and the run's errors say why, naming it;
// so does one still silent when the run ends (the run waits for a start
// before its recovery, Started: that is a run cancelled first). The run
// goes on without it.
func (s *shell) Start() error {
	s.mu.Lock()
	pre := s.prestarted
	s.prestarted = false
	s.mu.Unlock()
	if pre {
		return nil
	}
	_, err := s.start(context.Background(), func(err error) {
		if err != nil && !errors.Is(err, errEnded) {
			s.slot.Fail(err)
		}
	})
	return err
}

// start launches an incarnation, the shell's starting one, and reads its
// hello in the background. done is called once: with nil when it started
// (recorded, live, its events read from then on), or with what ended it,
// killed and reaped (errEnded if a crash or stop of its index killed it
// first, take; a run's-end error if the run's end did, Kill). The hello is
// waited for until ctx is done at most. An incarnation still live or
// starting at the index is ended first (restart, below).
func (s *shell) start(ctx context.Context, done func(error)) (*incarnation, error) {
	inc, dec, err := s.launch()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.starting = inc
	s.hellos.Add(1)
	s.mu.Unlock()
	go func() {
		// Who owns the incarnation is decided before anything is done
		// to it: until then, take may kill it (its hello's read then ends
		// in EOF, which is the kill's, not the agent's failure).
		err := s.hello(ctx, inc, dec)
		if err == nil {
			err = afterProbe(lacks(inc.name, s.slot.Scenario, inc.hello))
		}
		s.mu.Lock()
		own := s.starting == inc // not killed by a crash, stop or the run's end
		if own {
			s.starting = nil
			if err == nil {
				// Recorded before it is live: nothing done to it
				// (a crash) is recorded before its start.
				s.rec.Record(model.Event{Kind: model.InstanceStarted, Instance: s.slot.Index, ID: inc.hello.ID, Detail: inc.hello.Agent})
				s.clients.note(inc.name, inc.hello)
				s.cur = inc
			}
		}
		runEnded := inc.runEnded
		s.mu.Unlock()
		switch {
		case !own:
			inc.stopReading()
			<-inc.exited // take killed it
			if runEnded {
				// Nothing measured it: the run's verdict must not pass
				// as if it had run (before, its Start failed the run).
				done(fmt.Errorf("%s: no hello by the run's end (launched %.1fs before); %s", inc.name, time.Since(inc.launched).Seconds(), bufferedHint))
				s.hellos.Done()
				return
			}
			done(errEnded)
			s.hellos.Done()
		case err != nil:
			done(inc.abort(err))
			s.hellos.Done()
		default:
			done(nil)
			s.hellos.Done()
			s.read(inc, dec)
		}
	}()
	return inc, nil
}

// launch starts an agent process; hello reads its hello. Its stdout and
// stderr are pipes of the harness's own, not os/exec's: a process the
// agent left holding them can no longer make Wait wait (it is killed, and
// past outputGrace the harness stops reading).
func (s *shell) launch() (*incarnation, *agent.Decoder, error) {
	s.mu.Lock()
	s.lives++
	life := s.lives
	s.mu.Unlock()
	argv := s.b.Agent
	inc := &incarnation{
		name:       fmt.Sprintf("instance %d (%q)", s.slot.Index, strings.Join(argv, " ")),
		reaped:     make(chan struct{}),
		exited:     make(chan struct{}),
		readDone:   make(chan struct{}),
		stderrDone: make(chan struct{}),
		replies:    map[uint64]chan agent.Event{},
		tree:       proc.NewTree(),
		fail:       s.slot.Fail,
	}
	env, err := s.environ(life)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.WaitDelay = outputGrace
	if s.b.LogDir != "" {
		dir := filepath.Join(s.b.LogDir, s.slot.Group)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, fmt.Errorf("%s: keeping its log: %w", inc.name, err)
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("instance-%d.%d.log", s.slot.Index, life)))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: keeping its log: %w", inc.name, err)
		}
		s.logs.add(f.Name())
		inc.log = newCappedLog(f, s.b.maxLogBytes())
	}
	if inc.stdin, err = cmd.StdinPipe(); err != nil {
		inc.closeLog()
		return nil, nil, err
	}
	outW, errW, err := inc.pipes()
	if err != nil {
		_ = inc.stdin.Close()
		inc.closeLog()
		return nil, nil, fmt.Errorf("%s: its pipes: %w", inc.name, err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	inc.cmd = cmd
	inc.launched = time.Now()
	err = inc.tree.Start(cmd)
	// The agent has its own ends now; the harness keeps only the read ends.
	_, _ = outW.Close(), errW.Close()
	if err != nil {
		_, _ = inc.out.Close(), inc.stderr.Close()
		inc.closeLog()
		return nil, nil, fmt.Errorf("%s: starting: %w", inc.name, err)
	}
	go inc.copyStderr()
	go inc.wait()
	inc.read.r = inc.out
	dec := agent.NewDecoder(inc.name, &inc.read)
	dec.CheckStamps(inc.launched) // a t off by decades is a protocol error, not lateness
	return inc, dec, nil
}

// pipes makes the stdout and stderr pipes; it returns the write ends.
func (inc *incarnation) pipes() (outW, errW *os.File, err error) {
	if inc.out, outW, err = os.Pipe(); err != nil {
		return nil, nil, err
	}
	if inc.stderr, errW, err = os.Pipe(); err != nil {
		_, _ = inc.out.Close(), outW.Close()
		return nil, nil, err
	}
	return outW, errW, nil
}

// outputGrace is how long the harness reads an agent's output after its
// last process is gone (what the pipes still hold), at most: a process it
// cannot kill (stuck in the kernel) that holds them does not hold the run.
const outputGrace = 2 * time.Second

// wait reaps the agent, kills every process it left (also one that left
// its group or session), reads its output to the end (outputGrace at
// most), closes it, and marks it exited.
func (inc *incarnation) wait() {
	inc.waitErr = inc.cmd.Wait()
	close(inc.reaped)
	if err := inc.tree.Kill(); err != nil && inc.fail != nil {
		inc.fail(fmt.Errorf("%s: ending what it left running: %w", inc.name, err))
	}
	grace := time.NewTimer(outputGrace)
	defer grace.Stop()
	select {
	case <-inc.readDone:
	case <-grace.C:
	}
	inc.stopReading()
	_ = inc.out.Close() // ends a read still blocked
	select {
	case <-inc.stderrDone:
	case <-grace.C:
	}
	_ = inc.stderr.Close()
	<-inc.stderrDone
	inc.closeLog()
	inc.tree.Close()
	close(inc.exited)
}

// stopReading says its stdout is no longer read (its end reached, or the
// harness gave up on it): wait need not wait for the rest.
func (inc *incarnation) stopReading() { inc.readOnce.Do(func() { close(inc.readDone) }) }

// copyStderr copies its stderr to its log and its tail until it ends.
func (inc *incarnation) copyStderr() {
	defer close(inc.stderrDone)
	var w io.Writer = &inc.tail
	if inc.log != nil {
		w = io.MultiWriter(inc.log, &inc.tail)
	}
	_, _ = io.Copy(w, inc.stderr)
}

// readMeter counts what is read through it: bytes, reads, and reads that
// filled the buffer they were given (more was waiting: the writer is ahead
// of the reader). Only the reader's goroutine uses it.
type readMeter struct {
	r                  io.Reader
	bytes, reads, full int64
}

func (m *readMeter) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.bytes += int64(n)
	m.reads++
	if n > 0 && n == len(p) {
		m.full++
	}
	return n, err
}

// outpacedReads is how many reads in a second, 90% of them finding more
// waiting, say an agent writes faster than the harness reads: its rate is
// then the harness's, under the caps, while its output backs up unread.
// (An agent writing a line now and then is read a line at a time.)
const outpacedReads = 8

// hello reads a launched incarnation's hello, which must name the lease key
// it was given. Whatever else ends the wait (a line that is not a hello,
// the agent's exit, helloTimeout, ctx done) is returned naming it; the
// caller, once it owns the incarnation, ends it (abort).
func (s *shell) hello(ctx context.Context, inc *incarnation, dec *agent.Decoder) error {
	type said struct {
		h   agent.Hello
		at  time.Time
		err error
	}
	got := make(chan said, 1)
	go func() {
		h, err := dec.Hello()
		got <- said{h, time.Now(), err}
	}()
	timeout := time.NewTimer(helloTimeout)
	defer timeout.Stop()
	var r said
	select {
	case r = <-got:
	case <-timeout.C:
		return fmt.Errorf("%s: no hello within %v; %s", inc.name, helloTimeout, bufferedHint)
	case <-ctx.Done():
		select {
		case <-inc.reaped:
			// It ended before the cancel: what it wrote first (or its
			// failure) is the news. Its output ends within outputGrace.
			r = <-got
		default:
			return fmt.Errorf("%s: waiting for its hello: %w", inc.name, ctx.Err())
		}
	}
	if r.err != nil {
		return r.err
	}
	inc.hello, inc.helloAt = r.h, r.at
	if want := election.LeaderKey(s.slot.Group); inc.hello.Key != want {
		return fmt.Errorf("%s: its hello names the lease key %q; it was given %q (LEASELAB_KEY)", inc.name, inc.hello.Key, want)
	}
	return nil
}

// abort ends an incarnation that never started (end) and returns err with
// the end of its stderr.
func (inc *incarnation) abort(err error) error {
	_ = inc.end(err.Error())
	if t := inc.tail.String(); t != "" {
		err = fmt.Errorf("%w; its stderr ends:\n%s", err, t)
	}
	return err
}

// end kills the incarnation (why: as kill), stops reading it and waits
// until it is gone; it returns the agent's exit.
func (inc *incarnation) end(why string) error {
	inc.kill(why)
	inc.stopReading()
	<-inc.exited
	return inc.waitErr
}

// kill notes why the harness kills the incarnation (the first reason
// stays) and SIGKILLs the agent and its group at once; wait ends the rest
// of its processes once the agent is reaped.
func (inc *incarnation) kill(why string) {
	inc.killed.CompareAndSwap(nil, &why)
	proc.KillGroup(inc.cmd.Process)
	_ = inc.cmd.Process.Kill()
}

// read records the agent's events until its stdout ends (or the harness
// ends the agent: a line the protocol refuses, output over the caps), then
// waits until it is gone. One that ended without the harness is recorded
// crashed.
func (s *shell) read(inc *incarnation, dec *agent.Decoder) {
	defer func() {
		inc.stopReading()
		<-inc.exited
		s.mu.Lock()
		own := s.cur == inc // not crashed, stopped or killed by the harness
		if own {
			s.cur = nil
		}
		s.mu.Unlock()
		if !own {
			return
		}
		// For the analysis, a crash: by itself, or the harness's kill
		// for what it wrote (already in the run's errors).
		if why := inc.killed.Load(); why != nil {
			s.rec.Record(model.Event{Kind: model.InstanceCrashed, Instance: s.slot.Index, ID: inc.hello.ID, Detail: "killed by the harness: " + *why})
			return
		}
		s.rec.Record(model.Event{Kind: model.InstanceCrashed, Instance: s.slot.Index, ID: inc.hello.ID, Detail: fmt.Sprintf("exited by itself: %v", inc.waitErr)})
		s.slot.Fail(fmt.Errorf("%s exited by itself (%v); its stderr ends:\n%s", inc.name, inc.waitErr, inc.tail.String()))
	}()
	lines, maxLines, maxBytes := 0, s.b.maxLinesPerSecond(), s.b.maxBytesPerSecond()
	window, windowBytes, windowReads, windowFull := time.Now(), int64(0), int64(0), int64(0)
	for {
		e, err := dec.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			if inc.killed.Load() != nil || inc.readCut() {
				// Its end, the harness's doing: the line its kill cut,
				// or a read the harness ended, is not the agent's error.
				return
			}
			// A line the protocol refuses: the agent cannot be believed
			// any more. Say so and end it.
			s.slot.Fail(err)
			inc.kill(fmt.Sprintf("a line the protocol refuses: %v", err))
			s.drain(dec)
			return
		}
		if d := time.Since(window); d >= time.Second {
			if reads, full := inc.read.reads-windowReads, inc.read.full-windowFull; reads >= outpacedReads && full*10 >= reads*9 {
				why := fmt.Sprintf("wrote faster than the harness reads for %.1f s: %d of %d reads of its stdout found more waiting (%d lines read)", d.Seconds(), full, reads, lines)
				s.slot.Fail(fmt.Errorf("%s %s: ended by the harness (docs/agents.md, Output caps)", inc.name, why))
				inc.kill(why)
				s.drain(dec)
				return
			}
			window, windowBytes, lines = time.Now(), inc.read.bytes, 0
			windowReads, windowFull = inc.read.reads, inc.read.full
		}
		lines++
		if n := inc.read.bytes - windowBytes; lines > maxLines || n > maxBytes {
			why := fmt.Sprintf("wrote %d lines (%d bytes) in %.3f s, over the cap of %d lines or %d bytes a second", lines, n, time.Since(window).Seconds(), maxLines, maxBytes)
			s.slot.Fail(fmt.Errorf("%s %s: ended by the harness (docs/agents.md, Output caps)", inc.name, why))
			inc.kill(why)
			s.drain(dec)
			return
		}
		s.tasks.note(dec, e)
		s.event(inc, e)
	}
}

// drain reads on what an agent the harness killed wrote before its end,
// until its stdout ends (at most outputGrace after its last process is
// gone: wait closes it then), for its dispatches alone: a task it
// dispatched is in Redis, and another agent that works on it did nothing
// wrong (before, its unread task-dispatched lines made that agent's lines
// protocol errors). Nothing else it wrote is believed or recorded.
func (s *shell) drain(dec *agent.Decoder) {
	for {
		e, err := dec.Next()
		var line *agent.LineError
		switch {
		case err == nil:
			if e.Type == agent.TaskDispatched {
				s.tasks.note(dec, e)
			}
		case errors.As(err, &line) && line.Text != "":
			// A refused line (it has its text): the next may be read.
		default:
			return // the end of its stdout, or a read that failed
		}
	}
}

// readCut reports whether wait gave up on its stdout (closed it).
func (inc *incarnation) readCut() bool {
	select {
	case <-inc.exited:
		return true
	default:
	}
	select {
	case <-inc.readDone:
		return true
	default:
		return false
	}
}

// event records one agent event, stamped now by the run's clock.
func (s *shell) event(inc *incarnation, e agent.Event) {
	ev := model.Event{Instance: s.slot.Index, ID: inc.hello.ID, Term: e.Term, Token: e.Token, Task: e.Task}
	if e.T != 0 {
		// How late this stamp is: the agent wrote the line at its wall
		// time T; the same machine's wall clock reads it now.
		ev.Lateness = max(time.Duration(time.Now().UnixNano()-e.T), 0)
		// The agent acted by T, so the event came up to that much before
		// At, never after: a window it opens may be longer, one it ends
		// shorter, and a limit inside that is neither held nor broken
		// (verdict.Evaluate; past analysis.MaxStampUncertainty a check that
		// does not fail for certain is unknown).
		ev.Late = ev.Lateness
	}
	switch e.Type {
	case agent.Promoted:
		inc.leading.Store(true)
		ev.Kind = model.LeaderGained
	case agent.Demoted:
		inc.leading.Store(false)
		ev.Kind, ev.Detail = model.LeaderLost, e.Reason
	case agent.Error:
		ev.Kind, ev.Err = model.ElectorError, e.Err
	case agent.RunnerError:
		ev.Kind, ev.Err = model.RunnerError, e.Err
	case agent.Chore:
		ev.Kind, ev.Chore, ev.N, ev.Took = model.ChoreRan, e.Chore, e.N, time.Duration(e.TookNS)
	case agent.ChoreFenced:
		ev.Kind, ev.Chore, ev.Err = model.ChoreFenced, e.Chore, e.Err
	case agent.TaskDispatched:
		ev.Kind = model.TaskDispatched
	case agent.TaskAcknowledging:
		ev.Kind = model.TaskAcknowledging
	case agent.TaskCompleted:
		ev.Kind = model.TaskCompleted
	case agent.TaskFailed:
		ev.Kind, ev.Err = model.TaskFailed, e.Err
	case agent.TaskReclaimed:
		ev.Kind = model.TaskReclaimed
	case agent.DelayedDue:
		// Lateness here is the task's, by the Redis clock, as in-process.
		ev.Kind, ev.Lateness = model.DelayedDue, time.Duration(e.LatenessNS)
	case agent.Stall:
		// Lateness here is how late the agent's process woke; its stamp
		// is not a transition's, so not the stamping's uncertainty.
		ev.Kind, ev.Lateness, ev.Late, ev.Detail = model.StallKind, time.Duration(e.LatenessNS), 0, model.AgentStall
	case agent.Reply:
		inc.rmu.Lock()
		ch := inc.replies[e.Seq]
		delete(inc.replies, e.Seq)
		inc.rmu.Unlock()
		if ch != nil {
			ch <- e
		}
		return
	default: // task-started, stopped: nothing the analysis reads
		return
	}
	s.rec.Record(ev)
}

// answerTimeout is how long an agent may take to answer a command (once
// it runs: a paused agent's time starts at its resume).
const answerTimeout = 5 * time.Second

// command sends c and waits for its reply.
func (inc *incarnation) command(ctx context.Context, c agent.Command) error {
	answer, err := inc.send(c)
	if err != nil {
		return err
	}
	return answer(ctx)
}

// send writes c to the agent and returns what waits for its reply (call
// it once), until the reply, the agent's end or ctx done.
func (inc *incarnation) send(c agent.Command) (answer func(context.Context) error, err error) {
	c.Seq = inc.seq.Add(1)
	ch := make(chan agent.Event, 1)
	inc.rmu.Lock()
	inc.replies[c.Seq] = ch
	inc.rmu.Unlock()
	forget := func() {
		inc.rmu.Lock()
		delete(inc.replies, c.Seq)
		inc.rmu.Unlock()
	}
	line, err := json.Marshal(c)
	if err != nil {
		forget()
		return nil, err
	}
	inc.wmu.Lock()
	_, err = inc.stdin.Write(append(line, '\n'))
	inc.wmu.Unlock()
	if err != nil {
		forget()
		return nil, fmt.Errorf("%s: sending %s: %w", inc.name, c.Cmd, err)
	}
	return func(ctx context.Context) error {
		defer forget()
		select {
		case r := <-ch:
			if r.Err != "" {
				return fmt.Errorf("%s: %s refused: %s", inc.name, c.Cmd, r.Err)
			}
			return nil
		case <-inc.exited:
			return fmt.Errorf("%s: %w %s", inc.name, errExitedUnanswered, c.Cmd)
		case <-ctx.Done():
			return fmt.Errorf("%s: no answer to %s: %w", inc.name, c.Cmd, ctx.Err())
		}
	}, nil
}

func (s *shell) current() *incarnation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// take takes the live incarnation, and kills the starting one (it never
// started: nothing is recorded; its hello's reader reaps it, and Wait
// waits for that). runEnd: the run's end takes it (Kill), and the starting
// one's reader reports that it never said hello.
func (s *shell) take(runEnd bool) *incarnation {
	s.mu.Lock()
	inc, starting := s.cur, s.starting
	s.cur, s.starting = nil, nil
	if starting != nil {
		starting.runEnded = runEnd
	}
	s.mu.Unlock()
	if starting != nil {
		starting.kill("it was ended before its hello")
		s.down.Go(func() { <-starting.exited })
	}
	return inc
}

// Live reports whether an agent process is up.
func (s *shell) Live() bool { return s.current() != nil }

// Leading reports whether the live agent last said it leads.
func (s *shell) Leading() bool {
	inc := s.current()
	return inc != nil && inc.leading.Load()
}

// signal sends sig to the agent's process group.
func (inc *incarnation) signal(sig syscall.Signal) error {
	return syscall.Kill(-inc.cmd.Process.Pid, sig)
}

// Crash SIGKILLs the agent's group; the crash is recorded first, so
// nothing it wrote after counts. An agent still starting is killed, and
// nothing recorded: it never started.
func (s *shell) Crash() {
	inc := s.take(false)
	if inc == nil {
		return
	}
	s.rec.Record(model.Event{Kind: model.InstanceCrashed, Instance: s.slot.Index, ID: inc.hello.ID})
	inc.kill("crash")
	s.down.Go(func() { <-inc.exited })
}

// Stop sends SIGTERM (continuing a paused agent first) and records the stop
// once the agent has exited; one that outlives TTL + 5 s is killed. An
// agent still starting is killed, as by Crash.
func (s *shell) Stop() {
	inc := s.take(false)
	if inc == nil {
		return
	}
	s.mu.Lock()
	s.stopping[inc] = struct{}{}
	s.mu.Unlock()
	_ = inc.signal(syscall.SIGTERM)
	_ = inc.signal(syscall.SIGCONT)
	s.down.Go(func() {
		limit := s.slot.Scenario.Params.TTL + 5*time.Second
		timer := time.NewTimer(limit)
		defer timer.Stop()
		select {
		case <-inc.exited:
		case <-timer.C:
			s.slot.Fail(fmt.Errorf("%s: still running %v after SIGTERM: killed", inc.name, limit))
			inc.kill("still running after SIGTERM")
			<-inc.exited
		}
		s.mu.Lock()
		delete(s.stopping, inc)
		s.mu.Unlock()
		s.rec.Record(model.Event{Kind: model.InstanceStopped, Instance: s.slot.Index, ID: inc.hello.ID})
	})
}

// Pause SIGSTOPs the agent's group. A process cannot stop its monotonic
// clock: Backend.Refuses refuses suspend before anything runs.
func (s *shell) Pause(suspend bool) bool {
	inc := s.current()
	if inc == nil || suspend || inc.signal(syscall.SIGSTOP) != nil {
		return false
	}
	if !inc.paused {
		inc.paused, inc.resumed = true, make(chan struct{})
	}
	s.rec.Record(model.Event{Kind: model.InstancePaused, Instance: s.slot.Index, ID: inc.hello.ID})
	return true
}

// Resume SIGCONTs it.
func (s *shell) Resume() {
	inc := s.current()
	if inc == nil {
		return
	}
	// Recorded before the signal: a resumed agent acts within a fraction
	// of a millisecond (its overdue renewal, its demotion), and a line it
	// writes then must not be stamped before its resume.
	s.rec.Record(model.Event{Kind: model.InstanceResumed, Instance: s.slot.Index, ID: inc.hello.ID})
	_ = inc.signal(syscall.SIGCONT)
	if inc.paused {
		inc.paused = false
		close(inc.resumed)
	}
}

// Clock sends the clock command, to an agent that declares it, and waits
// for its answer. A paused (SIGSTOPped) agent reads it only at its resume:
// the command is sent, and its answer checked after the resume, off the
// schedule's goroutine (a harness error if it fails), so that the schedule
// does not wait on a stopped process.
func (s *shell) Clock(rate float64, jump time.Duration) error {
	inc := s.current()
	if inc == nil {
		return errors.New("not running")
	}
	if !inc.hello.Has(agent.CapClock) {
		return fmt.Errorf("%s does not declare the %q capability: its clock cannot be bent", inc.name, agent.CapClock)
	}
	var cmds []agent.Command
	if jump != 0 {
		cmds = append(cmds, agent.Command{Cmd: agent.CmdClock, JumpNS: int64(jump)})
	}
	if rate > 0 {
		cmds = append(cmds, agent.Command{Cmd: agent.CmdClock, Rate: rate})
	}
	if !inc.paused {
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		for _, c := range cmds {
			if err := inc.command(ctx, c); err != nil {
				return err
			}
		}
		return nil
	}
	var answers []func(context.Context) error
	for _, c := range cmds {
		answer, err := inc.send(c)
		if err != nil {
			return err
		}
		answers = append(answers, answer)
	}
	resumed := inc.resumed
	s.down.Go(func() {
		select {
		case <-resumed:
		case <-inc.exited:
		}
		ctx, cancel := context.WithTimeout(context.Background(), answerTimeout)
		defer cancel()
		for _, answer := range answers {
			if err := answer(ctx); err != nil && inc.killed.Load() == nil {
				s.slot.Fail(fmt.Errorf("bending the clock of a paused agent: %w", err))
				return
			}
		}
	})
	return nil
}

// Jitter: an agent's connection has no gate to draw jitter in, so the
// latency fault gives its proxy Toxiproxy's own jitter (realtime.ErrNoJitterGate);
// clearing it is a no-op.
func (s *shell) Jitter(requests, replies time.Duration, _ *rand.Rand) error {
	if requests == 0 && replies == 0 {
		return nil
	}
	return realtime.ErrNoJitterGate
}

// Dispatch sends the dispatch command.
func (s *shell) Dispatch(ctx context.Context, delay time.Duration) error {
	inc := s.current()
	if inc == nil {
		return errors.New("not running")
	}
	at := s.rec.Since()
	err := inc.command(ctx, agent.Command{Cmd: agent.CmdDispatch, Task: "work", DelayNS: int64(delay)})
	if errors.Is(err, errExitedUnanswered) {
		s.tasks.unansweredDispatch(model.Event{At: at, Kind: model.TaskDispatched, Instance: s.slot.Index, ID: inc.hello.ID,
			Detail: "inferred: its agent ended before it answered the dispatch, and another agent worked on a task no line named"})
	}
	return err
}

// errExitedUnanswered: the agent ended before it answered a command, which
// it may have carried out.
var errExitedUnanswered = errors.New("exited before answering")

// Kill ends the live agent at the end of the run, recording nothing; a
// prestarted one too (Prestart made it current and reads it: its reader
// reaps it), also when the run ended before Start (another agent's hello
// failed), and one still starting (a delayed start or a restart whose
// hello has not come).
func (s *shell) Kill() {
	if inc := s.take(true); inc != nil {
		inc.kill("the run's end")
		s.down.Go(func() { <-inc.exited })
	}
	// One still stopping (SIGTERM sent, not exited yet) ends too: the run
	// does not wait out its stop.
	s.mu.Lock()
	stopping := slices.Collect(maps.Keys(s.stopping))
	s.mu.Unlock()
	for _, inc := range stopping {
		inc.kill("the run's end")
	}
}

// Wait waits until every agent process of this instance is reaped and
// every hello's reader has reported.
func (s *shell) Wait() {
	s.hellos.Wait()
	s.down.Wait()
}

// Starting reports whether an agent is launched and its hello not read.
func (s *shell) Starting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starting != nil
}

// Started waits until no agent of this instance is starting (each said
// hello, or failed and was reported), or ctx is done.
func (s *shell) Started(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.hellos.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (inc *incarnation) closeLog() {
	if inc.log != nil {
		_ = inc.log.Close()
	}
}

// tailBuffer keeps the last 2 KB written, for error messages.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = t.b[len(t.b)-2048:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}

// dial is the address LEASELAB_REDIS_ADDR gives: the instance's proxy to
// Redis, or with a Redis Cluster the proxy to its first node (in the
// order of LEASELAB_REDIS_NODES).
func (s *shell) dial() string {
	if s.slot.Nodes == nil {
		return s.slot.Dial
	}
	first := ""
	for node := range s.slot.Nodes {
		if first == "" || node < first {
			first = node
		}
	}
	return s.slot.Nodes[first]
}
