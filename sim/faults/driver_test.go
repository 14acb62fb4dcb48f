package faults_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leaselab/leaselab/model"
	"github.com/leaselab/leaselab/sim/faults"
)

// world is a World of plain state that logs every primitive, for the unit
// tests of the driver's rules (the backends' own are in the conformance
// test).
type world struct {
	running, leading []bool
	incs             []int // per instance: its incarnation, counted by Restart
	log              []string
	events           []model.Event
	fails            []error
	failOn           string // a primitive that fails: "partition 1 on"
	done             []func(string)
}

func newWorld(n int) *world {
	w := &world{running: make([]bool, n), leading: make([]bool, n), incs: make([]int, n)}
	for i := range w.running {
		w.running[i] = true
	}
	return w
}

func (w *world) act(s string) error {
	w.log = append(w.log, s)
	if s == w.failOn {
		return errors.New("refused")
	}
	return nil
}

func (w *world) Running(i int) bool                 { return w.running[i] }
func (w *world) Incarnation(i int) (int, bool)      { return w.incs[i], w.running[i] }
func (w *world) Leading(i int) bool                 { return w.leading[i] }
func (w *world) Record(e model.Event)               { w.events = append(w.events, e) }
func (w *world) Fail(err error)                     { w.fails = append(w.fails, err) }
func (w *world) Crash(i int)                        { _ = w.act(fmt.Sprint("crash ", i)); w.running[i] = false }
func (w *world) Stop(i int)                         { _ = w.act(fmt.Sprint("stop ", i)); w.running[i] = false }
func (w *world) Resume(i int)                       { _ = w.act(fmt.Sprint("resume ", i)) }
func (w *world) FlushScripts(context.Context) error { return w.act("flush") }
func (w *world) Restart(i int) (bool, error) {
	if w.running[i] {
		return false, nil
	}
	w.running[i] = true
	w.incs[i]++
	return true, w.act(fmt.Sprint("restart ", i))
}
func (w *world) Pause(i int, suspend bool) bool {
	_ = w.act(fmt.Sprint("pause ", i, " ", suspend))
	return w.running[i]
}
func (w *world) Clock(i int, rate float64, jump time.Duration) error {
	if !w.running[i] {
		return errors.New("not running")
	}
	return w.act(fmt.Sprint("clock ", i, " ", rate, " ", jump))
}
func (w *world) Partition(i, _ int, mode string, on bool) error {
	return w.act(fmt.Sprint("partition ", i, " ", map[bool]string{true: "on", false: "off"}[on]))
}
func (w *world) Latency(i int, l faults.Latency, on bool) error {
	return w.act(fmt.Sprint("latency ", i, " ", l.Delay, " ", l.Jitter, " ", l.Rand != nil, " ", on))
}
func (w *world) RestartRedis(_ context.Context, done func(string)) error {
	w.done = append(w.done, done)
	return w.act("restart redis")
}
func (w *world) Failover(_ context.Context, lag time.Duration, done func(string)) error {
	w.done = append(w.done, done)
	return w.act(fmt.Sprint("failover ", lag))
}
func (w *world) PauseRedis(_ context.Context, mode string, end time.Duration, on bool) error {
	return w.act(fmt.Sprint("pause redis ", mode, " ", end, " ", on))
}
func (w *world) MigrateSlot(_ context.Context, done func(string)) error {
	w.done = append(w.done, done)
	return w.act("migrate")
}

// trace is the fault events as "kind id targets detail|err".
func (w *world) trace() []string {
	var out []string
	for _, e := range w.events {
		s := fmt.Sprintf("%s %d %v", e.Kind, e.FaultID, e.Target)
		if e.Kind != model.FaultApplied && e.Detail != "" {
			s += " " + e.Detail
		}
		if e.Err != "" {
			s += " err=" + e.Err
		}
		out = append(out, s)
	}
	return out
}

func check(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func TestDriver(t *testing.T) {
	idx := func(i ...int) model.Target { return model.Target{Indexes: i} }
	for _, tc := range []struct {
		name   string
		faults []model.Fault
		setup  func(w *world)
		run    func(d *faults.Driver, w *world)
		events []string
		log    []string
		fails  int
	}{
		{
			name:   "a pause on an index that is down is skipped, saying so",
			faults: []model.Fault{{Kind: model.FaultPause, Target: idx(1)}},
			setup:  func(w *world) { w.running[1] = false },
			events: []string{"fault-skipped 0 [] instance [1] not running (down, or started and its start-up not done)"},
		},
		{
			name:   "a pause on a down index and a running one hits the running one",
			faults: []model.Fault{{Kind: model.FaultPause, Target: idx(0, 1)}},
			setup:  func(w *world) { w.running[1] = false },
			events: []string{"fault-applied 0 [0]", "fault-healed 0 [0]"},
			log:    []string{"pause 0 false", "resume 0"},
		},
		{
			name:   "a crash on an index that is down is applied: it finds nothing to kill",
			faults: []model.Fault{{Kind: model.FaultCrash, Target: idx(1)}},
			setup:  func(w *world) { w.running[1] = false },
			events: []string{"fault-applied 0 [1]", "fault-healed 0 [1]"},
			log:    []string{"crash 1"},
		},
		{
			name:   "a leader target when nobody leads is skipped",
			faults: []model.Fault{{Kind: model.FaultPartition, Mode: model.PartitionBlackhole}},
			events: []string{"fault-skipped 0 [] target leader matched no live instance"},
		},
		{
			name:   "a follower target picks a running follower",
			faults: []model.Fault{{Kind: model.FaultLatency, Latency: time.Second, Jitter: time.Millisecond, Direction: model.DirectionBoth, Target: model.Target{Role: model.RoleFollower}}},
			setup:  func(w *world) { w.running[0], w.running[2], w.leading[1] = false, false, true },
			events: []string{"fault-skipped 0 [] target follower matched no live instance"},
		},
		{
			name:   "all targets the running instances; latency jitter is seeded",
			faults: []model.Fault{{Kind: model.FaultLatency, Latency: time.Second, Jitter: time.Millisecond, Direction: model.DirectionBoth, Target: model.Target{Role: model.RoleAll}}},
			setup:  func(w *world) { w.running[1] = false },
			events: []string{"fault-applied 0 [0 2]", "fault-healed 0 [0 2]"},
			log:    []string{"latency 0 1s 1ms true true", "latency 2 1s 1ms true true", "latency 0 1s 1ms true false", "latency 2 1s 1ms true false"},
		},
		{
			name:   "healing a clock fault on an instance no longer running is not an error",
			faults: []model.Fault{{Kind: model.FaultClock, Rate: 2, Target: model.Target{Role: model.RoleAll}}, {Kind: model.FaultCrash, Target: idx(1)}},
			run: func(d *faults.Driver, _ *world) {
				d.Inject(context.Background(), 0)
				d.Inject(context.Background(), 1)
				d.HealAll()
			},
			events: []string{"fault-applied 0 [0 1 2]", "fault-applied 1 [1]", "fault-healed 0 [0 1 2] instance [1] not running: nothing to heal there", "fault-healed 1 [1]"},
			log:    []string{"clock 0 2 0s", "clock 1 2 0s", "clock 2 2 0s", "crash 1", "clock 0 1 0s", "clock 2 1 0s"},
		},
		{
			name: "a pause's heal after a restart leaves the new incarnation be",
			faults: []model.Fault{{Kind: model.FaultPause, Target: idx(0)}, {Kind: model.FaultCrash, Restart: true, Target: idx(0)},
				{Kind: model.FaultSuspend, Target: idx(0)}},
			run: func(d *faults.Driver, _ *world) {
				d.Inject(context.Background(), 0)
				d.Inject(context.Background(), 1)
				d.Heal(1)
				d.Inject(context.Background(), 2)
				d.HealAll()
			},
			events: []string{"fault-applied 0 [0]", "fault-applied 1 [0]", "fault-healed 1 [0]", "fault-applied 2 [0]",
				"fault-healed 0 [0] instance [0] not running: nothing to heal there", "fault-healed 2 [0]"},
			log: []string{"pause 0 false", "crash 0", "restart 0", "pause 0 true", "resume 0"},
		},
		{
			name:   "the run's early end heals a stop with restart without restarting it",
			faults: []model.Fault{{Kind: model.FaultStop, Restart: true, Target: idx(1)}},
			run:    func(d *faults.Driver, _ *world) { d.Inject(context.Background(), 0); d.End() },
			events: []string{"fault-applied 0 [1]", "fault-healed 0 [1] instance [1] not restarted: the run ended"},
			log:    []string{"stop 1"},
		},
		{
			name:   "a clock jump is instant",
			faults: []model.Fault{{Kind: model.FaultClock, Jump: time.Second, Target: idx(0)}},
			run:    func(d *faults.Driver, _ *world) { d.Inject(context.Background(), 0); d.HealAll() },
			events: []string{"fault-applied 0 [0]", "fault-healed 0 [0]"},
			log:    []string{"clock 0 0 1s"},
		},
		{
			name:   "a partition that fails on its second target undoes the first and fails the run",
			faults: []model.Fault{{Kind: model.FaultPartition, Mode: model.PartitionRefuse, Target: model.Target{Role: model.RoleAll}}},
			setup:  func(w *world) { w.failOn = "partition 1 on" },
			events: []string{"fault-applied 0 [0 1 2]", "fault-healed 0 [0 1 2] err=refused"},
			log:    []string{"partition 0 on", "partition 1 on", "partition 0 off"},
			fails:  1,
		},
		{
			name:   "two crashes with restart of one instance: the second restart finds it up",
			faults: []model.Fault{{Kind: model.FaultCrash, Restart: true, Target: idx(0)}, {Kind: model.FaultStop, Restart: true, Target: idx(0)}},
			run: func(d *faults.Driver, _ *world) {
				d.Inject(context.Background(), 0)
				d.Inject(context.Background(), 1)
				d.Heal(0)
				d.Heal(1)
				d.Heal(1) // healed already: nothing
			},
			events: []string{"fault-applied 0 [0]", "fault-applied 1 [0]", "fault-healed 0 [0]",
				"fault-healed 1 [0] instance [0] not restarted: already up again (another fault's restart)"},
			log: []string{"crash 0", "stop 0", "restart 0"},
		},
		{
			name: "the faults on Redis heal when their primitive says so",
			faults: []model.Fault{{Kind: model.FaultRedisRestart}, {Kind: model.FaultRedisFailover, Lag: time.Second},
				{Kind: model.FaultSlotMigration}, {Kind: model.FaultScriptFlush}},
			run: func(d *faults.Driver, w *world) {
				for id := range 4 {
					d.Inject(context.Background(), id)
				}
				w.done[1]("promoted x")
				w.done[0]("")
				w.done[2]("")
			},
			events: []string{"fault-applied 0 []", "fault-applied 1 []", "fault-applied 2 []", "fault-applied 3 []", "fault-healed 3 []",
				"fault-healed 1 [] promoted x", "fault-healed 0 []", "fault-healed 2 []"},
			log: []string{"restart redis", "failover 1s", "migrate", "flush"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(3)
			if tc.setup != nil {
				tc.setup(w)
			}
			d := faults.New(model.Scenario{Seed: 1, Instances: 3, Faults: tc.faults}, w)
			if tc.run != nil {
				tc.run(d, w)
			} else {
				for id := range tc.faults {
					d.Inject(context.Background(), id)
				}
				d.HealAll()
			}
			check(t, "events", w.trace(), tc.events)
			check(t, "primitives", w.log, tc.log)
			if len(w.fails) != tc.fails {
				t.Errorf("harness errors %v, want %d", w.fails, tc.fails)
			}
		})
	}
}

// TestRedisPause: a redis-pause asks Redis to end it at its planned heal
// (the end of the fault phase without for), lasts until its heal, and its
// heal unpauses; a failed unpause is a harness error.
func TestRedisPause(t *testing.T) {
	sc := model.Scenario{Seed: 1, Instances: 3, Duration: 20 * time.Second, Faults: []model.Fault{
		{Kind: model.FaultRedisPause, At: 2 * time.Second, For: 3 * time.Second, Mode: model.RedisPauseWrite},
		{Kind: model.FaultRedisPause, At: 8 * time.Second, Mode: model.RedisPauseAll}}}
	w := newWorld(3)
	d := faults.New(sc, w)
	d.Inject(context.Background(), 0)
	check(t, "events at the injection", w.trace(), []string{"fault-applied 0 []"})
	d.Heal(0)
	d.Inject(context.Background(), 1)
	w.failOn = "pause redis all 0s false"
	d.HealAll()
	check(t, "events", w.trace(), []string{"fault-applied 0 []", "fault-healed 0 []", "fault-applied 1 []", "fault-healed 1 []"})
	check(t, "primitives", w.log, []string{"pause redis write 5s true", "pause redis write 0s false",
		"pause redis all 20s true", "pause redis all 0s false"})
	if len(w.fails) != 1 || !strings.Contains(w.fails[0].Error(), "healing a redis-pause") {
		t.Errorf("harness errors %v, want the failed unpause", w.fails)
	}
}

// TestEveryKindDriven: every kind of the model has a driver.
func TestEveryKindDriven(t *testing.T) {
	for _, k := range model.FaultKinds {
		w := newWorld(1)
		faults.New(model.Scenario{Seed: 1, Instances: 1, Faults: []model.Fault{{Kind: k, Target: model.Target{Indexes: []int{0}}}}}, w).
			Inject(context.Background(), 0)
		if len(w.fails) > 0 || len(w.events) == 0 || w.events[0].Kind != model.FaultApplied {
			t.Errorf("%s: events %v, harness errors %v", k, w.trace(), w.fails)
		}
	}
}
